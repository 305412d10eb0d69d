// Documents and their chunks, with the two indexes kept beside them: the FTS5
// table and the vec0 table, both keyed by chunk id. A document is always
// replaced as a whole, in one transaction, so the three never disagree.

import path from 'node:path';
import type { ChunkSpan } from '../domain/index.js';
import type { Db } from './db.js';
import { bytesToVector, vectorBytes } from './vectors.js';

export interface NewDocument {
  path: string;
  root: string;
  kind: string;
  title?: string;
  contentHash: string;
  size: number;
  mtimeMs: number;
}

export interface NewChunk extends ChunkSpan {
  heading: string;
  text: string;
  textHash: string;
  /** Text given to the full-text index, per FTS column. */
  fts: { title: string; body: string };
  vector: Float32Array;
}

/**
 * The documents ingested from `root`, by relative path: only what a no-change
 * re-ingest compares. They are read as one row of four JSON arrays and kept as
 * parallel arrays, with no object per document: at 13k files that takes less than
 * half the work of reading one row per document, and leaves the garbage collector
 * little to copy.
 */
export class StoredDocuments {
  readonly paths: string[];
  readonly ids: number[];
  readonly sizes: number[];
  readonly mtimesMs: number[];
  private readonly byPath = new Map<string, number>();

  constructor(paths: string[], ids: number[], sizes: number[], mtimesMs: number[]) {
    this.paths = paths;
    this.ids = ids;
    this.sizes = sizes;
    this.mtimesMs = mtimesMs;
    for (let i = 0; i < paths.length; i++) this.byPath.set(paths[i]!, i);
  }

  get count(): number {
    return this.paths.length;
  }

  /** The position of the document stored for `path` in the arrays, if any. */
  indexOf(path: string): number | undefined {
    return this.byPath.get(path);
  }

  /** Same paths, ids, sizes and modification times. */
  equals(other: StoredDocuments): boolean {
    if (other.count !== this.count) return false;
    for (let i = 0; i < this.count; i++) {
      const j = other.indexOf(this.paths[i]!);
      if (j === undefined || other.ids[j] !== this.ids[i] || other.sizes[j] !== this.sizes[i] || other.mtimesMs[j] !== this.mtimesMs[i]) {
        return false;
      }
    }
    return true;
  }
}

/** The folders documents were ingested from. */
export function storedRoots(db: Db): string[] {
  return db.prepare('SELECT DISTINCT root FROM documents').pluck().all() as string[];
}

/** A folder documents were ingested from, with what the index holds of it. */
export interface StoredFolder {
  root: string;
  documents: number;
  /** As recorded on its documents (`doctor` checks that they add up to the chunks table). */
  chunks: number;
}

/** Every folder the index holds, in path order, with its documents and chunks. */
export function storedFolders(db: Db): StoredFolder[] {
  return db
    .prepare('SELECT root, count(*) AS documents, coalesce(sum(chunk_count), 0) AS chunks FROM documents GROUP BY root ORDER BY root')
    .all() as StoredFolder[];
}

/** The paths of the documents of each folder, relative to it, in path order. */
export function documentPathsByRoot(db: Db): Map<string, string[]> {
  const byRoot = new Map<string, string[]>();
  for (const row of db.prepare('SELECT root, path FROM documents ORDER BY root, path').iterate() as Iterable<{ root: string; path: string }>) {
    const paths = byRoot.get(row.root) ?? [];
    if (paths.length === 0) byRoot.set(row.root, paths);
    paths.push(row.path);
  }
  return byRoot;
}

/**
 * Ids of the documents stored under a folder inside `root` (ingested on its own
 * before) whose file `root` holds as a document too: the same file twice.
 */
export function nestedCopies(db: Db, root: string): number[] {
  const prefix = root.endsWith(path.sep) ? root : root + path.sep;
  const copies: number[] = [];
  const held = db.prepare('SELECT 1 FROM documents WHERE root = ? AND path = ?').pluck();
  for (const nested of storedRoots(db).filter((other) => other.startsWith(prefix))) {
    const under = path.relative(root, nested).split(path.sep).join('/');
    const rows = db.prepare('SELECT id, path FROM documents WHERE root = ?').all(nested) as { id: number; path: string }[];
    for (const row of rows) if (held.get(root, `${under}/${row.path}`) !== undefined) copies.push(row.id);
  }
  return copies;
}

export function listDocuments(db: Db, root: string): StoredDocuments {
  // One aggregate pass, so the four arrays list the documents in the same order.
  const [paths, ids, sizes, mtimes] = db
    .prepare(
      `SELECT json_group_array(path), json_group_array(id), json_group_array(size), json_group_array(mtime_ms)
       FROM documents WHERE root = ?`,
    )
    .raw()
    .get(root) as [string, string, string, string];
  return new StoredDocuments(JSON.parse(paths), JSON.parse(ids), JSON.parse(sizes), JSON.parse(mtimes));
}

