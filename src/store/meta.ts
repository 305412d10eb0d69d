// Key/value facts about the database: what its vectors mean (the index
// fingerprint), the last ingest, and the ingest lock.

import { sqliteOpenError, type Db } from './db.js';
import { UserError } from '../util/errors.js';
import { count } from '../util/words.js';

export function getMeta(db: Db, key: string): string | undefined {
  const row = db.prepare('SELECT value FROM meta WHERE key = ?').get(key) as { value: string } | undefined;
  return row?.value;
}

export function setMeta(db: Db, key: string, value: string): void {
  db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value').run(key, value);
}

export function deleteMeta(db: Db, key: string): void {
  db.prepare('DELETE FROM meta WHERE key = ?').run(key);
}

/** The last ingest that changed something, as `stats` shows it (the ingest's summary, and when it finished). */
export interface LastIngest {
  root: string;
  /** The files it read when it was given files rather than the folder, relative to `root`. */
  only?: string[];
  seconds: number;
  finishedAt: string;
}

export function getLastIngest(db: Db): LastIngest | undefined {
  const raw = getMeta(db, 'ingest.last');
  return raw ? (JSON.parse(raw) as LastIngest) : undefined;
}

/** Stores `summary` (the whole ingest summary: more than `stats` reads) with the time it finished. */
export function setLastIngest(db: Db, summary: Omit<LastIngest, 'finishedAt'> & object, finishedAt = new Date()): void {
  setMeta(db, 'ingest.last', JSON.stringify({ ...summary, finishedAt: finishedAt.toISOString() }));
}

/** What the stored vectors and chunks mean. Mixing vectors of two embedders is refused. */
export interface IndexFingerprint {
  /** Embedder id, e.g. `offline:hash-v2-384`. */
  embedder: string;
  dimensions: number;
  /** Chunker settings the chunks were made with. */
  chunker: { size: number; overlap: number };
  /**
   * Version of the text the keyword index holds for each chunk (INDEX_TEXT_VERSION in
   * src/text/symbols.ts); absent in indexes written before it was recorded (version 1).
   */
  text?: number;
  /**
   * What was put before each query and each document when embedding
   * (src/providers/embedding-prefixes.ts); absent in indexes written before it was
   * recorded, and for the offline embedder: no prefixes.
   */
  prefixes?: { query: string; document: string };
}

/** The keyword text version of an index (1 when it predates the record). */
export function keywordTextVersion(fingerprint: IndexFingerprint): number {
  return fingerprint.text ?? 1;
}

/** Whether `stored` is another version of the offline embedder `configured`, with the same dimensions. */
export function isEarlierOfflineEmbedder(stored: string, configured: string): boolean {
  const offline = /^offline:hash-(v\d+)-(\d+)$/;
  const was = offline.exec(stored);
  const now = offline.exec(configured);
  return was !== null && now !== null && was[1] !== now[1] && was[2] === now[2];
}

export function getFingerprint(db: Db): IndexFingerprint | undefined {
  const raw = getMeta(db, 'index.fingerprint');
  return raw ? (JSON.parse(raw) as IndexFingerprint) : undefined;
}

export function setFingerprint(db: Db, fingerprint: IndexFingerprint): void {
  setMeta(db, 'index.fingerprint', JSON.stringify(fingerprint));
}

/** Refuses to search with an embedder other than the one that built the index, or with other prefixes. */
export function assertSameEmbedder(db: Db, embedder: { id: string; dimensions: number; prefixes?: { query: string; document: string } }): void {
  const stored = getFingerprint(db);
  if (!stored) return;
  if (stored.embedder !== embedder.id || (embedder.dimensions > 0 && stored.dimensions !== embedder.dimensions)) {
    throw new UserError(
      isEarlierOfflineEmbedder(stored.embedder, embedder.id)
        ? earlierOfflineMessage(stored.embedder, embedder.id)
        : `This index was built with the embedder ${stored.embedder} (${count(stored.dimensions, 'dimension')}), but ${embedder.id} is configured.`,
      { hint: embedderMismatchHint(stored.embedder, embedder.id), exitCode: 2 },
    );
  }
  assertSamePrefixes(stored, embedder.prefixes);
}

/**
 * Refuses prefixes other than those the index was embedded with (none, when it records
 * none): a query embedded with another instruction than its documents finds worse.
 * An embedder without prefixes (offline) is not checked.
 */
