// `ragline mcp` as a client sees it: the CLI run in-process, driven by the MCP
// SDK's own Client over its stdin and stdout. One server for the conversation
// tests; a second one started on a missing database; a real process of the built
// CLI for protocol-only stdout and the clean exit on stdin close, and in a
// terminal for what it says when started by hand.

import { spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { resolveConfig } from '../src/config/index.js';
import { RaglineMcpServer } from '../src/mcp/server.js';
import { registerSecret } from '../src/util/secrets.js';
import { Workspace } from '../src/app/index.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ingest } from '../src/ingest/ingest.js';
import { OfflineEmbedder } from '../src/providers/offline-embedder.js';
import { openDatabase } from '../src/store/db.js';
import { setFingerprint } from '../src/store/meta.js';
import { startOpenAIServer } from './helpers/openai-server.js';
import { KEY, ptyUnavailable, spawnRaglineInPty } from './helpers/pty.js';
import { run } from '../src/cli/main.js';
import { BIN, FIXTURE_DOCS, ROOT, isolatedEnv, ragline, tempDir } from './helpers/cli.js';

// ESC sequences (colour, OSC title), a C1 CSI, a bell, and bidi override/isolate.
const HOSTILE = [
  '# Zebraquartz \u001b[1mnotes\u001b[0m \u202eton\u202c',
  '',
  'The zebraquartz gauge reads \u001b[31mred\u001b[0m and sets \u001b]0;pwned\u0007 the title.',
  'A C1 \u009b31m control and a bidi \u202etxt.exe\u202c trick and an isolate \u2066hidden\u2069 here.',
  '',
].join('\n');

interface TextResult {
  content: { type: string; text?: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

function textOf(result: unknown): string {
  return (result as TextResult).content.map((c) => c.text ?? '').join('\n');
}

let home: string;
let dbPath: string;
let docs: string;

beforeAll(async () => {
  home = tempDir('ragline-mcp-');
  docs = path.join(home, 'docs');
  fs.cpSync(FIXTURE_DOCS, docs, { recursive: true });
  fs.writeFileSync(path.join(docs, 'hostile.md'), HOSTILE);
  fs.writeFileSync(path.join(docs, 'named\u202eevil\u001b[2J.txt'), 'Its name has a bidi override and an escape.\n');
  dbPath = path.join(home, 'index.db');
  const db = openDatabase(dbPath, { create: true });
  try {
    await ingest({ root: docs, db, embedder: new OfflineEmbedder(), chunker: { size: 2000, overlap: 200 }, maxFileBytes: 20 * 1024 * 1024 });
  } finally {
    db.close();
  }
});
afterAll(() => fs.rmSync(home, { recursive: true, force: true }));

/**
 * `ragline mcp` run in-process (src/cli/main.ts run()), its stdin and stdout joined
 * to the client as a stdio transport is: newline-delimited JSON-RPC. Closing the
 * client ends the server's stdin, which ends the run.
 */
class InProcessStdio implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  stderr = '';
  private readonly toServer = new PassThrough();
  private readonly fromServer = new PassThrough();
  private readonly buffer = new ReadBuffer();
  private running?: Promise<number>;

  constructor(
    private readonly args: string[],
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  async start(): Promise<void> {
    this.fromServer.on('data', (chunk: Buffer) => {
      this.buffer.append(chunk);
      for (let message = this.buffer.readMessage(); message; message = this.buffer.readMessage()) this.onmessage?.(message);
    });
    const stderr = new PassThrough();
    stderr.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()));
    this.running = run(this.args, {
      stdin: this.toServer as unknown as NodeJS.ReadStream,
      stdout: this.fromServer as unknown as NodeJS.WriteStream,
      stderr: stderr as unknown as NodeJS.WriteStream,
      env: this.env,
      cwd: ROOT,
      signals: new EventEmitter(),
      exit: () => {},
    });
  }

  async send(message: JSONRPCMessage): Promise<void> {
    this.toServer.write(serializeMessage(message));
  }

  async close(): Promise<void> {
    this.toServer.end();
    const code = await this.running;
    this.onclose?.();
    if (code !== 0) throw new Error(`ragline mcp exited ${code}: ${this.stderr}`);
  }
}

async function connect(db: string, extraArgs: string[] = [], env: Record<string, string> = {}): Promise<{ client: Client; stderr: () => string }> {
  const transport = new InProcessStdio(['--db', db, 'mcp', ...extraArgs], isolatedEnv(home, env));
  const client = new Client({ name: 'Test Agent', version: '1.0.0' });
  await client.connect(transport);
  return { client, stderr: () => transport.stderr };
}

describe('ragline mcp over stdio', () => {
  let client: Client;

  beforeAll(async () => {
    ({ client } = await connect(dbPath));
  }, 30_000);
  afterAll(async () => {
    await client?.close();
  });

  test('lists the four tools, each with a description and an input schema', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['ask', 'replay', 'search', 'sessions']);
    for (const tool of tools) {
      expect(tool.description!.length).toBeGreaterThan(40);
      expect(tool.inputSchema.type).toBe('object');
    }
    const search = tools.find((t) => t.name === 'search')!;
    expect(search.inputSchema.required).toEqual(['query']);
    expect(Object.keys(search.inputSchema.properties ?? {}).sort()).toEqual(['k', 'query', 'session']);
    expect(client.getServerVersion()?.name).toBe('ragline');
  });

  test('search, a follow-up rewritten in the same session, ask, and both in the replay', async () => {
    const first = (await client.callTool({ name: 'search', arguments: { query: 'How do I rotate an API key?', k: 3 } })) as TextResult;
    expect(first.isError).toBeFalsy();
    const firstData = first.structuredContent as { session: { name: string }; standaloneQuery: string; rewrite: { decision: string }; chunks: { location: string; uri: string; heading: string; text: string; score: number }[] };
    // Named after the client in the handshake.
    expect(firstData.session.name).toBe('test-agent-1');
    expect(firstData.standaloneQuery).toBe('How do I rotate an API key?');
    expect(firstData.rewrite.decision).toBe('skipped');
    expect(firstData.chunks).toHaveLength(3);
    expect(firstData.chunks[0]).toMatchObject({ location: expect.stringMatching(/^guides\/authentication\.md:\d+-\d+$/), heading: expect.stringContaining('API keys') });
    expect(firstData.chunks[0]!.uri).toMatch(/^ragline:\/\/doc\/guides\/authentication\.md#L\d+-\d+$/);
    expect(textOf(first)).toContain('Pass session "test-agent-1"');

    const follow = (await client.callTool({ name: 'search', arguments: { query: 'does it expire?', session: 'test-agent-1' } })) as TextResult;
    const followData = follow.structuredContent as { standaloneQuery: string; rewrite: { decision: string; reason: string }; chunks: { location: string }[]; turn: number };
    expect(followData.rewrite.decision).toBe('rewritten');
    expect(followData.standaloneQuery.toLowerCase()).toContain('api key');
    expect(followData.turn).toBe(2);
    expect(textOf(follow)).toContain('Rewritten from: does it expire?');
    expect(followData.chunks[0]!.location).toMatch(/^guides\/authentication\.md/);

    const asked = (await client.callTool({ name: 'ask', arguments: { question: 'how long is it valid by default?', session: 'test-agent-1' } })) as TextResult;
    const askedData = asked.structuredContent as { answer: string; answerKind: string; citations: { n: number; location: string; uri: string }[]; standaloneQuery: string; turn: number };
    expect(askedData.answerKind).toBe('extractive');
    expect(askedData.answer).toContain('90 days');
    // The text says once that the answer is quoted.
    expect(textOf(asked)).toMatch(/Answer \(extractive: quoted from the documents, no model configured\):\n\[\d+\] /);
    expect(textOf(asked)).not.toContain('Extractive answer (no language model configured)');
    expect(askedData.citations.length).toBeGreaterThan(0);
    expect(askedData.citations[0]!.uri).toMatch(/^ragline:\/\/doc\//);
    expect(askedData.standaloneQuery.toLowerCase()).toContain('api key');
    expect(askedData.turn).toBe(3);

    const replay = (await client.callTool({ name: 'replay', arguments: { session: 'test-agent-1' } })) as TextResult;
    const turns = (replay.structuredContent as { turns: { question: string; standaloneQuery: string; answerKind: string; answer: string | null; chunks: unknown[] }[] }).turns;
    expect(turns.map((t) => t.question)).toEqual(['How do I rotate an API key?', 'does it expire?', 'how long is it valid by default?']);
    expect(turns[1]).toMatchObject({ answerKind: 'search', answer: null });
    expect(turns[1]!.standaloneQuery.toLowerCase()).toContain('api key');
    expect(turns[2]!.answerKind).toBe('extractive');
    expect(textOf(replay)).toContain('Search only: no answer was asked for.');
    // The rewrite as each call returned it is the one the replay shows.
    const replayed = (replay.structuredContent as { turns: { rewrite: { decision: string; reason: string } | null }[] }).turns;
    expect(replayed[0]!.rewrite).toEqual({ decision: firstData.rewrite.decision, reason: (first.structuredContent as { rewrite: { reason: string } }).rewrite.reason });
    expect(replayed[1]!.rewrite).toEqual({ decision: followData.rewrite.decision, reason: followData.rewrite.reason });

    const sessions = (await client.callTool({ name: 'sessions', arguments: {} })) as TextResult;
    expect((sessions.structuredContent as { sessions: { name: string; turns: number }[] }).sessions).toContainEqual(
      expect.objectContaining({ name: 'test-agent-1', turns: 3 }),
    );
    const one = (await client.callTool({ name: 'sessions', arguments: { limit: 1 } })) as TextResult;
    expect((one.structuredContent as { sessions: unknown[] }).sessions).toHaveLength(1);

    // The same trail from the command line, while the server runs.
    const cli = await ragline(['--db', dbPath, 'replay', 'test-agent-1'], { env: isolatedEnv(home) });
    expect(cli.code).toBe(0);
    expect(cli.stdout).toContain('› does it expire?');
    expect(cli.stdout.toLowerCase()).toContain('api key');
    expect(cli.stdout).toContain('search only: no answer was asked for');
    expect(cli.stdout).toContain('answer (extractive');
  });

  test('document text in results is sanitised: no escape sequences, C1 controls or bidi overrides', async () => {
    const result = (await client.callTool({ name: 'search', arguments: { query: 'zebraquartz gauge', k: 1 } })) as TextResult;
    const chunk = (result.structuredContent as { chunks: { location: string; text: string; uri: string }[] }).chunks[0]!;
    expect(chunk.location).toMatch(/^hostile\.md:/);
    for (const text of [textOf(result), chunk.text, JSON.stringify(result.structuredContent)]) {
      expect(text).toContain('zebraquartz gauge reads');
      expect(text).not.toMatch(/[\u001b\u0007\u009b\u202e\u202c\u2066\u2069]/);
      expect(text).not.toContain('\\u001b');
    }
    const opened = await client.readResource({ uri: chunk.uri });
    const body = (opened.contents[0] as { text: string }).text;
    expect(body).toContain('zebraquartz gauge reads red and sets');
    expect(body).not.toMatch(/[\u001b\u0007\u009b\u202e\u2066]/);

    const { resources } = await client.listResources();
    const listed = resources.filter((r) => /hostile|named/.test(r.uri));
    expect(listed.map((r) => [r.name, r.title])).toEqual([
      ['hostile.md', 'Zebraquartz notes ton'],
      ['namedevil.txt', 'Indexed document'],
    ]);
    expect(JSON.stringify(resources)).not.toMatch(/[\u001b\u009b\u202e\u202c]|\\u001b/);
    expect(listed[1]!.uri).toBe('ragline://doc/named%E2%80%AEevil%1B%5B2J.txt');
    expect((await client.readResource({ uri: listed[1]!.uri })).contents[0]).toMatchObject({ text: 'Its name has a bidi override and an escape.' });
  });

  test('a cited range opens as a resource; only indexed documents are served', async () => {
    const range = await client.readResource({ uri: 'ragline://doc/guides/authentication.md#L1-3' });
    expect((range.contents[0] as { text: string }).text.split('\n')).toEqual(['# Authentication', '', expect.stringContaining('Orbitly supports')]);
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toContain('ragline://doc/guides/authentication.md');
    await expect(client.readResource({ uri: 'ragline://doc/../../../etc/passwd' })).rejects.toThrow(/No document/);
    await expect(client.readResource({ uri: `ragline://doc/${encodeURIComponent(path.join(docs, 'faq.md'))}` })).rejects.toThrow(/No document/);
    await expect(client.readResource({ uri: 'ragline://doc/faq.md#L900-950' })).rejects.toThrow(/past its end/);
  });

  test('bad calls get tool errors the agent can read, and the server keeps serving', async () => {
    const empty = (await client.callTool({ name: 'search', arguments: { query: '   ' } })) as TextResult;
    expect(empty.isError).toBe(true);
    expect(textOf(empty)).toContain('The query is empty.');
    const unknown = (await client.callTool({ name: 'ask', arguments: { question: 'what is it?', session: 'no-such-session' } })) as TextResult;
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toContain('No session with the id or name "no-such-session"');
    const badK = (await client.callTool({ name: 'search', arguments: { query: 'webhooks', k: 0 } })) as TextResult;
    expect(badK.isError).toBe(true);
    const pasted = (await client.callTool({ name: 'search', arguments: { query: 'webhooks '.repeat(2000) } })) as TextResult;
    expect(pasted.isError).toBe(true);
    expect(textOf(pasted)).toContain('The query is 17,999 characters long; at most 10,000 are taken.');
    const replay = (await client.callTool({ name: 'replay', arguments: { session: 'nope' } })) as TextResult;
    expect(replay.isError).toBe(true);
    const noSession = (await client.callTool({ name: 'replay', arguments: { session: ' ' } })) as TextResult;
    expect(noSession.isError).toBe(true);
    expect(textOf(noSession)).toBe('The session is empty.\nGive a session id or name from the sessions tool, or "last".');
    const after = (await client.callTool({ name: 'search', arguments: { query: 'webhook signature', k: 1 } })) as TextResult;
    expect(after.isError).toBeFalsy();
    expect((after.structuredContent as { chunks: unknown[] }).chunks).toHaveLength(1);
  });
});

test('two folders holding the same path: each document is its own resource, under its folder name; a path one folder holds keeps its URI', async () => {
  const folders = path.join(home, 'two-folders');
  const file = (relative: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(folders, relative)), { recursive: true });
    fs.writeFileSync(path.join(folders, relative), text);
  };
  file('projA/README.md', '# Project A\n\nProject A deploys the zebra service with kubectl.\n');
  file('projA/notes.md', '# Notes\n\nOnly project A has notes about the zebra service.\n');
  file('projB/README.md', '# Project B\n\nProject B deploys the zebra service with helm charts.\n');
  const twoDb = path.join(folders, 'index.db');
  const db = openDatabase(twoDb, { create: true });
  try {
    for (const root of ['projA', 'projB']) {
      await ingest({ root: path.join(folders, root), db, embedder: new OfflineEmbedder(), chunker: { size: 2000, overlap: 200 }, maxFileBytes: 1 << 20 });
    }
  } finally {
    db.close();
  }
  const { client } = await connect(twoDb);
  try {
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri).sort()).toEqual(['ragline://doc/notes.md', 'ragline://doc/projA/README.md', 'ragline://doc/projB/README.md']);
    const text = async (uri: string) => ((await client.readResource({ uri })).contents[0] as { text: string }).text;
    expect(await text('ragline://doc/projA/README.md')).toContain('with kubectl');
    expect(await text('ragline://doc/projB/README.md#L3')).toBe('Project B deploys the zebra service with helm charts.');
    expect(await text('ragline://doc/notes.md')).toContain('Only project A');
    // Without its folder the path names two documents: an error naming both, not one of them served.
    await expect(client.readResource({ uri: 'ragline://doc/README.md' })).rejects.toThrow(/projA\/README\.md, projB\/README\.md/);

    const found = (await client.callTool({ name: 'search', arguments: { query: 'zebra service deploys' } })) as TextResult;
    const chunks = (found.structuredContent as { chunks: { location: string; uri: string }[] }).chunks;
    expect(chunks.map((c) => c.location)).toEqual(expect.arrayContaining(['projA/README.md:1-3', 'projB/README.md:1-3']));
    for (const chunk of chunks) expect(await text(chunk.uri)).not.toBe('');
  } finally {
    await client.close();
  }
}, 30_000);