/** Statements prepared once per database, reused for every document. */
export class DocumentWriter {
  private readonly db: Db;
  private readonly stmts;

  constructor(db: Db) {
    this.db = db;
    this.stmts = {
      chunkIds: db.prepare('SELECT id FROM chunks WHERE document_id = ?').pluck(),
      deleteFts: db.prepare('DELETE FROM chunks_fts WHERE rowid = ?'),
      deleteVec: db.prepare('DELETE FROM vec_chunks WHERE rowid = ?'),
      deleteChunks: db.prepare('DELETE FROM chunks WHERE document_id = ?'),
      deleteDocument: db.prepare('DELETE FROM documents WHERE id = ?'),
      documentId: db.prepare('SELECT id FROM documents WHERE root = ? AND path = ?').pluck(),
      insertDocument: db.prepare(`
        INSERT INTO documents (path, root, kind, title, content_hash, size, mtime_ms, chunk_count, ingested_at)
        VALUES (@path, @root, @kind, @title, @contentHash, @size, @mtimeMs, @chunkCount, @ingestedAt)`),
      updateDocument: db.prepare(`
        UPDATE documents SET root = @root, kind = @kind, title = @title, content_hash = @contentHash, size = @size,
          mtime_ms = @mtimeMs, chunk_count = @chunkCount, ingested_at = @ingestedAt
        WHERE id = @id`),
      touchDocument: db.prepare('UPDATE documents SET size = ?, mtime_ms = ? WHERE id = ?'),
      contentHash: db.prepare('SELECT content_hash FROM documents WHERE id = ?').pluck(),
      insertChunk: db.prepare(`
        INSERT INTO chunks (document_id, ordinal, heading, text, start_line, end_line, locator, text_hash)
        VALUES (@documentId, @ordinal, @heading, @text, @startLine, @endLine, @locator, @textHash)`),
      insertFts: db.prepare('INSERT INTO chunks_fts (rowid, title, body) VALUES (?, ?, ?)'),
      insertVec: db.prepare('INSERT INTO vec_chunks (rowid, embedding) VALUES (?, ?)'),
      vectorByHash: db.prepare(
        'SELECT v.embedding FROM chunks c JOIN vec_chunks v ON v.rowid = c.id WHERE c.text_hash = ? LIMIT 1',
      ).pluck(),
    };
  }

  /** Runs `work` in one write transaction (documents written inside it nest as savepoints). */
  inTransaction(work: () => void): void {
    this.db.transaction(work).immediate();
  }

  /** Replaces (or adds) one document and all its chunks, atomically. */
  replaceDocument(doc: NewDocument, chunks: NewChunk[]): void {
    const { stmts } = this;
    this.db.transaction(() => {
      const ingestedAt = new Date().toISOString();
      const existing = stmts.documentId.get(doc.root, doc.path) as number | undefined;
      const row = { ...doc, title: doc.title ?? null, chunkCount: chunks.length, ingestedAt };
      let documentId: number;
      if (existing !== undefined) {
        this.removeChunks(existing);
        stmts.updateDocument.run({ ...row, id: existing });
        documentId = existing;
      } else {
        documentId = Number(stmts.insertDocument.run(row).lastInsertRowid);
      }
      chunks.forEach((chunk, ordinal) => {
        const chunkId = stmts.insertChunk.run({
          documentId,
          ordinal,
          heading: chunk.heading,
          text: chunk.text,
          startLine: chunk.startLine,
          endLine: chunk.endLine,
          locator: chunk.locator,
          textHash: chunk.textHash,
        }).lastInsertRowid;
        stmts.insertFts.run(chunkId, chunk.fts.title, chunk.fts.body);
        stmts.insertVec.run(BigInt(chunkId), vectorBytes(chunk.vector));
      });
    }).immediate();
  }

  /** Records a new size/mtime for a file whose content did not change. */
  touchDocument(id: number, size: number, mtimeMs: number): void {
    this.stmts.touchDocument.run(size, mtimeMs, id);
  }

  /** The sha256 of a stored document's file bytes. */
  contentHash(id: number): string | undefined {
    return this.stmts.contentHash.get(id) as string | undefined;
  }

  /** Removes a document, its chunks and their index rows, atomically; returns how many chunks went. */
  deleteDocument(id: number): number {
    return this.db.transaction(() => {
      const removed = this.removeChunks(id);
      this.stmts.deleteDocument.run(id);
      return removed;
    }).immediate();
  }

  /** A stored vector for a chunk with this text hash, if any (so it is not embedded again). */
  storedVector(textHash: string): Float32Array | undefined {
    const bytes = this.stmts.vectorByHash.get(textHash) as Buffer | undefined;
    return bytes ? bytesToVector(bytes) : undefined;
  }

  private removeChunks(documentId: number): number {
    const ids = this.stmts.chunkIds.all(documentId) as number[];
    for (const id of ids) {
      this.stmts.deleteFts.run(id);
      this.stmts.deleteVec.run(BigInt(id));
    }
    this.stmts.deleteChunks.run(documentId);
    return ids.length;
  }
}

