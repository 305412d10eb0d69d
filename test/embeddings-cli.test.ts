// Embedding models as they are served, through the CLI: `ragline ingest` then
// `ragline search` against loopback OpenAI-compatible servers, asserting on what
// the servers received. A model trained with task prefixes gets them (documents at
// ingest, the query at search), the prefixes are recorded with the index and a
// query follows them, and embeddings may live at a server (and key) of their own.

import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isolatedEnv, ragline, tempDir, writeTinyDocs, type CliResult } from './helpers/cli.js';
import { hashVector, LLAMA_CPP_NO_EMBEDDINGS, OLLAMA_NO_EMBEDDINGS, startOpenAIServer, type FakeOpenAI } from './helpers/openai-server.js';

const CHAT_KEY = 'sk-chat-SECRET-0f2e4d6c8b';
const EMBED_KEY = 'sk-embed-SECRET-9a7b5c3d1e';
const QUERY = 'rotate an API key';

let home: string;
let docs: string;
/** The chat server (RAGLINE_BASE_URL) and the embeddings server (RAGLINE_EMBED_BASE_URL). */
let chat: FakeOpenAI;
let embeddings: FakeOpenAI;

beforeAll(() => {
  docs = writeTinyDocs();
});

afterAll(() => fs.rmSync(docs, { recursive: true, force: true }));

beforeEach(async () => {
  home = tempDir();
  [chat, embeddings] = await Promise.all([startOpenAIServer(), startOpenAIServer()]);
});

afterEach(async () => {
  await Promise.all([chat.close(), embeddings.close()]);
  fs.rmSync(home, { recursive: true, force: true });
});

const dbFile = () => path.join(home, 'data', 'ragline', 'ragline.db');

/** A user with a chat server and an embeddings server of its own, `model` on the latter. */
function twoServers(model: string, extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  return isolatedEnv(home, {
    RAGLINE_BASE_URL: chat.baseURL,
    RAGLINE_API_KEY: CHAT_KEY,
    RAGLINE_EMBED_BASE_URL: embeddings.baseURL,
    RAGLINE_EMBED_API_KEY: EMBED_KEY,
    RAGLINE_EMBED_MODEL: model,
    RAGLINE_MAX_RETRIES: '0',
    ...extra,
  });
}

/** Every text the embeddings server was sent, in order. */
function embedded(server: FakeOpenAI = embeddings): string[] {
  return server.requestsTo('embeddings').flatMap((request) => request.body.input as string[]);
}

async function ok(result: Promise<CliResult>): Promise<CliResult> {
  const done = await result;
  expect(done.stderr).toBe('');
  expect(done.code).toBe(0);
  return done;
}

function fingerprint(): { embedder: string; prefixes?: { query: string; document: string } } {
  const db = new Database(dbFile(), { readonly: true });
  try {
    return JSON.parse((db.prepare("SELECT value FROM meta WHERE key = 'index.fingerprint'").get() as { value: string }).value);
  } finally {
    db.close();
  }
}