test('a missing database, then one of another embedder, are tool errors; --session names the session', async () => {
  const later = path.join(home, 'later.db');
  const { client, stderr } = await connect(later, ['--session', 'pinned']);
  try {
    const missing = (await client.callTool({ name: 'search', arguments: { query: 'api keys' } })) as TextResult;
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toContain(`No database at ${later}`);
    expect(textOf(missing)).toContain('ragline ingest');

    // The database appears, built with another embedder.
    const db = openDatabase(later, { create: true });
    setFingerprint(db, { embedder: 'openai:other-model', dimensions: 768, chunker: { size: 3000, overlap: 150 } });
    db.close();
    const other = (await client.callTool({ name: 'ask', arguments: { question: 'api keys?' } })) as TextResult;
    expect(other.isError).toBe(true);
    expect(textOf(other)).toContain('built with the embedder openai:other-model');
    expect(textOf(other)).toContain('--reindex');

    const sessions = (await client.callTool({ name: 'sessions', arguments: {} })) as TextResult;
    expect(sessions.isError).toBeFalsy();
    expect(stderr()).toContain('No database at');
  } finally {
    await client.close();
  }

  const { client: pinned } = await connect(dbPath, ['--session', 'pinned']);
  try {
    const result = (await pinned.callTool({ name: 'search', arguments: { query: 'webhooks', k: 1 } })) as TextResult;
    expect((result.structuredContent as { session: { name: string } }).session.name).toBe('pinned');
  } finally {
    await pinned.close();
  }
}, 30_000);

