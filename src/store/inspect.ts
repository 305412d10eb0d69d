// Read-only facts about a database that `stats`, `doctor` and the judgment views
// show: row counts, versions and a lookup of indexed paths.

import type { ChunkSpan } from '../domain/index.js';
import type { Db } from './db.js';

/** Stored sessions and turns. */
export function conversationCounts(db: Db): { sessions: number; turns: number } {
  const sessions = (db.prepare('SELECT count(*) AS n FROM sessions').get() as { n: number }).n;
  const turns = (db.prepare('SELECT count(*) AS n FROM turns').get() as { n: number }).n;
  return { sessions, turns };
}

/** The chunks the documents rows say they have (compared with the chunks table by `doctor`). */
export function documentChunkTotal(db: Db): number {
  return (db.prepare('SELECT coalesce(sum(chunk_count), 0) AS n FROM documents').get() as { n: number }).n;
}

/** The versions of SQLite and sqlite-vec this database runs on. */
export function sqliteVersions(db: Db): { sqlite: string; sqliteVec: string } {
  const row = db.prepare('SELECT sqlite_version() AS sqlite, vec_version() AS vec').get() as { sqlite: string; vec: string };
  return { sqlite: row.sqlite, sqliteVec: row.vec };
}

/** The schema version recorded in the file (`PRAGMA user_version`). */
export function schemaVersion(db: Db): number {
  return db.pragma('user_version', { simple: true }) as number;
}

/** Tells whether a document path is in the index (for "not indexed" marks). */
export function indexedPathLookup(db: Db): (documentPath: string) => boolean {
  const lookup = db.prepare('SELECT 1 FROM documents WHERE path = ? LIMIT 1').pluck();
  return (documentPath) => lookup.get(documentPath) !== undefined;
}

export interface IndexedDocument {
  path: string;
  title: string | null;
  kind: string;
}

/** Every ingested document, by path. */
export function listDocumentPaths(db: Db): IndexedDocument[] {
  return db.prepare('SELECT path, max(title) AS title, max(kind) AS kind FROM documents GROUP BY path ORDER BY path').all() as IndexedDocument[];
}

/** The document most recently ingested under `path`. */
export function latestDocument(db: Db, path: string): (IndexedDocument & { id: number }) | undefined {
  return db
    .prepare('SELECT id, path, title, kind FROM documents WHERE path = ? ORDER BY ingested_at DESC, id DESC LIMIT 1')
    .get(path) as (IndexedDocument & { id: number }) | undefined;
}

/** A document's chunks in order, with the lines (or pages) each covers. */
export function documentChunks(db: Db, documentId: number): (ChunkSpan & { text: string })[] {
  return db
    .prepare('SELECT text, start_line AS startLine, end_line AS endLine, locator FROM chunks WHERE document_id = ? ORDER BY ordinal')
    .all(documentId) as (ChunkSpan & { text: string })[];
}