describe('task prefixes', () => {
  it('nomic-embed-text: documents are sent as "search_document: ...", the query as "search_query: ..."; both recorded with the index', async () => {
    const env = twoServers('nomic-embed-text');
    await ok(ragline(['ingest', docs], { env }));
    const documents = embedded();
    expect(documents.length).toBeGreaterThan(0);
    for (const text of documents) expect(text).toMatch(/^search_document: /);
    expect(fingerprint().prefixes).toEqual({ query: 'search_query: ', document: 'search_document: ' });

    const before = embedded().length;
    const search = await ok(ragline(['search', '--json', QUERY], { env }));
    expect(embedded().slice(before)).toEqual([`search_query: ${QUERY}`]);
    expect(JSON.parse(search.stdout).results[0].documentPath).toBe('keys.md');
  });

  it('a model of no known family is sent its texts as they are, and its index records no prefixes', async () => {
    const env = twoServers('fake-embed-model');
    await ok(ragline(['ingest', docs], { env }));
    await ok(ragline(['search', '--json', QUERY], { env }));
    expect(embedded()).toContain(QUERY);
    for (const text of embedded()) expect(text).not.toMatch(/^(search_|query: |passage: )/);
    expect(fingerprint().prefixes).toEqual({ query: '', document: '' });
  });

  it('RAGLINE_EMBED_QUERY_PREFIX and RAGLINE_EMBED_DOCUMENT_PREFIX override the table; `none` sends nothing', async () => {
    const env = twoServers('nomic-embed-text', { RAGLINE_EMBED_QUERY_PREFIX: 'query: ', RAGLINE_EMBED_DOCUMENT_PREFIX: 'none' });
    await ok(ragline(['ingest', docs], { env }));
    for (const text of embedded()) expect(text).not.toMatch(/^search_document: /);
    const before = embedded().length;
    await ok(ragline(['search', '--json', QUERY], { env }));
    expect(embedded().slice(before)).toEqual([`query: ${QUERY}`]);
    expect(fingerprint().prefixes).toEqual({ query: 'query: ', document: '' });
  });

  it('a search follows the prefixes the index recorded, and says so when a setting asks for others, with the fix', async () => {
    await ok(ragline(['ingest', docs], { env: twoServers('nomic-embed-text', { RAGLINE_EMBED_QUERY_PREFIX: 'find: ' }) }));
    // The setting is gone: the index's own query prefix is used, not the table's.
    const before = embedded().length;
    await ok(ragline(['search', '--json', QUERY], { env: twoServers('nomic-embed-text') }));
    expect(embedded().slice(before)).toEqual([`find: ${QUERY}`]);

    // Another one set: refused, as another model would be, before anything is embedded.
    const sent = embedded().length;
    const refused = await ragline(['search', '--json', QUERY], { env: twoServers('nomic-embed-text', { RAGLINE_EMBED_QUERY_PREFIX: 'query: ' }) });
    expect(refused.code).toBe(2);
    const [message, hint] = refused.stderr.trim().split('\n');
    expect(message).toBe(
      'error: This index was embedded with the prefixes query "find: " and document "search_document: ", but the prefixes query "query: " and document "search_document: " are configured now (openai:nomic-embed-text).',
    );
    expect(hint).toMatch(/RAGLINE_EMBED_QUERY_PREFIX.*ragline ingest <folder> --reindex/);
    expect(embedded().length).toBe(sent);

    // The fix works: a rebuild with the new setting records it.
    await ok(ragline(['ingest', docs, '--reindex'], { env: twoServers('nomic-embed-text', { RAGLINE_EMBED_QUERY_PREFIX: 'query: ' }) }));
    expect(fingerprint().prefixes).toEqual({ query: 'query: ', document: 'search_document: ' });
  });

  it('an index built before prefixes were recorded keeps working as it did: no prefixes on the query, nor on documents added later', async () => {
    const env = twoServers('nomic-embed-text', { RAGLINE_EMBED_QUERY_PREFIX: 'none', RAGLINE_EMBED_DOCUMENT_PREFIX: 'none' });
    await ok(ragline(['ingest', docs], { env }));
    // As an earlier version wrote it: no prefixes recorded.
    const db = new Database(dbFile());
    const { prefixes: _dropped, ...old } = fingerprint();
    db.prepare("UPDATE meta SET value = ? WHERE key = 'index.fingerprint'").run(JSON.stringify(old));
    db.close();

    const now = twoServers('nomic-embed-text');
    const before = embedded().length;
    await ok(ragline(['search', '--json', QUERY], { env: now }));
    expect(embedded().slice(before)).toEqual([QUERY]);

    fs.writeFileSync(path.join(docs, 'late.md'), '# Late\n\nA document added after the upgrade.\n');
    try {
      const sent = embedded().length;
      await ok(ragline(['ingest', docs], { env: now }));
      const added = embedded().slice(sent);
      expect(added.length).toBeGreaterThan(0);
      for (const text of added) expect(text).not.toMatch(/^search_document: /);
    } finally {
      fs.rmSync(path.join(docs, 'late.md'));
    }
    expect(fingerprint().prefixes).toBeUndefined();
  });
});