test('with a model configured, ask answers from it; a model failure is a tool error and the next call is answered', async () => {
  const server = await startOpenAIServer();
  const { client } = await connect(dbPath, [], {
    RAGLINE_BASE_URL: server.baseURL,
    RAGLINE_API_KEY: 'test-key-123456',
    RAGLINE_CHAT_MODEL: 'fake-chat-model',
    RAGLINE_EMBED_PROVIDER: 'offline',
    RAGLINE_MAX_RETRIES: '0',
    RAGLINE_TOPICS: 'local',
  });
  try {
    server.queueFailure({ route: 'chat', status: 401 });
    const failed = (await client.callTool({ name: 'ask', arguments: { question: 'How long is an API key valid?' } })) as TextResult;
    expect(failed.isError).toBe(true);
    expect(textOf(failed)).toMatch(/401|rejected|key/i);

    server.queueChat('API keys expire after 90 days by default [1].');
    const asked = (await client.callTool({ name: 'ask', arguments: { question: 'How long is an API key valid?' } })) as TextResult;
    expect(asked.isError).toBeFalsy();
    const data = asked.structuredContent as { answer: string; answerKind: string; citations: { n: number; location: string }[] };
    expect(data).toMatchObject({ answer: 'API keys expire after 90 days by default [1].', answerKind: 'llm' });
    expect(data.citations).toEqual([expect.objectContaining({ n: 1 })]);
    expect(textOf(asked)).toContain('Answer (from the model)');
  } finally {
    await client.close();
    await server.close();
  }
}, 30_000);

