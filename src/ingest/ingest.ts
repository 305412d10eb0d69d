// `ragline ingest`: walk -> load -> chunk -> embed in batches -> write, each
// file atomically (its own savepoint inside a short transaction per group). Unchanged files (same size and mtime, or same content
// hash) are not read again; any chunk whose text is already stored reuses its
// vector; files that disappeared are removed at the end, after new ones were
// written, so a rename reuses the vectors of the old name.

import fs from 'node:fs';
import { hexDigest } from '../util/hash.js';
import type { Db } from '../store/db.js';
import {
  DocumentWriter,
  clearIndex,
  keywordTotalRows,
  listDocuments,
  listSkippedFiles,
  updateSkippedFiles,
  type NewChunk,
  type SkippedFile,
  type StoredDocuments,
} from '../store/documents.js';
import { acquireIngestLock, assertNoIngestRunning, earlierOfflineMessage, embedderMismatchHint, getFingerprint, isEarlierOfflineEmbedder, keywordTextVersion, setFingerprint, setMeta } from '../store/meta.js';
import { INDEX_TEXT_VERSION } from '../text/symbols.js';
import { createVectorTable, hasVectorTable } from '../store/vectors.js';
import type { Embedder } from '../providers/types.js';
import { UserError } from '../util/errors.js';
import type { ChunkerSettings } from './chunk.js';
import { walk, type FoundFile, type SkipReason } from './walk.js';

/** What reading, chunking and indexing a file takes. */
type FileTools = Pick<typeof import('./load.js'), 'loadDocument' | 'looksBinary'> &
  Pick<typeof import('./chunk.js'), 'chunkDocument'> &
  Pick<typeof import('./index-text.js'), 'indexText'>;

/** Loaded with the first file that needs them: a re-ingest that finds nothing changed never compiles them. */
async function loadFileTools(): Promise<FileTools> {
  const [{ loadDocument, looksBinary }, { chunkDocument }, { indexText }] = await Promise.all([
    import('./load.js'),
    import('./chunk.js'),
    import('./index-text.js'),
  ]);
  return { loadDocument, looksBinary, chunkDocument, indexText };
}

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
  /** Stops between files; what was written stays written. */
  signal?: AbortSignal;
  onProgress?: (progress: IngestProgress) => void;
}

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
  files: {
    added: number;
    changed: number;
    unchanged: number;
    removed: number;
    skipped: Partial<Record<SkipReason, number>>;
  };
  /** Up to SKIPPED_PATHS_KEPT paths of the files skipped for each reason, relative to the folder. */
  skippedPaths: Partial<Record<SkipReason, string[]>>;
  /** Files that were not valid UTF-8 and were decoded with replacement characters. */
  invalidUtf8: number;
  chunks: { written: number; embedded: number; reused: number; removed: number };
  bytes: number;
  seconds: number;
  embedder: string;
  interrupted: boolean;
}

interface PendingFile {
  file: FoundFile;
  contentHash: string;
  title?: string;
  isNew: boolean;
  chunks: (Omit<NewChunk, 'vector'> & { embedText: string })[];
}

/** Paths of skipped files kept per reason in the summary. */
export const SKIPPED_PATHS_KEPT = 5;

/** How many chunks are embedded together before their files are written. */
const FLUSH_CHUNKS = 512;