/**
 * Removes every document of the folder `root`, with its chunks, their index rows and
 * the folder's skipped files, in one transaction; returns how many documents and
 * chunks went. Sessions are kept.
 */
export function removeFolder(db: Db, root: string): { documents: number; chunks: number } {
  const writer = new DocumentWriter(db);
  return db.transaction(() => {
    const ids = db.prepare('SELECT id FROM documents WHERE root = ?').pluck().all(root) as number[];
    let chunks = 0;
    for (const id of ids) chunks += writer.deleteDocument(id);
    db.prepare('DELETE FROM skipped_files WHERE root = ?').run(root);
    return { documents: ids.length, chunks };
  }).immediate();
}

/** Drops every document, chunk and index row; sessions are kept. */
export function clearIndex(db: Db): void {
  db.transaction(() => {
    // 'delete-all', not DELETE: a contentless table cannot take its rows' tokens out of
    // its totals, so after a DELETE the next rows were counted on top of the old ones
    // and bm25 weighed every term by twice the row count (MTRAG FiQA R@5 0.163 after
    // --reindex, 0.169 fresh).
    db.exec("INSERT INTO chunks_fts (chunks_fts) VALUES ('delete-all')");
    db.exec("DELETE FROM chunks; DELETE FROM documents; DELETE FROM skipped_files; DELETE FROM meta WHERE key = 'index.fingerprint';");
    db.exec('DROP TABLE IF EXISTS vec_chunks');
  }).immediate();
}

/**
 * The rows the keyword index's totals count (FTS5's averages record: the row count that
 * bm25's idf and average length divide by). On this contentless table a deleted row is
 * not taken out of it, so it runs ahead of the live rows until the index is rewritten.
 */
export function keywordTotalRows(db: Db): number {
  return parseKeywordTotals(db.prepare('SELECT block FROM chunks_fts_data WHERE id = 1').pluck().get() as Buffer | undefined)[0];
}

/** Columns of chunks_fts (title, body). */
const KEYWORD_COLUMNS = 2;

/**
 * FTS5's totals record (chunks_fts_data id 1): the row count, then the token total of
 * each column, as varints. Returns [rows, tokens of all columns]; [0, 0] when absent.
 */
export function parseKeywordTotals(block: Buffer | undefined): [number, number] {
  const values: number[] = [];
  for (let at = 0; block && at < block.length && values.length < 1 + KEYWORD_COLUMNS; ) {
    const [value, next] = readVarint(block, at);
    values.push(value);
    at = next;
  }
  return [values[0] ?? 0, values.slice(1).reduce((a, b) => a + b, 0)];
}

/** An SQLite varint (big-endian 7-bit groups, the 9th byte whole) at `at`: its value and the offset after it. */
function readVarint(block: Buffer, at: number): [number, number] {
  let value = 0;
  for (let i = 0; i < 8 && at < block.length; i++) {
    const byte = block[at++]!;
    value = value * 128 + (byte & 0x7f);
    if (byte < 0x80) return [value, at];
  }
  return [value * 256 + (block[at] ?? 0), at + 1];
}

/** A file that was read and skipped for its content, as it was then. */
export interface SkippedFile {
  size: number;
  mtimeMs: number;
  reason: string;
}

/** The files of `root` skipped for their content, by relative path. */
export function listSkippedFiles(db: Db, root: string): Map<string, SkippedFile> {
  const rows = db.prepare('SELECT path, size, mtime_ms AS mtimeMs, reason FROM skipped_files WHERE root = ?').all(root) as (SkippedFile & { path: string })[];
  return new Map(rows.map(({ path, ...file }) => [path, file]));
}

/** Records `remember` (replacing what was recorded for the same paths) and forgets `forget`, in one transaction. */
export function updateSkippedFiles(db: Db, root: string, remember: Map<string, SkippedFile>, forget: Iterable<string>): void {
  const insert = db.prepare('INSERT OR REPLACE INTO skipped_files (root, path, size, mtime_ms, reason) VALUES (?, ?, ?, ?, ?)');
  const remove = db.prepare('DELETE FROM skipped_files WHERE root = ? AND path = ?');
  db.transaction(() => {
    for (const path of forget) remove.run(root, path);
    for (const [path, file] of remember) insert.run(root, path, file.size, file.mtimeMs, file.reason);
  })();
}

export interface IndexCounts {
  documents: number;
  chunks: number;
  ftsRows: number;
  vectors: number;
}

export function indexCounts(db: Db): IndexCounts {
  const one = (sql: string) => (db.prepare(sql).get() as { n: number }).n;
  const hasVec = db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'vec_chunks'").get() !== undefined;
  return {
    documents: one('SELECT count(*) AS n FROM documents'),
    chunks: one('SELECT count(*) AS n FROM chunks'),
    ftsRows: one('SELECT count(*) AS n FROM chunks_fts'),
    vectors: hasVec ? one('SELECT count(*) AS n FROM vec_chunks') : 0,
  };
}