export function assertSamePrefixes(stored: IndexFingerprint, prefixes: { query: string; document: string } | undefined): void {
  if (!prefixes) return;
  const recorded = stored.prefixes ?? { query: '', document: '' };
  if (recorded.query === prefixes.query && recorded.document === prefixes.document) return;
  const words = (p: { query: string; document: string }) =>
    p.query === '' && p.document === '' ? 'no prefixes' : `the prefixes query ${quoted(p.query)} and document ${quoted(p.document)}`;
  const built = stored.prefixes ? `with ${words(recorded)}` : 'without prefixes (before ragline recorded them)';
  throw new UserError(`This index was embedded ${built}, but ${words(prefixes)} are configured now (${stored.embedder}).`, {
    hint: 'Unset embedding.queryPrefix / embedding.documentPrefix (RAGLINE_EMBED_QUERY_PREFIX / RAGLINE_EMBED_DOCUMENT_PREFIX) to use the index\'s own, or rebuild it with `ragline ingest <folder> --reindex` (sessions are kept).',
    exitCode: 2,
  });
}

/**
 * Refuses a vector whose length is not the index's: the model served under the recorded
 * name is another one (a model of another size pulled under the same tag, or another
 * GGUF behind the same llama-server port); sqlite-vec would only say "Dimension mismatch".
 */
export function assertVectorLength(stored: IndexFingerprint | undefined, length: number): void {
  if (!stored || stored.dimensions === length) return;
  throw new UserError(
    `The embedding model now returns ${count(length, 'dimension')} per vector, but this index holds vectors of ${stored.dimensions} (built with ${stored.embedder}): the model served under that name is not the one the index was built with.`,
    {
      hint: 'Serve the model the index was built with (check RAGLINE_EMBED_MODEL and RAGLINE_EMBED_BASE_URL with `ragline config show`), or rebuild the index with `ragline ingest <folder> --reindex` (sessions are kept).',
      exitCode: 2,
    },
  );
}

function quoted(text: string): string {
  return text === '' ? 'none' : JSON.stringify(text);
}

/** What to do when the configured embedder `configured` is not the one `indexEmbedder` that built the index. */
export function embedderMismatchHint(indexEmbedder: string, configured?: string): string {
  if (configured !== undefined && isEarlierOfflineEmbedder(indexEmbedder, configured)) {
    return 'Rebuild it with `ragline ingest <folder> --reindex` (sessions are kept).';
  }
  const own = indexEmbedder.startsWith('offline:')
    ? 'RAGLINE_EMBED_PROVIDER=offline (or auto)'
    : `RAGLINE_EMBED_PROVIDER=openai (or auto) with RAGLINE_EMBED_MODEL=${indexEmbedder.replace(/^openai:/, '')} on its server`;
  return `Use the embedder it was built with, ${own}, or rebuild it with \`ragline ingest <folder> --reindex\` (sessions are kept).`;
}

/** Says that an index was built by an earlier version of the offline embedder. */
export function earlierOfflineMessage(indexEmbedder: string, configured: string): string {
  return `This index was built by an earlier version of the offline embedder (${indexEmbedder}); this version embeds with ${configured}.`;
}

/**
 * Refuses to search a keyword index written in a text version older than `oldest`
 * (SEARCHABLE_TEXT_VERSION): its terms would not be the ones the queries are made of.
 */
export function assertKeywordTextCurrent(db: Db, oldest: number): void {
  const stored = getFingerprint(db);
  if (!stored || keywordTextVersion(stored) >= oldest) return;
  throw new UserError('The keyword index of this database was written by an earlier version of ragline (C++, C# and .NET were indexed as plain letters).', {
    hint: 'Run `ragline ingest <folder>` once: it rewrites the keyword index from the stored chunks, without embedding anything again.',
    exitCode: 2,
  });
}

/**
 * The reader version (src/ingest/reader.ts) each folder was last read with in full;
 * a folder ingested before it was recorded has none (version 1).
 */
export function readerVersionOf(db: Db, root: string): number | undefined {
  return readerVersions(db)[root];
}

export function setReaderVersion(db: Db, root: string, version: number): void {
  const versions = readerVersions(db);
  if (versions[root] === version) return;
  versions[root] = version;
  setMeta(db, 'ingest.reader', JSON.stringify(versions));
}

/**
 * Forgets what is recorded of a folder removed from the index: its reader version,
 * and its place among the folders a rebuild has still to read (which would bring
 * it back).
 */
export function forgetFolderRecords(db: Db, root: string): void {
  const versions = readerVersions(db);
  if (root in versions) {
    delete versions[root];
    setMeta(db, 'ingest.reader', JSON.stringify(versions));
  }
  const pending = pendingRebuild(db);
  if (root in pending) {
    delete pending[root];
    setPendingRebuild(db, pending);
  }
}

