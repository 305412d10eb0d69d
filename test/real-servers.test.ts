// Conformance with real servers' habits: the real CLI and the real `openai` client
// against the loopback server (test/helpers/openai-server.ts), which reproduces one
// documented behaviour of Ollama, llama.cpp's server, vLLM, LM Studio or today's
// reasoning models per case; each mode there cites where the behaviour is documented.
// What must hold: reasoning never reaches the user as content, a rewrite is read as a
// person reads it, time is bounded, the prompt fits the window or fails clearly once.

import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURE_DOCS, isolatedEnv, ragline, tempDir, type CliResult } from './helpers/cli.js';
import { startOpenAIServer, type ChatReply, type FakeOpenAI, type StartOptions } from './helpers/openai-server.js';

const Q1 = 'How do I create an API key?';
const FOLLOW_UP = 'does it expire?';
const STANDALONE = 'Do Orbitly API keys expire?';
const ANSWER = 'Keys expire after 90 days [1].';

let template: string;
let home: string;
let server: FakeOpenAI | undefined;

beforeAll(async () => {
  template = tempDir('ragline-servers-index-');
  const result = await ragline(['ingest', FIXTURE_DOCS], { env: isolatedEnv(template) });
  expect(result.code, result.stderr).toBe(0);
});
afterAll(() => fs.rmSync(template, { recursive: true, force: true }));
afterEach(async () => {
  await server?.close();
  server = undefined;
  if (home) fs.rmSync(home, { recursive: true, force: true });
});

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const dataDir = (root: string) => path.join(root, 'data', 'ragline');
const isRewrite = (body: any) => String(body?.messages?.[0]?.content).startsWith('You rewrite the last message');

/** A server of `options`' kind answering rewrites with `rewrite` and answers with `answer`; a fresh copy of the index. */
async function setUp(rewrite: string | ChatReply, answer: string | ChatReply = ANSWER, options: StartOptions = {}) {
  home = tempDir();
  fs.mkdirSync(dataDir(home), { recursive: true });
  for (const file of fs.readdirSync(dataDir(template))) fs.copyFileSync(path.join(dataDir(template), file), path.join(dataDir(home), file));
  server = await startOpenAIServer({ models: ['qwen3:8b', 'nomic-embed-text'], ...options });
  server.onChat((body) => (isRewrite(body) ? rewrite : answer));
  return server;
}

function env(extra: Record<string, string> = {}, model = 'qwen3:8b') {
  return isolatedEnv(home, {
    RAGLINE_BASE_URL: server!.baseURL,
    RAGLINE_CHAT_MODEL: model,
    RAGLINE_EMBED_PROVIDER: 'offline',
    RAGLINE_TOPICS: 'local',
    RAGLINE_RETRY_BASE_MS: '1',
    ...extra,
  });
}

async function followUp(extra: Record<string, string> = {}, model?: string): Promise<CliResult> {
  const first = await ragline(['ask', Q1], { env: env(extra, model) });
  expect(first.code, first.stderr).toBe(0);
  return ragline(['ask', '--session', 'last', FOLLOW_UP], { env: env(extra, model) });
}

const shownQuery = (result: CliResult) => result.stdout.split('\n').find((line) => line.startsWith('↳'));
function turns(): any[] {
  const db = new Database(path.join(dataDir(home), 'ragline.db'), { readonly: true });
  try {
    return db.prepare('SELECT * FROM turns ORDER BY id').all();
  } finally {
    db.close();
  }
}