describe('a server of their own for embeddings', () => {
  it('embeddings go to RAGLINE_EMBED_BASE_URL with RAGLINE_EMBED_API_KEY; the chat server sees none of them, nor the embeddings key', async () => {
    const env = twoServers('fake-embed-model');
    await ok(ragline(['ingest', docs], { env }));
    await ok(ragline(['search', '--json', QUERY], { env }));
    expect(embeddings.requestsTo('embeddings').length).toBeGreaterThan(1);
    expect(chat.requests).toEqual([]);
    for (const request of embeddings.requests) expect(request.headers.authorization).toBe(`Bearer ${EMBED_KEY}`);
  });

  it('an embeddings base URL alone means remote embeddings; the chat key is not sent to another host', async () => {
    // "localhost" and "127.0.0.1" are two hosts to the client: the chat key must stay with the chat server.
    const embedURL = embeddings.baseURL.replace('127.0.0.1', 'localhost');
    await ok(ragline(['ingest', docs], { env: isolatedEnv(home, { RAGLINE_EMBED_BASE_URL: embedURL, RAGLINE_EMBED_MODEL: 'fake-embed-model' }) }));
    expect(embeddings.requestsTo('embeddings').length).toBeGreaterThan(0);
    expect(fingerprint().embedder).toBe('openai:fake-embed-model');

    const env = twoServers('fake-embed-model', { RAGLINE_EMBED_BASE_URL: embedURL, RAGLINE_EMBED_API_KEY: undefined });
    const seen = embeddings.requests.length;
    await ok(ragline(['search', '--json', QUERY], { env }));
    const requests = embeddings.requests.slice(seen);
    expect(requests.length).toBe(1);
    expect(requests[0]!.headers.authorization).not.toContain(CHAT_KEY);
    expect(chat.requests).toEqual([]);
  });

  it('with no key of its own on the chat host, the chat key is used', async () => {
    const env = twoServers('fake-embed-model', { RAGLINE_EMBED_BASE_URL: undefined, RAGLINE_EMBED_API_KEY: undefined });
    await ok(ragline(['ingest', docs], { env }));
    for (const request of chat.requestsTo('embeddings')) expect(request.headers.authorization).toBe(`Bearer ${CHAT_KEY}`);
    expect(chat.requestsTo('embeddings').length).toBeGreaterThan(0);
  });

  it('a key the embeddings server rejects: the hint names RAGLINE_EMBED_API_KEY; the key is printed nowhere', async () => {
    embeddings.queueFailure({ route: 'embeddings', status: 401, body: { error: { message: `Incorrect API key provided: ${EMBED_KEY}` } } });
    const result = await ragline(['ingest', docs], { env: twoServers('fake-embed-model') });
    expect(result.code).toBe(1);
    const [message, hint] = result.stderr.trim().split('\n');
    expect(message).toBe(`error: The server at ${embeddings.baseURL} rejected the API key (401).`);
    expect(hint).toContain('RAGLINE_EMBED_API_KEY');
    expect(result.stderr + result.stdout).not.toContain(EMBED_KEY);
  });

  it('the chat key goes to an embeddings server on the chat host under another port', async () => {
    const otherPort = await startOpenAIServer();
    try {
      const env = twoServers('fake-embed-model', { RAGLINE_EMBED_BASE_URL: otherPort.baseURL, RAGLINE_EMBED_API_KEY: undefined });
      await ok(ragline(['ingest', docs], { env }));
      expect(otherPort.requestsTo('embeddings').length).toBeGreaterThan(0);
      for (const request of otherPort.requests) expect(request.headers.authorization).toBe(`Bearer ${CHAT_KEY}`);
    } finally {
      await otherPort.close();
    }
  });

  it('config show names the embeddings server and the prefixes in use, and shows the embeddings key only as set', async () => {
    const result = await ok(ragline(['config', 'show'], { env: twoServers('nomic-embed-text') }));
    expect(result.stdout).toMatch(/^embedding\.baseURL\s+"http:\/\/127\.0\.0\.1:\d+\/v1"\s+env:RAGLINE_EMBED_BASE_URL$/m);
    expect(result.stdout).toMatch(/^embedding\.apiKey\s+\(set, redacted\)\s+env:RAGLINE_EMBED_API_KEY$/m);
    expect(result.stdout).toContain(`embeddings server ${embeddings.baseURL}`);
    expect(result.stdout).toContain('embedding prefixes query "search_query: ", document "search_document: "');
    expect(result.stdout).not.toContain(EMBED_KEY);

    const json = JSON.parse((await ok(ragline(['config', 'show', '--json'], { env: twoServers('nomic-embed-text') }))).stdout);
    expect(json.settings['embedding.apiKey']).toEqual({ value: 'redacted', source: 'env:RAGLINE_EMBED_API_KEY', set: true });
    expect(json.embedder).toMatchObject({ remote: true, model: 'nomic-embed-text', server: embeddings.baseURL, prefixes: { query: 'search_query: ', document: 'search_document: ' } });
  });
});

