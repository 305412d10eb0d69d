// The history stage's core over plain exchanges (no database): the verbatim window
// within the token budget, the most recent exchange always, and the running
// summary recomputed only when more exchanges fell out than it covers.

import { describe, expect, it } from 'vitest';
import {
  buildHistory,
  EMPTY_CONVERSATION,
  estimateTokens,
  windowHistory,
  type ConversationState,
  type Exchange,
} from '../src/chat/stages/history.js';
import { resolveConfig } from '../src/config/index.js';
import { ConversationRewriter } from '../src/eval/conversation.js';
import type { ChatModel } from '../src/providers/types.js';
import type { QueryRewriter, RewriteRequest } from '../src/rewrite/index.js';

/** An exchange of `tokens` estimated tokens (question and answer together). */
function exchange(ordinal: number, tokens = 10): Exchange {
  const question = `question ${ordinal}?`.padEnd(8, ' ');
  const answer = 'a'.repeat(Math.max(0, tokens - estimateTokens(question)) * 4);
  return { ordinal, question, standaloneQuery: `standalone ${ordinal}`, answer, answerKind: 'llm' };
}
const exchanges = (n: number, tokens = 10) => Array.from({ length: n }, (_, i) => exchange(i + 1, tokens));
const ordinals = (list: readonly Exchange[]) => list.map((e) => e.ordinal);

/** A summary model that counts its calls and says which ordinals it was given. */
function summaryModel(): ChatModel & { calls: string[] } {
  const calls: string[] = [];
  return {
    id: 'test:summary',
    calls,
    async *stream(messages) {
      const said = messages.at(-1)!.content;
      calls.push(said);
      yield { type: 'token' as const, text: `summary #${calls.length}` };
    },
  } as ChatModel & { calls: string[] };
}

describe('windowHistory', () => {
  it('keeps the newest exchanges that fit the budget, oldest first', () => {
    const window = windowHistory(exchanges(6), EMPTY_CONVERSATION, 35);
    expect(ordinals(window.verbatim)).toEqual([4, 5, 6]);
    expect(window.due).toMatchObject({ through: 3 });
    expect(ordinals(window.due!.fallen)).toEqual([1, 2, 3]);
  });

  it('keeps everything, and no summary, when everything fits', () => {
    const window = windowHistory(exchanges(3), { topics: [], summary: 'stale', summaryThrough: 2 }, 1000);
    expect(ordinals(window.verbatim)).toEqual([1, 2, 3]);
    expect(window).toEqual({ verbatim: window.verbatim, topics: [], summaryThrough: 0 });
  });

  it('always keeps the most recent exchange, however long', () => {
    const list = [...exchanges(2), exchange(3, 5000)];
    const window = windowHistory(list, EMPTY_CONVERSATION, 100);
    expect(ordinals(window.verbatim)).toEqual([3]);
    expect(ordinals(window.due!.fallen)).toEqual([1, 2]);
    expect(ordinals(windowHistory([exchange(1, 5000)], EMPTY_CONVERSATION, 1).verbatim)).toEqual([1]);
  });

  it('reuses the previous summary while it covers every exchange that fell out', () => {
    const previous: ConversationState = { topics: [{ term: 'API key', weight: 1, lastTurn: 2 }], summary: 'earlier', summaryThrough: 3 };
    const window = windowHistory(exchanges(6), previous, 35);
    expect(window).toMatchObject({ summary: 'earlier', summaryThrough: 3, topics: previous.topics });
    expect(window.due).toBeUndefined();
  });

  it('says the summary is due, with the newly fallen exchanges, when more fell out', () => {
    const window = windowHistory(exchanges(8), { topics: [], summary: 'earlier', summaryThrough: 3 }, 35);
    expect(ordinals(window.verbatim)).toEqual([6, 7, 8]);
    expect(window.due!.through).toBe(5);
    expect(ordinals(window.due!.fallen)).toEqual([1, 2, 3, 4, 5]);
    expect(ordinals(window.due!.newlyFallen)).toEqual([4, 5]);
  });

  it('counts ordinals, not positions: gaps left by small talk or failures do not matter', () => {
    const list = [exchange(2), exchange(5), exchange(9), exchange(12)];
    const window = windowHistory(list, { topics: [], summary: 'earlier', summaryThrough: 5 }, 25);
    expect(ordinals(window.verbatim)).toEqual([9, 12]);
    expect(window.due).toBeUndefined();
    expect(windowHistory([...list, exchange(14)], { topics: [], summary: 'earlier', summaryThrough: 5 }, 25).due).toMatchObject({ through: 9 });
  });
});

