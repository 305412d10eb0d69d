// Read-only facts about a database that `stats`, `doctor` and the judgment views
// show: row counts, versions and a lookup of indexed paths.

import type { ChunkSpan } from '../domain/index.js';
import type { Db } from './db.js';
import { DocumentNaming } from './document-names.js';

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

/** Tells whether a document name (a path, with its folder's name before it when folders share it) is in the index. */
export function indexedPathLookup(db: Db): (documentPath: string) => boolean {
  const names = new DocumentNaming(db);
  return (documentPath) => names.find(documentPath).length > 0;
}

/** A document's chunks in order, with the lines (or pages) each covers. */
export function documentChunks(db: Db, documentId: number): (ChunkSpan & { text: string })[] {
  return db
    .prepare('SELECT text, start_line AS startLine, end_line AS endLine, locator FROM chunks WHERE document_id = ? ORDER BY ordinal')
    .all(documentId) as (ChunkSpan & { text: string })[];
}