describe('reasoning models: the reasoning never reaches the user as content', () => {
  const thought = 'Okay, the user asks whether it expires; "it" is the API key. Wait, let me check.';
  it.each<[string, ChatReply, string]>([
    ['a whole <think> block (Qwen3, DeepSeek-R1 distills: QwenLM/Qwen3#1396)', { content: `<think>\n${thought}\n</think>\n\n${STANDALONE}` }, 'qwen3:8b'],
    ['an empty <think> block (thinking switched off)', { content: `<think>\n\n</think>\n\n${STANDALONE}` }, 'qwen3:8b'],
    ['only the closing tag (the template opened it: deepseek-ai/DeepSeek-R1#352)', { content: `${thought}\n</think>\n\n${STANDALONE}` }, 'deepseek-r1:7b'],
    ['reasoning_content deltas (llama.cpp --reasoning-format, ggml-org/llama.cpp#11607)', { content: STANDALONE, reasoning: { field: 'reasoning_content', chunks: [thought] } }, 'qwen3:8b'],
    ['reasoning deltas (Ollama /v1, vllm-project/vllm#27755)', { content: STANDALONE, reasoning: { field: 'reasoning', chunks: [thought] } }, 'gpt-oss:20b'],
  ])('%s', async (_name, reply, model) => {
    const answer: ChatReply = { ...reply, content: (reply.content ?? '').replace(STANDALONE, ANSWER) };
    await setUp(reply, answer, { models: [model] });
    const result = await followUp({}, model);
    expect(result.code, result.stderr).toBe(0);
    expect(shownQuery(result)).toMatch(new RegExp(`^↳ searching for: ${escaped(STANDALONE)} \\(rewritten`));
    expect(result.stdout).not.toMatch(/think>|Okay, the user/);
    const [firstTurn, secondTurn] = turns();
    for (const turn of [firstTurn, secondTurn]) {
      expect(turn.answer).toBe(ANSWER);
      expect(JSON.stringify(turn)).not.toContain('Okay, the user');
    }
    expect(secondTurn.standalone_query).toBe(STANDALONE);
    // Nothing of the reasoning is sent back as history either.
    const lastAnswerPrompt = server!.requestsTo('chat').filter((r) => !isRewrite(r.body)).at(-1)!;
    expect(JSON.stringify(lastAnswerPrompt.body.messages)).not.toContain('Okay, the user');
  });

  it('ask --json says the model is thinking; the REPL line is on stderr', async () => {
    await setUp(STANDALONE, { content: ANSWER, reasoning: { field: 'reasoning_content', chunks: ['Let me think.'] } });
    const result = await ragline(['ask', '--json', Q1], { env: env() });
    expect(result.code, result.stderr).toBe(0);
    const types = result.stdout.trim().split('\n').map((line) => JSON.parse(line).type);
    expect(types).toContain('thinking');
    expect(types.indexOf('thinking')).toBeLessThan(types.indexOf('token'));
    const plain = await ragline(['ask', Q1], { env: env() });
    expect(plain.stderr).toContain('thinking');
    expect(plain.stdout).not.toContain('thinking');
  });

  it('rewrite, topic and summary calls ask the server not to think, in forms a server that ignores them survives', async () => {
    await setUp(STANDALONE);
    const result = await followUp();
    expect(result.code, result.stderr).toBe(0);
    const rewrite = server!.requestsTo('chat').find((r) => isRewrite(r.body))!;
    expect(rewrite.body).toMatchObject({ chat_template_kwargs: { enable_thinking: false }, think: false });
    // Qwen3's soft switch (QwenLM/Qwen3#1396).
    expect(rewrite.body.messages.at(-1).content).toMatch(/\/no_think$/);
    // The answer is left to the server's default.
    const answer = server!.requestsTo('chat').filter((r) => !isRewrite(r.body)).at(-1)!;
    expect(answer.body.chat_template_kwargs).toBeUndefined();
  });

  it('a server that rejects those fields is asked again without them', async () => {
    await setUp(STANDALONE);
    server!.queueFailure({ route: 'chat', status: 400, body: { error: { message: "Unrecognized request argument supplied: chat_template_kwargs", type: 'invalid_request_error' } } });
    // The first ask's answer gets the 400 only if it sends the fields; it does not, so the failure meets the rewrite.
    const first = await ragline(['ask', Q1], { env: env() });
    expect(first.code, first.stderr).toBe(1);
    const result = await ragline(['ask', '--session', 'last', FOLLOW_UP], { env: env() });
    expect(result.code, result.stderr).toBe(0);
  });

  it('a rewrite cut by the token limit while reasoning says so, and the offline rewrite is searched', async () => {
    await setUp({ content: '', reasoning: { field: 'reasoning_content', chunks: ['Hmm, '.repeat(40)] }, finishReason: 'length' });
    const result = await followUp();
    expect(result.code, result.stderr).toBe(0);
    expect(shownQuery(result)).toMatch(/^↳ searching for: does the API key expire\? \(rewritten: offline rewrite, as the model failed: /);
    expect(turns()[1].rewrite_reason).toMatch(/was still reasoning when it reached its 120-token limit/);
  });
});

describe('how small models write a rewrite: the shown query is the rewrite, word for word', () => {
  it.each([
    ['a label line', `Here is the rewritten question:\n\n${STANDALONE}`],
    ['a label with quotes', `The standalone question is: "${STANDALONE}"`],
    ['a fence', `\`\`\`\n${STANDALONE}\n\`\`\``],
    ['JSON', `{"standalone_question": "${STANDALONE}"}`],
    ['JSON in a fence', `\`\`\`json\n{"query": "${STANDALONE}"}\n\`\`\``],
    ['a trailing explanation', `${STANDALONE}\n\nExplanation: "it" refers to the API key from the previous question.`],
    ['an explanation on the same line', `${STANDALONE} (I replaced "it" with the API key.)`],
    ['a bold label in markdown', `**Rewritten question:** ${STANDALONE}`],
  ])('%s', async (_name, reply) => {
    await setUp(reply);
    const result = await followUp();
    expect(result.code, result.stderr).toBe(0);
    expect(shownQuery(result)).toMatch(new RegExp(`^↳ searching for: ${escaped(STANDALONE)} \\(rewritten: `));
    expect(turns()[1].standalone_query).toBe(STANDALONE);
  });

  it.each([
    ['an answer instead of a rewrite (langchain-ai/langchain#8875)', 'Tarn access tokens never expire.', /a statement, not a question/],
    ['the question echoed unchanged', FOLLOW_UP, /returned the question unchanged/],
  ])('%s: the offline rewrite is searched and the trail says why', async (_name, reply, why) => {
    await setUp(reply);
    const result = await followUp();
    expect(result.code, result.stderr).toBe(0);
    expect(shownQuery(result)).toMatch(/^↳ searching for: does the API key expire\? \(rewritten: offline rewrite, as the model/);
    const turn = turns()[1];
    expect(turn.rewrite_reason).toMatch(why);
    expect(turn.rewrite_error).toContain(reply.slice(0, 15));
  });
});

describe('time is bounded', () => {
  it('a stream that stalls after its headers ends the answer within RAGLINE_STREAM_IDLE_MS, naming it', async () => {
    await setUp(STANDALONE, { chunks: ['Keys ', 'expire ', 'after ', '90 days.'], stallAfterChunks: 2 });
    // The server stays silent until the client gives up: without the limit, the test runs past its timeout.
    const result = await ragline(['ask', Q1], { env: env({ RAGLINE_STREAM_IDLE_MS: '800' }) });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/stalled: nothing for 0\.8 s/);
    expect(result.stderr).toContain('RAGLINE_STREAM_IDLE_MS');
    expect(server!.requestsTo('chat')).toHaveLength(1);
  });

  it.each<[string, string[], ChatReply['trickle']]>([
    ['ask, a token every 150 ms', ['ask', Q1], { everyMs: 150, as: 'token' }],
    ['chat, only keep-alive comments every 150 ms', ['chat'], { everyMs: 150, as: 'keep-alive' }],
  ])('a stream that trickles and never falls silent (%s) ends within RAGLINE_STREAM_TOTAL_MS, naming it', async (_name, args, trickle) => {
    await setUp(STANDALONE, { chunks: ['Keys ', 'expire ', 'after ', '90 days.'], stallAfterChunks: 2, trickle });
    // Without the total limit the idle limit (800 ms) is never reached and the test runs past its timeout.
    const started = performance.now();
    const result = await ragline(args, { env: env({ RAGLINE_STREAM_IDLE_MS: '800', RAGLINE_STREAM_TOTAL_MS: '1500' }), input: `${Q1}\n` });
    expect(performance.now() - started).toBeLessThan(15_000);
    if (args[0] === 'ask') expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/was not finished after 1\.5 s, the limit for a whole reply/);
    expect(result.stderr).toContain('RAGLINE_STREAM_TOTAL_MS');
    expect(server!.requestsTo('chat')).toHaveLength(1);
    // Stored as failed, with what had arrived and the error.
    const [turn] = turns();
    expect(turn.status).toBe('failed');
    expect(turn.error).toContain('the limit for a whole reply');
  });

  it('a model slow to start answering is said to be awaited, on stderr', async () => {
    await setUp(STANDALONE, { chunks: ['Keys expire after 90 days [1].'], chunkDelayMs: 2300 });
    const result = await ragline(['ask', Q1], { env: env() });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('waiting for qwen3:8b to answer …');
    expect(result.stdout).not.toContain('waiting');
  });

  it('a stalled rewrite falls back to the offline rewrite within RAGLINE_REWRITE_TIMEOUT_MS', async () => {
    await setUp({ chunks: ['Do ', 'Orbitly'], stallAfterChunks: 1 });
    const first = await ragline(['ask', Q1], { env: env() });
    expect(first.code, first.stderr).toBe(0);
    // The server stays silent until the client gives up: without the limit, the test runs past its timeout.
    const result = await ragline(['ask', '--session', 'last', FOLLOW_UP], { env: env({ RAGLINE_REWRITE_TIMEOUT_MS: '700' }) });
    expect(result.code, result.stderr).toBe(0);
    expect(shownQuery(result)).toMatch(/offline rewrite, as the model did not answer within 0\.7 s/);
  });

  it('a cold model is loaded once, not aborted by the rewrite limit, and the follow-up keeps its model rewrite (Ollama)', async () => {
    // Scaled down: a 2 s load against a 0.7 s rewrite limit stands for a 20 s load against 15 s.
    await setUp(STANDALONE, ANSWER, { flavor: 'ollama', loadMs: 2000 });
    const result = await ragline(['ask', Q1], { env: env({ RAGLINE_REWRITE_TIMEOUT_MS: '700' }) });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('loading model qwen3:8b');
    // A new process: the model is loaded now, as Ollama keeps it for five minutes.
    const next = await ragline(['ask', '--session', 'last', FOLLOW_UP], { env: env({ RAGLINE_REWRITE_TIMEOUT_MS: '700' }) });
    expect(next.code, next.stderr).toBe(0);
    expect(shownQuery(next)).toMatch(new RegExp(`^↳ searching for: ${escaped(STANDALONE)} \\(rewritten`));
    expect(server!.loads).toEqual({ started: 1, aborted: 0, finished: 1 });
  });

  it('a follow-up as the first request to a model still loading keeps its model rewrite', async () => {
    await setUp(STANDALONE, ANSWER, { flavor: 'ollama', loaded: ['qwen3:8b'] });
    const first = await ragline(['ask', Q1], { env: env() });
    expect(first.code, first.stderr).toBe(0);
    await server!.close();
    // The server restarted and unloaded the model; the next request loads it (2 s) under a 0.7 s rewrite limit.
    const restarted = await startOpenAIServer({ models: ['qwen3:8b'], flavor: 'ollama', loadMs: 2000 });
    restarted.onChat((body) => (isRewrite(body) ? STANDALONE : ANSWER));
    server = restarted;
    const result = await ragline(['ask', '--session', 'last', FOLLOW_UP], { env: env({ RAGLINE_REWRITE_TIMEOUT_MS: '700' }) });
    expect(result.code, result.stderr).toBe(0);
    expect(shownQuery(result)).toMatch(new RegExp(`^↳ searching for: ${escaped(STANDALONE)} \\(rewritten`));
    expect(restarted.loads.aborted).toBe(0);
  });
});

