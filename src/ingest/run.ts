// One ingest's state, handed explicitly from stage to stage (plan -> prepare ->
// embed -> commit): what was asked, where the folder's documents are stored, the
// write lock, and the summary and progress being counted.

import fs from 'node:fs';
import type { Db } from '../store/db.js';
import { listDocuments, type NewChunk, type StoredDocuments } from '../store/documents.js';
import { anotherIngestWriting, runningIngest, tryIngestLock, type IngestLock } from '../store/meta.js';
import type { Embedder } from '../providers/types.js';
import { UserError } from '../util/errors.js';
import type { ChunkerSettings } from './chunk.js';
import type { GlobRemoval } from './plan.js';
import type { FoundFile, SkipReason } from './walk.js';

export interface IngestOptions {
  /** Absolute path of the folder to ingest (its documents are stored under its real path). */
  root: string;
  db: Db;
  embedder: Embedder;
  chunker: ChunkerSettings;
  include?: string[];
  exclude?: string[];
  maxFileBytes: number;
  /** Drop the whole index first (needed after changing the embedder or chunker). */
  reindex?: boolean;
  /** Hash every file even when its size and mtime are unchanged. */
  checksum?: boolean;
  /**
   * Only these files of the folder (paths relative to it, as stored): nothing else is
   * read, and the folder's other stored documents stay as they are. A named file that
   * is not indexed by this run (gone, now empty, too large) loses its stored document.
   */
  only?: string[];
  /**
   * Asked, before anything is written, when the include and exclude globs would
   * remove many of the folder's stored documents while the run adds none
   * (plan.ts, globRemoval): true goes on. Without it, or on false, the run throws
   * RemovalRefused with nothing written. A rebuild's globs are asked about by its
   * caller, before it starts (rebuildRemovalOf).
   */
  confirmRemoval?: (removal: GlobRemoval) => boolean | Promise<boolean>;
  /** Stops between files; what was written stays written. */
  signal?: AbortSignal;
  onProgress?: (progress: IngestProgress) => void;
  /** How long to wait for another ingest writing to the database (default DEFAULT_INGEST_WAIT_MS). */
  wait?: IngestWait;
}

/**
 * Waiting for another ingest: one database has one writing ingest at a time (the
 * ingest lock), and a second one, of any folder, waits for it rather than failing.
 */
export interface IngestWait {
  /** The longest wait, in milliseconds; 0 refuses at once. */
  ms: number;
  /** Called once, when this ingest starts to wait, with the lock of the one it waits for. */
  onWait?: (other: IngestLock, ms: number) => void;
}

/** How long an ingest waits for another by default: 10 minutes. */
export const DEFAULT_INGEST_WAIT_MS = 600_000;

/** How often a waiting ingest looks at the lock again. */
const LOCK_POLL_MS = 100;

export interface IngestProgress {
  filesDone: number;
  filesTotal: number;
  bytesDone: number;
  bytesTotal: number;
  chunksWritten: number;
  elapsedMs: number;
}

export interface IngestSummary {
  root: string;
  /** The files of the folder this ingest read, when it was given files (`ingest <file>`), relative to it. */
  only?: string[];
  files: {
    added: number;
    changed: number;
    unchanged: number;
    removed: number;
    /** Documents of a folder ingested on its own before, inside this one, that were copies of this one's. */
    merged?: number;
    skipped: Partial<Record<SkipReason, number>>;
  };
  /** The paths of the files skipped for each reason, relative to the folder. */
  skippedPaths: Partial<Record<SkipReason, string[]>>;
  /** Files that were not valid UTF-8 and were decoded with replacement characters. */
  invalidUtf8: number;
  /** Their paths, relative to the folder, as skippedPaths names skipped files. */
  invalidUtf8Paths: string[];
  /** Files that were not UTF-8 and held no UTF-8 sequence, read as Windows-1252 (Latin-1's superset). */
  windows1252: number;
  /** Their paths, as invalidUtf8Paths. */
  windows1252Paths: string[];
  chunks: { written: number; embedded: number; reused: number; removed: number };
  /**
   * Chunks the embedding server refused as too long (llama-server's physical batch), embedded
   * from their first `toChars` characters; their whole text is stored and searched by keywords.
   */
  truncated?: { chunks: number; toChars: number };
  bytes: number;
  seconds: number;
  embedder: string;
  interrupted: boolean;
  /** Every file was read again: the folder had been read by an earlier version of the reader (src/ingest/reader.ts). */
  reread?: boolean;
  /**
   * A rebuild (`reindex`) drops every folder's documents: the other folders the index
   * held, each rebuilt after this one from the files it held (`rebuilt`), gone from
   * the disk (`missing`: its documents are dropped), or still to be rebuilt when the
   * run was interrupted (`pending`: the next rebuild takes them up).
   */
  others?: { root: string; state: 'rebuilt' | 'missing' | 'pending'; documents: number; summary?: IngestSummary }[];
}

