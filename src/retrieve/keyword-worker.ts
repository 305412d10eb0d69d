// A helper thread that runs FTS5 bm25 queries on its own connection, so the keyword
// side of one search can use both cores of a small machine. FTS5 scores every chunk
// that matches any query term (13-15 ms at 100k chunks); a search runs one to three
// such queries. The search splits them: a single query is cut into two rowid ranges
// (bm25's document frequencies and average length are table-wide, so each range
// scores exactly as the whole query does), several go to the two threads whole.
//
// Both threads must read the same snapshot. Each reads a marker inside its read
// transaction: the chunks' AUTOINCREMENT counter (moves on every insert) and FTS5's
// averages record (row count and token totals: moves on every delete). If another
// process committed in between and the markers differ, the caller runs the helper's
// share itself, so results are the same as from one connection.
//
// The helper is created on the first search over an index large enough to pay for
// it (its start costs tens of milliseconds, on the other core) and is used once it is
// ready: a one-shot `ragline search` never waits for it. It is unref'd, opens the
// file with query_only set, and answers through shared memory, so the search stays
// synchronous. If it does not take a job at once (a busy machine), the caller takes
// the job back and runs it itself.
// RAGLINE_KEYWORD_SPLIT=on | off forces it on (any size, waiting for its start and for
// it to take each job: tests) or off.

import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { Db } from '../store/db.js';
import type { RankedHit } from './fuse.js';

/** One bm25 query: the best `limit` chunks for `match`, optionally within a rowid range. */
export interface Bm25Job {
  match: string;
  limit: number;
  weights: [number, number];
  /** Inclusive rowid range. */
  range?: [number, number];
}

/** Below this many indexed chunks a query costs a few ms and the hand-off is not worth it. */
export const SPLIT_MIN_CHUNKS = 30_000;
/** How long to wait for a job the helper has taken before giving up on the helper. */
const HELPER_TIMEOUT_MS = 5_000;

// Control slots (Int32Array at the start of each job's shared buffer).
const STATE = 0, COUNTS = 1;
// STATE values
const POSTED = 0, TAKEN = 1, DONE = 2, TAKEN_BACK = 3, FAILED = 4, STALE = 5;

export const MARKER_SQL = `SELECT (SELECT seq FROM sqlite_sequence WHERE name = 'chunks') AS seq,
  (SELECT hex(block) FROM chunks_fts_data WHERE id = 1) AS averages`;

/** The bm25 query of the keyword side; ties go to the lower rowid, so a split query orders as the whole one. */
export function bm25Sql(weights: [number, number], ranged: boolean): string {
  return `SELECT rowid AS id, bm25(chunks_fts, ${weights.map(Number).join(', ')}) AS bm25
   FROM chunks_fts WHERE chunks_fts MATCH ?${ranged ? ' AND rowid BETWEEN ? AND ?' : ''}
   ORDER BY bm25, rowid LIMIT ?`;
}

/** The arguments of bm25Sql(job.weights, job.range !== undefined) for `job`. */
export function bm25Args(job: Bm25Job): (string | number)[] {
  return job.range ? [job.match, job.range[0], job.range[1], job.limit] : [job.match, job.limit];
}

const SOURCE = `
const { workerData, parentPort } = require('node:worker_threads');
const status = new Int32Array(workerData.status);
let db, marker;
try {
  const Database = require(workerData.driver);
  db = new Database(workerData.file, { fileMustExist: true });
  db.pragma('busy_timeout = 10000');
  db.pragma('query_only = ON');
  db.pragma('mmap_size = 4294967296');
  db.pragma('cache_size = -65536');
  marker = db.prepare(workerData.markerSql);
} catch {
  Atomics.store(status, 0, 2);
  Atomics.notify(status, 0);
  process.exit(0);
}
const statements = new Map();
const statement = (sql) => {
  let s = statements.get(sql);
  if (!s) statements.set(sql, (s = db.prepare(sql).raw()));
  return s;
};
Atomics.store(status, 0, 1);
Atomics.notify(status, 0);
parentPort.on('message', ({ buffer, head, jobs, marker: expected }) => {
  const ctrl = new Int32Array(buffer, 0, ${COUNTS} + jobs.length);
  if (Atomics.compareExchange(ctrl, ${STATE}, ${POSTED}, ${TAKEN}) !== ${POSTED}) return;
  let state = ${DONE};
  try {
    db.exec('BEGIN');
    try {
      const m = marker.get();
      if (m.seq + ':' + m.averages !== expected) state = ${STALE};
      else {
        const out = new Float64Array(buffer, head);
        jobs.forEach((job, j) => {
          const rows = statement(job.sql).all(...job.args);
          ctrl[${COUNTS} + j] = rows.length;
          let at = job.offset;
          for (const [id, score] of rows) { out[at++] = id; out[at++] = score; }
        });
      }
    } finally {
      db.exec('COMMIT');
    }
  } catch {
    state = ${FAILED};
  }
  Atomics.store(ctrl, ${STATE}, state);
  Atomics.notify(ctrl, ${STATE});
});
`;

