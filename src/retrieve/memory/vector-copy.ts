// When the in-memory vector copy (vector-index.ts) answers in place of vec0.
//
// Both paths are exact and give the same answers:
// - the copy: vec0's vectors in WebAssembly memory, scanned with SIMD (split over
//   two threads on 2+ cores), brought up to date from the database before every
//   search. It costs one load (a copy of the vectors: seconds at a million) and
//   holds the vectors in RAM.
// - sqlite-vec's own KNN (../vec0.ts), used until the copy is loaded.
// The first search answers from vec0 and schedules a background load (unref'd
// timers, in slices: it never blocks the event loop for long and never keeps a
// process alive), so a one-shot `ragline search` exits without paying for a copy it
// would use once, and a chat session switches to the copy as soon as it is loaded.
// If searches come in a tight loop that never lets the event loop idle, the third
// one loads the copy synchronously, unless a caller started a background load (a
// chat or `ragline mcp` answers from vec0 until it is done). `warmInBackground`
// starts the load earlier (e.g. when the REPL starts); `warm` loads synchronously.
// The copy holds the vectors as int8 (a quarter of float32's size) and still answers
// exactly (vector-index.ts: the best candidates are scored again from the float
// vectors). Vectors that would take more than a quarter of the machine's memory even
// so stay in vec0.
// The `search.vector` setting (RAGLINE_VECTOR_SEARCH) = vec0 | memory forces one
// path (benchmarks, diagnosis); `search.vectorThreads` = 1 keeps scans on one thread.

import os from 'node:os';
import { DEFAULT_SEARCH_PATHS, type SearchPaths } from '../../config/index.js';
import type { Db } from '../../store/db.js';
import type { VectorSearch } from '../interfaces.js';
import { Vec0Table, type Vec0Declaration } from '../vec0.js';
import { VectorIndex, type VectorPrecision } from './vector-index.js';

/** The parts of the search settings the vector side reads. */
export type VectorPaths = Pick<SearchPaths, 'vector' | 'vectorThreads'>;

interface State {
  /** The vec0 table the state was made for. */
  declaration: Vec0Declaration;
  /** The vec0 data fits the memory budget for an in-memory copy (computed once). */
  memoryFits?: boolean;
  /** How the copy holds the vectors. */
  precision?: VectorPrecision;
  index?: VectorIndex;
  /** A background load, once started. */
  warming?: Promise<void>;
  /** The wait before a load a search scheduled: it keeps no process alive, unless someone waits for the load. */
  delay?: NodeJS.Timeout;
  /** Searches answered by vec0 so far. */
  vec0Searches: number;
  /** A caller started a background load (a chat, a server): never load synchronously. */
  background?: boolean;
}

/** Searches answered by vec0 before the copy is loaded synchronously (one-shot commands do one or two). */
const SYNC_LOAD_AFTER = 2;
/** Delay before a background load starts after the first search. */
const WARM_DELAY_MS = 50;
/** Don't copy vectors that would take more than this share of the machine's memory. */
const MAX_MEMORY_SHARE = 0.25;

export class VectorCopy {
  private readonly table: Vec0Table;
  private state: State | undefined;
  private closed = false;

  constructor(private readonly db: Db) {
    this.table = new Vec0Table(db);
  }

  /**
   * The copy, when it answers this search (loading it now if the settings or a
   * tight run of searches say so); undefined means ask vec0, and schedules a
   * background load when the copy is allowed. Call once per search.
   */
  searchFor(paths: VectorPaths = DEFAULT_SEARCH_PATHS): VectorSearch | undefined {
    const state = this.current();
    if (!state) return undefined;
    if (this.memoryAllowed(state, paths)) {
      if (paths.vector === 'memory') return (state.index ??= this.newIndex(state, paths)); // loads at its first search
      if (state.index?.ready) return state.index;
      if (state.vec0Searches >= SYNC_LOAD_AFTER && !state.background) {
        // The event loop never went idle long enough for the background load (a tight
        // loop of searches): load now, once, synchronously.
        return (state.index ??= this.newIndex(state, paths));
      }
      // Not loaded yet: answer from vec0 now, load the copy in the background for the
      // searches that follow (a one-shot command exits before the load starts).
      this.scheduleWarm(state, paths);
    }
    state.vec0Searches++;
    return undefined;
  }

