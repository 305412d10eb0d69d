// `ragline chat` (piped: one question per line) and `ragline ask` end to end through
// the CLI run in-process (Ctrl-C: as child processes of the built CLI), against a real
// OpenAI-compatible server on 127.0.0.1 whose rewrite and answer replies are
// scripted and streamed as server-sent events, or fully offline. Each test reads
// back what a person would see (stdout/stderr) and what the turn left in the
// SQLite file, opened here with better-sqlite3.
//
// Two indexes of fixtures/docs are built once and copied into each test's data dir:
// one embedded by the server (so the test can see which query text got embedded)
// and one by the offline embedder (RAGLINE_EMBED_PROVIDER=offline: only chat goes
// to the server, so failures hit the answer and nothing else).

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BIN, FIXTURE_DOCS, ROOT, isolatedEnv, ragline, tempDir, type CliResult } from './helpers/cli.js';
import { startOpenAIServer, type FakeOpenAI, type RecordedRequest } from './helpers/openai-server.js';
import { OFFLINE_REWRITER_ID } from '../src/rewrite/offline.js';

const API_KEY = 'sk-test-CHAT-SECRET-93b1f0c6a2d84e57';
const CHAT_MODEL = 'fake-chat-model';
const REWRITE_MODEL = 'fake-rewrite-model';
const EMBED_MODEL = 'fake-embed-model';

const Q1 = 'How do I create an API key?';
const FOLLOW_UP = 'does it expire?';
const STANDALONE = 'Do Orbitly API keys expire?';
/** Streamed in these pieces, one SSE event each. */
const ANSWER_1 = ['Create a key ', 'under Workspace settings → API keys ', '→ New key [1].'];
const ANSWER_2 = ['Yes: API keys ', 'expire after 90 days ', 'by default [1].'];
const ANSWER_OTHER = ['Check the ', 'X-Orbitly-Signature header [1].'];

type Template = 'remote' | 'offline';
const templates: Record<Template, string> = { remote: '', offline: '' };

let home: string;
let server: FakeOpenAI;

const dataDir = (root: string) => path.join(root, 'data', 'ragline');
const dbFile = () => path.join(dataDir(home), 'ragline.db');

/** A user pointing ragline at the test server with a key; embeddings offline unless `remoteEmbeddings`. */
function serverEnv(options: { remoteEmbeddings?: boolean; baseURL?: string; extra?: Record<string, string> } = {}): NodeJS.ProcessEnv {
  return isolatedEnv(home, {
    RAGLINE_BASE_URL: options.baseURL ?? server.baseURL,
    RAGLINE_API_KEY: API_KEY,
    RAGLINE_CHAT_MODEL: CHAT_MODEL,
    RAGLINE_REWRITE_MODEL: REWRITE_MODEL,
    RAGLINE_EMBED_MODEL: EMBED_MODEL,
    RAGLINE_EMBED_PROVIDER: options.remoteEmbeddings ? undefined : 'offline',
    RAGLINE_MAX_RETRIES: '0',
    RAGLINE_RETRY_BASE_MS: '1',
    // These tests script the rewrite and answer requests in order; topic extraction
    // by the model (one more request per answer) is tested in chat-turn.test.ts.
    RAGLINE_TOPICS: 'local',
    ...options.extra,
  });
}

beforeAll(async () => {
  if (!fs.existsSync(path.join(ROOT, 'dist/cli/main.js'))) throw new Error('Build first: npx tsc -p .');
  const indexServer = await startOpenAIServer();
  try {
    for (const kind of ['remote', 'offline'] as const) {
      const root = tempDir(`ragline-chat-${kind}-`);
      const env =
        kind === 'remote'
          ? isolatedEnv(root, { RAGLINE_BASE_URL: indexServer.baseURL, RAGLINE_API_KEY: API_KEY, RAGLINE_EMBED_MODEL: EMBED_MODEL })
          : isolatedEnv(root);
      const result = await ragline(['ingest', FIXTURE_DOCS], { env });
      expect(result.code, result.stderr).toBe(0);
      templates[kind] = root;
    }
  } finally {
    await indexServer.close();
  }
});

afterAll(() => {
  for (const root of Object.values(templates)) if (root) fs.rmSync(root, { recursive: true, force: true });
});

beforeEach(async () => {
  home = tempDir();
  server = await startOpenAIServer();
});

afterEach(async () => {
  await server.close();
  fs.rmSync(home, { recursive: true, force: true });
});

