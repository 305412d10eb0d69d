// Vector candidates for a query vector: exact cosine KNN over every stored vector.
//
// Two exact paths, same answers:
// - the in-memory index (vector-index.ts): a copy of vec0's vectors in WebAssembly
//   memory, scanned with SIMD (split over two threads on 2+ cores), brought up to
//   date from the database before every search. It costs one load (a copy of the
//   vectors: seconds at a million) and holds the vectors in RAM.
// - sqlite-vec's own KNN (vec0 MATCH ... AND k = ?), used until the copy is loaded.
//   The first search on a connection answers from vec0 and schedules a background
//   load (unref'd timers, in slices: it never blocks the event loop for long and
//   never keeps a process alive), so a one-shot `ragline search` exits without
//   paying for a copy it would use once, and a chat session switches to the copy
//   as soon as it is loaded. If searches come in a tight loop that never lets the
//   event loop idle, the third one loads the copy synchronously, unless a caller
//   started a background load (a chat or `ragline mcp` answers from vec0 until it is done).
//   `warmVectorIndexInBackground` starts the load earlier (e.g. when the REPL
//   starts); `warmVectorIndex` loads synchronously.
// Vectors that would take more than a quarter of the machine's memory stay in vec0.
// The `search.vector` setting (RAGLINE_VECTOR_SEARCH) = vec0 | memory forces one
// path (benchmarks, diagnosis); `search.vectorThreads` = 1 keeps scans on one thread.

import os from 'node:os';
import type { Statement } from 'better-sqlite3';
import { DEFAULT_SEARCH_PATHS, type SearchPaths } from '../config/index.js';
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
  /** The vec0 data fits the memory budget for an in-memory copy (computed once). */
  memoryFits?: boolean;
  index?: VectorIndex;
  /** A background load, once started. */
  warming?: Promise<void>;
  /** Searches answered by vec0 so far. */
  vec0Searches: number;
  /** A caller started a background load (a chat, a server): never load synchronously. */
  background?: boolean;
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
    vec0Searches: 0,
  };
  states.set(db, created);
  return created;
}

/** Don't copy vectors that would take more than this share of the machine's memory. */
const MAX_MEMORY_SHARE = 0.25;

/** The parts of the search settings the vector side reads. */
export type VectorPaths = Pick<SearchPaths, 'vector' | 'vectorThreads'>;

function memoryAllowed(db: Db, state: State, paths: VectorPaths): boolean {
  const forced = paths.vector;
  if (forced === 'vec0' || !Number.isInteger(state.dimensions)) return false;
  if (forced === 'memory') return true;
  if (state.memoryFits === undefined) {
    try {
      // Also checks that vec0's storage is laid out as the copy expects (sqlite-vec 0.1.x).
      const slots = (db.prepare('SELECT sum(size) AS n FROM vec_chunks_chunks').get() as { n: number | null }).n ?? 0;
      db.prepare('SELECT rowid, vectors FROM vec_chunks_vector_chunks00 LIMIT 0').all();
      state.memoryFits = slots * state.dimensions * 4 <= os.totalmem() * MAX_MEMORY_SHARE;
    } catch {
      state.memoryFits = false;
    }
  }
  return state.memoryFits;
}

/** The `n` nearest chunks to `vector`, nearest first (exact). */
export function vectorCandidates(db: Db, vector: Float32Array, n: number, paths: VectorPaths = DEFAULT_SEARCH_PATHS): VectorCandidate[] {
  return beginVectorCandidates(db, vector, n, paths)();
}

/**
 * vectorCandidates() in two steps: with the in-memory copy loaded, the scan starts
 * on the helper thread now and the returned function joins it and ranks, so the
 * caller can run its keyword search in between. vec0 searches run in the returned
 * function. Call it before the next search on the same database.
 */
export function beginVectorCandidates(db: Db, vector: Float32Array, n: number, paths: VectorPaths = DEFAULT_SEARCH_PATHS): () => VectorCandidate[] {
  const state = stateFor(db);
  if (!state || n <= 0) return () => [];
  if (memoryAllowed(db, state, paths)) {
    if (paths.vector === 'memory') {
      state.index ??= newIndex(db, state, paths);
      return state.index.begin(vector, n); // loads synchronously if needed
    }
    if (state.index?.ready) return state.index.begin(vector, n);
    if (state.vec0Searches >= SYNC_LOAD_AFTER && !state.background) {
      // The event loop never went idle long enough for the background load (a tight
      // loop of searches): load now, once, synchronously.
      state.index ??= newIndex(db, state, paths);
      return state.index.begin(vector, n);
    }
    // Not loaded yet: answer from vec0 now, load the copy in the background for the
    // searches that follow (a one-shot command exits before the load starts).
    scheduleWarm(db, state, paths);
  }
  state.vec0Searches++;
  return () => state.knn.all(vectorBytes(vector), n) as VectorCandidate[];
}

/** Searches answered by vec0 before the copy is loaded synchronously (one-shot commands do one or two). */
const SYNC_LOAD_AFTER = 2;

/** Delay before a background load starts after the first search. */
const WARM_DELAY_MS = 50;

function newIndex(db: Db, state: State, paths: VectorPaths): VectorIndex {
  return new VectorIndex(db, state.dimensions, { threads: paths.vectorThreads });
}

function scheduleWarm(db: Db, state: State, paths: VectorPaths): void {
  if (state.warming) return;
  state.index ??= newIndex(db, state, paths);
  const index = state.index;
  state.warming = new Promise<void>((resolve) => setTimeout(resolve, WARM_DELAY_MS).unref())
    .then(() => (states.get(db) === state && db.open ? index.warm() : undefined))
    .catch(() => {
      // e.g. the database was closed meanwhile: searches keep using vec0
    });
}

/** Loads (or refreshes) the in-memory copy now, so the next search does not pay for it. */
export function warmVectorIndex(db: Db, paths: VectorPaths = DEFAULT_SEARCH_PATHS): void {
  const state = stateFor(db);
  if (!state || !memoryAllowed(db, state, paths)) return;
  state.index ??= newIndex(db, state, paths);
  state.index.refresh();
}

/**
 * Loads the in-memory copy in the background, in slices, without blocking the event
 * loop (e.g. when a chat REPL starts). Searches use vec0 until it is ready.
 */
export function warmVectorIndexInBackground(db: Db, paths: VectorPaths = DEFAULT_SEARCH_PATHS): Promise<void> {
  const state = stateFor(db);
  if (!state || !memoryAllowed(db, state, paths)) return Promise.resolve();
  state.background = true;
  state.index ??= newIndex(db, state, paths);
  const index = state.index;
  state.warming ??= index.warm().catch(() => {});
  return state.warming;
}

/** The in-memory index of `db`, if one was created (benchmarks and tests). */
export function loadedVectorIndex(db: Db): VectorIndex | undefined {
  return states.get(db)?.index;
}
