// Vector candidates for a query vector: exact cosine KNN over every stored vector.
//
// Two exact paths, same answers:
// - the in-memory index (vector-index.ts): a copy of vec0's vectors in WebAssembly
//   memory, scanned with SIMD, kept in step with the database before each search.
//   It costs one load (about a memory copy of the vectors) and holds them in RAM.
// - sqlite-vec's own KNN (vec0 MATCH ... AND k = ?), used for the first search on a
//   connection, so a one-shot `ragline search` does not pay for loading a copy it
//   would use once. A second search on the same connection (a chat session) loads
//   the copy; `warmVectorIndex` loads it ahead of time (e.g. when the REPL starts).
// RAGLINE_VECTOR_SEARCH=vec0 | memory forces one path (benchmarks, diagnosis).

import type { Statement } from 'better-sqlite3';
import type { Db } from '../store/db.js';
import { vectorBytes } from '../store/vectors.js';
import { VectorIndex } from './vector-index.js';

export interface VectorCandidate {
  id: number;
  /** Cosine distance (0 = same direction). */
  distance: number;
}

interface State {
  /** The vec0 table's CREATE statement the state was made for. */
  sql: string;
  schemaVersion: number;
  knn: Statement<unknown[]>;
  dimensions: number;
  searches: number;
  index?: VectorIndex;
}

const states = new WeakMap<Db, State>();
const schemaVersions = new WeakMap<Db, Statement<unknown[]>>();

/** The search state of `db`, rebuilt when the vec0 table was dropped or recreated (reindex). */
function stateFor(db: Db): State | undefined {
  let schemaStatement = schemaVersions.get(db);
  if (!schemaStatement) {
    schemaStatement = db.prepare('PRAGMA schema_version').pluck();
    schemaVersions.set(db, schemaStatement);
  }
  const schemaVersion = schemaStatement.get() as number;
  const state = states.get(db);
  if (state && state.schemaVersion === schemaVersion) return state;
  const row = db.prepare("SELECT sql FROM sqlite_master WHERE name = 'vec_chunks'").get() as { sql: string } | undefined;
  if (state && row?.sql === state.sql) {
    state.schemaVersion = schemaVersion; // another table changed; the index notices its own changes
    return state;
  }
  state?.index?.close();
  states.delete(db);
  if (!row) return undefined;
  const dimensions = Number(/float\[(\d+)\]/i.exec(row.sql)?.[1] ?? NaN);
  const created: State = {
    sql: row.sql,
    schemaVersion,
    knn: db.prepare('SELECT rowid AS id, distance FROM vec_chunks WHERE embedding MATCH ? AND k = ? ORDER BY distance'),
    dimensions,
    searches: 0,
  };
  states.set(db, created);
  return created;
}

function useMemory(state: State): boolean {
  const forced = process.env.RAGLINE_VECTOR_SEARCH;
  if (forced === 'vec0') return false;
  if (!Number.isInteger(state.dimensions)) return false;
  return forced === 'memory' || state.index !== undefined || state.searches > 0;
}

/** The `n` nearest chunks to `vector`, nearest first (exact). */
export function vectorCandidates(db: Db, vector: Float32Array, n: number): VectorCandidate[] {
  const state = stateFor(db);
  if (!state || n <= 0) return [];
  const memory = useMemory(state);
  state.searches++;
  if (memory) {
    state.index ??= new VectorIndex(db, state.dimensions);
    return state.index.search(vector, n);
  }
  return state.knn.all(vectorBytes(vector), n) as VectorCandidate[];
}

/** Loads (or refreshes) the in-memory copy now, so the next search does not pay for it. */
export function warmVectorIndex(db: Db): void {
  const state = stateFor(db);
  if (!state || !Number.isInteger(state.dimensions) || process.env.RAGLINE_VECTOR_SEARCH === 'vec0') return;
  state.index ??= new VectorIndex(db, state.dimensions);
  state.index.refresh();
}

/** The in-memory index of `db`, if one was loaded (benchmarks and tests). */
export function loadedVectorIndex(db: Db): VectorIndex | undefined {
  return states.get(db)?.index;
}
