// What a person sees when the model server fails, through the CLI run in-process:
// `ragline ingest` embeds documents and
// `ragline search` embeds the query, both against a real OpenAI-compatible server
// on 127.0.0.1. Each failure must end in a one-line message naming the base URL
// (and the model where it matters) with a fix, a non-zero exit code, and the API
// key nowhere: not in the output and not in the bytes of the database files.
// Retries use RAGLINE_RETRY_BASE_MS=1 so they take milliseconds.

import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isolatedEnv, ragline, tempDir, writeTinyDocs, type CliResult } from './helpers/cli.js';
import { startOpenAIServer, type FakeOpenAI } from './helpers/openai-server.js';

const API_KEY = 'sk-test-SECRET-4e1c7a9b3d5f2086';
const EMBED_MODEL = 'fake-embed-model';

let home: string;
let docs: string;
let server: FakeOpenAI;

beforeAll(() => {
  docs = writeTinyDocs();
});

afterAll(() => fs.rmSync(docs, { recursive: true, force: true }));

beforeEach(async () => {
  home = tempDir();
  server = await startOpenAIServer();
});

afterEach(async () => {
  await server.close();
  fs.rmSync(home, { recursive: true, force: true });
});

const dbFile = () => path.join(home, 'data', 'ragline', 'ragline.db');

/** The environment of a user pointing ragline at `baseURL` with a key. */
function remoteEnv(extra: Record<string, string> = {}, baseURL = server.baseURL): NodeJS.ProcessEnv {
  return isolatedEnv(home, {
    RAGLINE_BASE_URL: baseURL,
    RAGLINE_API_KEY: API_KEY,
    RAGLINE_EMBED_MODEL: EMBED_MODEL,
    RAGLINE_MAX_RETRIES: '2',
    RAGLINE_RETRY_BASE_MS: '1',
    ...extra,
  });
}

function ingest(env: NodeJS.ProcessEnv = remoteEnv()): Promise<CliResult> {
  return ragline(['ingest', docs], { env });
}

function search(env: NodeJS.ProcessEnv = remoteEnv()): Promise<CliResult> {
  return ragline(['search', '--json', 'rotate an API key'], { env });
}

/** Builds the index through the server, so later searches use the same embedder. */
async function buildIndex(): Promise<void> {
  const result = await ingest();
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
}

/** The error a failed command printed: `error: <message>` then the fix, and nothing else. */
function errorLines(result: CliResult): { message: string; hint: string } {
  const lines = result.stderr.trim().split('\n');
  expect(lines).toHaveLength(2);
  expect(lines[0]).toMatch(/^error: /);
  return { message: lines[0]!.slice('error: '.length), hint: lines[1]! };
}

/** The key must not be in the output, nor in the database or its WAL, byte for byte. */
function expectKeyNowhere(result: CliResult): void {
  expect(result.stdout).not.toContain(API_KEY);
  expect(result.stderr).not.toContain(API_KEY);
  const key = Buffer.from(API_KEY, 'utf8');
  for (const suffix of ['', '-wal', '-journal']) {
    const file = dbFile() + suffix;
    if (fs.existsSync(file)) expect(fs.readFileSync(file).includes(key), `${file} holds the key`).toBe(false);
  }
}

/** When the requests made while `during` runs arrived at the server. */
async function arrivalTimes<T>(during: () => Promise<T>): Promise<{ value: T; times: number[] }> {
  const seen = server.requests.length;
  const value = await during();
  return { value, times: server.requests.slice(seen).map((request) => request.at) };
}

