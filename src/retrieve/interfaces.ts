// The two searches a hybrid retrieval runs, each behind one small interface. The
// SQLite implementations are the reference (vec0.ts: sqlite-vec's exact KNN;
// fts5.ts: FTS5's bm25); memory/ holds in-memory copies that give the same answers
// faster once loaded (memory/accelerators.ts decides when they answer).

import type { RankedHit } from './fuse.js';

export interface VectorCandidate {
  id: number;
  /** Cosine distance (0 = same direction). */
  distance: number;
}

/** Exact nearest chunks to a query vector by cosine distance. */
export interface VectorSearch {
  /**
   * Starts a search for the `n` nearest chunks to `vector` and returns the function
   * that completes it, nearest first. An implementation may scan on another thread in
   * between, so the caller can run its keyword search meanwhile; nothing else may
   * search the same implementation between the two calls.
   */
  begin(vector: Float32Array, n: number): () => VectorCandidate[];
}

/** The best chunks for an FTS5 MATCH expression by bm25. */
export interface KeywordSearch {
  /**
   * The best `limit` chunks for `match` with FTS5's bm25 under column weights
   * `weights` (title with heading path, body): lower is better, ties to the lower
   * chunk id, ranks from 1.
   */
  search(match: string, weights: readonly number[], limit: number): RankedHit<number>[];
}

/** The `n` nearest chunks to `vector` (both steps of `begin` at once). */
export function nearest(search: VectorSearch, vector: Float32Array, n: number): VectorCandidate[] {
  return search.begin(vector, n)();
}