describe('what an embeddings server says, said plainly', () => {
  /** One server for everything, retries on (4) and fast: a permanent error must still be sent once. */
  function oneServer(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
    return isolatedEnv(home, { RAGLINE_BASE_URL: embeddings.baseURL, RAGLINE_EMBED_MODEL: 'fake-embed-model', RAGLINE_MAX_RETRIES: '4', RAGLINE_RETRY_BASE_MS: '1', ...extra });
  }

  function errorOf(result: CliResult): { message: string; hint: string } {
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(2);
    return { message: lines[0]!.replace(/^error: /, ''), hint: lines[1]! };
  }

  it("llama-server without --embeddings (501): asked once, named, and the offline embedder suggested", async () => {
    embeddings.queueFailure({ route: 'embeddings', status: 501, body: LLAMA_CPP_NO_EMBEDDINGS, count: 10 });
    const result = await ragline(['ingest', docs], { env: oneServer() });
    expect(result.code).toBe(1);
    const { message, hint } = errorOf(result);
    expect(message).toBe(`The server at ${embeddings.baseURL} does not serve embeddings for model "fake-embed-model": This server does not support embeddings. Start it with \`--embeddings\``);
    expect(hint).toContain('llama-server --embeddings');
    expect(hint).toContain('RAGLINE_EMBED_PROVIDER=offline');
    expect(embeddings.requestsTo('embeddings')).toHaveLength(1);
  });

  it("Ollama's chat model asked for embeddings (500): asked once, named, and the offline embedder suggested", async () => {
    embeddings.queueFailure({ route: 'embeddings', status: 500, body: OLLAMA_NO_EMBEDDINGS, count: 10 });
    const result = await ragline(['ingest', docs], { env: oneServer({ RAGLINE_EMBED_MODEL: 'gemma3' }) });
    expect(result.code).toBe(1);
    const { message, hint } = errorOf(result);
    expect(message).toBe(`The server at ${embeddings.baseURL} does not serve embeddings for model "gemma3": this model does not support embeddings`);
    expect(hint).toContain('ollama pull nomic-embed-text');
    expect(hint).toContain('RAGLINE_EMBED_PROVIDER=offline');
    expect(embeddings.requestsTo('embeddings')).toHaveLength(1);
  });

  it('a model that now returns vectors of another length: search and ingest name both lengths and the fix, nothing is written', async () => {
    await ok(ragline(['ingest', docs], { env: oneServer() }));
    // The same name now serves a bigger model (8 -> 16 dimensions).
    embeddings.onEmbeddings((input) => input.map((text) => hashVector(text, 16)));

    const search = await ragline(['search', '--json', QUERY], { env: oneServer() });
    expect(search.code).toBe(2);
    const said = errorOf(search);
    expect(said.message).toBe(
      'The embedding model now returns 16 dimensions per vector, but this index holds vectors of 8 (built with openai:fake-embed-model): the model served under that name is not the one the index was built with.',
    );
    expect(said.hint).toContain('ragline ingest <folder> --reindex');

    fs.writeFileSync(path.join(docs, 'late.md'), '# Late\n\nA document added after the model changed.\n');
    try {
      const ingest = await ragline(['ingest', docs], { env: oneServer() });
      expect(ingest.code).toBe(2);
      expect(errorOf(ingest)).toEqual(said);
    } finally {
      fs.rmSync(path.join(docs, 'late.md'));
    }
    const db = new Database(dbFile(), { readonly: true });
    expect(db.prepare("SELECT count(*) FROM documents WHERE path = 'late.md'").pluck().get()).toBe(0);
    db.close();
  });

  it('empty vectors: named, with what to use instead', async () => {
    embeddings.onEmbeddings((input) => input.map(() => []));
    const result = await ragline(['ingest', docs], { env: oneServer() });
    expect(result.code).toBe(1);
    const { message, hint } = errorOf(result);
    expect(message).toBe(`Model "fake-embed-model" at ${embeddings.baseURL} returned empty vectors (0 dimensions).`);
    expect(hint).toContain('RAGLINE_EMBED_PROVIDER=offline');
    expect(embeddings.requestsTo('embeddings')).toHaveLength(1);
  });
});

