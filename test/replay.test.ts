// `ragline replay` end to end through the CLI, run in-process (test/helpers/
// cli.ts). A three-turn session is recorded once through `ragline chat`
// (piped) against the loopback OpenAI-compatible server, with the rewrites and the
// answers scripted and the embeddings offline (RAGLINE_EMBED_PROVIDER=offline).
// Each test works on a copy of that data dir, so --save never leaks into another.

import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FIXTURE_DOCS, ROOT, isolatedEnv, ragline, tempDir, type CliResult } from './helpers/cli.js';
import { startOpenAIServer, type FakeOpenAI, type RecordedRequest } from './helpers/openai-server.js';

const Q1 = 'How do I create an API key?';
const Q2 = 'Does it expire?';
const Q3 = 'How do I rotate it?';
const REWRITES_AT_RECORDING: Record<string, string> = {
  [Q2]: 'Do Orbitly API keys expire?',
  [Q3]: 'How do I rotate an Orbitly API key?',
};
/** Four lines each; the second answer carries an escape sequence a terminal must never see. */
const ANSWERS: Record<string, string> = {
  [Q1]: 'Create a key under Workspace settings [1].\nLine two of one.\nLine three of one.\nLine four of one.',
  [Q2]: 'Keys expire after 90 days \u001b[31mby default\u001b[0m [1].\nLine two of two.\nLine three of two.\nLine four of two.',
  [Q3]: 'Rotate it with orbit keys rotate [1].\nLine two of three.\nLine three of three.\nLine four of three.',
};

let template: string;
let home: string;
let server: FakeOpenAI;

const isRewrite = (request: RecordedRequest) => String(request.body?.messages?.[0]?.content).startsWith('You rewrite the last message');
const lastMessage = (body: any): string => /Last message: (.*)/.exec(body.messages.at(-1).content)?.[1] ?? '';

/** The model: rewrites from `rewrites` (by the last message), answers by the question carried. */
function script(target: FakeOpenAI, rewrites: Record<string, string>): void {
  target.onChat((body) => {
    if (String(body.messages[0].content).startsWith('You rewrite the last message')) return rewrites[lastMessage(body)] ?? lastMessage(body);
    const user = String(body.messages.at(-1).content);
    const asked = Object.keys(ANSWERS).find((q) => user.includes(`: ${q}`));
    return ANSWERS[asked ?? Q1]!;
  });
}

function env(root: string, baseURL: string): NodeJS.ProcessEnv {
  return isolatedEnv(root, {
    RAGLINE_BASE_URL: baseURL,
    RAGLINE_API_KEY: 'sk-test-replay',
    RAGLINE_CHAT_MODEL: 'fake-chat-model',
    RAGLINE_REWRITE_MODEL: 'fake-rewrite-model',
    RAGLINE_EMBED_PROVIDER: 'offline',
    RAGLINE_MAX_RETRIES: '0',
    RAGLINE_TOPICS: 'local', // the scripted server answers rewrites and answers only
  });
}

const cli = (args: string[]): Promise<CliResult> => ragline(args, { env: env(home, server.baseURL) });

async function ok(args: string[]): Promise<string> {
  const result = await cli(args);
  expect(result.code, result.stderr).toBe(0);
  return result.stdout;
}

async function json(args: string[]): Promise<any> {
  return JSON.parse(await ok([...args, '--json']));
}

beforeAll(async () => {
  if (!fs.existsSync(path.join(ROOT, 'dist/cli/main.js'))) throw new Error('Build first: npx tsc -p .');
  template = tempDir('ragline-replay-template-');
  const recorder = await startOpenAIServer();
  try {
    script(recorder, REWRITES_AT_RECORDING);
    const ingest = await ragline(['ingest', FIXTURE_DOCS], { env: env(template, recorder.baseURL) });
    expect(ingest.code, ingest.stderr).toBe(0);
    const chat = await ragline(['chat', '--new', 'demo'], { env: env(template, recorder.baseURL), input: [Q1, Q2, Q3].join('\n') + '\n' });
    expect(chat.code, chat.stderr).toBe(0);
    expect(recorder.requests.filter(isRewrite)).toHaveLength(2);
  } finally {
    await recorder.close();
  }
});

afterAll(() => fs.rmSync(template, { recursive: true, force: true }));

beforeEach(async () => {
  home = tempDir('ragline-replay-');
  fs.cpSync(template, home, { recursive: true });
  server = await startOpenAIServer();
  script(server, REWRITES_AT_RECORDING);
});

afterEach(async () => {
  await server.close();
  fs.rmSync(home, { recursive: true, force: true });
});