test('while an ask waits on a stalled model, search, sessions, replay, resources and ping are answered; the ask ends at RAGLINE_STREAM_TOTAL_MS, naming it', async () => {
  const server = await startOpenAIServer();
  const { client } = await connect(dbPath, ['--session', 'beside-a-stalled-ask'], {
    RAGLINE_BASE_URL: server.baseURL,
    RAGLINE_CHAT_MODEL: 'fake-chat-model',
    RAGLINE_EMBED_PROVIDER: 'offline',
    RAGLINE_MAX_RETRIES: '0',
    RAGLINE_TOPICS: 'local',
    // The stream goes silent after one token: only the total limit ends it.
    RAGLINE_STREAM_IDLE_MS: '600000',
    RAGLINE_STREAM_TOTAL_MS: '5000',
  });
  try {
    server.queueChat({ chunks: ['API ', 'keys ', 'expire.'], stallAfterChunks: 1 });
    let askSettled = false;
    const asking = client.callTool({ name: 'ask', arguments: { question: 'How long is an API key valid?' } }).finally(() => (askSettled = true));
    while (server.requestsTo('chat').length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    // Each answered while the ask still waits (calls were run one at a time: the first search waited for the ask).
    const elapsed: number[] = [];
    for (const query of ['webhook signature', 'rate limits', 'rotate an API key', 'pagination', 'error codes']) {
      const started = performance.now();
      const found = (await client.callTool({ name: 'search', arguments: { query, k: 2 } })) as TextResult;
      elapsed.push(performance.now() - started);
      expect(found.isError, textOf(found)).toBeFalsy();
      expect((found.structuredContent as { chunks: unknown[] }).chunks).toHaveLength(2);
    }
    expect((await client.callTool({ name: 'sessions', arguments: { limit: 1 } })).isError).toBeFalsy();
    const replay = (await client.callTool({ name: 'replay', arguments: { session: 'beside-a-stalled-ask' } })) as TextResult;
    expect((replay.structuredContent as { turns: { status: string }[] }).turns.map((t) => t.status)).toContain('pending');
    expect((await client.readResource({ uri: 'ragline://doc/faq.md#L1' })).contents).toHaveLength(1);
    await client.ping();
    expect(askSettled).toBe(false);

    const asked = (await asking) as TextResult;
    expect(asked.isError).toBe(true);
    expect(textOf(asked)).toContain('the limit for a whole reply');
    expect(textOf(asked)).toContain('RAGLINE_STREAM_TOTAL_MS');
    const turns = (((await client.callTool({ name: 'replay', arguments: { session: 'beside-a-stalled-ask' } })) as TextResult).structuredContent as { turns: { question: string; status: string }[] }).turns;
    expect(turns.filter((t) => t.status === 'failed').map((t) => t.question)).toEqual(['How long is an API key valid?']);
    expect(turns.filter((t) => t.status === 'answered')).toHaveLength(5);
  } finally {
    await client.close();
    await server.close();
  }
}, 30_000);

test('a search as asked uses no model: it neither waits for one still loading nor has one summarise the history', async () => {
  // A model that takes a minute to load (Ollama, cold): the search is answered long before.
  const server = await startOpenAIServer({ models: ['qwen3:8b'], flavor: 'ollama', loadMs: 60_000 });
  const { client } = await connect(dbPath, ['--session', 'search-beside-a-loading-model'], {
    RAGLINE_BASE_URL: server.baseURL,
    RAGLINE_CHAT_MODEL: 'qwen3:8b',
    RAGLINE_EMBED_PROVIDER: 'offline',
    RAGLINE_MAX_RETRIES: '0',
    RAGLINE_TOPICS: 'local',
  });
  try {
    const found = (await client.callTool({ name: 'search', arguments: { query: 'webhook signature', k: 1 } })) as TextResult;
    expect(found.isError, textOf(found)).toBeFalsy();
    expect(server.loads.finished).toBe(0);
  } finally {
    await client.close();
    await server.close();
  }

  // A session whose earlier exchanges no longer fit the history: the search leaves the summary to the next ask.
  const model = await startOpenAIServer();
  const { client: second } = await connect(dbPath, ['--session', 'search-after-long-asks'], {
    RAGLINE_BASE_URL: model.baseURL,
    RAGLINE_CHAT_MODEL: 'fake-chat-model',
    RAGLINE_EMBED_PROVIDER: 'offline',
    RAGLINE_MAX_RETRIES: '0',
    RAGLINE_TOPICS: 'local',
    RAGLINE_HISTORY_TOKENS: '1',
  });
  try {
    for (const question of ['How long is an API key valid?', 'How are webhooks signed?']) {
      model.queueChat('Ninety days [1].');
      expect((await second.callTool({ name: 'ask', arguments: { question } })).isError).toBeFalsy();
    }
    const asked = model.requestsTo('chat').length;
    const found = (await second.callTool({ name: 'search', arguments: { query: 'rate limits', k: 1 } })) as TextResult;
    expect(found.isError, textOf(found)).toBeFalsy();
    expect(model.requestsTo('chat')).toHaveLength(asked);
  } finally {
    await second.close();
    await model.close();
  }
}, 30_000);

test('stdout carries protocol messages only (a line that is not JSON-RPC is reported on stderr), and the server exits 0 when stdin closes', async () => {
  const child = spawn(process.execPath, [BIN, '--db', dbPath, 'mcp'], { env: isolatedEnv(home) });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const send = (message: object) => child.stdin.write(JSON.stringify(message) + '\n');
  child.stdin.write('not json-rpc\n');
  send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
  send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'search', arguments: { query: 'api keys', k: 1 } } });
  await new Promise<void>((resolve) => {
    const check = () => (stdout.includes('"id":2') ? resolve() : setTimeout(check, 20));
    check();
  });
  child.stdin.end();
  expect(await exited).toBe(0);
  const messages = stdout.trim().split('\n').map((line) => JSON.parse(line) as { jsonrpc: string; id?: number; result?: { protocolVersion?: string } });
  expect(messages.every((m) => m.jsonrpc === '2.0')).toBe(true);
  expect(messages.find((m) => m.id === 1)?.result?.protocolVersion).toBe('2025-11-25');
  expect(stderr).toContain('ragline mcp: serving');
  expect(stderr).toContain('protocol error');
}, 30_000);