describe('context windows', () => {
  it.each<[string, Parameters<FakeOpenAI['queueFailure']>[0]]>([
    [
      "llama.cpp's 400 exceed_context_size_error (ggml-org/llama.cpp#15780)",
      { route: 'chat', status: 400, body: { error: { code: 400, message: 'the request exceeds the available context size, try increasing it', type: 'exceed_context_size_error', n_prompt_tokens: 5120, n_ctx: 4096 } } },
    ],
    [
      "vLLM's older top-level message (vllm-project/vllm#12886)",
      { route: 'chat', status: 400, body: { object: 'error', message: "This model's maximum context length is 4096 tokens. However, you requested 5120 tokens (4096 in the messages, 1024 in the completion).", type: 'BadRequestError', code: 400 } },
    ],
    [
      "older llama.cpp's error: line at HTTP 200 (ggml-org/llama.cpp#14566)",
      { route: 'chat', inStream: 'error-line', body: { code: 500, message: 'the request exceeds the available context size, try increasing it', type: 'server_error' } },
    ],
    [
      "LM Studio's data: {error} (lmstudio-ai/lmstudio-bug-tracker#2322)",
      { route: 'chat', inStream: 'data-error', body: { message: 'Trying to keep the first 5120 tokens when context the overflows. However, the model is loaded with context length of only 4096 tokens, which is not enough.' } },
    ],
    ["LM Studio's empty 200 stream (lmstudio-ai/lmstudio-bug-tracker#2339)", { route: 'chat', inStream: 'empty' }],
  ])('%s: one clear message naming the setting, no retries', async (_name, failure) => {
    await setUp(STANDALONE);
    server!.queueFailure({ ...failure, count: 5 });
    const result = await ragline(['ask', Q1], { env: env() });
    expect(result.code).toBe(1);
    const errors = result.stderr.split('\n').filter((line) => line.startsWith('error:'));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/longer than model "qwen3:8b"|empty reply/);
    expect(result.stderr).toContain('RAGLINE_CONTEXT_TOKENS');
    expect(server!.requestsTo('chat')).toHaveLength(1);
    expect(turns()[0].status).toBe('failed');
  });

  it("the prompt is fitted to the window the server reports (Ollama's num_ctx), and says so", async () => {
    await setUp(STANDALONE, ANSWER, { flavor: 'ollama', contextTokens: 1024, loaded: ['qwen3:8b'] });
    const result = await ragline(['ask', Q1], { env: env() });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/fitted the prompt to the model's 1,024-token context \(Ollama \/api\/ps\): \d of 5 documents/);
    const sent = server!.requestsTo('chat').at(-1)!.body.messages;
    const chars = sent.reduce((sum: number, m: any) => sum + m.content.length, 0);
    expect(chars / 4).toBeLessThan(1024);
    // The instructions and the question are kept whole.
    expect(sent[0].content).toMatch(/^You are ragline/);
    expect(sent.at(-1).content).toContain(`Question: ${Q1}`);
  });

  it.each([
    ['llama.cpp /props', { flavor: 'llama.cpp' as const, contextTokens: 900 }, /900-token context \(llama\.cpp \/props\)/],
    ['vLLM max_model_len', { flavor: 'vllm' as const, contextTokens: 900 }, /900-token context \(vLLM max_model_len/],
    ['LM Studio loaded context', { flavor: 'lmstudio' as const, contextTokens: 900, loaded: ['qwen3:8b'] }, /900-token context \(LM Studio/],
    ['RAGLINE_CONTEXT_TOKENS over any server', {}, /900-token context \(RAGLINE_CONTEXT_TOKENS\)/],
  ])('the window from %s', async (_name, options, expected) => {
    await setUp(STANDALONE, ANSWER, options);
    const result = await ragline(['ask', Q1], { env: env(Object.keys(options).length === 0 ? { RAGLINE_CONTEXT_TOKENS: '900' } : {}) });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(expected);
  });

  it('a server that cut the prompt silently is detected from usage.prompt_tokens (ollama/ollama#10368)', async () => {
    await setUp(STANDALONE, ANSWER, { contextTokens: 400, truncate: true });
    const result = await ragline(['ask', Q1], { env: env() });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/the server read 400 tokens of a prompt of about [\d,]+: it may have cut the prompt/);
  });
});