describe('inputs longer than the embedding server takes', () => {
  let longDocs: string;
  let tight: FakeOpenAI;

  beforeEach(() => {
    longDocs = tempDir('ragline-long-');
    const paragraph = (n: number) => `Paragraph ${n} of the rotation guide says how an API key is rotated, where the old one stays valid for a day, and who is told. `.repeat(6);
    fs.writeFileSync(path.join(longDocs, 'guide.md'), `# Rotation guide\n\n${Array.from({ length: 12 }, (_, n) => paragraph(n)).join('\n\n')}\n`);
    fs.writeFileSync(path.join(longDocs, 'short.md'), '# Short\n\nA short note about webhooks.\n');
  });

  afterEach(async () => {
    await tight?.close();
    fs.rmSync(longDocs, { recursive: true, force: true });
  });

  function env(server: FakeOpenAI): NodeJS.ProcessEnv {
    return isolatedEnv(home, { RAGLINE_BASE_URL: server.baseURL, RAGLINE_EMBED_MODEL: 'fake-embed-model', RAGLINE_MAX_RETRIES: '4', RAGLINE_RETRY_BASE_MS: '1' });
  }

  it('ingest cuts the long chunks until the server takes them, says once how many, and keeps them whole in the index', async () => {
    tight = await startOpenAIServer({ maxInputChars: 1000 });
    const result = await ok(ragline(['ingest', longDocs], { env: env(tight) }));
    const lines = result.stdout.trim().split('\n');
    const note = lines.filter((line) => line.includes('longer than the embedding server takes'));
    expect(note).toHaveLength(1);
    const [, chunks, chars] = /^(\d+) chunks were longer than the embedding server takes: embedded from their first ([\d,]+) characters/.exec(note[0]!) ?? [];
    expect(Number(chunks)).toBeGreaterThan(1);
    expect(Number(chars!.replace(/,/g, ''))).toBeLessThanOrEqual(1000);
    expect(result.stdout).toContain('ragline ingest <folder> --reindex');
    // Nothing longer than the server takes was embedded at last, and the refused attempts were not retried as such.
    const refusedAttempts = tight.requestsTo('embeddings').filter((request) => request.body.input.some((text: string) => text.length > 1000));
    expect(refusedAttempts.length).toBeLessThanOrEqual(2);
    // The short document's chunk went as it was.
    expect(embedded(tight).some((text) => text.endsWith('A short note about webhooks.'))).toBe(true);

    const db = new Database(dbFile(), { readonly: true });
    const longest = db.prepare('SELECT max(length(text)) FROM chunks').pluck().get() as number;
    db.close();
    expect(longest).toBeGreaterThan(1000);

    const json = JSON.parse((await ok(ragline(['ingest', longDocs, '--reindex', '--json'], { env: env(tight) }))).stdout);
    expect(json.truncated).toEqual({ chunks: Number(chunks), toChars: Number(chars!.replace(/,/g, '')) });
  });

  it('several paths: the note is said once per path that had chunks cut, and the --json total sums them', async () => {
    tight = await startOpenAIServer({ maxInputChars: 1000 });
    const json = JSON.parse((await ok(ragline(['ingest', longDocs, docs, '--json'], { env: env(tight) }))).stdout);
    const [first, second] = json.paths;
    expect(first.truncated.chunks).toBeGreaterThan(1);
    expect(second.truncated).toBeUndefined();
    expect(json.total.truncated).toEqual(first.truncated);

    const text = await ok(ragline(['ingest', longDocs, docs, '--reindex'], { env: env(tight) }));
    expect(text.stdout.split('\n').filter((line) => line.includes('longer than the embedding server takes'))).toHaveLength(1);
  });

  it("vLLM's 400 for an input longer than the model's context is read the same way: cut, said once, not taken for the prompt's overflow", async () => {
    tight = await startOpenAIServer({ maxInputChars: 1000, tooLarge: 'vllm' });
    const result = await ok(ragline(['ingest', longDocs, '--json'], { env: env(tight) }));
    const summary = JSON.parse(result.stdout);
    expect(summary.truncated.chunks).toBeGreaterThan(1);
    expect(summary.truncated.toChars).toBeLessThanOrEqual(1000);
  });

  it("vLLM's refusal at the floor names the embedding server and the chunk size, not the prompt", async () => {
    tight = await startOpenAIServer({ maxInputChars: 20, tooLarge: 'vllm' });
    const result = await ragline(['ingest', longDocs], { env: env(tight) });
    expect(result.code).toBe(1);
    const [message, hint] = result.stderr.trim().split('\n');
    expect(message).toMatch(new RegExp(`^error: The embedding server at ${tight.baseURL.replace(/[.]/g, '\\.')} refused a text as too long for model "fake-embed-model": This model's maximum context length is 512 tokens`));
    expect(hint).toContain('RAGLINE_CHUNK_SIZE');
    expect(hint).not.toContain('RAGLINE_CONTEXT_TOKENS');
  });

  it('a server that takes almost nothing: refused with the fix once the cut reaches its floor, never retried as an overload', async () => {
    tight = await startOpenAIServer({ maxInputChars: 20 });
    const result = await ragline(['ingest', longDocs], { env: env(tight) });
    expect(result.code).toBe(1);
    // The dimension probe, then one request per halving (about 3000, 1500, 750, 375 characters): none repeated.
    const sizes = tight.requestsTo('embeddings').map((request) => Math.max(...request.body.input.map((text: string) => text.length)));
    expect(sizes.length).toBeLessThanOrEqual(6);
    expect(new Set(sizes).size).toBe(sizes.length);
    expect(Math.min(...sizes.slice(1))).toBeGreaterThanOrEqual(256);
    const [message, hint] = result.stderr.trim().split('\n');
    expect(message).toBe(`error: The embedding server at ${tight.baseURL} refused a text as too long for model "fake-embed-model": input is too large to process. increase the physical batch size`);
    expect(hint).toMatch(/RAGLINE_CHUNK_SIZE.*-b 4096 -ub 4096/);
    expect(hint).not.toMatch(/overloaded/);
  });
});