/** Copies a prebuilt index into this test's data dir. */
function useIndex(kind: Template): void {
  fs.mkdirSync(dataDir(home), { recursive: true });
  for (const file of fs.readdirSync(dataDir(templates[kind]))) {
    fs.copyFileSync(path.join(dataDir(templates[kind]), file), path.join(dataDir(home), file));
  }
}

const isRewriteRequest = (request: RecordedRequest) => String(request.body?.messages?.[0]?.content).startsWith('You rewrite the last message');
const lastUser = (body: any): string => [...body.messages].reverse().find((m: any) => m.role === 'user').content;

/** The question an answer prompt carries (the lines after the documents). */
const askedIn = (body: any): string => lastUser(body).slice(lastUser(body).lastIndexOf('\n\nQuestion'));

/**
 * Scripts the model: the rewrite prompt gets `rewrite`, answer prompts get an answer
 * chosen by the question they carry.
 */
function scriptModel(rewrite = STANDALONE): void {
  server.onChat((body) => {
    if (String(body.messages[0].content).startsWith('You rewrite the last message')) return rewrite;
    const question = askedIn(body);
    if (/expire/.test(question)) return { chunks: ANSWER_2 };
    if (/webhook/i.test(question)) return { chunks: ANSWER_OTHER };
    return { chunks: ANSWER_1 };
  });
}

function chat(input: string[], env: NodeJS.ProcessEnv, args: string[] = []): Promise<CliResult> {
  return ragline(['chat', ...args], { env, input: input.join('\n') + '\n' });
}

function ask(question: string, env: NodeJS.ProcessEnv, args: string[] = []): Promise<CliResult> {
  return ragline(['ask', ...args, question], { env });
}

interface TurnRow {
  id: number;
  session_id: string;
  ordinal: number;
  status: string;
  error: string | null;
  question: string;
  standalone_query: string | null;
  rewrite_decision: string | null;
  rewrite_reason: string | null;
  rewrite_error: string | null;
  answer: string | null;
  answer_kind: string | null;
  rewrite_model: string | null;
  chat_model: string | null;
  embed_model: string | null;
  prompt_json: string | null;
  rewrite_prompt_json: string | null;
  timings_json: string | null;
  usage_json: string | null;
}

interface TurnChunkRow {
  rank: number;
  document_path: string;
  start_line: number;
  end_line: number;
  score: number;
  vector_rank: number | null;
  vector_distance: number | null;
  keyword_rank: number | null;
  bm25: number | null;
}

/** Every turn in the database, oldest first, with its chunks. */
function readTurns(): (TurnRow & { chunks: TurnChunkRow[] })[] {
  const db = new Database(dbFile(), { readonly: true });
  try {
    const turns = db.prepare('SELECT * FROM turns ORDER BY id').all() as TurnRow[];
    const chunks = db.prepare('SELECT * FROM turn_chunks WHERE turn_id = ? ORDER BY rank');
    return turns.map((turn) => ({ ...turn, chunks: chunks.all(turn.id) as TurnChunkRow[] }));
  } finally {
    db.close();
  }
}

/** Chunk lines as printed: rank and `path:start-end`. */
function printedChunks(stdout: string): { rank: number; location: string }[] {
  return [...stdout.matchAll(/^\s+(\d+)\s+\d+\.\d{4}\s+(\S+:\d+-\d+)/gm)].map((m) => ({ rank: Number(m[1]), location: m[2]! }));
}

const location = (chunk: TurnChunkRow) => `${chunk.document_path}:${chunk.start_line}-${chunk.end_line}`;

/** The key must not be in the output, nor in the database or its side files, byte for byte. */
function expectKeyNowhere(...results: CliResult[]): void {
  for (const result of results) {
    expect(result.stdout).not.toContain(API_KEY);
    expect(result.stderr).not.toContain(API_KEY);
  }
  const key = Buffer.from(API_KEY, 'utf8');
  for (const suffix of ['', '-wal', '-journal', '-shm']) {
    const file = dbFile() + suffix;
    if (fs.existsSync(file)) expect(fs.readFileSync(file).includes(key), `${file} holds the key`).toBe(false);
  }
}