/** The recorded reader versions by folder; none when the record is missing or damaged (every folder is then read again once). */
function readerVersions(db: Db): Record<string, number> {
  const raw = getMeta(db, 'ingest.reader');
  try {
    const parsed: unknown = raw ? JSON.parse(raw) : {};
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, number>) : {};
  } catch {
    return {};
  }
}

export interface IngestLock {
  pid: number;
  startedAt: string;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The ingest lock as recorded, and whether it holds; undefined when none is recorded. */
export interface IngestLockState {
  /** The process that took it; undefined when the record cannot be read. */
  lock?: IngestLock;
  /** Whether a live process other than this one holds it; a lock that does not is stale, and the next ingest takes it over. */
  running: boolean;
}

/** The recorded ingest lock and whether it holds (a read, no write). */
export function ingestLockState(db: Db): IngestLockState | undefined {
  const raw = getMeta(db, 'ingest.lock');
  if (!raw) return undefined;
  let held: IngestLock;
  try {
    held = JSON.parse(raw) as IngestLock;
  } catch {
    return { running: false }; // a lock no process could have written holds nothing
  }
  if (!Number.isInteger(held?.pid)) return { running: false };
  return { lock: held, running: held.pid !== process.pid && processAlive(held.pid) };
}

/** The lock of an ingest that a live process other than this one is running (a read, no write). */
export function runningIngest(db: Db): IngestLock | undefined {
  const state = ingestLockState(db);
  return state?.running ? state.lock : undefined;
}

/** Throws if a live process other than this one holds the ingest lock (a read, no write). */
export function assertNoIngestRunning(db: Db): void {
  const held = runningIngest(db);
  if (held) throw anotherIngestWriting(held);
}

/** The refusal of a write while another ingest holds the lock. */
export function anotherIngestWriting(held: IngestLock): UserError {
  return new UserError(`Another ingest (pid ${held.pid}, started ${held.startedAt}) is writing to this database.`, {
    hint: 'Wait for it to finish, then run this ingest again (`ragline doctor` says whether its lock is stale).',
  });
}

/** Meta key of the folders a rebuild has still to read again, with their files. */
const REBUILD_KEY = 'ingest.rebuild';

/** The folders a rebuild has still to read again, each with the files it held. */
export function pendingRebuild(db: Db): Record<string, string[]> {
  const raw = getMeta(db, REBUILD_KEY);
  return raw === undefined ? {} : (JSON.parse(raw) as Record<string, string[]>);
}

/**
 * Records the folders a rebuild has still to read again (none: the record goes).
 * Written only when it changes; a write-protected file is said as such.
 */
export function setPendingRebuild(db: Db, folders: Record<string, string[]>): void {
  const value = Object.keys(folders).length > 0 ? JSON.stringify(folders) : undefined;
  if (value === getMeta(db, REBUILD_KEY)) return;
  firstWrite(db, () => (value === undefined ? deleteMeta(db, REBUILD_KEY) : setMeta(db, REBUILD_KEY, value)));
}

/** An ingest's first write: a write-protected file fails there, not at open, and is said as such. */
function firstWrite(db: Db, write: () => void): void {
  try {
    write();
  } catch (err) {
    if (String((err as { code?: string }).code).startsWith('SQLITE_READONLY')) throw sqliteOpenError(err, db.name);
    throw err;
  }
}

/**
 * Takes the database's ingest lock, or throws if a live process holds it.
 * A lock left by a killed process is taken over.
 */
export function acquireIngestLock(db: Db): () => void {
  const taken = tryIngestLock(db);
  if ('heldBy' in taken) throw anotherIngestWriting(taken.heldBy);
  return taken.release;
}

/**
 * Takes the database's ingest lock when no live process other than this one holds it
 * (a lock left by a killed process is taken over): its release; else who holds it.
 */
export function tryIngestLock(db: Db): { release: () => void } | { heldBy: IngestLock } {
  const take = db.transaction(() => {
    const held = runningIngest(db);
    if (held) return held;
    setMeta(db, 'ingest.lock', JSON.stringify({ pid: process.pid, startedAt: new Date().toISOString() }));
    return undefined;
  });
  let heldBy: IngestLock | undefined;
  firstWrite(db, () => (heldBy = take.immediate()));
  if (heldBy) return { heldBy };
  return {
    release: () => {
      const raw = getMeta(db, 'ingest.lock');
      if (raw && (JSON.parse(raw) as IngestLock).pid === process.pid) deleteMeta(db, 'ingest.lock');
    },
  };
}