test('a request over 10 MB is answered with a JSON-RPC error and the server goes on serving; stdin closing still ends it with 0', async () => {
  const child = spawn(process.execPath, [BIN, '--db', dbPath, 'mcp'], { env: isolatedEnv(home) });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const answered = (id: number) =>
    new Promise<void>((resolve) => {
      const check = () => (stdout.includes(`"id":${id}`) ? resolve() : setTimeout(check, 20));
      check();
    });
  const send = (message: object) => child.stdin.write(JSON.stringify(message) + '\n');
  send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
  send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  await answered(1);
  // As the SDK's client writes a request: its id last.
  send({ method: 'tools/call', params: { name: 'search', arguments: { query: 'api keys '.repeat(1_300_000) } }, jsonrpc: '2.0', id: 2 });
  send({ jsonrpc: '2.0', id: 3, method: 'ping' });
  send({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'search', arguments: { query: 'webhook signature', k: 1 } } });
  await answered(4);
  child.stdin.end();
  expect(await exited).toBe(0);
  const messages = stdout.trim().split('\n').map((line) => JSON.parse(line) as { id?: number; result?: { isError?: boolean }; error?: { code: number; message: string } });
  expect(messages.find((m) => m.id === 2)?.error).toEqual({ code: -32600, message: expect.stringMatching(/^The request is 11\.2 MB; ragline mcp reads messages of at most 10 MB\. It was not run\./) });
  expect(messages.find((m) => m.id === 3)?.result).toEqual({});
  expect(messages.find((m) => m.id === 4)?.result?.isError).toBeFalsy();
  expect(stderr).toContain('skipped a message of 11.2 MB');
  expect(stderr).not.toContain('ReadBuffer');
}, 30_000);