describe('ragline replay', () => {
  it('shows each turn: question, stored rewrite with its decision, chunks as retrieved, the first lines of the answer', async () => {
    const out = await ok(['replay', 'demo']);
    expect(out).toContain('session demo (s-');
    for (const [n, q] of [Q1, Q2, Q3].entries()) {
      expect(out).toContain(`Turn ${n + 1} · answered`);
      expect(out).toContain(`› ${q}`);
    }
    expect(out).toMatch(/↳ not rewritten \(first turn/);
    expect(out).toContain('↳ searching for: Do Orbitly API keys expire? (rewritten:');
    expect(out).toContain('↳ searching for: How do I rotate an Orbitly API key? (rewritten:');
    expect(out).toMatch(/^\s+1\s+\d+\.\d{4}\s+guides\/authentication\.md:\d+-\d+\s+Authentication/m);
    expect(out).toContain('Line three of two.');
    expect(out).not.toContain('Line four of two.');
    expect(out).toContain('1 more line (--full shows the whole answer)');
    // Model text is sanitised: the escape sequence in the second answer never reaches the terminal.
    expect(out).not.toContain('\u001b');
    expect(out).toContain('Keys expire after 90 days by default [1].');
    // Replaying never calls the model.
    expect(server.requests).toHaveLength(0);
  });

  it('--turn N shows one turn; --full adds the whole answer and both prompts', async () => {
    const out = await ok(['replay', 'demo', '--turn', '2', '--full']);
    expect(out).not.toContain(`› ${Q1}`);
    expect(out).toContain(`› ${Q2}`);
    expect(out).toContain('Line four of two.');
    expect(out).toContain('rewrite prompt:');
    expect(out).toContain('You rewrite the last message');
    expect(out).toContain(`Last message: ${Q2}`);
    expect(out).toContain('answer prompt:');
    expect(out).toMatch(/\[system\]/);
    expect(out).not.toContain('\u001b');

    const missing = await cli(['replay', 'demo', '--turn', '9']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('has turns 1 to 3; there is no turn 9');
  });

  it('--json gives the stored turns with their chunks and where each stands in the index', async () => {
    const replay = await json(['replay', 'last']);
    expect(replay.session.name).toBe('demo');
    expect(replay.turns.map((t: any) => t.standaloneQuery)).toEqual([Q1, REWRITES_AT_RECORDING[Q2], REWRITES_AT_RECORDING[Q3]]);
    expect(replay.turns.map((t: any) => t.rewriteDecision)).toEqual(['skipped', 'rewritten', 'rewritten']);
    expect(replay.turns[1].chunks.length).toBe(5);
    expect(replay.turns[1].chunks.every((c: any) => c.indexState === 'current')).toBe(true);
    expect(replay.turns[1].rewritePrompt[0].role).toBe('system');
    expect(replay.turns[1].answer).toContain('\u001b[31m'); // data as stored; JSON escapes it
  });

  it('an unknown session is a usage error naming it', async () => {
    const result = await cli(['replay', 'nope']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('No session with the id or name "nope"');
  });
});

describe('ragline replay --rerun', () => {
  it('with the model now rewriting differently: shows the changed rewrite, the retrieval diff and a summary, and writes nothing', async () => {
    const before = await json(['replay', 'demo']);
    script(server, { [Q2]: 'How do I verify webhook signatures?', [Q3]: REWRITES_AT_RECORDING[Q3]! });

    const out = await ok(['replay', 'demo', '--rerun']);
    expect(out).toMatch(/Turn 2 · rewrite changed · retrieval changed/);
    expect(out).toContain('old Do Orbitly API keys expire?  (rewritten:');
    expect(out).toMatch(/new How do I verify webhook signatures\?  \(rewritten: .*\)  ← changed/);
    expect(out).toMatch(/^\s+\+\s+\d+\s+\d+\.\d{4}\s+guides\/webhooks\.md:\d+-\d+.*\(entered\)$/m);
    expect(out).toMatch(/\(left; was \d\)$/m);
    expect(out).not.toMatch(/Turn 3 · rewrite changed/);
    expect(out).toContain('rewrites changed:    1 of 3 (turn 2)');
    expect(out).toMatch(/retrievals changed: {2}\d of 3 \(turns? 2/);
    expect(out).toMatch(/mean top-k overlap:  0\.\d\d/);
    expect(out).toContain('nothing was saved');

    // Each rewrite saw the history as it stood: turn 3's rewrite prompt holds turn 2's
    // stored question and answer (not anything re-generated).
    const rewrites = server.requests.filter(isRewrite);
    expect(rewrites.map((r) => lastMessage(r.body))).toEqual([Q2, Q3]);
    const third = rewrites[1]!.body.messages.at(-1).content as string;
    expect(third).toContain(`User: ${Q2}`);
    expect(third).toContain('Assistant: Keys expire after 90 days');
    expect(third).not.toContain(`User: ${Q3}`);
    // Only rewrites: answers are not regenerated.
    expect(server.requestsTo('chat').length).toBe(2);

    expect(await json(['replay', 'demo'])).toEqual(before);
    expect(await json(['sessions'])).toHaveLength(1);
  });

  it('with nothing changed, reproduces every stored rewrite and retrieval (it searches exactly as a live turn does)', async () => {
    const report = await json(['replay', 'demo', '--rerun']);
    expect(report.summary).toMatchObject({ turns: 3, rewritesChanged: [], retrievalsChanged: [], meanOverlap: 1 });
    expect(report.turns[1].fusedWith).toEqual({ query: Q2, weight: 0.3 }); // beside a model's rewrite (defaultRawWeight)
  });

  it('--json carries the diff structure', async () => {
    script(server, { [Q2]: 'How do I verify webhook signatures?', [Q3]: REWRITES_AT_RECORDING[Q3]! });
    const report = await json(['replay', 'demo', '--rerun']);
    expect(report.summary.rewritesChanged).toEqual([2]);
    expect(report.summary.retrievalsChanged).toContain(2);
    expect(report.summary.meanOverlap).toBeLessThan(1);
    const turn2 = report.turns[1];
    expect(turn2.before.standaloneQuery).toBe(REWRITES_AT_RECORDING[Q2]);
    expect(turn2.after.standaloneQuery).toBe('How do I verify webhook signatures?');
    expect(turn2.retrieval.entered.length).toBeGreaterThan(0);
    expect(turn2.retrieval.entered.length).toBe(turn2.retrieval.left.length);
    // The same standalone query against the same index finds the same chunks.
    expect(report.turns[2].rewriteChanged).toBe(false);
    expect(report.turns[2].retrieval.overlap).toBe(1);
    expect(report.saved).toBeNull();
  });

  it('--rewrite never searches every question as typed, without asking the model', async () => {
    const out = await ok(['replay', 'demo', '--rerun', '--rewrite', 'never']);
    expect(out).toMatch(/new Does it expire\?  \(skipped: rewrite policy: never\)  ← changed/);
    expect(out).toContain('rewrites changed:    2 of 3 (turns 2, 3)');
    expect(server.requests.filter(isRewrite)).toHaveLength(0);

    const bad = await cli(['replay', 'demo', '--rerun', '--rewrite', 'sometimes']);
    expect(bad.code).toBe(2);
  });

  it('--save stores the rerun as <name>-rerun-<n> with the new queries and chunks, answers copied; the original is untouched', async () => {
    const before = await json(['replay', 'demo']);
    script(server, { [Q2]: 'How do I verify webhook signatures?', [Q3]: REWRITES_AT_RECORDING[Q3]! });
    const out = await ok(['replay', 'demo', '--rerun', '--save']);
    expect(out).toMatch(/saved as session demo-rerun-1 \(s-[0-9a-f]{6}\)/);

    const saved = await json(['replay', 'demo-rerun-1']);
    expect(saved.turns.map((t: any) => t.question)).toEqual([Q1, Q2, Q3]);
    expect(saved.turns[1].standaloneQuery).toBe('How do I verify webhook signatures?');
    expect(saved.turns[1].chunks.some((c: any) => c.documentPath === 'guides/webhooks.md')).toBe(true);
    expect(saved.turns.map((t: any) => t.answer)).toEqual(before.turns.map((t: any) => t.answer));
    expect(saved.turns.map((t: any) => t.status)).toEqual(['answered', 'answered', 'answered']);
    expect(saved.turns[1].settings).toMatchObject({ answer: 'copied', rerunOf: { sessionId: before.session.id, ordinal: 2 } });
    expect(saved.turns[1].topics.length).toBeGreaterThan(0);
    expect(await ok(['replay', 'demo-rerun-1', '--turn', '2'])).toContain(`answer copied from session ${before.session.id} turn 2; not regenerated`);

    expect(await json(['replay', 'demo'])).toEqual(before);
    await ok(['replay', 'demo', '--rerun', '--save']);
    expect((await json(['sessions'])).map((s: any) => s.name).sort()).toEqual(['demo', 'demo-rerun-1', 'demo-rerun-2']);

    const withTurn = await cli(['replay', 'demo', '--rerun', '--save', '--turn', '2']);
    expect(withTurn.code).toBe(2);
    const withoutRerun = await cli(['replay', 'demo', '--save']);
    expect(withoutRerun.code).toBe(2);
  });

  it('re-runs offline too (no server configured): the offline rewriter against the same index', async () => {
    const result = await ragline(['replay', 'demo', '--rerun', '--json'], { env: isolatedEnv(home) });
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report.rewriter).toMatch(/^offline:/);
    expect(report.turns).toHaveLength(3);
  });
});
