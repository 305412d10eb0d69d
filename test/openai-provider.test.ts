// The OpenAI-compatible providers against a real HTTP server on 127.0.0.1: batching,
// streaming, the retry policy, and the messages a person sees when something fails.

import { createServer } from 'node:net';
import OpenAI from 'openai';
import { APIConnectionError } from 'openai/error';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { describeProviderError, isAbortError } from '../src/providers/describe-error.js';
import {
  createOpenAIClient,
  listModels,
  OpenAIChatModel,
  OpenAIEmbedder,
  PLACEHOLDER_API_KEY,
  type OpenAISettings,
} from '../src/providers/openai.js';
import { backoffDelayMs, retryAfterMs, withRetry } from '../src/providers/retry.js';
import { complete, type ChatChunk } from '../src/providers/types.js';
import { UserError } from '../src/util/errors.js';
import { hashVector, startOpenAIServer, type FakeOpenAI } from './helpers/openai-server.js';

const API_KEY = 'sk-test-SECRET-0123456789abcdef';
const question = [{ role: 'user' as const, content: 'What is ragline?' }];

let server: FakeOpenAI;
let waits: number[];

beforeEach(async () => {
  server = await startOpenAIServer({ embeddingDimensions: 6 });
  waits = [];
});
afterEach(() => server.close());

/** Settings pointing at the fake server; waits are recorded, not slept. Jitter fixed at one half. */
function settings(overrides: Partial<OpenAISettings> = {}): OpenAISettings {
  return {
    baseURL: server.baseURL,
    apiKey: API_KEY,
    model: 'test-model',
    retry: { sleep: async (ms) => void waits.push(ms), random: () => 0.5 },
    ...overrides,
  };
}

async function collect(stream: AsyncIterable<ChatChunk>, onChunk?: (chunk: ChatChunk) => void): Promise<ChatChunk[]> {
  const chunks: ChatChunk[] = [];
  for await (const chunk of stream) {
    chunks.push(chunk);
    onChunk?.(chunk);
  }
  return chunks;
}

async function failure(promise: Promise<unknown>): Promise<UserError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(UserError);
  const userError = error as UserError;
  expect(`${userError.message}\n${userError.hint ?? ''}`).not.toContain(API_KEY);
  return userError;
}

function unitNorm(vector: number[]): number[] {
  const norm = Math.hypot(...vector);
  return vector.map((value) => value / norm);
}