test.skipIf(ptyUnavailable() !== undefined)('started by hand in a terminal, it says what it is for; Ctrl-D ends it', async () => {
  const pty = spawnRaglineInPty(['--db', dbPath, 'mcp'], { env: isolatedEnv(home) });
  try {
    await pty.expect('server for an MCP client');
    await pty.expect('Ctrl-D or Ctrl-C stops it');
    pty.type(KEY.ctrlD);
    expect((await pty.exited).code).toBe(0);
  } finally {
    pty.kill();
  }
}, 30_000);

test('an unexpected error reaches the client as a tool error without a known secret or terminal controls', async () => {
  const secret = 'sk-mcp-test-secret-4242';
  registerSecret(secret);
  const logged: string[] = [];
  const server = new RaglineMcpServer({
    config: resolveConfig({ env: { HOME: home } }).config,
    openWorkspace: () => new Workspace(openDatabase(dbPath), resolveConfig({ env: { HOME: home } })),
    createContext: async () => {
      throw new Error(`connect failed for key ${secret} \u001b]0;title\u0007`);
    },
    version: '0',
    log: (line) => logged.push(line),
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'in-process', version: '1' });
  await client.connect(clientSide);
  try {
    const result = (await client.callTool({ name: 'search', arguments: { query: 'api keys' } })) as TextResult;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('Unexpected error: connect failed for key [redacted]');
    expect(textOf(result)).not.toMatch(/\u001b|\u0007/);
    const sessions = (await client.callTool({ name: 'sessions', arguments: {} })) as TextResult;
    expect(sessions.isError).toBeFalsy();
  } finally {
    await client.close();
    await server.close();
  }
});

