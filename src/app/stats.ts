// What is in a workspace's database.

import fs from 'node:fs';
import { indexCounts, storedFolders, type StoredFolder } from '../store/documents.js';
import { conversationCounts } from '../store/inspect.js';
import { getFingerprint, getLastIngest, type IndexFingerprint, type LastIngest } from '../store/meta.js';
import { SCHEMA_VERSION } from '../store/migrations.js';
import type { Workspace } from './workspace.js';

export interface Stats {
  db: string;
  schemaVersion: number;
  /** The database file and its write-ahead log. */
  sizeBytes: number;
  documents: number;
  chunks: number;
  /** Every folder the index holds (absolute), in path order, with its documents and chunks. */
  folders: StoredFolder[];
  embedder: string | null;
  dimensions: number | null;
  chunker: IndexFingerprint['chunker'] | null;
  sessions: number;
  turns: number;
  /** The last ingest that changed something. */
  lastIngest: Pick<LastIngest, 'root' | 'only' | 'finishedAt' | 'seconds'> | null;
  /** On Postgres: how keyword search runs (pg_textsearch's BM25, or full-text search ranked with ts_rank_cd). */
  keywordSearch?: 'bm25' | 'fts';
}

/** `stats` on either store: the database named without its password on Postgres. */
export async function statsOf(workspace: Workspace): Promise<Stats> {
  if (!workspace.postgres) return stats(workspace);
  const { pgInventory } = await import('../store/postgres/inspect.js');
  const { redactedUrl } = await import('../store/postgres/store.js');
  const found = await pgInventory(workspace.postgres);
  return {
    db: redactedUrl(workspace.config.db),
    schemaVersion: found.schemaVersion,
    sizeBytes: found.sizeBytes,
    documents: found.documents,
    chunks: found.chunks,
    folders: found.folders,
    embedder: found.fingerprint?.embedder ?? null,
    dimensions: found.fingerprint?.dimensions ?? null,
    chunker: found.fingerprint?.chunker ?? null,
    sessions: found.sessions,
    turns: found.turns,
    lastIngest: found.lastIngest ?? null,
    keywordSearch: found.keywordMethod,
  };
}

export function stats(workspace: Workspace): Stats {
  const { db } = workspace;
  const counts = indexCounts(db);
  const fingerprint = getFingerprint(db);
  const { sessions, turns } = conversationCounts(db);
  const file = workspace.config.db;
  const lastIngest = getLastIngest(db);
  return {
    db: file,
    schemaVersion: SCHEMA_VERSION,
    sizeBytes: fileSize(file),
    documents: counts.documents,
    chunks: counts.chunks,
    folders: storedFolders(db),
    embedder: fingerprint?.embedder ?? null,
    dimensions: fingerprint?.dimensions ?? null,
    chunker: fingerprint?.chunker ?? null,
    sessions,
    turns,
    lastIngest: lastIngest ? { root: lastIngest.root, ...(lastIngest.only ? { only: lastIngest.only } : {}), finishedAt: lastIngest.finishedAt, seconds: lastIngest.seconds } : null,
  };
}

/** Bytes of a database file with its write-ahead log. */
export function fileSize(file: string): number {
  return ['', '-wal'].reduce((sum, suffix) => sum + (fs.existsSync(file + suffix) ? fs.statSync(file + suffix).size : 0), 0);
}

/** Whether anything is indexed: a chat over an empty index can only answer that nothing matched. */
export function hasChunks(workspace: Workspace): boolean {
  return workspace.db.prepare('SELECT EXISTS (SELECT 1 FROM chunks) AS found').pluck().get() === 1;
}

/** hasChunks on either store. */
export async function hasChunksIn(workspace: Workspace): Promise<boolean> {
  if (!workspace.postgres) return hasChunks(workspace);
  return (await workspace.postgres.query('SELECT 1 FROM ragline.chunks LIMIT 1')).length > 0;
}
