// Builds the in-memory keyword copy (keyword-index.ts) on a worker thread, so that a
// chat's main thread stays free while it loads (seconds at 100k chunks), and so that
// what loading leaves behind (the chunk texts, token strings, the postings' spare room)
// goes away with the worker's heap instead of staying in the chat's. The worker reads
// the database file through its own read-only connection, in one read transaction,
// and hands back the copy packed in a few flat arrays whose buffers are transferred,
// not copied; the main thread's copy takes them as they are (KeywordIndex.adopt).
//
// The worker runs the compiled module beside this one; where there is none (sources
// run under a test runner) or the database is not a file, the caller loads on its
// own thread instead.

import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type BetterSqlite3 from 'better-sqlite3';
import type { Db } from '../../store/db.js';
import { keptOrBuiltSnapshot, snapshotBuffers, type KeywordSnapshot } from './keyword-index.js';

const require = createRequire(import.meta.url);

/** What a build returns: the packed copy, or that it would outgrow its budget. */
export type SnapshotResult = { snapshot: KeywordSnapshot } | { overBudget: true };

const SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
import(workerData.url)
  .then(({ snapshotOfFile, transferList }) => {
    const result = snapshotOfFile(workerData.file, workerData.budget);
    parentPort.postMessage({ result }, transferList(result));
  })
  .catch((error) => parentPort.postMessage({ error: String((error && error.message) || error) }));
`;

/** Worker side: the packed copy of the database at `file`: the one kept beside it (keyword-file.ts), or built in one read transaction. */
export function snapshotOfFile(file: string, budgetBytes: number): SnapshotResult {
  const Database = require('better-sqlite3') as typeof BetterSqlite3;
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 10000');
    const snapshot = keptOrBuiltSnapshot(db as Db, budgetBytes);
    return snapshot ? { snapshot } : { overBudget: true };
  } finally {
    db.close();
  }
}

/** Worker side: the buffers to transfer with `result`. */
export function transferList(result: SnapshotResult): ArrayBuffer[] {
  return 'snapshot' in result ? snapshotBuffers(result.snapshot) : [];
}

/**
 * Builds the copy of `db` on a worker thread. Undefined when it cannot be built there
 * (an in-memory database, or no compiled module to run); the promise rejects if the
 * worker fails. The worker never keeps the process alive.
 */
export function snapshotInWorker(db: Db, budgetBytes: number): Promise<SnapshotResult> | undefined {
  if (db.memory || !db.name) return undefined;
  const url = new URL('./keyword-worker.js', import.meta.url);
  if (url.protocol !== 'file:' || !fs.existsSync(fileURLToPath(url))) return undefined;
  const file = path.resolve(db.name);
  const { Worker } = require('node:worker_threads') as typeof import('node:worker_threads');
  return new Promise<SnapshotResult>((resolve, reject) => {
    const worker = new Worker(SOURCE, { eval: true, workerData: { url: url.href, file, budget: budgetBytes } });
    worker.unref();
    worker.once('message', (message: { result?: SnapshotResult; error?: string }) => {
      if (message.result) resolve(message.result);
      else reject(new Error(message.error ?? 'the keyword worker failed'));
      void worker.terminate();
    });
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the keyword worker exited with code ${code}`)));
  });
}