test("what it says on stderr is sanitised before it is redacted: a key split by an invisible character is not printed whole", async () => {
  const key = 'sk-log-order-4242-secret';
  // A database path that holds the key, split by a zero-width space: said on stderr (the missing database, what is served).
  const split = path.join(home, `${key.slice(0, 12)}\u200b${key.slice(12)}.db`);
  const stdin = new PassThrough();
  const stderr = new PassThrough();
  let said = '';
  stderr.on('data', (chunk: Buffer) => (said += chunk.toString()));
  const running = run(['--db', split, 'mcp'], {
    stdin: stdin as unknown as NodeJS.ReadStream,
    stdout: new PassThrough() as unknown as NodeJS.WriteStream,
    stderr: stderr as unknown as NodeJS.WriteStream,
    env: isolatedEnv(home, { RAGLINE_API_KEY: key }),
    cwd: ROOT,
    signals: new EventEmitter(),
    exit: () => {},
  });
  while (!said.includes('serving')) await new Promise((resolve) => setTimeout(resolve, 20));
  stdin.end();
  expect(await running).toBe(0);
  expect(said).toContain('No database at');
  expect(said).toContain('[redacted]');
  expect(said).not.toContain(key);
  expect(said).not.toContain('\u200b');
}, 30_000);

test('a call cancelled before its turn starts (the providers still loading) is not run nor stored as a turn', async () => {
  const settings = resolveConfig({ env: { HOME: home } });
  let release!: () => void;
  const providersReady = new Promise<void>((resolve) => (release = resolve));
  const server = new RaglineMcpServer({
    config: settings.config,
    openWorkspace: () => new Workspace(openDatabase(dbPath), settings),
    createContext: async (workspace) => {
      await providersReady;
      return workspace.turnContext('');
    },
    sessionName: 'cancelled-while-queued',
    version: '0',
    log: () => {},
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'in-process', version: '1' });
  await client.connect(clientSide);
  try {
    const first = client.callTool({ name: 'search', arguments: { query: 'api keys', k: 1 } });
    const cancel = new AbortController();
    const second = client.callTool({ name: 'ask', arguments: { question: 'webhooks?', k: 1 } }, undefined, { signal: cancel.signal });
    await new Promise((resolve) => setTimeout(resolve, 20));
    cancel.abort();
    await expect(second).rejects.toThrow();
    await new Promise((resolve) => setTimeout(resolve, 20));
    release();
    expect(((await first) as TextResult).isError).toBeFalsy();
    const third = (await client.callTool({ name: 'search', arguments: { query: 'rate limits', k: 1 } })) as TextResult;
    expect(third.isError).toBeFalsy();
    const replay = (await client.callTool({ name: 'replay', arguments: { session: 'cancelled-while-queued' } })) as TextResult;
    const turns = (replay.structuredContent as { turns: { question: string; status: string }[] }).turns;
    expect(turns.map((t) => [t.question, t.status])).toEqual([
      ['api keys', 'answered'],
      ['rate limits', 'answered'],
    ]);
  } finally {
    await client.close();
    await server.close();
  }
});