export async function ingest(options: IngestOptions): Promise<IngestSummary> {
  const started = performance.now();
  const { db, embedder } = options;
  const root = storedRoot(db, options.root);
  const summary: IngestSummary = {
    root,
    files: { added: 0, changed: 0, unchanged: 0, removed: 0, skipped: {} },
    skippedPaths: {},
    invalidUtf8: 0,
    chunks: { written: 0, embedded: 0, reused: 0, removed: 0 },
    bytes: 0,
    seconds: 0,
    embedder: embedder.id,
    interrupted: false,
  };
  const keepSkippedPath = (reason: SkipReason, path: string) => {
    const paths = (summary.skippedPaths[reason] ??= []);
    if (paths.length < SKIPPED_PATHS_KEPT) paths.push(path);
  };
  const skip = (reason: SkipReason, path: string) => {
    summary.files.skipped[reason] = (summary.files.skipped[reason] ?? 0) + 1;
    keepSkippedPath(reason, path);
  };

  // The lock is taken at the first write. A re-ingest that finds nothing to write
  // (the usual case) then writes nothing at all: no lock, no last-ingest record and
  // no WAL for close() to checkpoint, which was a tenth of its time.
  assertNoIngestRunning(db);
  let releaseLock: (() => void) | undefined;
  // What was listed before the lock, to check nothing changed under it.
  let listed: { documents: StoredDocuments; dataVersion: number } | undefined;
  const lockForWriting = () => {
    if (releaseLock) return;
    releaseLock = acquireIngestLock(db);
    if (listed && dataVersion(db) !== listed.dataVersion && !listDocuments(db, root).equals(listed.documents)) {
      throw new UserError('Another ingest changed the documents of this folder while this one was reading them; nothing was written.', {
        hint: 'Run the same command again.',
      });
    }
  };
  try {
    // A remote model's dimension is learnt from the server only when a new index
    // needs it; an existing index records it.
    const fingerprint = getFingerprint(db);
    if (embedder.dimensions === 0 && (!fingerprint || options.reindex || fingerprint.embedder !== embedder.id)) {
      await embedder.resolveDimensions?.(options.signal);
    }
    if (!fingerprint || options.reindex) lockForWriting();
    if (prepareIndex(db, embedder, options.chunker, options.reindex ?? false) === 'rewrite-keywords') {
      rewriteKeywordIndex(db, (await loadFileTools()).indexText, () => keywordTextVersion(getFingerprint(db)!) < INDEX_TEXT_VERSION);
    }
    // data_version is read before the listing: a commit landing between the two then
    // shows as a changed version at the lock, never as one the listing is taken to include.
    const versionBefore = releaseLock ? undefined : dataVersion(db);
    const stored = listDocuments(db, root);
    if (versionBefore !== undefined) listed = { documents: stored, dataVersion: versionBefore };
    // Which stored documents still have their file; the others are removed at the end.
    const seen = new Uint8Array(stored.count);
    // Files read and skipped before (binary, unparseable, no text): one that has not
    // changed is counted as skipped again without being read; the record of a file that
    // is gone, or was read again, is brought up to date at the end.
    const skippedBefore = listSkippedFiles(db, root);
    const skippedFound = new Set<string>();
    const skippedNow = new Map<string, SkippedFile>();
    const found = walk(root, {
      include: options.include,
      exclude: options.exclude,
      maxFileBytes: options.maxFileBytes,
      // Unchanged files are counted here and not listed.
      select: (relative, size, mtimeMs) => {
        const at = stored.indexOf(relative);
        if (at === undefined) {
          const before = skippedBefore.get(relative);
          if (!before) return true;
          skippedFound.add(relative);
          if (options.checksum || before.size !== size || before.mtimeMs !== mtimeMs) return true;
          skip(before.reason as SkipReason, relative);
          return false;
        }
        seen[at] = 1;
        if (options.checksum || stored.sizes[at] !== size || stored.mtimesMs[at] !== mtimeMs) return true;
        summary.files.unchanged++;
        return false;
      },
    });
    for (const [reason, count] of found.skipped) {
      summary.files.skipped[reason] = (summary.files.skipped[reason] ?? 0) + count;
      for (const path of found.examples.get(reason) ?? []) keepSkippedPath(reason, path);
    }
    const work = found.files;

    const writer = new DocumentWriter(db);
    const progress: IngestProgress = {
      filesDone: 0,
      filesTotal: work.length,
      bytesDone: 0,
      bytesTotal: work.reduce((sum, f) => sum + f.size, 0),
      chunksWritten: 0,
      elapsedMs: 0,
    };
    const report = () => {
      progress.elapsedMs = performance.now() - started;
      options.onProgress?.(progress);
    };
    report();

    let pending: PendingFile[] = [];
    let pendingChunks = 0;
    // One group is embedded while the one before it is written: with the offline
    // embedder on a worker thread (or a remote one) the two overlap.
    let embedding: (InFlight & { files: PendingFile[] }) | undefined;
    const write = async (group: NonNullable<typeof embedding>) => {
      // Ctrl-C does not wait for a group still being embedded (a large file can
      // take seconds): it is left for the next run. One whose vectors are there is written.
      const vectors = await unlessAborted(group.vectors, options.signal);
      if (vectors === ABORTED) return;
      lockForWriting();
      // One transaction per group of files, each file inside it in its own
      // savepoint: a crash loses at most the group being written, never leaves
      // a half-written file, and costs one FTS5 segment per group instead of per file.
      writer.inTransaction(() => {
        for (const item of group.files) {
          const chunks = item.chunks.map(({ embedText, ...chunk }) => ({ ...chunk, vector: vectors.get(chunk.textHash)! }));
          writer.replaceDocument(
            {
              path: item.file.relative,
              root,
              kind: item.file.kind,
              title: item.title,
              contentHash: item.contentHash,
              size: item.file.size,
              mtimeMs: item.file.mtimeMs,
            },
            chunks,
          );
          if (item.isNew) summary.files.added++;
          else summary.files.changed++;
          summary.chunks.written += chunks.length;
          progress.chunksWritten += chunks.length;
        }
      });
    };
    /** Starts embedding the pending files and writes the group embedded before them. */
    const flush = async () => {
      const previous = embedding;
      embedding = undefined;
      if (pending.length > 0) {
        const files = pending;
        const vectors = vectorsFor(files, writer, embedder, summary, options.signal, previous);
        vectors.catch(() => {}); // awaited in write(); no unhandled rejection meanwhile
        const hashes = new Set(files.flatMap((file) => file.chunks.map((chunk) => chunk.textHash)));
        embedding = { files, vectors, hashes };
        pending = [];
        pendingChunks = 0;
      }
      if (previous) await write(previous);
    };
    /** Writes everything still pending. */
    const drain = async () => {
      await flush();
      await flush();
    };

    let lastYield = performance.now();
    let tools: FileTools | undefined;
    for (const file of work) {
      tools ??= await loadFileTools();
      const { loadDocument, looksBinary, chunkDocument, indexText } = tools;
      // Reading, chunking and offline embedding never wait on I/O, so without
      // this the event loop never runs and Ctrl-C (the abort signal) is not
      // seen until every file is done.
      if (performance.now() - lastYield > 20) {
        await new Promise((resolve) => setImmediate(resolve));
        lastYield = performance.now();
      }
      if (options.signal?.aborted) break;
      progress.filesDone++;
      progress.bytesDone += file.size;
      summary.bytes += file.size;

      const at = stored.indexOf(file.relative);
      const previousId = at === undefined ? undefined : stored.ids[at]!;
      const read = readRegularFile(file.absolute, options.maxFileBytes);
      if (typeof read === 'string') {
        skip(read, file.relative);
        continue;
      }
      const bytes = read;
      // A new file is hashed once it is known to be written: one that is skipped
      // (empty, binary) needs no hash.
      let contentHash: string | undefined;
      if (previousId !== undefined) {
        contentHash = hexDigest('sha256', bytes);
        if (writer.contentHash(previousId) === contentHash) {
          lockForWriting();
          writer.touchDocument(previousId, file.size, file.mtimeMs);
          summary.files.unchanged++;
          continue;
        }
      }
      /** Skipped for what it holds: remembered, and a document it was is removed below. */
      const skipForContent = (reason: 'binary' | 'parse-error' | 'empty') => {
        skip(reason, file.relative);
        skippedNow.set(file.relative, { size: file.size, mtimeMs: file.mtimeMs, reason });
        if (at !== undefined) seen[at] = 0;
      };
      if (file.kind !== 'pdf' && looksBinary(bytes)) {
        skipForContent('binary');
        continue;
      }
      let loaded;
      try {
        loaded = await loadDocument(file.absolute, bytes);
      } catch {
        skipForContent('parse-error');
        continue;
      }
      if (loaded.invalidUtf8) summary.invalidUtf8++;
      const chunks = chunkDocument(loaded, options.chunker);
      if (chunks.length === 0) {
        skipForContent('empty');
        continue;
      }
      pending.push({
        file,
        contentHash: contentHash ?? hexDigest('sha256', bytes),
        title: loaded.title,
        isNew: previousId === undefined,
        chunks: chunks.map((chunk) => {
          const indexed = indexText(loaded.title, chunk.headingPath, chunk.text);
          return {
            heading: indexed.heading,
            text: chunk.text,
            startLine: chunk.startLine,
            endLine: chunk.endLine,
            locator: chunk.locator,
            textHash: indexed.hash,
            fts: indexed.fts,
            embedText: indexed.embed,
          };
        }),
      });
      pendingChunks += chunks.length;
      if (pendingChunks >= FLUSH_CHUNKS) {
        await flush();
        report();
      }
    }
    if (options.signal?.aborted) {
      summary.interrupted = true;
      // The group already handed to the embedder is written if its vectors are there.
      if (embedding) await write(embedding).catch(() => {});
    } else {
      await drain();
      for (let i = 0; i < stored.count; i++) {
        if (seen[i]) continue;
        lockForWriting();
        summary.chunks.removed += writer.deleteDocument(stored.ids[i]!);
        summary.files.removed++;
      }
      // Forget the skipped files that are gone and the ones read again and not skipped.
      const readAgain = new Set(work.map((file) => file.relative));
      const forget = [...skippedBefore.keys()].filter((path) => !skippedFound.has(path) || (readAgain.has(path) && !skippedNow.has(path)));
      if (skippedNow.size > 0 || forget.length > 0) {
        lockForWriting();
        updateSkippedFiles(db, root, skippedNow, forget);
      }
      // The keyword index's totals still count the rows of every chunk replaced or
      // removed (see keywordsDrifted): past the bound they are written again, true.
      if (releaseLock && keywordsDrifted(db)) rewriteKeywordIndex(db, (tools ?? (await loadFileTools())).indexText, () => keywordsDrifted(db));
    }
    report();
    for (const paths of Object.values(summary.skippedPaths)) paths.sort();
    summary.seconds = (performance.now() - started) / 1000;
    // `stats` shows the last ingest that changed something.
    if (releaseLock) setMeta(db, 'ingest.last', JSON.stringify({ ...summary, finishedAt: new Date().toISOString() }));
    return summary;
  } finally {
    releaseLock?.();
  }
}