describe('ragline doctor: an embeddings round trip', () => {
  function check(report: any, id: string): { status: string; message: string; fix?: string } {
    const found = report.checks.find((candidate: any) => candidate.id === id);
    expect(found, id).toBeDefined();
    return found;
  }

  it('embeds a query and a document at the embeddings server, timed, naming the model, server, dimensions and prefixes', async () => {
    const result = await ok(ragline(['doctor', '--json'], { env: twoServers('nomic-embed-text') }));
    const report = JSON.parse(result.stdout);
    const embeddingsCheck = check(report, 'embeddings');
    expect(embeddingsCheck.status).toBe('ok');
    expect(embeddingsCheck.message).toMatch(
      new RegExp(`^Embedded a query and a document with "nomic-embed-text" at ${embeddings.baseURL.replace(/[.]/g, '\\.')} in \\d+ ms: 8 dimensions; prefixes query "search_query: ", document "search_document: "\\.$`),
    );
    expect(report.provider.embedding).toMatchObject({ baseURL: embeddings.baseURL, model: 'nomic-embed-text', prefixes: { query: 'search_query: ', document: 'search_document: ' }, roundTrip: { dimensions: 8 } });
    expect(embedded()).toEqual(['search_query: How do I rotate an API key?', 'search_document: API keys are rotated from Settings > Keys; the old key stays valid for a day.']);
    // The chat server is asked nothing of embeddings, and the embedding model is not looked for in its list.
    expect(chat.requestsTo('embeddings')).toEqual([]);
    expect(report.checks.some((candidate: any) => candidate.id === 'model.embedding')).toBe(false);
  });

  it('fails, naming both lengths and the fix, when the model now returns vectors of another length than the index', async () => {
    await ok(ragline(['ingest', docs], { env: twoServers('fake-embed-model') }));
    embeddings.onEmbeddings((input) => input.map((text) => hashVector(text, 16)));
    const result = await ragline(['doctor', '--json'], { env: twoServers('fake-embed-model') });
    expect(result.code).toBe(1);
    const embeddingsCheck = check(JSON.parse(result.stdout), 'embeddings');
    expect(embeddingsCheck.status).toBe('fail');
    expect(embeddingsCheck.message).toContain('now returns 16 dimensions per vector, but this index holds vectors of 8');
    expect(embeddingsCheck.fix).toContain('--reindex');
  });

  it('fails with the fix when the server has no embeddings, asking once', async () => {
    embeddings.queueFailure({ route: 'embeddings', status: 501, body: LLAMA_CPP_NO_EMBEDDINGS, count: 5 });
    const result = await ragline(['doctor', '--json'], { env: twoServers('fake-embed-model') });
    expect(result.code).toBe(1);
    const embeddingsCheck = check(JSON.parse(result.stdout), 'embeddings');
    expect(embeddingsCheck.status).toBe('fail');
    expect(embeddingsCheck.message).toContain('does not serve embeddings');
    expect(embeddingsCheck.fix).toContain('RAGLINE_EMBED_PROVIDER=offline');
    expect(embeddings.requestsTo('embeddings')).toHaveLength(1);
  });

  it('warns when the index was built without the prefixes its model is trained with', async () => {
    await ok(ragline(['ingest', docs], { env: twoServers('nomic-embed-text', { RAGLINE_EMBED_QUERY_PREFIX: 'none', RAGLINE_EMBED_DOCUMENT_PREFIX: 'none' }) }));
    const result = await ok(ragline(['doctor', '--json'], { env: twoServers('nomic-embed-text') }));
    const embeddingsCheck = check(JSON.parse(result.stdout), 'embeddings');
    expect(embeddingsCheck.status).toBe('warn');
    expect(embeddingsCheck.message).toContain('The index was built with prefixes none, but nomic-embed-text is trained with query "search_query: ", document "search_document: "');
    expect(embeddingsCheck.fix).toContain('--reindex');
    // What was sent is what a search would send: the index's (no) prefixes.
    expect(embedded().slice(-2)).toEqual(['How do I rotate an API key?', 'API keys are rotated from Settings > Keys; the old key stays valid for a day.']);
  });
});