/** Handed-off jobs: finish() returns their results, or undefined if the caller must run them. */
export interface PendingJobs {
  /** `wait`: wait for the helper to take the jobs rather than take them back (RAGLINE_KEYWORD_SPLIT=on, tests). */
  finish(wait?: boolean): RankedHit<number>[][] | undefined;
  /** After finish(): what happened (for tests and diagnosis). */
  readonly outcome: 'answered' | 'taken back' | 'stale' | 'failed' | 'timed out' | undefined;
}

export class KeywordHelper {
  private readonly worker: Worker;
  private readonly status = new Int32Array(new SharedArrayBuffer(4));
  private broken = false;

  constructor(file: string) {
    this.worker = new Worker(SOURCE, {
      eval: true,
      workerData: {
        file,
        driver: createRequire(import.meta.url).resolve('better-sqlite3'),
        markerSql: MARKER_SQL,
        status: this.status.buffer,
      },
    });
    this.worker.unref();
    this.worker.on('error', () => (this.broken = true));
    this.worker.on('exit', () => (this.broken = true));
  }

  /** True once the helper has opened the database and waits for work. */
  get ready(): boolean {
    return !this.broken && Atomics.load(this.status, 0) === 1;
  }

  /** Waits (up to `timeoutMs`) until the helper is ready; for RAGLINE_KEYWORD_SPLIT=on and tests. */
  waitReady(timeoutMs = 10_000): boolean {
    if (!this.broken) Atomics.wait(this.status, 0, 0, timeoutMs);
    return this.ready;
  }

  /**
   * Posts `jobs` to the helper, to be read under `marker` (see the module header), and
   * returns at once so the caller can run its own share meanwhile.
   */
  start(jobs: readonly Bm25Job[], marker: string): PendingJobs {
    const head = Math.ceil((COUNTS + jobs.length) / 2) * 8; // control Int32s, padded to 8 bytes
    let offset = 0;
    const posted = jobs.map((job) => {
      const out = { sql: bm25Sql(job.weights, job.range !== undefined), args: bm25Args(job), offset };
      offset += job.limit * 2;
      return out;
    });
    const buffer = new SharedArrayBuffer(head + offset * 8);
    const ctrl = new Int32Array(buffer, 0, COUNTS + jobs.length);
    this.worker.postMessage({ buffer, head, jobs: posted, marker });
    const pending: { -readonly [K in keyof PendingJobs]: PendingJobs[K] } = {
      outcome: undefined,
      finish: (wait = false) => {
        if (wait) Atomics.wait(ctrl, STATE, POSTED, HELPER_TIMEOUT_MS);
        // Not taken yet: take it back rather than wait for a busy helper.
        if (Atomics.compareExchange(ctrl, STATE, POSTED, TAKEN_BACK) === POSTED) {
          pending.outcome = 'taken back';
          return undefined;
        }
        if (Atomics.wait(ctrl, STATE, TAKEN, HELPER_TIMEOUT_MS) === 'timed-out' && Atomics.load(ctrl, STATE) === TAKEN) {
          pending.outcome = 'timed out';
          this.close();
          return undefined;
        }
        const state = Atomics.load(ctrl, STATE);
        if (state !== DONE) {
          pending.outcome = state === STALE ? 'stale' : 'failed';
          return undefined;
        }
        pending.outcome = 'answered';
        const out = new Float64Array(buffer, head);
        return posted.map((job, j) => {
          const hits: RankedHit<number>[] = [];
          for (let i = 0; i < ctrl[COUNTS + j]!; i++) {
            hits.push({ id: out[job.offset + 2 * i]!, rank: i + 1, score: out[job.offset + 2 * i + 1]! });
          }
          return hits;
        });
      },
    };
    return pending;
  }

  /** Stops the helper (it never keeps a process alive; tests tidy up). */
  close(): void {
    this.broken = true;
    void this.worker.terminate();
  }
}

const helpers = new WeakMap<Db, KeywordHelper | null>();

/**
 * The keyword helper of `db` if the keyword side should be split: created on the first
 * call for a file-backed index of at least SPLIT_MIN_CHUNKS chunks, returned once ready.
 */
export function keywordHelper(db: Db, indexedChunks: number): KeywordHelper | undefined {
  const forced = process.env.RAGLINE_KEYWORD_SPLIT;
  let helper = helpers.get(db);
  if (helper === undefined) {
    const wanted = forced === 'on' || (forced !== 'off' && indexedChunks >= SPLIT_MIN_CHUNKS);
    helper = wanted && !db.memory && db.name !== '' ? new KeywordHelper(db.name) : null;
    helpers.set(db, helper);
    if (helper && forced === 'on') helper.waitReady();
  }
  return helper?.ready ? helper : undefined;
}