/** A file read and chunked, waiting for its vectors to be written. */
export interface PendingFile {
  file: FoundFile;
  contentHash: string;
  title?: string;
  isNew: boolean;
  chunks: (Omit<NewChunk, 'vector'> & { embedText: string })[];
}

export interface IngestRun {
  readonly options: IngestOptions;
  readonly db: Db;
  readonly embedder: Embedder;
  /** The folder as its documents are stored (see storedRoot). */
  readonly root: string;
  /** performance.now() at the start. */
  readonly started: number;
  readonly summary: IngestSummary;
  /** One object, updated in place and handed to onProgress at each report. */
  readonly progress: IngestProgress;
  readonly lock: WriteLock;
  /** The longest text the embedding server took, once it refused a longer one as too large; undefined until then. */
  embedMaxChars?: number;
}

/** An ingest's summary before its first file: nothing counted yet. */
export function emptySummary(root: string, only: IngestSummary['only'], embedderId: string): IngestSummary {
  return {
    root,
    ...(only ? { only } : {}),
    files: { added: 0, changed: 0, unchanged: 0, removed: 0, skipped: {} },
    skippedPaths: {},
    invalidUtf8: 0,
    invalidUtf8Paths: [],
    windows1252: 0,
    windows1252Paths: [],
    chunks: { written: 0, embedded: 0, reused: 0, removed: 0 },
    bytes: 0,
    seconds: 0,
    embedder: embedderId,
    interrupted: false,
  };
}

export function emptyProgress(): IngestProgress {
  return { filesDone: 0, filesTotal: 0, bytesDone: 0, bytesTotal: 0, chunksWritten: 0, elapsedMs: 0 };
}

/** Memory-mapped I/O for an ingest's connection: its writes are about a tenth faster so (store/db.ts maps nothing else). */
const INGEST_MMAP_BYTES = 4 * 1024 ** 3;

export function newRun(options: IngestOptions): IngestRun {
  const started = performance.now();
  const { db, embedder } = options;
  if (!db.memory) db.pragma(`mmap_size = ${INGEST_MMAP_BYTES}`);
  const root = storedRoot(db, options.root);
  return {
    options,
    db,
    embedder,
    root,
    started,
    summary: emptySummary(root, options.only, embedder.id),
    progress: emptyProgress(),
    lock: new WriteLock(db, root, options),
  };
}

/** Counts the files skipped for `reason` and keeps their `paths`. */
export function countSkipped(summary: IngestSummary, reason: SkipReason, paths: readonly string[]): void {
  summary.files.skipped[reason] = (summary.files.skipped[reason] ?? 0) + paths.length;
  const kept = (summary.skippedPaths[reason] ??= []);
  for (const path of paths) kept.push(path);
}

/** Counts a file decoded with replacement characters (`invalidUtf8`) or read as Windows-1252, and keeps its path. */
export function countDecoding(summary: IngestSummary, how: 'invalidUtf8' | 'windows1252', path: string): void {
  summary[how]++;
  summary[`${how}Paths`].push(path);
}

export function reportProgress(run: IngestRun): void {
  run.progress.elapsedMs = performance.now() - run.started;
  run.options.onProgress?.(run.progress);
}

/** Changes whenever another connection commits to the database. */
export function dataVersion(db: Db): number {
  return db.pragma('data_version', { simple: true }) as number;
}

/**
 * The ingest lock, taken at the first write. A re-ingest that finds nothing to
 * write (the usual case) then writes nothing at all: no lock, no last-ingest record
 * and no WAL for close() to checkpoint, which was a tenth of its time. While another
 * ingest holds it, take() waits (IngestOptions.wait).
 */
export class WriteLock {
  private readonly db: Db;
  private readonly root: string;
  private readonly options: Pick<IngestOptions, 'wait' | 'signal'>;
  private releaseLock: (() => void) | undefined;
  /** What was listed before the lock, to check nothing changed under it. */
  private listed: { documents: StoredDocuments; dataVersion: number } | undefined;

  constructor(db: Db, root: string, options: Pick<IngestOptions, 'wait' | 'signal'> = {}) {
    this.db = db;
    this.root = root;
    this.options = options;
  }

  get taken(): boolean {
    return this.releaseLock !== undefined;
  }

  /** The folder's documents as listed without the lock, and the data_version read before listing them. */
  listedBefore(documents: StoredDocuments, dataVersionBefore: number): void {
    this.listed = { documents, dataVersion: dataVersionBefore };
  }

