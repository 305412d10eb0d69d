// `ragline ingest` into Postgres: the same walk, reading and chunking as the
// SQLite ingest (walk.ts, prepare.ts), vectors reused by the hash of the embedded
// text, and every write in one transaction (store/postgres/index-writes.ts), so
// other users see the folder before or after the ingest, never half of it.
// Files with the same size and modification time as stored are not read again;
// files gone from the folder lose their documents.

import path from 'node:path';
import type { Embedder } from '../providers/types.js';
import { IndexWriteTransaction, storedDocuments, type PgNewChunk } from '../store/postgres/index-writes.js';
import type { PostgresStore } from '../store/postgres/store.js';
import { INDEX_TEXT_VERSION } from '../text/symbols.js';
import type { ChunkerSettings } from './chunk.js';
import type { IngestPlan } from './plan.js';
import { loadFileTools, prepareFile } from './prepare.js';
import { countSkipped, emptyProgress, emptySummary, type IngestProgress, type IngestRun, type IngestSummary, type PendingFile } from './run.js';
import { walk } from './walk.js';

export interface PgIngestOptions {
  root: string;
  store: PostgresStore;
  embedder: Embedder;
  chunker: ChunkerSettings;
  include?: string[];
  exclude?: string[];
  /** Only these files of the folder (and the whole of subfolders written with a trailing "/"): its other documents stay as they are. */
  only?: string[];
  maxFileBytes: number;
  checksum?: boolean;
  signal?: AbortSignal;
  onProgress?: (progress: IngestProgress) => void;
}

/** Chunks embedded per request group (as the SQLite ingest's FLUSH_CHUNKS). */
const GROUP_CHUNKS = 512;