const ABORTED = Symbol('aborted');

/** `promise`'s value, or ABORTED as soon as `signal` fires (a value already there wins). */
function unlessAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T | typeof ABORTED> {
  if (!signal) return promise;
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<typeof ABORTED>((resolve) => {
    if (signal.aborted) resolve(ABORTED);
    else signal.addEventListener('abort', (onAbort = () => resolve(ABORTED)), { once: true });
  });
  return Promise.race([promise, aborted]).finally(() => onAbort && signal.removeEventListener('abort', onAbort));
}

/**
 * The bytes of the file at `absolute` if it is still a regular file, checked on
 * the opened descriptor: a FIFO or device put in its place after the listing is
 * opened without blocking (O_NONBLOCK) and never read, so it cannot hang the
 * ingest (a blocked read would not even let Ctrl-C through).
 */
function readRegularFile(absolute: string, maxBytes: number): Buffer | 'unreadable' | 'not-a-file' | 'too-large' {
  let fd: number;
  try {
    fd = fs.openSync(absolute, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | fs.constants.O_NOCTTY);
  } catch (err) {
    // A FIFO opened for writing elsewhere, or a socket: not a document either.
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'ENXIO' || code === 'ENODEV' || code === 'EOPNOTSUPP' ? 'not-a-file' : 'unreadable';
  }
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile()) return 'not-a-file';
    if (stat.size > maxBytes) return 'too-large';
    return fs.readFileSync(fd);
  } catch {
    return 'unreadable';
  } finally {
    fs.closeSync(fd);
  }
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