/** Checks everything turn 2 (the follow-up) left behind: requests, output, rows. */
function expectFollowUpTrail(stdout: string, embeddingsToServer: boolean): void {
  // What the server was asked: answer 1, then the rewrite, then answer 2, all streamed.
  const chats = server.requestsTo('chat');
  expect(chats.map((r) => (isRewriteRequest(r) ? 'rewrite' : 'answer'))).toEqual(['answer', 'rewrite', 'answer']);
  expect(chats.every((r) => r.body.stream === true)).toBe(true);
  expect(chats.map((r) => r.body.model)).toEqual([CHAT_MODEL, REWRITE_MODEL, CHAT_MODEL]);
  expect(chats.every((r) => r.headers.authorization === `Bearer ${API_KEY}`)).toBe(true);
  const rewritePrompt = lastUser(chats[1]!.body);
  expect(rewritePrompt).toContain(`User: ${Q1}`);
  expect(rewritePrompt).toContain(`Assistant: ${ANSWER_1.join('')}`);
  expect(rewritePrompt).toContain(`Last message: ${FOLLOW_UP}`);
  const answerPrompt = lastUser(chats[2]!.body);
  expect(answerPrompt).toContain(`Question (as asked): ${FOLLOW_UP}`);
  expect(answerPrompt).toContain(`: ${STANDALONE}`);
  expect(answerPrompt).toMatch(/<document n="1" source="[^"]+:\d+-\d+"/);
  // The earlier exchange goes to the answer model as conversation.
  expect(chats[2]!.body.messages.slice(1, 3)).toEqual([
    { role: 'user', content: Q1 },
    { role: 'assistant', content: ANSWER_1.join('') },
  ]);

  const embeddings = server.requestsTo('embeddings');
  if (embeddingsToServer) {
    // The follow-up was searched with the rewritten query first (the question as typed
    // may be searched beside it and fused, but never instead of it).
    expect(embeddings[0]!.body.input).toEqual([Q1]);
    const followUpInputs: string[] = embeddings.slice(1).flatMap((r) => r.body.input);
    expect(followUpInputs[0]).toBe(STANDALONE);
    expect(followUpInputs.every((input) => input === STANDALONE || input === FOLLOW_UP)).toBe(true);
  } else {
    expect(embeddings).toEqual([]);
  }

  // What a person sees.
  expect(stdout).toMatch(/↳ not rewritten \(first turn/);
  const rewriteLine = /↳ searching for: (.+) \(rewritten: (.+)\)$/m.exec(stdout);
  expect(rewriteLine?.[1]).toBe(STANDALONE);
  expect(stdout).toContain(ANSWER_1.join(''));
  expect(stdout).toContain(ANSWER_2.join(''));

  // What the database holds.
  const turns = readTurns();
  expect(turns).toHaveLength(2);
  const [first, second] = turns as [(typeof turns)[0], (typeof turns)[0]];
  expect(second.session_id).toBe(first.session_id);
  expect(first).toMatchObject({
    ordinal: 1,
    status: 'answered',
    question: Q1,
    standalone_query: Q1,
    rewrite_decision: 'skipped',
    rewrite_prompt_json: null,
    answer: ANSWER_1.join(''),
  });
  expect(first.rewrite_reason).toMatch(/^first turn/);
  expect(second).toMatchObject({
    ordinal: 2,
    status: 'answered',
    error: null,
    question: FOLLOW_UP,
    standalone_query: STANDALONE,
    rewrite_decision: 'rewritten',
    rewrite_reason: rewriteLine![2],
    answer: ANSWER_2.join(''),
    answer_kind: 'llm',
    rewrite_model: `openai:${REWRITE_MODEL}`,
    chat_model: `openai:${CHAT_MODEL}`,
    embed_model: embeddingsToServer ? `openai:${EMBED_MODEL}` : expect.stringMatching(/^offline:/),
  });
  expect(second.rewrite_reason).not.toBe('');
  expect(JSON.parse(second.rewrite_prompt_json!)).toEqual(chats[1]!.body.messages);
  expect(JSON.parse(second.prompt_json!)).toEqual(chats[2]!.body.messages);

  const timings = JSON.parse(second.timings_json!);
  for (const stage of ['historyMs', 'rewriteMs', 'retrieveMs', 'answerMs', 'persistMs', 'totalMs']) {
    expect(timings[stage], stage).toBeGreaterThanOrEqual(0);
  }
  expect(timings.totalMs).toBeGreaterThanOrEqual(timings.rewriteMs + timings.retrieveMs + timings.answerMs);
  const usage = JSON.parse(second.usage_json!);
  expect(usage.answer).toEqual({ promptTokens: expect.any(Number), completionTokens: ANSWER_2.length });
  expect(usage.rewrite).toEqual({ promptTokens: expect.any(Number), completionTokens: expect.any(Number) });
  expect(usage.answer.promptTokens).toBeGreaterThan(0);

  // Chunks: ranked 1..k with score parts, printed in that order, cited by [1].
  expect(second.chunks.map((c) => c.rank)).toEqual([1, 2, 3, 4, 5]);
  for (const chunk of second.chunks) {
    expect(chunk.score).toBeGreaterThan(0);
    expect(chunk.vector_rank !== null || chunk.keyword_rank !== null).toBe(true);
    if (chunk.vector_rank !== null) expect(chunk.vector_distance).toEqual(expect.any(Number));
    if (chunk.keyword_rank !== null) expect(chunk.bm25).toEqual(expect.any(Number));
  }
  const scores = second.chunks.map((c) => c.score);
  expect(scores).toEqual([...scores].sort((a, b) => b - a));
  const printed = printedChunks(stdout);
  expect(printed.slice(5)).toEqual(second.chunks.map((c) => ({ rank: c.rank, location: location(c) })));
  expect(printed.slice(0, 5)).toEqual(first.chunks.map((c) => ({ rank: c.rank, location: location(c) })));
  expect(stdout).toContain(`[1] ${location(second.chunks[0]!)}`);
}

describe('a conversation against an OpenAI-compatible server', () => {
  it('piped chat: the follow-up is rewritten, the rewrite is embedded and shown, the answer streamed and cited, the trail stored', async () => {
    useIndex('remote');
    scriptModel();
    const result = await chat([Q1, FOLLOW_UP], serverEnv({ remoteEmbeddings: true }));
    expect(result.stderr).toMatch(/^session s-[0-9a-f]{6}\n$/);
    expect(result.code).toBe(0);
    expectFollowUpTrail(result.stdout, true);
    expectKeyNowhere(result);
  });

  it('ask --session last: the same trail across two processes', async () => {
    useIndex('remote');
    scriptModel();
    const env = serverEnv({ remoteEmbeddings: true });
    const first = await ask(Q1, env);
    expect(first.code, first.stderr).toBe(0);
    const second = await ask(FOLLOW_UP, env, ['--session', 'last']);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toBe(first.stderr); // "session s-…": the same one
    expectFollowUpTrail(first.stdout + second.stdout, true);
    expectKeyNowhere(first, second);
  });

  it('with offline embeddings only chat goes to the server: the log shows the rewrite prompt, then the answer prompt', async () => {
    useIndex('offline');
    scriptModel();
    const result = await chat([Q1, FOLLOW_UP], serverEnv());
    expect(result.code, result.stderr).toBe(0);
    expectFollowUpTrail(result.stdout, false);
  });

  it('the gate makes no rewrite call for a standalone question, and no call at all for "thanks!"', async () => {
    useIndex('remote');
    scriptModel();
    const standalone = 'How do I verify the signature of a webhook request?';
    const result = await chat([Q1, standalone, 'thanks!'], serverEnv({ remoteEmbeddings: true }));
    expect(result.code, result.stderr).toBe(0);

    // Two answers, no rewrite; two query embeddings, none for the thanks.
    expect(server.requestsTo('chat').map((r) => (isRewriteRequest(r) ? 'rewrite' : 'answer'))).toEqual(['answer', 'answer']);
    expect(server.requestsTo('embeddings').map((r) => r.body.input)).toEqual([[Q1], [standalone]]);
    // Besides the OpenAI API: only the short probes that ask which server this is.
    expect(server.requests.filter((r) => r.route === 'chat' || r.route === 'embeddings')).toHaveLength(4);
    expect(server.requests.filter((r) => r.route !== 'chat' && r.route !== 'embeddings').every((r) => r.method === 'GET')).toBe(true);

    const lines = result.stdout.split('\n');
    const rewriteLines = lines.filter((line) => line.startsWith('↳'));
    expect(rewriteLines).toHaveLength(3);
    expect(rewriteLines[1]).toMatch(/^↳ not rewritten \(.+\)$/);
    expect(rewriteLines[2]).toBe('↳ no search (small talk)');
    // The small-talk reply comes right after its line, with no chunks in between.
    const at = lines.indexOf('↳ no search (small talk)');
    expect(lines[at + 1]).toBe("You're welcome.");

    const [, second, thanks] = readTurns();
    expect(second).toMatchObject({ question: standalone, standalone_query: standalone, rewrite_decision: 'skipped', rewrite_prompt_json: null });
    expect(second!.chunks).toHaveLength(5);
    expect(thanks).toMatchObject({
      question: 'thanks!',
      status: 'answered',
      rewrite_decision: 'small_talk',
      answer_kind: 'small_talk',
      answer: "You're welcome.",
      chat_model: null,
      prompt_json: null,
    });
    expect(thanks!.chunks).toEqual([]);
  });

  it("a failing rewrite (500, no retries left) gives way to the offline rewriter's, and the answer still comes", async () => {
    useIndex('remote');
    scriptModel();
    const env = serverEnv({ remoteEmbeddings: true });
    const first = await ask(Q1, env);
    expect(first.code, first.stderr).toBe(0);
    server.queueFailure({ route: 'chat', status: 500 });
    const result = await ask(FOLLOW_UP, env, ['--session', 'last']);
    expect(result.code, result.stderr).toBe(0);

    const chats = server.requestsTo('chat');
    expect(chats.map((r) => (isRewriteRequest(r) ? 'rewrite' : 'answer'))).toEqual(['answer', 'rewrite', 'answer']);
    const offline = 'does the API key expire?';
    expect(server.requestsTo('embeddings').map((r) => r.body.input)).toEqual([[Q1], [offline, FOLLOW_UP]]);

    const line = result.stdout.split('\n').find((l) => l.startsWith('↳'));
    expect(line).toMatch(/^↳ searching for: does the API key expire\? \(rewritten: offline rewrite, as the model failed: .*500/);
    expect(result.stdout).toContain(ANSWER_2.join(''));
    expect(result.stderr).not.toMatch(/error/i);

    const [, turn] = readTurns();
    expect(turn).toMatchObject({
      status: 'answered',
      question: FOLLOW_UP,
      standalone_query: offline,
      rewrite_decision: 'rewritten',
      answer: ANSWER_2.join(''),
      rewrite_model: OFFLINE_REWRITER_ID,
    });
    expect(turn!.rewrite_reason).toMatch(/^offline rewrite, as the model failed: .*500/);
    expect(turn!.rewrite_error).toMatch(/500/);
    expect(lastUser({ messages: JSON.parse(turn!.prompt_json!) })).toContain(`Question (as asked): ${FOLLOW_UP}\nStandalone question (the same, with context from the conversation): ${offline}`);
    expectKeyNowhere(first, result);
  });
});

interface FailureCase {
  name: string;
  /** Set up the server (or hand back another base URL) so the next answer request fails. */
  arrange(): Promise<{ baseURL?: string; extra?: Record<string, string> }>;
  message(baseURL: string): string;
  hint: RegExp;
  /** Whether the second question of a piped chat fails too (a server that is down stays down). */
  persistent?: boolean;
  /** Part of the answer streamed before the failure, kept with the failed turn. */
  partial?: string;
}

const failures: FailureCase[] = [
  {
    name: '401 (the server echoes the key back)',
    arrange: async () => {
      server.queueFailure({
        route: 'chat',
        status: 401,
        body: { error: { message: `Incorrect API key provided: ${API_KEY}`, code: 'invalid_api_key' } },
      });
      return {};
    },
    message: (url) => `The server at ${url} rejected the API key (401).`,
    hint: /OPENAI_API_KEY/,
  },
  {
    name: '404 unknown model',
    arrange: async () => {
      server.queueFailure({ route: 'chat', status: 404 });
      return { extra: { RAGLINE_CHAT_MODEL: 'no-such-model' } };
    },
    message: (url) => `Model "no-such-model" was not found at ${url}. The server has: fake-chat-model, fake-embed-model.`,
    hint: /RAGLINE_CHAT_MODEL.*ollama pull no-such-model/,
  },
  {
    name: '400 whose text quotes the key (shown, with the key scrubbed)',
    arrange: async () => {
      server.queueFailure({
        route: 'chat',
        status: 400,
        body: { error: { message: `Invalid temperature for key ${API_KEY}.`, code: 'invalid_value' } },
      });
      return {};
    },
    message: (url) => `The server at ${url} refused the chat request for model "${CHAT_MODEL}" (400): Invalid temperature for key [redacted].`,
    hint: /ragline config show/,
  },
  {
    name: 'connection refused (closed port)',
    arrange: async () => {
      const closed = await startOpenAIServer();
      await closed.close();
      return { baseURL: closed.baseURL };
    },
    message: (url) => `Could not connect to ${url}: connection refused.`,
    hint: /Is the server running\?/,
    persistent: true,
  },
  {
    name: 'stream cut midway',
    arrange: async () => {
      server.queueFailure({ route: 'chat', cutStreamAfterChunks: 2 });
      return {};
    },
    message: (url) => `The answer stream from ${url} stopped midway (model "${CHAT_MODEL}").`,
    hint: /Try again/,
    partial: ANSWER_1.slice(0, 2).join(''),
  },
];

describe.each(failures)('the answer fails: $name', (failure) => {
  it('ask: one line naming the server (and model), a hint, exit 1, the question stored as failed, no key anywhere', async () => {
    useIndex('offline');
    scriptModel();
    const { baseURL = server.baseURL, extra } = await failure.arrange();
    const result = await ask(Q1, serverEnv({ baseURL, extra }));

    expect(result.code).toBe(1);
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines).toEqual([`error: ${failure.message(baseURL)}`, expect.stringMatching(failure.hint), 'session asks']);
    // Chunks were found before the answer failed; a partial answer stays on screen.
    expect(printedChunks(result.stdout).length).toBeGreaterThan(0);
    if (failure.partial) expect(result.stdout).toContain(failure.partial);

    const [turn] = readTurns();
    expect(turn).toMatchObject({
      status: 'failed',
      question: Q1,
      error: failure.message(baseURL),
      answer: failure.partial ?? null,
    });
    expect(turn!.chunks.length).toBeGreaterThan(0);
    expectKeyNowhere(result);
  });

  it('piped chat: reports it and goes on to the next question, exit 1 at the end', async () => {
    useIndex('offline');
    scriptModel();
    const { baseURL = server.baseURL, extra } = await failure.arrange();
    const next = 'How do I verify the signature of a webhook request?';
    const result = await chat([Q1, next], serverEnv({ baseURL, extra }));

    expect(result.code).toBe(1);
    const errors = result.stderr.split('\n').filter((line) => line.startsWith('error: '));
    expect(errors).toEqual(Array(failure.persistent ? 2 : 1).fill(`error: ${failure.message(baseURL)}`));
    expect(result.stderr).toMatch(/session s-[0-9a-f]{6}\n$/);

    const turns = readTurns();
    expect(turns.map((t) => [t.question, t.status])).toEqual([
      [Q1, 'failed'],
      [next, failure.persistent ? 'failed' : 'answered'],
    ]);
    if (!failure.persistent) {
      expect(result.stdout).toContain(ANSWER_OTHER.join(''));
      // A failed turn is no conversation: the next question is a first turn, not rewritten.
      expect(turns[1]!.rewrite_decision).toBe('skipped');
    }
    expectKeyNowhere(result);
  });
});

describe('--json', () => {
  /** Parses every line (each must be JSON) and splits the events into turns at `start`. */
  function turnsOf(stdout: string): any[][] {
    const lines = stdout.split('\n').filter((line) => line !== '');
    const events = lines.map((line) => JSON.parse(line));
    const turns: any[][] = [];
    for (const event of events) {
      if (event.type === 'start') turns.push([]);
      turns.at(-1)!.push(event);
    }
    return turns;
  }

  const shape = (events: any[]) =>
    events
      .map((e) => e.type)
      .join(' ')
      .replace(/(token ?)+/g, 'token+ ')
      .trim();

  it('chat --json prints NDJSON: start, rewrite, retrieval, token..., done for every turn; small talk has no retrieval', async () => {
    useIndex('remote');
    scriptModel();
    const result = await chat([Q1, FOLLOW_UP, 'thanks!'], serverEnv({ remoteEmbeddings: true }), ['--json']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout.endsWith('\n')).toBe(true);

    const turns = turnsOf(result.stdout);
    expect(turns.map(shape)).toEqual([
      'start rewrite retrieval token+ done',
      'start rewrite retrieval token+ done',
      'start rewrite token+ done',
    ]);
    const [first, second] = turns as [any[], any[]];
    // Tokens arrive as they were streamed, one event per SSE chunk.
    expect(first.filter((e) => e.type === 'token').map((e) => e.text)).toEqual(ANSWER_1);
    expect(second.filter((e) => e.type === 'token').map((e) => e.text)).toEqual(ANSWER_2);
    expect(second[1]).toMatchObject({ type: 'rewrite', question: FOLLOW_UP, standaloneQuery: STANDALONE, decision: 'rewritten' });
    expect(second[2]).toMatchObject({ type: 'retrieval', query: STANDALONE });
    expect(second[2].chunks).toHaveLength(5);
    const done = second.at(-1);
    expect(done).toMatchObject({ type: 'done', status: 'answered', ordinal: 2, answer: ANSWER_2.join(''), answerKind: 'llm' });
    expect(done.citations[0]).toMatchObject({ n: 1, chunkId: second[2].chunks[0].chunkId });
    expect(new Set(turns.map((t) => t[0].sessionId)).size).toBe(1);
    expectKeyNowhere(result);
  });

  it('ask --json with a failing answer: start, rewrite, retrieval, error, done(failed), nothing on stderr, exit 1', async () => {
    useIndex('offline');
    server.queueFailure({ route: 'chat', status: 401 });
    const result = await ask(Q1, serverEnv(), ['--json']);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('');
    const [events] = turnsOf(result.stdout) as [any[]];
    expect(shape(events)).toBe('start rewrite retrieval error done');
    expect(events[3]).toMatchObject({ type: 'error', status: 'failed', message: `The server at ${server.baseURL} rejected the API key (401).` });
    expect(events[4]).toMatchObject({ type: 'done', status: 'failed', answer: '' });
  });
  it('chat --json keeps stdout NDJSON when slash commands are piped in: their output goes to stderr', async () => {
    useIndex('offline');
    const result = await chat([Q1, '/k 3', '/history', '/nonsense', FOLLOW_UP], isolatedEnv(home), ['--json']);
    expect(result.code, result.stderr).toBe(0);
    const turns = turnsOf(result.stdout); // throws on a line that is not JSON
    expect(turns.map(shape)).toEqual(['start rewrite retrieval token+ done', 'start rewrite retrieval token+ done']);
    expect(turns[1]!.find((e) => e.type === 'retrieval').chunks).toHaveLength(3);
    expect(result.stderr).toContain('retrieving 3 chunks per question');
    expect(result.stderr).toMatch(/^\s+1 {2}How do I create an API key\?$/m);
    expect(result.stderr).toContain('Unknown command /nonsense.');
  });
});

describe('offline (no server configured)', () => {
  it('piped chat over fixtures/docs: extractive answers with citations, the follow-up rewritten, small talk answered without retrieval', async () => {
    useIndex('offline');
    const result = await chat([Q1, FOLLOW_UP, 'thanks!'], isolatedEnv(home));
    expect(result.code, result.stderr).toBe(0);
    const out = result.stdout;

    // Each turn starts with the question's echo, then the rewrite line.
    const blocks = out.split(/\n(?=› )/).map((block) => block.replace(/^› .*\n/, ''));
    expect(blocks).toHaveLength(3);
    for (const block of blocks.slice(0, 2)) {
      expect(block).toContain('Extractive answer (no language model configured):');
      expect(block).toMatch(/^\[\d+\] guides\/authentication\.md:\d+-\d+/m);
      expect(printedChunks(block).map((c) => c.rank)).toEqual([1, 2, 3, 4, 5]);
    }
    expect(blocks[1]).toMatch(/^↳ searching for: .*API key.* \(rewritten: /);
    expect(blocks[2]!.trim()).toBe("↳ no search (small talk)\nYou're welcome.");

    const turns = readTurns();
    expect(turns.map((t) => [t.status, t.rewrite_decision, t.answer_kind, t.chat_model, t.chunks.length])).toEqual([
      ['answered', 'skipped', 'extractive', 'offline:extractive-v2', 5],
      ['answered', 'rewritten', 'extractive', 'offline:extractive-v2', 5],
      ['answered', 'small_talk', 'small_talk', null, 0],
    ]);
    expect(turns[1]!.rewrite_model).toBe('offline:rewrite-v1');
    expect(turns[1]!.embed_model).toMatch(/^offline:/);
  });
});

describe('Ctrl-C while the answer streams', () => {
  const words = Array.from({ length: 40 }, (_, i) => `word${i} `);

  /** The first answer trickles in (long enough to be interrupted); later ones are quick. */
  function slowFirstAnswer(): void {
    let answers = 0;
    server.onChat((body) => {
      if (String(body.messages[0].content).startsWith('You rewrite')) return STANDALONE;
      return answers++ === 0 ? { chunks: words, chunkDelayMs: 100 } : { chunks: ANSWER_2 };
    });
  }

  /** Runs ragline, sends SIGINT (or `signal`) once `word2` of the answer is on stdout, and waits for the end. */
  async function interruptMidAnswer(args: string[], env: NodeJS.ProcessEnv, input?: string, signal: NodeJS.Signals = 'SIGINT') {
    const child = spawn(process.execPath, [BIN, ...args], { env, cwd: ROOT });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on('close', (code, signal) => resolve({ code, signal })),
    );
    if (input === undefined) child.stdin.end();
    else child.stdin.write(input); // left open: a person still at the keyboard
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no tokens within 10 s; stdout:\n${stdout}\nstderr:\n${stderr}`)), 10_000);
      child.stdout.on('data', (d) => {
        stdout += d;
        if (stdout.includes('word2 ')) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    child.kill(signal);
    const exit = await exited;
    return { ...exit, stdout, stderr };
  }

  it('SIGTERM and SIGHUP stop an answer as Ctrl-C does: the turn is kept, interrupted, with its retrieval; exit 143 / 129', async () => {
    useIndex('offline');
    slowFirstAnswer();
    const terminated = await interruptMidAnswer(['ask', Q1], serverEnv(), undefined, 'SIGTERM');
    expect({ code: terminated.code, signal: terminated.signal }).toEqual({ code: 143, signal: null });
    expect(terminated.stdout).toContain('(answer interrupted; the turn is kept)');
    const [turn] = readTurns();
    expect(turn).toMatchObject({ status: 'interrupted', question: Q1 });
    expect(turn!.answer).toMatch(/^word0 word1 word2 /);
    expect(turn!.chunks.length).toBeGreaterThan(0);

    slowFirstAnswer();
    const hungUp = await interruptMidAnswer(['chat'], serverEnv(), `${Q1}\n${FOLLOW_UP}\n`, 'SIGHUP');
    expect({ code: hungUp.code, signal: hungUp.signal }).toEqual({ code: 129, signal: null });
    const turns = readTurns();
    expect(turns.map((t) => t.status)).toEqual(['interrupted', 'interrupted']);
    expect(turns[1]!.chunks.length).toBeGreaterThan(0);
  });

  it('ask exits 130 and keeps the session, the question and the partial answer (status interrupted)', async () => {
    useIndex('offline');
    slowFirstAnswer();
    const env = serverEnv();
    const { code, stdout, stderr } = await interruptMidAnswer(['ask', Q1], env);
    expect(code).toBe(130);
    expect(stdout).toContain('(answer interrupted; the turn is kept)');
    expect(stderr).not.toContain('error');

    const [turn] = readTurns();
    expect(turn).toMatchObject({ status: 'interrupted', question: Q1 });
    const partial = turn!.answer!;
    expect(partial.startsWith('word0 word1 word2 ')).toBe(true);
    expect(words.join('').startsWith(partial)).toBe(true);
    expect(partial.length).toBeLessThan(words.join('').length);
    expect(stdout).toContain(partial);

    // The session goes on: the next question sees the interrupted exchange.
    const next = await ask(FOLLOW_UP, env, ['--session', 'last']);
    expect(next.code, next.stderr).toBe(0);
    const rewrite = server.requestsTo('chat').find(isRewriteRequest);
    expect(lastUser(rewrite!.body)).toContain(`Assistant: ${partial.trim()}`);
    expect(readTurns().map((t) => [t.session_id, t.status])).toEqual([
      [turn!.session_id, 'interrupted'],
      [turn!.session_id, 'answered'],
    ]);
  });

  it('piped chat stops at Ctrl-C: exit 130, the turn interrupted with its partial answer, the questions after it not asked', async () => {
    useIndex('offline');
    slowFirstAnswer();
    const { code, signal, stdout } = await interruptMidAnswer(['chat'], serverEnv(), `${Q1}\n${FOLLOW_UP}\n`);
    expect({ code, signal }).toEqual({ code: 130, signal: null });
    expect(stdout).toContain('(answer interrupted; the turn is kept)');
    const turns = readTurns();
    expect(turns.map((t) => [t.question, t.status])).toEqual([[Q1, 'interrupted']]);
    expect(turns[0]!.answer).toMatch(/^word0 word1 word2 /);
    expect(server.requestsTo('chat')).toHaveLength(1);
  });

  it('piped chat waiting for its next line leaves on Ctrl-C', async () => {
    useIndex('offline');
    slowFirstAnswer();
    const child = spawn(process.execPath, [BIN, 'chat'], { env: serverEnv(), cwd: ROOT });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on('close', (code, signal) => resolve({ code, signal })),
    );
    // Give it time to open the database and wait on stdin, then interrupt.
    await new Promise((resolve) => setTimeout(resolve, 700));
    child.kill('SIGINT');
    const exit = await exited;
    expect(exit.code === 130 || exit.signal === 'SIGINT', JSON.stringify(exit) + stderr).toBe(true);
    expect(readTurns()).toEqual([]);
  });
});