export async function ingestIntoPostgres(options: PgIngestOptions): Promise<IngestSummary> {
  const started = performance.now();
  const { store, embedder } = options;
  const root = path.resolve(options.root);
  const summary = emptySummary(root, options.only, embedder.id);
  const progress = emptyProgress();
  const report = () => {
    progress.elapsedMs = performance.now() - started;
    options.onProgress?.(progress);
  };

  const stored = await storedDocuments(store, root);
  const found = walk(root, { include: options.include, exclude: options.exclude, only: options.only, maxFileBytes: options.maxFileBytes });
  const only = options.only;
  /** Whether a stored document is one this run looked for (all of them, without `only`). */
  const asked = (relative: string) => !only || only.some((given) => (given.endsWith('/') ? relative.startsWith(given) : relative === given));
  for (const [reason, paths] of found.skippedPaths) countSkipped(summary, reason, paths);
  const seen = new Set<string>();
  const work = found.files.filter((file) => {
    seen.add(file.relative);
    const before = stored.get(file.relative);
    if (before && !options.checksum && before.size === file.size && before.mtimeMs === file.mtimeMs) {
      summary.files.unchanged++;
      return false;
    }
    return true;
  });
  progress.filesTotal = work.length;
  progress.bytesTotal = work.reduce((sum, file) => sum + file.size, 0);
  report();

  if (embedder.dimensions === 0) await embedder.resolveDimensions?.(options.signal);
  const writes = await IndexWriteTransaction.begin(store, {
    embedder: embedder.id,
    dimensions: embedder.dimensions,
    chunker: { size: options.chunker.size, overlap: options.chunker.overlap },
    text: INDEX_TEXT_VERSION,
    ...(embedder.prefixes ? { prefixes: { query: embedder.prefixes.query, document: embedder.prefixes.document } } : {}),
  });
  try {
    const tools = await loadFileTools();
    // prepareFile reads, loads and chunks a file; it is given no stored document (this
    // ingest compares content hashes itself) and counts skips in this summary.
    const run = { options: { maxFileBytes: options.maxFileBytes, chunker: options.chunker }, summary } as unknown as IngestRun;
    const plan = { stored: { indexOf: () => undefined }, seen: [], skippedNow: new Map(), reread: false } as unknown as IngestPlan;
    let group: PendingFile[] = [];
    let groupChunks = 0;
    const flush = async () => {
      await writeGroup(writes, root, embedder, group, summary, options.signal);
      progress.chunksWritten = summary.chunks.written;
      group = [];
      groupChunks = 0;
      report();
    };
    for (const file of work) {
      if (options.signal?.aborted) break;
      const prepared = await prepareFile(run, plan, undefined as never, tools, file);
      progress.filesDone++;
      progress.bytesDone += file.size;
      if (prepared.kind === 'skipped') {
        // A file now skipped for what it holds (empty, binary) no longer has a document.
        seen.delete(file.relative);
        continue;
      }
      if (prepared.kind !== 'write') continue;
      const before = stored.get(file.relative);
      if (before && before.contentHash === prepared.pending.contentHash) {
        await writes.touch(before.id, file.size, file.mtimeMs);
        summary.files.unchanged++;
        continue;
      }
      summary.bytes += file.size;
      if (before) summary.files.changed++;
      else summary.files.added++;
      group.push(prepared.pending);
      groupChunks += prepared.pending.chunks.length;
      if (groupChunks >= GROUP_CHUNKS) await flush();
    }
    if (options.signal?.aborted) {
      // Nothing of an interrupted ingest is kept: the next one starts from what was there.
      summary.interrupted = true;
      await writes.rollback();
    } else {
      if (group.length > 0) await flush();
      const gone = [...stored.values()].filter((doc) => asked(doc.path) && !seen.has(doc.path));
      summary.chunks.removed += await writes.removeDocuments(gone.map((doc) => doc.id));
      summary.files.removed += gone.length;
      const { added, changed, removed } = summary.files;
      if (added + changed + removed > 0) {
        // The last ingest that changed something, as `stats` shows it.
        const seconds = (performance.now() - started) / 1000;
        await writes.setMeta('last_ingest', JSON.stringify({ root, ...(only ? { only } : {}), finishedAt: new Date().toISOString(), seconds }));
      }
      await writes.commit();
    }
  } catch (error) {
    await writes.rollback();
    throw error;
  }
  summary.seconds = (performance.now() - started) / 1000;
  return summary;
}

/** Embeds the chunks of `group` whose text has no stored vector, and writes each file. */
async function writeGroup(writes: IndexWriteTransaction, root: string, embedder: Embedder, group: PendingFile[], summary: IngestSummary, signal?: AbortSignal): Promise<void> {
  const hashes = [...new Set(group.flatMap((pending) => pending.chunks.map((chunk) => chunk.textHash)))];
  const vectors = await writes.vectorsByTextHash(hashes);
  const missing = new Map<string, string>();
  for (const pending of group) for (const chunk of pending.chunks) if (!vectors.has(chunk.textHash)) missing.set(chunk.textHash, chunk.embedText);
  if (missing.size > 0) {
    const embedded = await embedder.embed([...missing.values()], signal, 'document');
    [...missing.keys()].forEach((hash, i) => vectors.set(hash, embedded[i]!));
  }
  for (const pending of group) {
    const chunks: PgNewChunk[] = pending.chunks.map((chunk) => ({
      heading: chunk.heading,
      text: chunk.text,
      startLine: chunk.startLine,
      endLine: chunk.endLine,
      locator: chunk.locator,
      textHash: chunk.textHash,
      keyword: chunk.fts,
      vector: vectors.get(chunk.textHash)!,
    }));
    await writes.writeDocument(
      { root, path: pending.file.relative, kind: pending.file.kind, title: pending.title, contentHash: pending.contentHash, size: pending.file.size, mtimeMs: pending.file.mtimeMs },
      chunks,
    );
    summary.chunks.written += chunks.length;
  }
  summary.chunks.embedded += missing.size;
  summary.chunks.reused += hashes.length - missing.size;
}
