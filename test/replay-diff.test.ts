import { describe, expect, it } from 'vitest';
import { chunkKey, diffRetrieval, rewriteChanged, summarize, type ComparableChunk, type RerunTurn, type RewriteSide } from '../src/replay/index.js';

function chunk(path: string, hash: string, rank: number, extra: Partial<ComparableChunk> = {}): ComparableChunk & { chunkId: number } {
  return { documentPath: path, textHash: hash, rank, score: 1 / rank, startLine: rank, endLine: rank + 9, locator: 'line', heading: '', chunkId: rank, ...extra };
}

describe('diffRetrieval', () => {
  it('compares by path + text hash, not chunk id: a re-ingested chunk with a new id is the same chunk', () => {
    const old = [chunk('a.md', 'h1', 1, { chunkId: 10 } as never), chunk('b.md', 'h2', 2)];
    const now = [{ ...chunk('a.md', 'h1', 1), chunkId: 99 }, chunk('b.md', 'h2', 2)];
    const diff = diffRetrieval(old, now, 2);
    expect(diff).toMatchObject({ entered: [], left: [], moved: [], shared: 2, overlap: 1, changed: false });
  });

  it('the same text under another path is another chunk', () => {
    const diff = diffRetrieval([chunk('a.md', 'h1', 1)], [chunk('copy/a.md', 'h1', 1)], 1);
    expect(diff.entered.map(chunkKey)).toEqual([chunkKey(chunk('copy/a.md', 'h1', 1))]);
    expect(diff.left).toHaveLength(1);
    expect(diff.overlap).toBe(0);
  });

  it('a stored chunk found under the name its document has now (indexedAs) is compared under that name', () => {
    const diff = diffRetrieval([chunk('a.md', 'h1', 1, { indexedAs: 'sub/a.md' })], [chunk('sub/a.md', 'h1', 1)], 1);
    expect(diff).toMatchObject({ entered: [], left: [], shared: 1, overlap: 1, changed: false });
  });

  it('reports entered, left and rank moves; overlap is shared / k', () => {
    const old = [chunk('a', '1', 1), chunk('b', '2', 2), chunk('c', '3', 3), chunk('d', '4', 4)];
    const now = [chunk('b', '2', 1), chunk('a', '1', 2), chunk('c', '3', 3), chunk('e', '5', 4)];
    const diff = diffRetrieval(old, now, 4);
    expect(diff.entered.map((c) => c.documentPath)).toEqual(['e']);
    expect(diff.left.map((c) => c.documentPath)).toEqual(['d']);
    expect(diff.moved.map((m) => [m.chunk.documentPath, m.oldRank, m.newRank])).toEqual([
      ['b', 2, 1],
      ['a', 1, 2],
    ]);
    expect(diff.shared).toBe(3);
    expect(diff.overlap).toBe(0.75);
    expect(diff.changed).toBe(true);
  });

  it('fewer results than k still divide by k; nothing on either side has no overlap at all', () => {
    expect(diffRetrieval([chunk('a', '1', 1)], [chunk('a', '1', 1)], 5).overlap).toBe(0.2);
    expect(diffRetrieval([], [], 5)).toMatchObject({ overlap: null, changed: false });
    expect(diffRetrieval([chunk('a', '1', 1)], [], 5)).toMatchObject({ overlap: 0, changed: true });
  });
});

describe('rewriteChanged', () => {
  it('changes with the query or the decision, not with the reason alone', () => {
    const side: RewriteSide = { standaloneQuery: 'Do keys expire?', decision: 'rewritten', reason: 'pronoun' };
    expect(rewriteChanged(side, { ...side, reason: 'other words' })).toBe(false);
    expect(rewriteChanged(side, { ...side, standaloneQuery: 'Does it expire?' })).toBe(true);
    expect(rewriteChanged({ ...side, decision: 'skipped' }, { ...side, decision: 'fallback' })).toBe(true);
    expect(rewriteChanged(null, side)).toBe(true);
  });
});

describe('summarize', () => {
  it('counts changed turns, averages overlap over turns that retrieved, counts stale stored chunks', () => {
    const turn = (ordinal: number, rewrite: boolean, overlap: number | null, changed: boolean, states: string[] = []) =>
      ({
        ordinal,
        rewriteChanged: rewrite,
        retrieval: { overlap, changed },
        oldChunks: states.map((indexState) => ({ indexState })),
      }) as unknown as RerunTurn;
    const summary = summarize([turn(1, false, 1, false, ['current']), turn(2, true, 0.5, true, ['removed', 'document_changed', 'removed']), turn(3, true, null, false)], 12);
    expect(summary).toEqual({
      turns: 3,
      rewritesChanged: [2, 3],
      retrievalsChanged: [2],
      meanOverlap: 0.75,
      staleChunks: { removed: 2, documentChanged: 1 },
      judged: { turns: 0, documents: 0, foundBefore: 0, foundNow: 0 },
      ms: 12,
    });
  });
});