  /** Loads (or refreshes) the copy now, so the next search does not pay for it. */
  warm(paths: VectorPaths = DEFAULT_SEARCH_PATHS): void {
    const state = this.current();
    if (!state || !this.memoryAllowed(state, paths)) return;
    state.index ??= this.newIndex(state, paths);
    state.index.refresh();
  }

  /**
   * Loads the copy in the background, in slices, without blocking the event loop
   * (e.g. when a chat REPL starts). Searches use vec0 until it is ready.
   */
  warmInBackground(paths: VectorPaths = DEFAULT_SEARCH_PATHS): Promise<void> {
    const state = this.current();
    if (!state || !this.memoryAllowed(state, paths)) return Promise.resolve();
    state.background = true;
    // A load a search scheduled is what this waits for: its wait must now keep the process alive.
    state.delay?.ref();
    state.index ??= this.newIndex(state, paths);
    const index = state.index;
    state.warming ??= index.warm().catch(() => {});
    return state.warming;
  }

  /** The copy, if one was created (benchmarks and tests). */
  get index(): VectorIndex | undefined {
    return this.state?.index;
  }

  /** Stops the copy's helper thread and drops the copy; searches answer from vec0 from now on. */
  close(): void {
    this.closed = true;
    this.state?.index?.close();
    this.state = undefined;
  }

  /** The state for the vec0 table as it is now, made again when the table was dropped or recreated (reindex). */
  private current(): State | undefined {
    if (this.closed) return undefined;
    const declaration = this.table.current();
    if (this.state?.declaration === declaration) return this.state;
    this.state?.index?.close();
    this.state = declaration ? { declaration, vec0Searches: 0 } : undefined;
    return this.state;
  }

  private memoryAllowed(state: State, paths: VectorPaths): boolean {
    const forced = paths.vector;
    if (forced === 'vec0' || !Number.isInteger(state.declaration.dimensions)) return false;
    if (forced === 'memory') return true;
    if (state.memoryFits === undefined) {
      try {
        // Also checks that vec0's storage is laid out as the copy expects (sqlite-vec 0.1.x).
        const slots = (this.db.prepare('SELECT sum(size) AS n FROM vec_chunks_chunks').get() as { n: number | null }).n ?? 0;
        this.db.prepare('SELECT rowid, vectors FROM vec_chunks_vector_chunks00 LIMIT 0').all();
        const budget = os.totalmem() * MAX_MEMORY_SHARE;
        const dimensions = state.declaration.dimensions;
        // Per slot: the int8 vector rounded up to 64 bytes, an id, its factors and a score.
        if (slots * (Math.ceil(dimensions / 64) * 64 + 24) <= budget) state.precision = 'int8';
        state.memoryFits = state.precision !== undefined;
      } catch {
        state.memoryFits = false;
      }
    }
    return state.memoryFits;
  }

  private newIndex(state: State, paths: VectorPaths): VectorIndex {
    return new VectorIndex(this.db, state.declaration.dimensions, { threads: paths.vectorThreads, precision: state.precision ?? 'int8' });
  }

  private scheduleWarm(state: State, paths: VectorPaths): void {
    if (state.warming) return;
    state.index ??= this.newIndex(state, paths);
    const index = state.index;
    state.warming = new Promise<void>((resolve) => {
      state.delay = setTimeout(resolve, WARM_DELAY_MS).unref();
    })
      .then(() => (this.state === state && this.db.open ? index.warm() : undefined))
      .catch(() => {
        // e.g. the database was closed meanwhile: searches keep using vec0
      });
  }
}