describe('ingest against a failing server', () => {
  it('401: says the server rejected the key and where to check it, without the key', async () => {
    server.queueFailure({
      route: 'embeddings',
      status: 401,
      body: { error: { message: `Incorrect API key provided: ${API_KEY}`, code: 'invalid_api_key' } },
    });
    const result = await ingest();
    expect(result.code).toBe(1);
    const { message, hint } = errorLines(result);
    expect(message).toBe(`The server at ${server.baseURL} rejected the API key (401).`);
    expect(hint).toContain('OPENAI_API_KEY');
    expect(server.requestsTo('embeddings')).toHaveLength(1); // not retried
    expect(server.requestsTo('embeddings')[0]!.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expectKeyNowhere(result);
  });

  it('401 with RAGLINE_DEBUG=1: the stacks and causes are printed, the echoed key is not', async () => {
    server.queueFailure({
      route: 'embeddings',
      status: 401,
      body: { error: { message: `Incorrect API key provided: ${API_KEY}`, code: 'invalid_api_key' } },
    });
    const result = await ingest(remoteEnv({ RAGLINE_DEBUG: '1' }));
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('cause: '); // the debug output is there
    expect(result.stderr).toContain('Incorrect API key provided: [redacted]');
    expect(result.stderr).toContain(`error: The server at ${server.baseURL} rejected the API key (401).`);
    expectKeyNowhere(result);
  });

  it('404: names the unknown model and the base URL, and says how to pick another', async () => {
    server.queueFailure({ route: 'embeddings', status: 404 });
    const result = await ingest(remoteEnv({ RAGLINE_EMBED_MODEL: 'no-such-model' }));
    expect(result.code).toBe(1);
    const { message, hint } = errorLines(result);
    expect(message).toBe(`Model "no-such-model" was not found at ${server.baseURL}.`);
    expect(hint).toContain('RAGLINE_EMBED_MODEL');
    expect(hint).toContain('ollama pull no-such-model');
    expectKeyNowhere(result);
  });

  it('connection refused: names the base URL and asks whether the server runs', async () => {
    const closed = server.baseURL;
    await server.close();
    server = await startOpenAIServer(); // for afterEach
    const result = await ingest(remoteEnv({}, closed));
    expect(result.code).toBe(1);
    const { message, hint } = errorLines(result);
    expect(message).toBe(`Could not connect to ${closed}: connection refused after 1 retry.`); // RAGLINE_MAX_RETRIES is 2: a refused connection gets one
    expect(hint).toMatch(/Is the server running\?/);
    expectKeyNowhere(result);
  });

  it('5xx until the retries run out: says how often it tried, names the model', async () => {
    server.queueFailure({ route: 'embeddings', status: 503, count: 10 });
    const result = await ingest();
    expect(result.code).toBe(1);
    const { message, hint } = errorLines(result);
    expect(message).toMatch(new RegExp(`^The server at ${escape(server.baseURL)} failed with 503 after 2 retries \\(model "${EMBED_MODEL}"\\)`));
    expect(hint).toMatch(/server's log/);
    expect(server.requestsTo('embeddings')).toHaveLength(3); // 1 + RAGLINE_MAX_RETRIES
    expectKeyNowhere(result);
  });

  it('429 once: retries and finishes the ingest', async () => {
    server.queueFailure({ route: 'embeddings', status: 429 });
    const result = await ingest();
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/Ingested 2 added/);
    const statuses = server.requestsTo('embeddings');
    // The first request (the dimension probe) got the 429 and was sent again.
    expect(statuses.length).toBeGreaterThanOrEqual(3);
    expect(statuses[0]!.body).toEqual(statuses[1]!.body);
    expectKeyNowhere(result);
  });

  it('stops with the --reindex hint when the index was built by another embedder', async () => {
    const offline = await ingest(isolatedEnv(home));
    expect(offline.code).toBe(0);
    const result = await ingest(remoteEnv({ RAGLINE_EMBED_PROVIDER: 'openai' }));
    expect(result.code).toBe(2);
    const { message, hint } = errorLines(result);
    expect(message).toMatch(/built with the embedder offline:.*openai:fake-embed-model/);
    expect(hint).toContain('ragline ingest <folder> --reindex');
    expectKeyNowhere(result);
  });
});

describe('search against a failing server', () => {
  beforeEach(buildIndex);

  it('embeds the query through the server when everything works', async () => {
    const before = server.requestsTo('embeddings').length;
    const result = await search();
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).results[0].documentPath).toBe('keys.md');
    expect(server.requestsTo('embeddings').slice(before).map((request) => request.body.input)).toEqual([['rotate an API key']]);
  });

  it('401: one line naming the base URL, exit 1, key nowhere', async () => {
    server.queueFailure({ route: 'embeddings', status: 401, body: { error: { message: `Bad key ${API_KEY}` } } });
    const result = await search();
    expect(result.code).toBe(1);
    expect(errorLines(result).message).toBe(`The server at ${server.baseURL} rejected the API key (401).`);
    expectKeyNowhere(result);
  });

  it('404 for the model: names model and base URL', async () => {
    server.queueFailure({ route: 'embeddings', status: 404 });
    const result = await search();
    expect(result.code).toBe(1);
    const { message, hint } = errorLines(result);
    expect(message).toBe(`Model "${EMBED_MODEL}" was not found at ${server.baseURL}.`);
    expect(hint).toContain('ragline doctor');
    expectKeyNowhere(result);
  });

  it('connection refused: names the base URL', async () => {
    // A server no run has connected to: a connection kept alive from an earlier run
    // (they share this process) would be reset rather than refused.
    const gone = await startOpenAIServer();
    const closed = gone.baseURL;
    await gone.close();
    const result = await search(remoteEnv({ RAGLINE_MAX_RETRIES: '0' }, closed));
    expect(result.code).toBe(1);
    expect(errorLines(result).message).toBe(`Could not connect to ${closed}: connection refused.`);
    expectKeyNowhere(result);
  });

  it('429 then success: retried once, results printed', async () => {
    const before = server.requestsTo('embeddings').length;
    server.queueFailure({ route: 'embeddings', status: 429 });
    const result = await search();
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).results.length).toBeGreaterThan(0);
    expect(server.requestsTo('embeddings').length - before).toBe(2);
    expectKeyNowhere(result);
  });

  it('429 with Retry-After: waits as long as the server asked before retrying', async () => {
    const before = server.requests.length;
    server.queueFailure({ route: 'embeddings', status: 429, headers: { 'retry-after': '1' } });
    const { value: result, times } = await arrivalTimes(() => search());
    expect(result.code).toBe(0);
    expect(server.requests.length - before).toBe(2);
    expect(times).toHaveLength(2);
    // Backoff alone would be about 1 ms (RAGLINE_RETRY_BASE_MS=1); the server asked for 1 s.
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(950);
  });

  it('429 asking for longer than ragline waits: stops at once and says how long the server asked', async () => {
    const before = server.requestsTo('embeddings').length;
    server.queueFailure({ route: 'embeddings', status: 429, headers: { 'retry-after': '120' } });
    const result = await search();
    expect(result.code).toBe(1);
    const { message } = errorLines(result);
    expect(message).toBe(`The server at ${server.baseURL} is rate limiting requests (429) and asked to wait 120 s.`);
    expect(server.requestsTo('embeddings').length - before).toBe(1);
    expectKeyNowhere(result);
  });

  it('5xx exhausted: says how often it tried, names the model, exit 1', async () => {
    const before = server.requestsTo('embeddings').length;
    server.queueFailure({ route: 'embeddings', status: 502, count: 10 });
    const result = await search();
    expect(result.code).toBe(1);
    expect(errorLines(result).message).toMatch(
      new RegExp(`^The server at ${escape(server.baseURL)} failed with 502 after 2 retries \\(model "${EMBED_MODEL}"\\)`),
    );
    expect(server.requestsTo('embeddings').length - before).toBe(3);
    expectKeyNowhere(result);
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