/** A port nothing listens on: bound once, then released. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

describe('OpenAIEmbedder', () => {
  it('splits 10 texts into 3 requests of at most maxBatch 4 and returns vectors in input order', async () => {
    const texts = Array.from({ length: 10 }, (_, i) => `text number ${i}`);
    const embedder = new OpenAIEmbedder(settings({ maxBatch: 4 }));
    const vectors = await embedder.embed(texts);

    const sent = server.requestsTo('embeddings').map((request) => request.body.input);
    expect(sent.map((input) => input.length).sort()).toEqual([2, 4, 4]);
    expect(sent.flat().sort()).toEqual([...texts].sort());
    expect(server.requestsTo('embeddings')[0]!.body).toMatchObject({ model: 'test-model', encoding_format: 'float' });
    expect(vectors).toHaveLength(10);
    vectors.forEach((vector, i) => {
      const expected = unitNorm(hashVector(texts[i]!, 6));
      expect(Array.from(vector)).toEqual(expected.map((value) => expect.closeTo(value, 6)));
    });
  });

  it('returns unit-length vectors and learns the dimension from the first response', async () => {
    const embedder = new OpenAIEmbedder(settings());
    expect(embedder.dimensions).toBe(0);
    expect(embedder.id).toBe('openai:test-model');
    const [vector] = await embedder.embed(['hello']);
    expect(embedder.dimensions).toBe(6);
    expect(Math.hypot(...vector!)).toBeCloseTo(1, 6);
    expect(await embedder.resolveDimensions()).toBe(6);
    expect(server.requestsTo('embeddings')).toHaveLength(1);
  });

  it('probes the dimension with one request when asked before any embedding', async () => {
    const embedder = new OpenAIEmbedder(settings());
    expect(await embedder.resolveDimensions()).toBe(6);
    expect(server.requestsTo('embeddings')).toHaveLength(1);
  });

  it('rejects vectors whose length differs from the configured dimensions', async () => {
    const embedder = new OpenAIEmbedder(settings({ dimensions: 768 }));
    const error = await failure(embedder.embed(['hello']));
    expect(error.message).toBe(
      `Model "test-model" at ${server.baseURL} returned 6-dimensional vectors, but 768 were expected.`,
    );
  });

  it('sends no request for an empty list', async () => {
    expect(await new OpenAIEmbedder(settings()).embed([])).toEqual([]);
    expect(server.requests).toHaveLength(0);
  });

  it('keeps at most `concurrency` batches in flight', async () => {
    let inFlight = 0;
    let maxInFlight = 0;
    const countingFetch = async (input: string | URL | Request, init?: RequestInit) => {
      maxInFlight = Math.max(maxInFlight, ++inFlight);
      try {
        const response = await fetch(input, init);
        await new Promise((resolve) => setTimeout(resolve, 10));
        return response;
      } finally {
        inFlight--;
      }
    };
    const texts = Array.from({ length: 10 }, (_, i) => `t${i}`);
    for (const concurrency of [1, 3]) {
      maxInFlight = 0;
      const client = new OpenAI({ baseURL: server.baseURL, apiKey: API_KEY, maxRetries: 0, fetch: countingFetch });
      await new OpenAIEmbedder(settings({ maxBatch: 2, concurrency }), client).embed(texts);
      expect(maxInFlight).toBe(concurrency);
    }
    expect(server.requestsTo('embeddings')).toHaveLength(10);
  });

  it('stops sending batches once one batch fails for good', async () => {
    server.queueFailure({ route: 'embeddings', status: 401 });
    const texts = Array.from({ length: 20 }, (_, i) => `t${i}`);
    const error = await failure(new OpenAIEmbedder(settings({ maxBatch: 2 })).embed(texts));
    expect(error.message).toBe(`The server at ${server.baseURL} rejected the API key (401).`);
    expect(server.requestsTo('embeddings').length).toBeLessThanOrEqual(3);
  });
});

describe('OpenAIChatModel', () => {
  it('streams tokens in order, then the usage', async () => {
    server.queueChat({ chunks: ['Rag', 'line ', 'is ', 'a tool.'], usage: { prompt_tokens: 12, completion_tokens: 4 } });
    const model = new OpenAIChatModel(settings());
    expect(model.id).toBe('openai:test-model');
    const chunks = await collect(model.stream(question, { maxTokens: 50, temperature: 0.2 }));
    expect(chunks).toEqual([
      { type: 'token', text: 'Rag' },
      { type: 'token', text: 'line ' },
      { type: 'token', text: 'is ' },
      { type: 'token', text: 'a tool.' },
      { type: 'usage', usage: { promptTokens: 12, completionTokens: 4 } },
      { type: 'finish', reason: 'stop' },
    ]);
    expect(server.requestsTo('chat')[0]!.body).toEqual({
      model: 'test-model',
      messages: question,
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 50,
      temperature: 0.2,
    });
  });

  it('works with the complete() helper', async () => {
    server.onChat(() => 'An answer from the default responder');
    expect(await complete(new OpenAIChatModel(settings()), question)).toEqual({
      text: 'An answer from the default responder',
      usage: { promptTokens: 4, completionTokens: 6 },
      finishReason: 'stop',
    });
  });

  it('stops the HTTP stream when the caller stops reading', async () => {
    server.queueChat({ chunks: ['a', 'b', 'c'], chunkDelayMs: 20 });
    for await (const chunk of new OpenAIChatModel(settings()).stream(question)) {
      expect(chunk).toEqual({ type: 'token', text: 'a' });
      break;
    }
    // The next request is served normally: nothing is left half-read.
    server.queueChat('next');
    expect((await complete(new OpenAIChatModel(settings()), question)).text).toBe('next');
  });
});

describe('authentication', () => {
  it('sends the configured key as a bearer token', async () => {
    await new OpenAIEmbedder(settings()).embed(['x']);
    expect(server.requests[0]!.headers.authorization).toBe(`Bearer ${API_KEY}`);
  });

  it('sends a placeholder key to a local server when none is configured', async () => {
    await collect(new OpenAIChatModel(settings({ apiKey: undefined })).stream(question));
    expect(server.requests[0]!.headers.authorization).toBe(`Bearer ${PLACEHOLDER_API_KEY}`);
  });

  it("refuses to use OpenAI's API without a key, on first use and before any request", async () => {
    const embedder = new OpenAIEmbedder({ model: 'text-embedding-3-small' });
    const error = await failure(embedder.embed(['x']));
    expect(error.message).toBe('No API key is set for https://api.openai.com/v1.');
    expect(error.hint).toMatch(/^Set OPENAI_API_KEY/);
    await expect(createOpenAIClient({ model: 'gpt-4o-mini' })).rejects.toThrow(UserError);
  });
});

describe('retries', () => {
  it('retries 429 and honours Retry-After in seconds and retry-after-ms', async () => {
    server.queueFailure({ route: 'embeddings', status: 429, headers: { 'retry-after': '2' } });
    server.queueFailure({ route: 'embeddings', status: 429, headers: { 'retry-after-ms': '1500', 'retry-after': '9' } });
    await new OpenAIEmbedder(settings()).embed(['x']);
    expect(server.requestsTo('embeddings')).toHaveLength(3);
    expect(waits).toEqual([2000, 1500]);
  });

  it('retries 503 with exponential backoff and full jitter, then reports it after 4 retries', async () => {
    server.queueFailure({ route: 'chat', status: 503, count: 5 });
    const error = await failure(collect(new OpenAIChatModel(settings()).stream(question)));
    expect(server.requestsTo('chat')).toHaveLength(5);
    // random() = 0.5 of ceilings 500, 1000, 2000, 4000 ms.
    expect(waits).toEqual([250, 500, 1000, 2000]);
    expect(error.message).toBe(
      `The server at ${server.baseURL} failed with 503 after 4 retries (model "test-model"): The server had an error while processing your request.`,
    );
    expect(error.hint).toMatch(/server's log/);
  });

  it('succeeds when a 5xx clears up within the retries', async () => {
    server.queueFailure({ route: 'chat', status: 503, count: 2 });
    server.queueChat('fine now');
    expect((await complete(new OpenAIChatModel(settings()), question)).text).toBe('fine now');
    expect(server.requestsTo('chat')).toHaveLength(3);
  });

  it('honours maxRetries from the settings', async () => {
    server.queueFailure({ route: 'embeddings', status: 502, count: 10 });
    await failure(new OpenAIEmbedder(settings({ maxRetries: 1 })).embed(['x']));
    expect(server.requestsTo('embeddings')).toHaveLength(2);
  });

  it('gives up at once when Retry-After asks for longer than the 30 s cap', async () => {
    server.queueFailure({ route: 'chat', status: 429, headers: { 'retry-after': '120' } });
    const error = await failure(collect(new OpenAIChatModel(settings()).stream(question)));
    expect(server.requestsTo('chat')).toHaveLength(1);
    expect(waits).toEqual([]);
    expect(error.message).toBe(`The server at ${server.baseURL} is rate limiting requests (429) and asked to wait 120 s.`);
  });

  it('reports a 429 that outlasts the retries', async () => {
    server.queueFailure({ route: 'embeddings', status: 429, count: 5 });
    const error = await failure(new OpenAIEmbedder(settings()).embed(['x']));
    expect(error.message).toBe(`The server at ${server.baseURL} is still rate limiting requests (429) after 4 retries.`);
    expect(error.hint).toMatch(/RAGLINE_EMBED_CONCURRENCY/);
  });

  it.each([401, 403, 404, 400])('does not retry %i', async (status) => {
    server.queueFailure({ route: 'chat', status, count: 5 });
    await failure(collect(new OpenAIChatModel(settings()).stream(question)));
    expect(server.requestsTo('chat')).toHaveLength(1);
    expect(waits).toEqual([]);
  });

  it('retries a connection dropped before any response', async () => {
    server.queueFailure({ route: 'embeddings', cutStreamAfterChunks: 0 });
    await new OpenAIEmbedder(settings()).embed(['x']);
    expect(server.requestsTo('embeddings')).toHaveLength(2);
  });

  it('retries a stream cut before its first token', async () => {
    server.queueChat('whole answer');
    server.queueFailure({ route: 'chat', cutStreamAfterChunks: 0 });
    expect((await complete(new OpenAIChatModel(settings()), question)).text).toBe('whole answer');
    expect(server.requestsTo('chat')).toHaveLength(2);
  });

  it('parses Retry-After as seconds or an HTTP date, and retry-after-ms first', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(retryAfterMs(new Headers({ 'retry-after': '3' }), now)).toBe(3000);
    expect(retryAfterMs(new Headers({ 'retry-after': 'Wed, 01 Jan 2025 00:00:05 GMT' }), now)).toBe(5000);
    expect(retryAfterMs(new Headers({ 'retry-after': 'Tue, 31 Dec 2024 00:00:00 GMT' }), now)).toBe(0);
    expect(retryAfterMs(new Headers({ 'retry-after-ms': '250', 'retry-after': '3' }), now)).toBe(250);
    expect(retryAfterMs(new Headers({ 'retry-after': 'soon' }), now)).toBeUndefined();
    expect(retryAfterMs(new Headers(), now)).toBeUndefined();
  });

  it('keeps backoff within [0, min(cap, base * 2^n))', () => {
    expect(backoffDelayMs(1, { random: () => 0.999 })).toBeLessThan(500);
    expect(backoffDelayMs(3, { random: () => 0 })).toBe(0);
    expect(backoffDelayMs(20, { random: () => 0.5 })).toBe(15_000);
  });
});

describe('error messages', () => {
  it('401: names the server, never the key, even when the server echoes it', async () => {
    server.queueFailure({
      route: 'chat',
      status: 401,
      body: { error: { message: `Incorrect API key provided: ${API_KEY}`, code: 'invalid_api_key' } },
    });
    const error = await failure(collect(new OpenAIChatModel(settings()).stream(question)));
    expect(error.message).toBe(`The server at ${server.baseURL} rejected the API key (401).`);
    expect(error.hint).toBe('Check OPENAI_API_KEY or `ragline config show`.');
    expect(error.exitCode).toBe(1);
  });

  it('scrubs the key from server text that is passed through', async () => {
    server.queueFailure({ route: 'chat', status: 400, body: { error: { message: `bad request for key ${API_KEY}` } } });
    const error = await failure(collect(new OpenAIChatModel(settings()).stream(question)));
    expect(error.message).toBe(
      `The server at ${server.baseURL} refused the chat request for model "test-model" (400): bad request for key [redacted]`,
    );
  });

  it('404 for a chat model: says which model and how to pick another', async () => {
    server.queueFailure({ route: 'chat', status: 404 });
    const error = await failure(collect(new OpenAIChatModel(settings({ model: 'llama9' })).stream(question)));
    // The server's own list of models is named (GET /v1/models here; Ollama's /api/tags there).
    expect(error.message).toBe(`Model "llama9" was not found at ${server.baseURL}. The server has: fake-chat-model, fake-embed-model.`);
    expect(error.hint).toMatch(/^Set RAGLINE_CHAT_MODEL to a model the server has/);
  });

  it('404 for an embedding model points at the embedding setting', async () => {
    server.queueFailure({ route: 'embeddings', status: 404 });
    const error = await failure(new OpenAIEmbedder(settings({ model: 'nomic' })).embed(['x']));
    expect(error.message).toBe(`Model "nomic" was not found at ${server.baseURL}.`);
    expect(error.hint).toMatch(/RAGLINE_EMBED_MODEL/);
  });

  it('404 from a base URL without /v1 says so', async () => {
    const baseURL = server.baseURL.replace(/\/v1$/, '');
    const error = await failure(collect(new OpenAIChatModel(settings({ baseURL })).stream(question)));
    expect(error.message).toBe(`The server at ${baseURL} has no chat endpoint (404).`);
    expect(error.hint).toMatch(/ends in \/v1/);
  });

  it('connection refused: says so and how to start Ollama, after retrying', async () => {
    const baseURL = `http://127.0.0.1:${await closedPort()}/v1`;
    const error = await failure(new OpenAIEmbedder(settings({ baseURL, maxRetries: 1 })).embed(['x']));
    expect(error.message).toBe(`Could not connect to ${baseURL}: connection refused after 1 retry.`);
    expect(error.hint).toBe('Is the server running? For Ollama: `ollama serve`. Or answer offline meanwhile: --provider offline.');
    expect(waits).toHaveLength(1);
  });

  it('connection refused on a closed loopback port: two attempts at most, whatever maxRetries allows, for embeddings and chat', async () => {
    const baseURL = `http://127.0.0.1:${await closedPort()}/v1`;
    const fetchSpy = vi.spyOn(globalThis, 'fetch');
    try {
      const embed = await failure(new OpenAIEmbedder(settings({ baseURL, maxRetries: 4 })).embed(['x']));
      expect(embed.message).toBe(`Could not connect to ${baseURL}: connection refused after 1 retry.`);
      expect(fetchSpy).toHaveBeenCalledTimes(2);
      expect(waits).toHaveLength(1);
      fetchSpy.mockClear();
      await failure(collect(new OpenAIChatModel(settings({ baseURL, maxRetries: 4 })).stream(question)));
      expect(fetchSpy).toHaveBeenCalledTimes(2);
    } finally {
      fetchSpy.mockRestore();
    }
  });

  it('a port that fetch refuses to use (9, 6000, 10080...) fails at once and says which port and why', async () => {
    const baseURL = 'http://127.0.0.1:10080/v1'; // fetch refuses it before any connection is made
    const fetchSpy = vi.spyOn(globalThis, 'fetch');
    try {
      const error = await failure(new OpenAIEmbedder(settings({ baseURL, maxRetries: 4 })).embed(['x']));
      expect(fetchSpy).toHaveBeenCalledTimes(1);
      expect(waits).toHaveLength(0);
      expect(error.message).toBe(`Could not connect to ${baseURL}: port 10080 is one that fetch refuses to use (a "bad port").`);
      expect(error.hint).toMatch(/another port/);
    } finally {
      fetchSpy.mockRestore();
    }
  });

  it('an unknown host is not retried; a dropped connection still is, up to maxRetries', async () => {
    const unknownHost = new APIConnectionError({
      cause: Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('getaddrinfo ENOTFOUND llm.example'), { code: 'ENOTFOUND' }) }),
    });
    const reset = new APIConnectionError({
      cause: Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }) }),
    });
    for (const [error, attempts] of [[unknownHost, 1], [reset, 5]] as const) {
      let calls = 0;
      await expect(
        withRetry(async () => {
          calls++;
          throw error;
        }, { maxRetries: 4, sleep: async () => {} }),
      ).rejects.toBe(error);
      expect(calls).toBe(attempts);
    }
  });

  it('unknown host', () => {
    const cause = Object.assign(new TypeError('fetch failed'), {
      cause: Object.assign(new Error('getaddrinfo ENOTFOUND llm.example'), { code: 'ENOTFOUND' }),
    });
    const error = describeProviderError(new APIConnectionError({ cause }), {
      baseURL: 'http://llm.example:8080/v1',
      model: 'm',
      operation: 'chat',
    });
    expect(error.message).toBe('Could not connect to http://llm.example:8080/v1: unknown host "llm.example".');
  });

  it('timeout: says how long it waited and does not retry', async () => {
    server.queueFailure({ route: 'chat', delayMs: 1000 });
    const error = await failure(collect(new OpenAIChatModel(settings({ timeoutMs: 100 })).stream(question)));
    expect(error.message).toBe(
      `The server at ${server.baseURL} did not answer the chat request for model "test-model" within 0.1 s.`,
    );
    expect(error.hint).toBe('A local model may still be loading: try again, or raise RAGLINE_TIMEOUT_MS.');
    expect(server.requestsTo('chat')).toHaveLength(1);
  });

  it('a stream cut after tokens is an error, not a short answer, and is not retried', async () => {
    server.queueChat({ chunks: ['The ', 'answer ', 'is ', '42.'] });
    server.queueFailure({ route: 'chat', cutStreamAfterChunks: 2 });
    const received: string[] = [];
    const error = await failure(
      collect(new OpenAIChatModel(settings()).stream(question), (chunk) => {
        if (chunk.type === 'token') received.push(chunk.text);
      }),
    );
    expect(received).toEqual(['The ', 'answer ']);
    expect(error.message).toBe(`The answer stream from ${server.baseURL} stopped midway (model "test-model").`);
    expect(server.requestsTo('chat')).toHaveLength(1);
  });

  it('a stream that ends cleanly without a finish reason is also an error', async () => {
    const truncated = [
      'data: {"id":"x","object":"chat.completion.chunk","created":0,"model":"m","choices":[{"index":0,"delta":{"content":"Half"},"finish_reason":null}]}',
      '',
      '',
    ].join('\n');
    const client = new OpenAI({
      baseURL: server.baseURL,
      apiKey: API_KEY,
      maxRetries: 0,
      fetch: async () => new Response(truncated, { headers: { 'content-type': 'text/event-stream' } }),
    });
    const model = new OpenAIChatModel({ ...settings(), operation: 'rewrite' }, client);
    const error = await failure(collect(model.stream(question)));
    expect(error.message).toBe(`The query rewrite stream from ${server.baseURL} stopped midway (model "test-model").`);
  });

  it('drops user:password from the base URL it shows', () => {
    const error = describeProviderError(new Error('boom'), {
      baseURL: 'http://me:hunter22@llm.example/v1',
      model: 'm',
      operation: 'embed',
    });
    expect(error.message).toBe('The embedding request to http://llm.example/v1 failed: boom');
  });
});

describe('cancellation', () => {
  it('aborting mid-answer stops the stream with an abort error', async () => {
    server.queueChat({ chunks: ['one ', 'two ', 'three ', 'four'], chunkDelayMs: 30 });
    const controller = new AbortController();
    const received: string[] = [];
    const error = await failure(
      collect(new OpenAIChatModel(settings()).stream(question, { signal: controller.signal }), (chunk) => {
        if (chunk.type === 'token') received.push(chunk.text);
        controller.abort();
      }),
    );
    expect(received).toEqual(['one ']);
    expect(isAbortError(error)).toBe(true);
    expect(error.exitCode).toBe(130);
    expect(error.message).toBe(`The chat request to ${server.baseURL} was cancelled.`);
  });

  it('an already-aborted signal sends nothing', async () => {
    const error = await failure(new OpenAIEmbedder(settings()).embed(['x'], AbortSignal.abort()));
    expect(isAbortError(error)).toBe(true);
    expect(server.requests).toHaveLength(0);
  });

  it('aborting during a retry wait ends the wait at once', async () => {
    // A wait of ten minutes, on the real, timer-based sleep: had the abort not ended it,
    // the test would run past its timeout.
    server.queueFailure({ route: 'embeddings', status: 503, headers: { 'retry-after': '600' } });
    const controller = new AbortController();
    const embedder = new OpenAIEmbedder({ ...settings(), retry: { maxDelayMs: 600_000 } });
    setTimeout(() => controller.abort(), 100);
    const error = await failure(embedder.embed(['x'], controller.signal));
    expect(isAbortError(error)).toBe(true);
    expect(server.requests).toHaveLength(1);
  });

  it('leaves no listeners behind on a signal reused for many calls', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on('warning', onWarning);
    try {
      const session = new AbortController();
      const model = new OpenAIChatModel(settings());
      for (let turn = 0; turn < 12; turn++) await complete(model, question, { signal: session.signal });
      const texts = Array.from({ length: 24 }, (_, i) => `t${i}`);
      await new OpenAIEmbedder(settings({ maxBatch: 2 })).embed(texts, session.signal);
      await new Promise((resolve) => setTimeout(resolve, 10));
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings).not.toContain('MaxListenersExceededWarning');
  });

  it('other failures are not abort errors', async () => {
    server.queueFailure({ route: 'chat', status: 401 });
    expect(isAbortError(await failure(collect(new OpenAIChatModel(settings()).stream(question))))).toBe(false);
  });
});

describe('listModels', () => {
  it("returns the ids the server lists", async () => {
    server.setModels(['llama3.2', 'nomic-embed-text']);
    expect(await listModels(settings())).toEqual(['llama3.2', 'nomic-embed-text']);
  });

  it('explains a server without a model list', async () => {
    server.queueFailure({ route: 'models', status: 404, body: '404 page not found' });
    const error = await failure(listModels(settings()));
    expect(error.message).toBe(`The server at ${server.baseURL} has no model list (404).`);
  });
});
