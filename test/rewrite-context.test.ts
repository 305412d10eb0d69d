import { describe, expect, it } from 'vitest';
import type { Topic } from '../src/domain/index.js';
import { OfflineRewriter, rankContext, type RewriteRequest } from '../src/rewrite/index.js';

const topics: Topic[] = [
  { term: 'damaged bzip2 file', weight: 1.2, lastTurn: 2, source: 'question' },
  { term: 'recover data', weight: 1, lastTurn: 2, source: 'question' },
  { term: 'memory usage', weight: 0.9, lastTurn: 2, source: 'answer' },
  { term: 'compression level', weight: 0.6, lastTurn: 1, source: 'question' },
  { term: 'block size', weight: 0.4, lastTurn: 1, source: 'answer' },
];
const request = (question: string): RewriteRequest => ({
  question,
  history: [
    { question: 'What does the compression level change?', standaloneQuery: 'What does the compression level change?', answer: '' },
    { question: 'How do I recover data from a damaged bzip2 file?', standaloneQuery: 'How do I recover data from a damaged bzip2 file?', answer: '' },
  ],
  topics,
  policy: 'auto',
});
/** The context appended in parentheses, as a list. */
const context = (standaloneQuery: string) => /\(([^()]*)\)$/.exec(standaloneQuery)?.[1]?.split(', ') ?? [];

describe('the context an unsure offline rewrite appends', () => {
  it('keeps the question as typed and appends at most three phrases, apart', () => {
    const outcome = new OfflineRewriter().rewriteSync(request('is there a limit?'));
    expect(outcome.standaloneQuery.startsWith('is there a limit? (')).toBe(true);
    expect(context(outcome.standaloneQuery).length).toBeLessThanOrEqual(3);
    expect(outcome.reason).toContain('the question as typed, with words of the conversation in parentheses');
  });

  it('never appends a fragment of a phrase: each item is a whole topic term or the last question\'s action', () => {
    for (const maxContextWords of [2, 3, 4, 5, 8]) {
      const outcome = new OfflineRewriter({ maxContextWords }).rewriteSync(request('is there a limit?'));
      for (const item of context(outcome.standaloneQuery)) expect([...topics.map((topic) => topic.term), 'recover data from a damaged bzip2 file']).toContain(item);
    }
  });

  it('orders topics by the fitted model when asked to (order: learned)', () => {
    const answersFirst = { weights: { bias: 0, answer: 5 }, threshold: 0 };
    const ranked = rankContext(topics, 'How do I recover data from a damaged bzip2 file?', undefined, answersFirst).map(({ topic }) => topic.term);
    expect(ranked.slice(0, 2).sort()).toEqual(['block size', 'memory usage']);
    const outcome = new OfflineRewriter({ order: 'learned', model: answersFirst }).rewriteSync(request('is there a limit?'));
    expect(context(outcome.standaloneQuery)).toContain('memory usage');
  });

  it('leaves out the topics the model rates below its threshold', () => {
    const none = { weights: { bias: -10 }, threshold: 0.5 };
    expect(rankContext(topics, '', undefined, none).every(({ score }) => score < 0.5)).toBe(true);
    const outcome = new OfflineRewriter({ order: 'learned', model: none }).rewriteSync(request('is there a limit?'));
    for (const item of context(outcome.standaloneQuery)) expect(item).toBe('recover data from a damaged bzip2 file');
  });
});
