// `ragline ingest`: walk -> load -> chunk -> embed in batches -> write, each
// file atomically (its own savepoint inside a short transaction per group). Unchanged files (same size and mtime, or same content
// hash) are not read again; any chunk whose text is already stored reuses its
// vector; files that disappeared are removed at the end, after new ones were
// written, so a rename reuses the vectors of the old name.
//
// The stages, each in its own file, pass one run state (run.ts) along:
// plan.ts (index checks, listing, walk) -> prepare.ts (read, load, chunk one file)
// -> embed.ts (groups of chunks, vectors) -> commit.ts (the transactions).

import { DocumentWriter } from '../store/documents.js';
import { setReaderVersion } from '../store/meta.js';
import { commitGroup, commitRemovals, recordLastIngest, touchUnchanged } from './commit.js';
import { addPending, FLUSH_CHUNKS, newBatches, nextGroup, type Batches } from './embed.js';
import { globRemoval, planIngest, rebuildRemoval, RemovalRefused, type GlobRemoval, type IngestPlan } from './plan.js';
import { loadFileTools, prepareFile, type FileTools } from './prepare.js';
import { READER_VERSION } from './reader.js';
import { FolderChangedMeanwhile, newRun, reportProgress, WaitAborted, waitForOtherIngest, type IngestOptions, type IngestRun, type IngestSummary } from './run.js';

export type { IngestOptions, IngestProgress, IngestSummary, IngestWait } from './run.js';
export { DEFAULT_INGEST_WAIT_MS, formatWait } from './run.js';
export { leftOutWords, MASS_REMOVAL_MIN, RemovalRefused, type GlobRemoval } from './plan.js';
export { KEYWORD_DRIFT_BOUND } from './keywords.js';

/** What a rebuild's globs would leave out (rebuildRemoval), asked before anything of the rebuild is written. */
export function rebuildRemovalOf(options: IngestOptions): GlobRemoval | undefined {
  return rebuildRemoval(newRun(options));
}

/**
 * Ingests one folder (or the files of it in `options.only`). One ingest writes to a
 * database at a time: while another holds the ingest lock, this one waits for it
 * (`options.wait`), at its start and again at its first write. When an ingest of the
 * same folder wrote while this one read it, nothing of this one was written yet: it
 * reads the folder again, once, and goes on from what the other stored.
 */
export async function ingest(options: IngestOptions): Promise<IngestSummary> {
  try {
    return await ingestOnce(options);
  } catch (err) {
    if (!(err instanceof FolderChangedMeanwhile)) throw err;
    return ingestOnce(options);
  }
}

async function ingestOnce(options: IngestOptions): Promise<IngestSummary> {
  const run = newRun(options);
  const { summary, progress } = run;
  if (!(await waitForOtherIngest(run.db, options))) return interrupted(run);
  try {
    // (A rebuild's globs are looked at by its caller, before anything of it is written: rebuildRemovalOf.)
    const plan = await planIngest(run);
    const removal = globRemoval(run, plan);
    if (removal && !(await options.confirmRemoval?.(removal))) throw new RemovalRefused(removal);
    const writer = new DocumentWriter(run.db);
    progress.filesTotal = plan.work.length;
    progress.bytesTotal = plan.work.reduce((sum, f) => sum + f.size, 0);
    reportProgress(run);

    const batches = newBatches();
    await readFiles(run, plan, writer, batches);
    // A Ctrl-C while the last file was read and chunked (which never wait, so the
    // signal is delivered only at the next turn of the event loop) is seen here,
    // before its group is handed to the embedder.
    await nextTurn();
    if (!options.signal?.aborted) {
      // Everything still pending: the last group handed over, then the files after it.
      await flush(run, writer, batches);
      await flush(run, writer, batches);
    }
    // Checked again: a group whose vectors had not come when the signal fired was
    // not written, and the run must not then look finished (exit 0, nothing written,
    // the documents of vanished files removed).
    if (options.signal?.aborted) {
      summary.interrupted = true;
      // The group already handed to the embedder is written if its vectors are there.
      if (batches.embedding) await commitGroup(run, writer, batches.embedding).catch(() => {});
    } else {
      await commitRemovals(run, writer, plan);
    }
    // The folder's documents are all of this reader's reading when the run read every
    // file, or when it stored the first ones (an interrupted first ingest: the files
    // it did not reach are new to the next run, not to be read again).
    const readerCurrent = plan.stored.count === 0 || (!options.only && !summary.interrupted);
    if (readerCurrent && run.lock.taken) setReaderVersion(run.db, run.root, READER_VERSION);
    reportProgress(run);
    for (const paths of Object.values(summary.skippedPaths)) paths.sort();
    summary.invalidUtf8Paths.sort();
    summary.windows1252Paths.sort();
    summary.seconds = (performance.now() - run.started) / 1000;
    recordLastIngest(run);
    return summary;
  } catch (err) {
    // Ctrl-C while waiting for another ingest: what was written stays, the rest is not.
    if (err instanceof WaitAborted) return interrupted(run);
    throw err;
  } finally {
    run.lock.release();
  }
}

/** The summary of a run stopped by the abort signal where nothing more could be written. */
function interrupted(run: IngestRun): IngestSummary {
  run.summary.interrupted = true;
  run.summary.seconds = (performance.now() - run.started) / 1000;
  reportProgress(run);
  return run.summary;
}

/** Reads and chunks the plan's files in order, writing each group as the next is embedded; stops between files on abort. */
async function readFiles(run: IngestRun, plan: IngestPlan, writer: DocumentWriter, batches: Batches): Promise<void> {
  const { options, progress, summary } = run;
  let lastYield = performance.now();
  let tools: FileTools | undefined;
  for (const file of plan.work) {
    tools ??= await loadFileTools();
    // Reading, chunking and offline embedding never wait on I/O, so without
    // this the event loop never runs and Ctrl-C (the abort signal) is not
    // seen until every file is done.
    if (performance.now() - lastYield > 20) {
      await nextTurn();
      lastYield = performance.now();
    }
    if (options.signal?.aborted) return;
    progress.filesDone++;
    progress.bytesDone += file.size;
    summary.bytes += file.size;

    const prepared = await prepareFile(run, plan, writer, tools, file);
    if (prepared.kind === 'unchanged') await touchUnchanged(run, writer, prepared.documentId, file);
    if (prepared.kind !== 'write') continue;
    addPending(batches, prepared.pending);
    if (batches.pendingChunks >= FLUSH_CHUNKS) {
      await flush(run, writer, batches);
      reportProgress(run);
    }
  }
}

/** Hands the pending files to the embedder and writes the group handed over before them. */
async function flush(run: IngestRun, writer: DocumentWriter, batches: Batches): Promise<void> {
  const previous = nextGroup(run, writer, batches);
  if (previous) await commitGroup(run, writer, previous);
}

/** Lets the event loop run once: a signal received meanwhile is handled. */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