describe('server-sent events as the standard allows them', () => {
  it('CRLF line ends, data: without a space and keep-alive comments are read as events', async () => {
    await setUp(STANDALONE, { chunks: ['Keys ', 'expire ', 'after 90 days [1].'] }, { sseDialect: 'loose' });
    const result = await followUp();
    expect(result.code, result.stderr).toBe(0);
    expect(shownQuery(result)).toMatch(new RegExp(`^↳ searching for: ${escaped(STANDALONE)} \\(rewritten`));
    expect(turns()[1].answer).toBe('Keys expire after 90 days [1].');
  });
});

describe('setup a user can follow', () => {
  it("a 404 for a model lists the models the server has (Ollama's /api/tags)", async () => {
    await setUp(STANDALONE, ANSWER, { flavor: 'ollama', models: ['llama3.2:3b', 'nomic-embed-text:latest'], loaded: ['qwen3:8b'] });
    server!.queueFailure({ route: 'chat', status: 404, body: { error: { message: "model 'qwen3:8b' not found, try pulling it first", type: 'api_error' } } });
    const result = await ragline(['ask', Q1], { env: env() });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Model "qwen3:8b" was not found');
    expect(result.stderr).toContain('The server has: llama3.2:3b, nomic-embed-text:latest.');
  });

  it("OpenAI's default model name is not sent to another server without saying so", async () => {
    await setUp(STANDALONE, ANSWER, { flavor: 'ollama', models: ['llama3.2:3b'], loaded: ['gpt-4o-mini'] });
    server!.queueFailure({ route: 'chat', status: 404, body: { error: { message: "model 'gpt-4o-mini' not found, try pulling it first" } } });
    const result = await ragline(['ask', Q1], { env: { ...env(), RAGLINE_CHAT_MODEL: '' } });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/"gpt-4o-mini" is OpenAI's default, used because RAGLINE_CHAT_MODEL is not set/);
    expect(result.stderr).toContain('The server has: llama3.2:3b.');
  });
});
