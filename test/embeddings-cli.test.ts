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
import { startOpenAIServer, type FakeOpenAI } from './helpers/openai-server.js';

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