  /**
   * Takes the lock unless held, waiting while another ingest holds it. Throws
   * WaitAborted when the abort signal ends the wait (nothing is written then), and
   * FolderChangedMeanwhile if another ingest changed the listed documents meanwhile.
   */
  async take(): Promise<void> {
    if (this.releaseLock) return;
    const taken = await whileAnotherIngest(this.options, () => {
      // A read first: a waiting ingest does not take the write lock of SQLite every time it looks.
      const held = runningIngest(this.db);
      if (held) return { heldBy: held };
      const attempt = tryIngestLock(this.db);
      return 'heldBy' in attempt ? attempt : { done: attempt.release };
    });
    if (taken === WAIT_ABORTED) throw new WaitAborted();
    this.releaseLock = taken;
    const { listed } = this;
    if (listed && dataVersion(this.db) !== listed.dataVersion && !listDocuments(this.db, this.root).equals(listed.documents)) {
      throw new FolderChangedMeanwhile();
    }
  }

  release(): void {
    this.releaseLock?.();
    this.releaseLock = undefined;
  }
}

/** Another ingest (of the same folder) changed its documents while this one read them; nothing was written. */
export class FolderChangedMeanwhile extends UserError {
  constructor() {
    super('Another ingest changed the documents of this folder while this one was reading them; nothing was written.', {
      hint: 'Run the same command again.',
    });
    this.name = 'FolderChangedMeanwhile';
  }
}

/** The abort signal ended a wait for another ingest: the run stops there, interrupted, with nothing more written. */
export class WaitAborted extends Error {
  constructor() {
    super('stopped while waiting for another ingest');
    this.name = 'WaitAborted';
  }
}

/** What whileAnotherIngest returns when the abort signal ended the wait. */
export const WAIT_ABORTED = Symbol('wait aborted');

/**
 * Runs `attempt` until no other live ingest holds the lock: while one does, waits up
 * to `wait.ms` (saying so once, through `wait.onWait`), looking again every
 * LOCK_POLL_MS; then throws the refusal naming it (at once with `ms` 0). Resolves
 * WAIT_ABORTED when `signal` aborts the wait.
 */
export async function whileAnotherIngest<T>(
  options: Pick<IngestOptions, 'wait' | 'signal'>,
  attempt: () => { heldBy: IngestLock } | { done: T },
): Promise<T | typeof WAIT_ABORTED> {
  const { wait, signal } = options;
  const ms = wait?.ms ?? DEFAULT_INGEST_WAIT_MS;
  const started = performance.now();
  let said = false;
  for (;;) {
    const result = attempt();
    if ('done' in result) return result.done;
    if (signal?.aborted) return WAIT_ABORTED;
    const left = ms - (performance.now() - started);
    if (left <= 0) throw ms === 0 ? anotherIngestWriting(result.heldBy) : stillWriting(result.heldBy, ms);
    if (!said) {
      wait?.onWait?.(result.heldBy, ms);
      said = true;
    }
    if (!(await pause(Math.min(LOCK_POLL_MS, left), signal))) return WAIT_ABORTED;
  }
}

/** Waits until no other live ingest holds the lock (without taking it); false when the abort signal ended the wait. */
export async function waitForOtherIngest(db: Db, options: Pick<IngestOptions, 'wait' | 'signal'>): Promise<boolean> {
  const result = await whileAnotherIngest(options, () => {
    const held = runningIngest(db);
    return held ? { heldBy: held } : { done: true };
  });
  return result !== WAIT_ABORTED;
}

function stillWriting(held: IngestLock, ms: number): UserError {
  return new UserError(`Another ingest (pid ${held.pid}, started ${held.startedAt}) is still writing to this database after a wait of ${formatWait(ms)}; nothing was written.`, {
    hint: 'Run this ingest again once it has finished, or wait longer (`ragline ingest --wait <seconds>`); `ragline doctor` says whether its lock is stale.',
  });
}

/** A wait in seconds or minutes, as messages give it. */
export function formatWait(ms: number): string {
  const seconds = Math.round(ms / 1000);
  return seconds >= 120 && seconds % 60 === 0 ? `${seconds / 60} min` : `${seconds} s`;
}

/** Resolves true after `ms`, or false as soon as `signal` aborts. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(false);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * The folder as its documents are stored: its real path, so that the same folder
 * reached through a symlink is not a second copy of it; or the path as given when
 * documents are already stored under that path (an index that stored it so).
 */
function storedRoot(db: Db, given: string): string {
  let real: string;
  try {
    real = fs.realpathSync(given);
  } catch {
    return given; // the walk reports an unreadable folder
  }
  if (real === given) return given;
  const storedAsGiven = db.prepare('SELECT 1 FROM documents WHERE root = ? LIMIT 1').get(given) !== undefined;
  return storedAsGiven ? given : real;
}