test("calls that arrive together at a new server's first turn all go to its one session, not one session each", async () => {
  const settings = resolveConfig({ env: { HOME: home } });
  const server = new RaglineMcpServer({ config: settings.config, openWorkspace: () => new Workspace(openDatabase(dbPath), settings), version: '0', log: () => {} });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'all-at-once', version: '1' });
  await client.connect(clientSide);
  try {
    const queries = ['api keys', 'webhook signature', 'rate limits'];
    const results = (await Promise.all(queries.map((query) => client.callTool({ name: 'search', arguments: { query, k: 1 } })))) as TextResult[];
    expect(results.map((r) => (r.structuredContent as { session: { name: string } }).session.name)).toEqual(['all-at-once-1', 'all-at-once-1', 'all-at-once-1']);
    const replay = (await client.callTool({ name: 'replay', arguments: { session: 'all-at-once-1' } })) as TextResult;
    expect((replay.structuredContent as { turns: { question: string }[] }).turns.map((t) => t.question).sort()).toEqual([...queries].sort());
    const sessions = (await client.callTool({ name: 'sessions', arguments: {} })) as TextResult;
    expect((sessions.structuredContent as { sessions: { name: string }[] }).sessions.filter((s) => s.name.startsWith('all-at-once'))).toHaveLength(1);
  } finally {
    await client.close();
    await server.close();
  }
});

test('a session that cannot be created for a reason other than its name being taken is a tool error at once, not retried under other numbers', async () => {
  const settings = resolveConfig({ env: { HOME: home } });
  const server = new RaglineMcpServer({
    config: settings.config,
    openWorkspace: () => {
      const db = openDatabase(dbPath);
      db.pragma('busy_timeout = 1');
      // Records each session name looked up: one per number tried.
      const prepare = db.prepare.bind(db);
      db.prepare = ((sql: string) => {
        const statement = prepare(sql);
        if (/FROM sessions WHERE name = \?/.test(sql)) {
          const get = statement.get.bind(statement);
          statement.get = ((...params: unknown[]) => {
            namesLookedUp.add(String(params[0]));
            return get(...params);
          }) as typeof statement.get;
        }
        return statement;
      }) as typeof db.prepare;
      return new Workspace(db, settings);
    },
    version: '0',
    log: () => {},
  });
  const namesLookedUp = new Set<string>();
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'locked-out', version: '1' });
  await client.connect(clientSide);
  // Another program holds the write lock.
  const other = openDatabase(dbPath);
  other.prepare('BEGIN IMMEDIATE').run();
  try {
    const locked = (await client.callTool({ name: 'search', arguments: { query: 'api keys', k: 1 } })) as TextResult;
    expect(locked.isError).toBe(true);
    expect(textOf(locked)).toMatch(/locked|busy/i);
    // One number tried (it was retried under 10,000 numbers, for seconds).
    expect([...namesLookedUp]).toEqual(['locked-out-1']);
    other.prepare('ROLLBACK').run();
    const after = (await client.callTool({ name: 'search', arguments: { query: 'api keys', k: 1 } })) as TextResult;
    expect(after.isError).toBeFalsy();
    expect((after.structuredContent as { session: { name: string } }).session.name).toBe('locked-out-1');
  } finally {
    if (other.inTransaction) other.prepare('ROLLBACK').run();
    other.close();
    await client.close();
    await server.close();
  }
}, 10_000);
