import { describe, expect, it } from 'vitest';
import { fuse } from '../src/retrieve/fuse.js';

const vector = [
  { id: 'a', rank: 1, score: 0.1 },
  { id: 'b', rank: 2, score: 0.2 },
  { id: 'c', rank: 3, score: 0.4 },
];
const keyword = [
  { id: 'c', rank: 1, score: -9 },
  { id: 'd', rank: 2, score: -5 },
  { id: 'a', rank: 3, score: -1 },
];

describe('fuse', () => {
  it('computes reciprocal rank fusion by hand (k=60, equal weights)', () => {
    const out = fuse(vector, keyword, { method: 'rrf', k: 60, vectorWeight: 1, keywordWeight: 1 });
    // a: 1/61 + 1/63, c: 1/63 + 1/61 (tie, broken by best rank then keyword rank), b: 1/62, d: 1/62
    expect(out.map((h) => h.id)).toEqual(['c', 'a', 'd', 'b']);
    expect(out[0].score).toBeCloseTo(1 / 61 + 1 / 63, 15);
    expect(out[2].score).toBeCloseTo(1 / 62, 15);
    expect(out.map((h) => h.rank)).toEqual([1, 2, 3, 4]);
  });

  it('a keyword floor of 0 keeps the last keyword hit worth its bm25 (a list of every match), min-max gives it 0', () => {
    const last = (options: Parameters<typeof fuse>[2]) => fuse([], keyword, options).find((h) => h.id === 'a')!.score;
    expect(last({})).toBe(0);
    expect(last({ keywordFloor: 0 })).toBeCloseTo(1 / 9, 12);
    expect(fuse([], keyword, { keywordFloor: 0 }).find((h) => h.id === 'c')!.score).toBe(1);
  });

  it('keeps each side’s rank and raw score', () => {
    const out = fuse(vector, keyword);
    const a = out.find((h) => h.id === 'a')!;
    expect(a.vector).toEqual({ rank: 1, distance: 0.1 });
    expect(a.keyword).toEqual({ rank: 3, bm25: -1 });
    const d = out.find((h) => h.id === 'd')!;
    expect(d.vector).toBeUndefined();
  });

  it('applies side weights', () => {
    const out = fuse(vector, keyword, { method: 'rrf', k: 60, vectorWeight: 0.5, keywordWeight: 1 });
    const b = out.find((h) => h.id === 'b')!;
    expect(b.score).toBeCloseTo(0.5 / 62, 15);
    expect(out[0].id).toBe('c'); // 0.5/63 + 1/61 beats 0.5/61 + 1/63
  });

  it('score fusion sums min-max normalised scores (lower raw score is better)', () => {
    const out = fuse(vector, keyword, { method: 'score', vectorWeight: 1, keywordWeight: 1 });
    // vector: a 1, b (0.4-0.2)/0.3=2/3, c 0; keyword: c 1, d 0.5, a 0
    const byId = Object.fromEntries(out.map((h) => [h.id, h.score]));
    expect(byId.a).toBeCloseTo(1, 12);
    expect(byId.b).toBeCloseTo(2 / 3, 12);
    expect(byId.c).toBeCloseTo(1, 12);
    expect(byId.d).toBeCloseTo(0.5, 12);
  });

  it('handles empty sides and limits', () => {
    expect(fuse([], [])).toEqual([]);
    expect(fuse(vector, [], { limit: 2 }).map((h) => h.id)).toEqual(['a', 'b']);
    expect(fuse(vector, keyword).map((h) => h.id)).toEqual(['c', 'a', 'd', 'b']); // defaults: score, 0.5:1; a and d tie at 0.5, a has the better rank
  });
});