describe('buildHistory', () => {
  it('asks the summary model only when more exchanges fell out, with the previous summary and the new ones', async () => {
    const model = summaryModel();
    let state: ConversationState = EMPTY_CONVERSATION;
    const computed: boolean[] = [];
    for (let n = 1; n <= 6; n++) {
      const history = await buildHistory(exchanges(n), state, { tokenBudget: 35, model });
      computed.push(history.summaryComputed);
      state = { topics: history.topics, summary: history.summary, summaryThrough: history.summary ? history.summaryThrough : 0 };
    }
    // 35 tokens hold three exchanges of 10: the first falls out when there are four.
    expect(computed).toEqual([false, false, false, true, true, true]);
    expect(model.calls).toHaveLength(3);
    expect(model.calls[2]).toContain('summary #2');
    expect(model.calls[2]).toContain('question 3?');
    expect(model.calls[2]).not.toContain('question 2?');
    expect(state).toMatchObject({ summary: 'summary #3', summaryThrough: 3 });
    // The same exchanges again: nothing more fell out, no call.
    const again = await buildHistory(exchanges(6), state, { tokenBudget: 35, model });
    expect(again).toMatchObject({ summary: 'summary #3', summaryThrough: 3, summaryComputed: false });
    expect(model.calls).toHaveLength(3);
  });

  it('summarises offline without a model: every fallen exchange, as the chat does offline', async () => {
    const history = await buildHistory(exchanges(5), EMPTY_CONVERSATION, { tokenBudget: 35 });
    expect(history).toMatchObject({ summaryThrough: 2, summaryComputed: true });
    expect(history.summary).toBe('Asked: standalone 1; standalone 2');
    expect(ordinals(history.verbatim)).toEqual([3, 4, 5]);
  });

  it('falls back to the offline summary when the model fails, but not when aborted', async () => {
    // A model whose stream fails before its first token.
    // eslint-disable-next-line require-yield
    const failing = { id: 'test:down', async *stream() { throw new Error('503'); } } as unknown as ChatModel;
    const history = await buildHistory(exchanges(5), EMPTY_CONVERSATION, { tokenBudget: 35, model: failing });
    expect(history.summary).toBe('Asked: standalone 1; standalone 2');
    const controller = new AbortController();
    controller.abort();
    await expect(buildHistory(exchanges(5), EMPTY_CONVERSATION, { tokenBudget: 35, model: failing, signal: controller.signal })).rejects.toThrow('503');
  });
});

/** A rewriter that records what it was asked and marks its rewrite. */
function recordingRewriter(requests: RewriteRequest[]): QueryRewriter {
  return {
    id: 'test:rewriter',
    async rewrite(request) {
      requests.push(request);
      return { standaloneQuery: `${request.question} (rewritten)`, decision: 'rewritten', reason: 'test' };
    },
  };
}

describe('eval plays a conversation through the same stages', () => {
  it('rewrites with the window within the token budget and the offline summary, one rewrite per turn', async () => {
    const { config } = resolveConfig({ env: { HOME: '/nonexistent', XDG_CONFIG_HOME: '/nonexistent/config', RAGLINE_HISTORY_TOKENS: '60' } });
    const requests: RewriteRequest[] = [];
    const rewriter = recordingRewriter(requests);
    const conversation = new ConversationRewriter(rewriter, config, 'auto');
    const turns = Array.from({ length: 5 }, (_, i) => ({ user: `question ${i + 1}?`, assistant: 'b'.repeat(100) }));
    for (let i = 0; i < turns.length; i++) {
      await conversation.rewrite({ id: `c::${i}`, group: 'c', question: turns[i]!.user, history: turns.slice(0, i), relevant: [] });
    }
    expect(requests.map((r) => r.question)).toEqual(turns.map((t) => t.user));
    // Each exchange is 28 tokens: two fit in 60, the rest are summarised as the chat does offline.
    const last = requests.at(-1)!;
    expect(last.history.map((h) => h.question)).toEqual(['question 3?', 'question 4?']);
    expect(last.history[0]!.standaloneQuery).toBe('question 3? (rewritten)');
    expect(last.summary).toMatch(/^Asked: question 1\? \(rewritten\); question 2\? \(rewritten\)/);
    expect(last.topics.length).toBeGreaterThan(0);
  });

  it('with models configured, summarises and extracts topics with them, as the chat does', async () => {
    const { config } = resolveConfig({ env: { HOME: '/nonexistent', XDG_CONFIG_HOME: '/nonexistent/config', RAGLINE_HISTORY_TOKENS: '60' } });
    const requests: RewriteRequest[] = [];
    const rewriter = recordingRewriter(requests);
    const summaries = summaryModel();
    const topicModel: ChatModel = {
      id: 'test:topics',
      async *stream() {
        yield { type: 'token' as const, text: 'Zanzibar gateway\n' };
      },
    };
    const conversation = new ConversationRewriter(rewriter, config, 'auto', { summaryModel: summaries, topicModel });
    const turns = Array.from({ length: 5 }, (_, i) => ({ user: `question ${i + 1}?`, assistant: 'b'.repeat(100) }));
    await conversation.rewrite({ id: 'c::4', group: 'c', question: turns[4]!.user, history: turns.slice(0, 4), relevant: [] });
    const last = requests.at(-1)!;
    expect(last.summary).toMatch(/^summary #\d+$/);
    expect(summaries.calls.length).toBeGreaterThan(0);
    expect(last.topics.map((t) => t.term)).toContain('Zanzibar gateway');
  });
});