/** Changes whenever another connection commits to the database. */
function dataVersion(db: Db): number {
  return db.pragma('data_version', { simple: true }) as number;
}

/**
 * Checks that the index was built with this embedder and chunker, or starts a new one;
 * says whether its keyword index is in an older text version and must be rewritten.
 */
function prepareIndex(db: Db, embedder: Embedder, chunker: ChunkerSettings, reindex: boolean): 'ok' | 'rewrite-keywords' {
  const fingerprint = getFingerprint(db);
  if (fingerprint && reindex) clearIndex(db);
  else if (fingerprint) {
    const sameEmbedder = fingerprint.embedder === embedder.id && (embedder.dimensions === 0 || fingerprint.dimensions === embedder.dimensions);
    const sameChunker = fingerprint.chunker.size === chunker.size && fingerprint.chunker.overlap === chunker.overlap;
    if (!sameEmbedder) {
      throw new UserError(
        isEarlierOfflineEmbedder(fingerprint.embedder, embedder.id)
          ? earlierOfflineMessage(fingerprint.embedder, embedder.id)
          : `This database was built with the embedder ${fingerprint.embedder} (${fingerprint.dimensions} dimensions); ${embedder.id} (${embedder.dimensions}) is configured now.`,
        { hint: embedderMismatchHint(fingerprint.embedder, embedder.id), exitCode: 2 },
      );
    }
    if (!sameChunker) {
      throw new UserError(
        `This database was chunked with size ${fingerprint.chunker.size} and overlap ${fingerprint.chunker.overlap}; size ${chunker.size} and overlap ${chunker.overlap} are configured now.`,
        { hint: 'Rebuild the index with `ragline ingest <folder> --reindex`, or set chunk.size and chunk.overlap back.', exitCode: 2 },
      );
    }
    return keywordTextVersion(fingerprint) < INDEX_TEXT_VERSION ? 'rewrite-keywords' : 'ok';
  }
  db.transaction(() => {
    if (!hasVectorTable(db)) createVectorTable(db, embedder.dimensions);
    setFingerprint(db, { embedder: embedder.id, dimensions: embedder.dimensions, chunker: { ...chunker }, text: INDEX_TEXT_VERSION });
  }).immediate();
  return 'ok';
}

