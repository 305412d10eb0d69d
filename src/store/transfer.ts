// What `ragline migrate` copies between two stores, row by row: the index (documents,
// their chunks with their vectors) and the sessions (turns, the chunks each turn
// retrieved, judgments). This file holds the rows' shape, shared by both stores, and
// the SQLite side; ./postgres/transfer.ts is the Postgres side. Timestamps travel as
// ISO 8601 text and a turn's JSON as the text it was written as, so nothing is
// reformatted on the way.

import type { Db } from './db.js';
import { getFingerprint, getMeta, setFingerprint, setReaderVersion, type IndexFingerprint } from './meta.js';
import { DocumentWriter, type NewChunk } from './documents.js';
import { bytesToVector, createVectorTable, hasVectorTable } from './vectors.js';
import { UserError } from '../util/errors.js';
import type { SessionInfo } from './sessions.js';

/** A turn's columns as both stores have them, but its id and session. */
export const TURN_COLUMNS = [
  'ordinal', 'created_at', 'finished_at', 'status', 'error', 'question', 'standalone_query', 'rewrite_decision', 'rewrite_reason', 'rewrite_error',
  'answer', 'answer_kind', 'rewrite_model', 'chat_model', 'embed_model', 'prompt_json', 'rewrite_prompt_json', 'settings_json', 'timings_json',
  'usage_json', 'topics_json', 'summary', 'summary_through', 'judged_at', 'judged_none',
] as const;

/** A retrieved chunk's columns in turn_chunks, but its turn. */
export const TURN_CHUNK_COLUMNS = ['rank', 'chunk_id', 'document_path', 'start_line', 'end_line', 'locator', 'heading', 'text_hash', 'score', 'vector_rank', 'vector_distance', 'keyword_rank', 'bm25'] as const;

export interface TransferDocument {
  root: string;
  path: string;
  kind: string;
  title: string | null;
  contentHash: string;
  size: number;
  mtimeMs: number;
  ingestedAt: string;
}

export interface TransferChunk {
  ordinal: number;
  heading: string;
  text: string;
  startLine: number;
  endLine: number;
  locator: string;
  textHash: string;
  /** What the keyword index holds of it; absent where the store keeps no copy (SQLite's FTS5 table is contentless). */
  keyword?: { title: string; body: string };
  vector?: Float32Array;
}

export type TurnRowValues = Record<(typeof TURN_COLUMNS)[number], string | number | boolean | null>;
export type TurnChunkRowValues = Record<(typeof TURN_CHUNK_COLUMNS)[number], string | number | null>;

export interface TransferTurn {
  row: TurnRowValues;
  chunks: TurnChunkRowValues[];
  /** Judged documents, in the order they were judged. */
  relevant: { document_path: string; source: string; chunk_rank: number | null }[];
}

/** A session as it is copied: its row, and its turns. */
export interface TransferSession extends SessionInfo {
  turns: TransferTurn[];
}

export interface TransferCounts {
  documents: number;
  chunks: number;
  vectors: number;
  sessions: number;
  turns: number;
  turnChunks: number;
  judgedDocuments: number;
}

/** One side of a migration: what it holds, read, or written in one transaction. */
export interface TransferStore {
  fingerprint(): Promise<IndexFingerprint | undefined>;
  /** The reader version each folder was last read with (SQLite keeps it; a re-ingest reads a folder read by an older reader again); undefined where not kept. */
  readerVersions(): Promise<Record<string, number> | undefined>;
  counts(): Promise<TransferCounts>;
  documents(): AsyncIterable<{ document: TransferDocument; chunks: TransferChunk[] }>;
  sessions(): AsyncIterable<TransferSession>;
  /** The ids and names of the sessions it holds (of the user, on Postgres). */
  sessionKeys(): Promise<{ ids: Set<string>; names: Set<string> }>;
  /**
   * Writes everything in one transaction: the documents (one at the same folder and
   * path replaced), then the sessions as they were (ids, names, times). `progress` is
   * called after each document and each session.
   */
  write(fingerprint: IndexFingerprint | undefined, readerVersions: Record<string, number> | undefined, documents: AsyncIterable<{ document: TransferDocument; chunks: TransferChunk[] }>, sessions: AsyncIterable<TransferSession>, progress: (what: 'document' | 'session') => void): Promise<void>;
}

