// The reads a replay makes of the chunks table to tell where a stored chunk stands
// today (../replay/index-state.ts): on an SQLite file, prepared statements; on
// Postgres, the rows of the text hashes a session's turns hold, read beforehand.

import type { Db } from './db.js';

/**
 * The reads a lookup makes of the chunks table: prepared statements on an SQLite
 * file, or (Postgres) the rows of the text hashes asked about, read beforehand.
 */
export interface ChunkHashes {
  /** Whether document `documentId` holds a chunk with this text. */
  indexed(textHash: string, documentId: number): boolean;
  /** The documents holding a chunk with this text, in ingest order. */
  holders(textHash: string): { id: number; root: string; path: string }[];
}

export function sqliteChunkHashes(db: Db): ChunkHashes {
  const chunkIndexed = db.prepare('SELECT 1 FROM chunks WHERE text_hash = ? AND document_id = ? LIMIT 1').pluck();
  const holders = db.prepare('SELECT DISTINCT d.id AS id, d.root AS root, d.path AS path FROM chunks c JOIN documents d ON d.id = c.document_id WHERE c.text_hash = ? ORDER BY d.id');
  return {
    indexed: (textHash, documentId) => chunkIndexed.get(textHash, documentId) !== undefined,
    holders: (textHash) => holders.all(textHash) as { id: number; root: string; path: string }[],
  };
}

/** ChunkHashes over the rows read already: each (text hash, document) pair the index holds. */
export function chunkHashesOf(rows: readonly { textHash: string; id: number; root: string; path: string }[]): ChunkHashes {
  const byHash = new Map<string, { id: number; root: string; path: string }[]>();
  for (const row of rows) {
    const list = byHash.get(row.textHash) ?? [];
    if (!list.some((doc) => doc.id === row.id)) list.push({ id: row.id, root: row.root, path: row.path });
    byHash.set(row.textHash, list);
  }
  for (const list of byHash.values()) list.sort((a, b) => a.id - b.id);
  return {
    indexed: (textHash, documentId) => byHash.get(textHash)?.some((doc) => doc.id === documentId) ?? false,
    holders: (textHash) => byHash.get(textHash) ?? [],
  };
}
