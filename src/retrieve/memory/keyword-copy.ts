// When the in-memory keyword copy (keyword-index.ts) answers in place of FTS5.
//
// Two paths, same ranks and scores:
// - the copy, brought up to date from the database before every search;
// - FTS5 itself (../fts5.ts), used until the copy is loaded, for any expression the
//   copy does not read, and when the copy would not fit in memory.
// The copy loads the way the vector copy does (vector-copy.ts): the first search
// answers from FTS5 and schedules a background load, so a one-shot `ragline search`
// exits without building it and a chat switches to it once it is loaded. A background
// load runs on a worker thread where it can (keyword-worker.ts: a database file and
// the compiled modules), else here in slices between events (unref'd timers). Loading
// costs far more than a search saves (at 100k chunks: about 4 s, against 10-12 ms
// saved per search), so only a long run of searches that never lets the event loop
// idle (eval) loads it synchronously, after 20 searches, and only when no caller asked
// for a background load: a chat or `ragline mcp` starts one with `warmInBackground`
// and is answered by FTS5 until it is done (a synchronous load there stopped the
// server for the whole load, 0.6 s at 5k chunks, seconds at 100k).
// The `search.keyword` setting (RAGLINE_KEYWORD_SEARCH) = fts5 | memory forces one
// path (benchmarks, diagnosis); callers pass it as `mode` (default auto).

import os from 'node:os';
import type { SearchPaths } from '../../config/index.js';
import type { Db } from '../../store/db.js';
import type { KeywordSearch } from '../interfaces.js';
import { KeywordIndex } from './keyword-index.js';
import { registerTermCounts } from '../term-stats.js';
import { snapshotInWorker } from './keyword-worker.js';

type Mode = SearchPaths['keyword'];

/** Searches answered by FTS5 before the copy is loaded synchronously. */
const SYNC_LOAD_AFTER = 20;
/** Delay before a background load starts after the first search. */
const WARM_DELAY_MS = 50;
/** Stop loading when the copy would take more than this share of the machine's memory. */
const MAX_MEMORY_SHARE = 0.25;

export class KeywordCopy {
  private copy: KeywordIndex | undefined;
  /** A background load, once started. */
  private warming: Promise<void> | undefined;
  /** The wait before a load a search scheduled: it keeps no process alive, unless someone waits for the load. */
  private delay: NodeJS.Timeout | undefined;
  /** FTS5 answered so far. */
  private ftsSearches = 0;
  /** The copy failed to load or grew past the memory budget (or was closed): FTS5 from now on. */
  private disabled = false;
  /** A caller started a background load (a chat, a server): never load synchronously. */
  private background = false;

  constructor(private readonly db: Db) {
    // Once loaded, the copy answers how common a word is (the offline rewriter asks each
    // turn) without reading FTS5's doclists: at a million chunks a common word's took
    // 20-500 ms and left its pages in the process.
    registerTermCounts(db, () => this.loaded());
  }

  /** The copy when it is loaded, brought up to date; undefined while it loads (nothing is started). */
  private loaded(): KeywordIndex | undefined {
    const index = this.copy;
    if (this.disabled || !index?.ready) return undefined;
    return this.refreshed(index, 'auto');
  }

  /**
   * The copy, up to date, when it can answer now; undefined means ask FTS5 (a
   * background load is scheduled if the copy is not loaded yet). Call once per
   * search, inside the search's read transaction.
   */
  indexFor(mode: Mode = 'auto'): KeywordIndex | undefined {
    const index = this.current(mode);
    if (!index) return undefined;
    const load = index.ready || mode === 'memory' || (!this.background && this.ftsSearches >= SYNC_LOAD_AFTER);
    if (!load) {
      this.ftsSearches++;
      this.scheduleWarm(mode);
      return undefined;
    }
    return this.refreshed(index, mode);
  }

  /**
   * indexFor() as a KeywordSearch: the copy answers, and `reference` (FTS5) answers
   * the expressions the copy does not read. Undefined: ask `reference` for everything.
   */
  searchFor(mode: Mode, reference: KeywordSearch): KeywordSearch | undefined {
    const index = this.indexFor(mode);
    return index && { search: (match, weights, limit) => index.search(match, weights, limit) ?? reference.search(match, weights, limit) };
  }

  /** Loads (or refreshes) the copy now. */
  warm(mode: Mode = 'auto'): void {
    const index = this.current(mode);
    if (index) this.refreshed(index, mode);
  }

  /** Loads the copy in the background, on a worker thread or in slices (e.g. when a chat REPL starts). */
  warmInBackground(mode: Mode = 'auto'): Promise<void> {
    this.background = true;
    // A load a search scheduled is what this waits for: its wait must now keep the process alive.
    this.delay?.ref();
    this.warming ??= this.warmNow(mode);
    return this.warming;
  }

  /** The copy, if one was created (benchmarks and tests). */
  get index(): KeywordIndex | undefined {
    return this.copy;
  }

  /** Drops the copy; a load under way stops at its next step and is not taken. */
  close(): void {
    this.disable();
  }

  private current(mode: Mode): KeywordIndex | undefined {
    if (this.disabled || mode === 'fts5') return undefined;
    try {
      this.copy ??= new KeywordIndex(this.db);
    } catch {
      this.disable(); // e.g. a database without the expected tables
    }
    return this.copy;
  }

  /** FTS5 from now on: the copy failed or outgrew its budget. */
  private disable(): undefined {
    this.disabled = true;
    this.copy = undefined;
    return undefined;
  }

  private refreshed(index: KeywordIndex, mode: Mode): KeywordIndex | undefined {
    try {
      index.refresh();
    } catch {
      return this.disable();
    }
    return overBudget(index, mode) ? this.disable() : index;
  }

  private scheduleWarm(mode: Mode): void {
    this.warming ??= new Promise<void>((resolve) => {
      this.delay = setTimeout(resolve, WARM_DELAY_MS).unref();
    }).then(() => this.warmNow(mode));
  }

  private async warmNow(mode: Mode): Promise<void> {
    const index = this.current(mode);
    const db = this.db;
    if (!index || !db.open) return;
    const cancelled = () => this.disabled || this.copy !== index || !db.open || overBudget(index, mode);
    try {
      if (await this.adoptedFromWorker(index, mode)) return;
    } catch {
      // the worker could not build it (e.g. the file could not be opened read-only): build it here
    }
    try {
      await index.warm(cancelled);
      if (overBudget(index, mode)) this.disable();
    } catch {
      // e.g. the database was closed meanwhile: searches keep using FTS5
    }
  }

  /**
   * Builds the copy on a worker thread and takes it, unless it was loaded here
   * meanwhile. False when no worker can build it (the caller loads it here).
   */
  private async adoptedFromWorker(index: KeywordIndex, mode: Mode): Promise<boolean> {
    const budget = mode === 'memory' ? Infinity : memoryBudget();
    const built = snapshotInWorker(this.db, budget);
    if (!built) return false;
    const result = await built;
    if (this.disabled || this.copy !== index || !this.db.open || index.size > 0 || index.ready) return true;
    if ('overBudget' in result) this.disable();
    else index.adopt(result.snapshot);
    return true;
  }
}

function overBudget(index: KeywordIndex, mode: Mode): boolean {
  return mode !== 'memory' && index.memoryBytes > memoryBudget();
}

const memoryBudget = () => os.totalmem() * MAX_MEMORY_SHARE;