/** The SQLite file's side. */
export function sqliteTransfer(db: Db): TransferStore {
  return {
    fingerprint: async () => getFingerprint(db),
    readerVersions: async () => {
      const raw = getMeta(db, 'ingest.reader');
      return raw ? (JSON.parse(raw) as Record<string, number>) : undefined;
    },
    counts: async () => {
      const one = (sql: string) => (db.prepare(sql).pluck().get() as number) ?? 0;
      return {
        documents: one('SELECT count(*) FROM documents'),
        chunks: one('SELECT count(*) FROM chunks'),
        vectors: hasVectorTable(db) ? one('SELECT count(*) FROM vec_chunks') : 0,
        sessions: one('SELECT count(*) FROM sessions'),
        turns: one('SELECT count(*) FROM turns'),
        turnChunks: one('SELECT count(*) FROM turn_chunks'),
        judgedDocuments: one('SELECT count(*) FROM turn_relevant'),
      };
    },
    async *documents() {
      const docs = db
        .prepare(
          `SELECT id, root, path, kind, title, content_hash AS contentHash, size, mtime_ms AS mtimeMs, ingested_at AS ingestedAt FROM documents ORDER BY id`,
        )
        .all() as (TransferDocument & { id: number })[];
      const chunks = db.prepare(
        `SELECT id, ordinal, heading, text, start_line AS startLine, end_line AS endLine, locator, text_hash AS textHash FROM chunks WHERE document_id = ? ORDER BY ordinal`,
      );
      const vector = hasVectorTable(db) ? db.prepare('SELECT embedding FROM vec_chunks WHERE rowid = ?').pluck() : undefined;
      for (const { id, ...document } of docs) {
        const rows = chunks.all(id) as (TransferChunk & { id: number })[];
        yield {
          document,
          chunks: rows.map(({ id: chunkId, ...chunk }) => {
            const bytes = vector?.get(BigInt(chunkId)) as Buffer | undefined;
            return bytes ? { ...chunk, vector: bytesToVector(bytes) } : chunk;
          }),
        };
      }
    },
    async *sessions() {
      const sessions = db
        .prepare(
          `SELECT id, name, created_at AS createdAt, updated_at AS updatedAt, parent_session_id AS parentSessionId, parent_turn AS parentTurn FROM sessions ORDER BY rowid`,
        )
        .all() as Omit<TransferSession, 'turns'>[];
      const turns = db.prepare(`SELECT id, ${TURN_COLUMNS.join(', ')} FROM turns WHERE session_id = ? ORDER BY ordinal`);
      const chunks = db.prepare(`SELECT ${TURN_CHUNK_COLUMNS.join(', ')} FROM turn_chunks WHERE turn_id = ? ORDER BY rank`);
      const relevant = db.prepare('SELECT document_path, source, chunk_rank FROM turn_relevant WHERE turn_id = ? ORDER BY rowid');
      for (const session of sessions) {
        const rows = turns.all(session.id) as (TurnRowValues & { id: number })[];
        yield {
          ...session,
          turns: rows.map(({ id, ...row }) => ({
            row: { ...row, judged_none: row.judged_none === 1 },
            chunks: chunks.all(id) as TurnChunkRowValues[],
            relevant: relevant.all(id) as TransferTurn['relevant'],
          })),
        };
      }
    },
    sessionKeys: async () => {
      const rows = db.prepare('SELECT id, name FROM sessions').all() as { id: string; name: string | null }[];
      return { ids: new Set(rows.map((row) => row.id)), names: new Set(rows.flatMap((row) => (row.name === null ? [] : [row.name]))) };
    },
    async write(fingerprint, readerVersions, documents, sessions, progress) {
      // Gathered first: the writes are one synchronous transaction.
      const docs: { document: TransferDocument; chunks: TransferChunk[] }[] = [];
      for await (const doc of documents) docs.push(doc);
      const all: TransferSession[] = [];
      for await (const session of sessions) all.push(session);
      db.transaction(() => {
        if (fingerprint && docs.length > 0) {
          const stored = getFingerprint(db);
          const holds = (db.prepare('SELECT count(*) FROM chunks').pluck().get() as number) > 0;
          if (stored && holds && (stored.embedder !== fingerprint.embedder || stored.dimensions !== fingerprint.dimensions)) {
            throw new UserError(`The target index was built with ${stored.embedder} (${stored.dimensions} dimensions); the source's with ${fingerprint.embedder} (${fingerprint.dimensions}).`, {
              hint: 'Migrate into an empty database.',
              exitCode: 2,
            });
          }
          if (!hasVectorTable(db)) createVectorTable(db, fingerprint.dimensions);
          setFingerprint(db, fingerprint);
        }
        const writer = new DocumentWriter(db);
        const setIngested = db.prepare('UPDATE documents SET ingested_at = ? WHERE root = ? AND path = ?');
        for (const { document, chunks } of docs) {
          writer.replaceDocument(
            { root: document.root, path: document.path, kind: document.kind, title: document.title ?? undefined, contentHash: document.contentHash, size: document.size, mtimeMs: document.mtimeMs },
            chunks.map((chunk) => {
              if (!chunk.keyword || !chunk.vector) throw new Error(`chunk ${chunk.ordinal} of ${document.path} has no keyword text or vector`);
              return { heading: chunk.heading, text: chunk.text, startLine: chunk.startLine, endLine: chunk.endLine, locator: chunk.locator as NewChunk['locator'], textHash: chunk.textHash, fts: chunk.keyword, vector: chunk.vector };
            }),
          );
          setIngested.run(document.ingestedAt, document.root, document.path);
          progress('document');
        }
        // Each folder as read: the next ingest does not read its files again for a reader it was read with.
        for (const [root, version] of Object.entries(readerVersions ?? {})) if (docs.some(({ document }) => document.root === root)) setReaderVersion(db, root, version);
        const insertSession = db.prepare('INSERT INTO sessions (id, name, created_at, updated_at, parent_session_id, parent_turn) VALUES (?, ?, ?, ?, NULL, ?)');
        const setParent = db.prepare('UPDATE sessions SET parent_session_id = ? WHERE id = ?');
        const insertTurn = db.prepare(`INSERT INTO turns (session_id, ${TURN_COLUMNS.join(', ')}) VALUES (?, ${TURN_COLUMNS.map(() => '?').join(', ')})`);
        const insertChunk = db.prepare(`INSERT INTO turn_chunks (turn_id, ${TURN_CHUNK_COLUMNS.join(', ')}) VALUES (?, ${TURN_CHUNK_COLUMNS.map(() => '?').join(', ')})`);
        const insertRelevant = db.prepare('INSERT INTO turn_relevant (turn_id, document_path, source, chunk_rank) VALUES (?, ?, ?, ?)');
        for (const session of all) {
          insertSession.run(session.id, session.name, session.createdAt, session.updatedAt, session.parentTurn);
          for (const turn of session.turns) {
            const values = TURN_COLUMNS.map((column) => (column === 'judged_none' ? (turn.row.judged_none ? 1 : 0) : turn.row[column]));
            const turnId = Number(insertTurn.run(session.id, ...values).lastInsertRowid);
            for (const chunk of turn.chunks) insertChunk.run(turnId, ...TURN_CHUNK_COLUMNS.map((column) => chunk[column]));
            for (const doc of turn.relevant) insertRelevant.run(turnId, doc.document_path, doc.source, doc.chunk_rank);
          }
          progress('session');
        }
        // Parents once every session is in (a fork may come before its parent).
        const ids = new Set(all.map((session) => session.id));
        for (const session of all) if (session.parentSessionId && ids.has(session.parentSessionId)) setParent.run(session.parentSessionId, session.id);
      }).immediate();
    },
  };
}
