import { describe, expect, it } from 'vitest';
import { mean, meanMetrics, mrrAtK, ndcgAtK, recallAtK, scoreQuery } from '../src/eval/metrics.js';

// relevant ids at ranks 2 and 7
const ranked = ['x1', 'a', 'x2', 'x3', 'x4', 'x5', 'b', 'x6', 'x7', 'x8', 'x9'];
const relevant = ['a', 'b'];

describe('metrics', () => {
  it('recall counts the share of relevant ids in the top k', () => {
    expect(recallAtK(ranked, relevant, 5)).toBe(0.5);
    expect(recallAtK(ranked, relevant, 10)).toBe(1);
    expect(recallAtK(ranked, [], 10)).toBe(0);
  });

  it('MRR is the reciprocal rank of the first relevant id within k', () => {
    expect(mrrAtK(ranked, relevant, 10)).toBe(0.5);
    expect(mrrAtK(ranked, relevant, 1)).toBe(0);
  });

  it('nDCG@10 with binary gains matches the hand computation', () => {
    const expected = (1 / Math.log2(3) + 1 / Math.log2(8)) / (1 + 1 / Math.log2(3));
    expect(ndcgAtK(ranked, relevant, 10)).toBeCloseTo(expected, 12);
    expect(ndcgAtK(['a', 'b'], relevant, 10)).toBeCloseTo(1, 12);
  });

  it('nDCG uses graded gains when given', () => {
    const gains = new Map([
      ['a', 1],
      ['b', 3],
    ]);
    const dcg = 1 / Math.log2(3) + 3 / Math.log2(8);
    const idcg = 3 + 1 / Math.log2(3);
    expect(ndcgAtK(ranked, relevant, 10, gains)).toBeCloseTo(dcg / idcg, 12);
    expect(ndcgAtK(ranked, relevant, 10, { a: 1, b: 3 })).toBeCloseTo(dcg / idcg, 12);
  });

  it('counts a duplicated id once, at its best rank', () => {
    expect(recallAtK(['a', 'a', 'a', 'a', 'a', 'b'], relevant, 5)).toBe(1);
  });

  it('aggregates per-query metrics by mean', () => {
    const q1 = scoreQuery(ranked, relevant);
    const q2 = scoreQuery(['z'], relevant);
    expect(q1).toEqual({ recall5: 0.5, recall10: 1, mrr10: 0.5, ndcg10: expect.any(Number) });
    const m = meanMetrics([q1, q2]);
    expect(m.recall5).toBe(0.25);
    expect(m.mrr10).toBe(0.25);
    expect(mean([])).toBe(0);
  });
});