/**
 * How far the keyword index's row count may run ahead of the live chunks, as a share of
 * them, before the index is rewritten. A contentless FTS5 table cannot take a deleted
 * row out of its totals, so every chunk replaced or removed stays counted, and bm25
 * weighs terms by too many rows and too long an average. Measured on the CMake help
 * (2.5k chunks, bench/ingest/fts-totals.mjs): with 4% too many rows the top-10 bm25
 * scores are 1.6% off a fresh index's and 15% of the queries order their top 10
 * otherwise; at 11%, 4.2% and 22%; at 27%, 9.5% and 38%. The rewrite takes 0.06 s
 * there (25 us a chunk); at 10% it runs once per tenth of the index replaced, about
 * 250 us per replaced chunk, less than the ingest spent on writing that chunk.
 */
export const KEYWORD_DRIFT_BOUND = 0.1;

/** Whether the keyword index counts more rows than KEYWORD_DRIFT_BOUND allows over the live chunks. */
function keywordsDrifted(db: Db): boolean {
  const live = db.prepare('SELECT count(*) FROM chunks').pluck().get() as number;
  return keywordTotalRows(db) - live > live * KEYWORD_DRIFT_BOUND;
}

/**
 * Writes the keyword index again from the stored chunks, in the current text version,
 * with true totals: after an index written before names such as C++ were spelled as
 * words, or once its totals count too many deleted rows. The chunks and their vectors
 * stay (same ids), so nothing is embedded again. One transaction, if `needed()` still
 * holds inside it (another ingest may have done it).
 */
function rewriteKeywordIndex(db: Db, indexText: FileTools['indexText'], needed: () => boolean): void {
  db.transaction(() => {
    if (!needed()) return;
    const fingerprint = getFingerprint(db)!;
    db.exec("INSERT INTO chunks_fts (chunks_fts) VALUES ('delete-all')");
    const insert = db.prepare('INSERT INTO chunks_fts (rowid, title, body) VALUES (?, ?, ?)');
    const page = db.prepare(
      'SELECT c.id AS id, d.title AS title, c.heading AS heading, c.text AS text FROM chunks c JOIN documents d ON d.id = c.document_id WHERE c.id > ? ORDER BY c.id LIMIT 2000',
    );
    for (let last = 0; ; ) {
      const rows = page.all(last) as { id: number; title: string | null; heading: string; text: string }[];
      if (rows.length === 0) break;
      for (const row of rows) {
        const { fts } = indexText(row.title ?? undefined, row.heading ? row.heading.split(' > ') : [], row.text);
        insert.run(row.id, fts.title, fts.body);
      }
      last = rows[rows.length - 1]!.id;
    }
    if (keywordTextVersion(fingerprint) < INDEX_TEXT_VERSION) setFingerprint(db, { ...fingerprint, text: INDEX_TEXT_VERSION });
  }).immediate();
}

/** Vectors for every chunk of the pending files: reused by text hash where stored, embedded otherwise. */
async function vectorsFor(
  pending: PendingFile[],
  writer: DocumentWriter,
  embedder: Embedder,
  summary: IngestSummary,
  signal?: AbortSignal,
  inFlight?: InFlight,
): Promise<Map<string, Float32Array>> {
  const vectors = new Map<string, Float32Array>();
  const toEmbed = new Map<string, string>();
  const fromInFlight: string[] = [];
  for (const item of pending) {
    for (const chunk of item.chunks) {
      const hash = chunk.textHash;
      if (vectors.has(hash) || toEmbed.has(hash) || fromInFlight.includes(hash)) {
        summary.chunks.reused++;
        continue;
      }
      const stored = writer.storedVector(hash);
      if (stored) {
        vectors.set(hash, stored);
        summary.chunks.reused++;
      } else if (inFlight?.hashes.has(hash)) {
        // being embedded for the group before this one, not written yet
        fromInFlight.push(hash);
        summary.chunks.reused++;
      } else toEmbed.set(hash, chunk.embedText);
    }
  }
  const hashes = [...toEmbed.keys()];
  const texts = [...toEmbed.values()];
  if (texts.length > 0) {
    const embedded = await embedder.embed(texts, signal);
    embedded.forEach((vector, i) => vectors.set(hashes[i]!, vector));
    summary.chunks.embedded += texts.length;
  }
  if (fromInFlight.length > 0) {
    const earlier = await inFlight!.vectors;
    for (const hash of fromInFlight) vectors.set(hash, earlier.get(hash)!);
  }
  return vectors;
}

/** The group whose vectors are being computed while another is prepared. */
interface InFlight {
  hashes: Set<string>;
  vectors: Promise<Map<string, Float32Array>>;
}
