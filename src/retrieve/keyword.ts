// Keyword candidates: the best chunks for an FTS5 MATCH expression by bm25.
//
// Two paths, same ranks and scores:
// - the in-memory copy (keyword-index.ts), brought up to date from the database
//   before every search;
// - FTS5 itself (`bm25(chunks_fts, ...)`), used until the copy is loaded, for any
//   expression the copy does not read, and when the copy would not fit in memory.
// The copy loads the way the vector copy does (knn.ts): the first search answers from
// FTS5 and schedules a background load, so a one-shot `ragline search` exits without
// building it and a chat switches to it once it is loaded. A background load runs on
// a worker thread where it can (keyword-worker.ts: a database file and the compiled
// modules), else here in slices between events (unref'd timers). Loading costs far
// more than a search saves (at 100k chunks: about 4 s, against 10-12 ms saved per
// search), so only a long run of searches that never lets the event loop idle (eval)
// loads it synchronously, after 20 searches, and only when no caller asked for a
// background load: a chat or `ragline mcp` starts one with `warmKeywordIndexInBackground`
// and is answered by FTS5 until it is done (a synchronous load there stopped the
// server for the whole load, 0.6 s at 5k chunks, seconds at 100k).
// The `search.keyword` setting (RAGLINE_KEYWORD_SEARCH) = fts5 | memory forces one
// path (benchmarks, diagnosis); callers pass it as `mode` (default auto).

import os from 'node:os';
import type { SearchPaths } from '../config/index.js';
import type { Db } from '../store/db.js';
import { KeywordIndex } from './keyword-index.js';
import { snapshotInWorker } from './keyword-worker.js';

interface State {
  index?: KeywordIndex;
  /** A background load, once started. */
  warming?: Promise<void>;
  /** FTS5 answered so far. */
  ftsSearches: number;
  /** The copy failed to load or grew past the memory budget: FTS5 from now on. */
  disabled: boolean;
  /** A caller started a background load (a chat, a server): never load synchronously. */
  background?: boolean;
}

const states = new WeakMap<Db, State>();

type Mode = SearchPaths['keyword'];

/** Searches answered by FTS5 before the copy is loaded synchronously. */
const SYNC_LOAD_AFTER = 20;
/** Delay before a background load starts after the first search. */
const WARM_DELAY_MS = 50;
/** Stop loading when the copy would take more than this share of the machine's memory. */
const MAX_MEMORY_SHARE = 0.25;

function stateFor(db: Db): State {
  let state = states.get(db);
  if (!state) states.set(db, (state = { ftsSearches: 0, disabled: false }));
  return state;
}

function indexOf(state: State, db: Db, mode: Mode): KeywordIndex | undefined {
  if (state.disabled || mode === 'fts5') return undefined;
  try {
    state.index ??= new KeywordIndex(db);
  } catch {
    disable(state); // e.g. a database without the expected tables
  }
  return state.index;
}

/** FTS5 from now on: the copy failed or outgrew its budget. */
function disable(state: State): undefined {
  state.disabled = true;
  state.index = undefined;
  return undefined;
}

/**
 * The in-memory copy, up to date, when it can answer now; undefined means ask FTS5
 * (a background load is scheduled if the copy is not loaded yet). Call once per
 * search, inside the search's read transaction.
 */
export function keywordIndexFor(db: Db, mode: Mode = 'auto'): KeywordIndex | undefined {
  const state = stateFor(db);
  const index = indexOf(state, db, mode);
  if (!index) return undefined;
  const load = index.ready || mode === 'memory' || (!state.background && state.ftsSearches >= SYNC_LOAD_AFTER);
  if (!load) {
    state.ftsSearches++;
    scheduleWarm(db, state, mode);
    return undefined;
  }
  return refreshed(state, index, mode);
}

function refreshed(state: State, index: KeywordIndex, mode: Mode): KeywordIndex | undefined {
  try {
    index.refresh();
  } catch {
    return disable(state);
  }
  return overBudget(index, mode) ? disable(state) : index;
}

function overBudget(index: KeywordIndex, mode: Mode): boolean {
  return mode !== 'memory' && index.memoryBytes > memoryBudget();
}

const memoryBudget = () => os.totalmem() * MAX_MEMORY_SHARE;

function scheduleWarm(db: Db, state: State, mode: Mode): void {
  state.warming ??= new Promise<void>((resolve) => setTimeout(resolve, WARM_DELAY_MS).unref()).then(() => warmState(db, state, mode));
}

async function warmState(db: Db, state: State, mode: Mode): Promise<void> {
  const index = indexOf(state, db, mode);
  if (!index || !db.open) return;
  const cancelled = () => state.disabled || state.index !== index || !db.open || overBudget(index, mode);
  try {
    if (await adoptedFromWorker(db, state, index, mode)) return;
  } catch {
    // the worker could not build it (e.g. the file could not be opened read-only): build it here
  }
  try {
    await index.warm(cancelled);
    if (overBudget(index, mode)) disable(state);
  } catch {
    // e.g. the database was closed meanwhile: searches keep using FTS5
  }
}

/**
 * Builds the copy on a worker thread and takes it, unless it was loaded here
 * meanwhile. False when no worker can build it (the caller loads it here).
 */
async function adoptedFromWorker(db: Db, state: State, index: KeywordIndex, mode: Mode): Promise<boolean> {
  const budget = mode === 'memory' ? Infinity : memoryBudget();
  const built = snapshotInWorker(db, budget);
  if (!built) return false;
  const result = await built;
  if (state.disabled || state.index !== index || !db.open || index.size > 0 || index.ready) return true;
  if ('overBudget' in result) disable(state);
  else index.adopt(result.snapshot);
  return true;
}

/** Loads (or refreshes) the copy now. */
export function warmKeywordIndex(db: Db, mode: Mode = 'auto'): void {
  const state = stateFor(db);
  const index = indexOf(state, db, mode);
  if (index) refreshed(state, index, mode);
}

/** Loads the copy in the background, in slices (e.g. when a chat REPL starts). */
export function warmKeywordIndexInBackground(db: Db, mode: Mode = 'auto'): Promise<void> {
  const state = stateFor(db);
  state.background = true;
  state.warming ??= warmState(db, state, mode);
  return state.warming;
}

/** The copy of `db`, if one was created (benchmarks and tests). */
export function loadedKeywordIndex(db: Db): KeywordIndex | undefined {
  return states.get(db)?.index;
}
