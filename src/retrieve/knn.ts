// Vector candidates for a query vector: exact KNN over the vec0 table.

import type { Statement } from 'better-sqlite3';
import type { Db } from '../store/db.js';
import { hasVectorTable, vectorBytes } from '../store/vectors.js';

export interface VectorCandidate {
  id: number;
  /** Cosine distance (0 = same direction). */
  distance: number;
}

const statements = new WeakMap<Db, { knn: Statement<unknown[]> } | null>();

/** The `n` nearest chunks to `vector`, nearest first. */
export function vectorCandidates(db: Db, vector: Float32Array, n: number): VectorCandidate[] {
  let cached = statements.get(db);
  if (cached === undefined) {
    cached = hasVectorTable(db)
      ? { knn: db.prepare('SELECT rowid AS id, distance FROM vec_chunks WHERE embedding MATCH ? AND k = ? ORDER BY distance') }
      : null;
    statements.set(db, cached);
  }
  if (!cached || n <= 0) return [];
  return cached.knn.all(vectorBytes(vector), n) as VectorCandidate[];
}
