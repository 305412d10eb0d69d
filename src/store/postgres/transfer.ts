// The Postgres side of `ragline migrate` (../transfer.ts): the shared index, and the
// sessions of one user (the `user` setting, else the role), read or written. Every
// write of a migration is one transaction (IndexWriteTransaction): another process
// sees the whole copy or none of it.

import { IndexWriteTransaction, pgFingerprint } from './index-writes.js';
import type { PostgresStore } from './store.js';
import { TURN_CHUNK_COLUMNS, TURN_COLUMNS, type TransferChunk, type TransferCounts, type TransferDocument, type TransferSession, type TransferStore, type TransferTurn, type TurnChunkRowValues, type TurnRowValues } from '../transfer.js';

const iso = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
const JSON_COLUMNS = new Set(['prompt_json', 'rewrite_prompt_json', 'settings_json', 'timings_json', 'usage_json', 'topics_json']);
const TIME_COLUMNS = new Set(['created_at', 'finished_at', 'judged_at']);
/** A turn's columns read as text where the SQLite store keeps text: times as ISO, JSON as written. */
const TURN_SELECT = TURN_COLUMNS.map((column) => (TIME_COLUMNS.has(column) ? `${iso(column)} AS ${column}` : JSON_COLUMNS.has(column) ? `${column}::text AS ${column}` : column)).join(', ');

export function postgresTransfer(store: PostgresStore, owner: string): TransferStore {
  return {
    fingerprint: () => pgFingerprint(store),
    // Postgres keeps no reader version: a file copied from it to a file is read again once by the next ingest there.
    readerVersions: async () => undefined,
    counts: async () => {
      const vectors = (await store.meta('vector_dimensions')) !== undefined;
      const rows = await store.query<TransferCounts>(
        `SELECT (SELECT count(*)::int FROM ragline.documents) AS documents, (SELECT count(*)::int FROM ragline.chunks) AS chunks,
                ${vectors ? '(SELECT count(embedding)::int FROM ragline.chunks)' : '0'} AS vectors,
                (SELECT count(*)::int FROM ragline.sessions WHERE owner = $1) AS sessions,
                (SELECT count(*)::int FROM ragline.turns t JOIN ragline.sessions s ON s.id = t.session_id WHERE s.owner = $1) AS turns,
                (SELECT count(*)::int FROM ragline.turn_chunks c JOIN ragline.turns t ON t.id = c.turn_id JOIN ragline.sessions s ON s.id = t.session_id WHERE s.owner = $1) AS "turnChunks",
                (SELECT count(*)::int FROM ragline.turn_relevant r JOIN ragline.turns t ON t.id = r.turn_id JOIN ragline.sessions s ON s.id = t.session_id WHERE s.owner = $1) AS "judgedDocuments"`,
        [owner],
      );
      return rows[0]!;
    },
    async *documents() {
      const vectors = (await store.meta('vector_dimensions')) !== undefined;
      const docs = await store.query<TransferDocument & { id: number }>(
        `SELECT id, root, path, kind, title, content_hash AS "contentHash", size, mtime_ms AS "mtimeMs", ${iso('ingested_at')} AS "ingestedAt" FROM ragline.documents ORDER BY id`,
      );
      for (const { id, ...document } of docs) {
        const rows = await store.query<Omit<TransferChunk, 'keyword' | 'vector'> & { keywordTitle: string; keywordBody: string; embedding: string | null }>(
          `SELECT ordinal, heading, text, start_line AS "startLine", end_line AS "endLine", locator, text_hash AS "textHash",
                  keyword_title AS "keywordTitle", keyword_body AS "keywordBody", ${vectors ? 'embedding::text' : 'NULL'} AS embedding
           FROM ragline.chunks WHERE document_id = $1 ORDER BY ordinal`,
          [id],
        );
        yield {
          document,
          chunks: rows.map(({ keywordTitle, keywordBody, embedding, ...chunk }) => ({
            ...chunk,
            keyword: { title: keywordTitle, body: keywordBody },
            ...(embedding === null ? {} : { vector: Float32Array.from(JSON.parse(embedding) as number[]) }),
          })),
        };
      }
    },
    async *sessions() {
      const sessions = await store.query<Omit<TransferSession, 'turns'>>(
        `SELECT id, name, ${iso('created_at')} AS "createdAt", ${iso('updated_at')} AS "updatedAt", parent_session_id AS "parentSessionId", parent_turn AS "parentTurn"
         FROM ragline.sessions WHERE owner = $1 ORDER BY created_at, id`,
        [owner],
      );
      for (const session of sessions) {
        const turns: TransferTurn[] = [];
        for (const { id, ...row } of await store.query<TurnRowValues & { id: number }>(`SELECT id, ${TURN_SELECT} FROM ragline.turns WHERE session_id = $1 ORDER BY ordinal`, [session.id])) {
          turns.push({
            row,
            chunks: await store.query<TurnChunkRowValues>(`SELECT ${TURN_CHUNK_COLUMNS.join(', ')} FROM ragline.turn_chunks WHERE turn_id = $1 ORDER BY rank`, [id]),
            relevant: await store.query<TransferTurn['relevant'][number]>('SELECT document_path, source, chunk_rank FROM ragline.turn_relevant WHERE turn_id = $1 ORDER BY id', [id]),
          });
        }
        yield { ...session, turns };
      }
    },
    sessionKeys: async () => {
      // Ids are unique across users; names per user.
      const rows = await store.query<{ id: string; name: string | null; mine: boolean }>('SELECT id, name, owner = $1 AS mine FROM ragline.sessions', [owner]);
      return { ids: new Set(rows.map((row) => row.id)), names: new Set(rows.flatMap((row) => (row.mine && row.name !== null ? [row.name] : []))) };
    },
    async write(fingerprint, _readerVersions, documents, sessions, progress) {
      const tx = await IndexWriteTransaction.begin(store, fingerprint);
      try {
        for await (const { document, chunks } of documents) {
          await tx.writeDocument(
            { root: document.root, path: document.path, kind: document.kind, title: document.title ?? undefined, contentHash: document.contentHash, size: document.size, mtimeMs: document.mtimeMs },
            chunks.map((chunk) => {
              if (!chunk.keyword || !chunk.vector) throw new Error(`chunk ${chunk.ordinal} of ${document.path} has no keyword text or vector`);
              return { heading: chunk.heading, text: chunk.text, startLine: chunk.startLine, endLine: chunk.endLine, locator: chunk.locator as 'line', textHash: chunk.textHash, keyword: chunk.keyword, vector: chunk.vector };
            }),
          );
          await tx.query('UPDATE ragline.documents SET ingested_at = $3 WHERE root = $1 AND path = $2', [document.root, document.path, document.ingestedAt]);
          progress('document');
        }
        const written: TransferSession[] = [];
        for await (const session of sessions) {
          await tx.query('INSERT INTO ragline.sessions (id, owner, name, created_at, updated_at, parent_turn) VALUES ($1, $2, $3, $4, $5, $6)', [
            session.id,
            owner,
            session.name,
            session.createdAt,
            session.updatedAt,
            session.parentTurn,
          ]);
          for (const turn of session.turns) {
            const values = TURN_COLUMNS.map((column) => turn.row[column]);
            const turnId = (
              await tx.query<{ id: number }>(
                `INSERT INTO ragline.turns (session_id, ${TURN_COLUMNS.join(', ')}) VALUES ($1, ${TURN_COLUMNS.map((_, i) => `$${i + 2}`).join(', ')}) RETURNING id`,
                [session.id, ...values],
              )
            )[0]!.id;
            for (const chunk of turn.chunks) {
              await tx.query(`INSERT INTO ragline.turn_chunks (turn_id, ${TURN_CHUNK_COLUMNS.join(', ')}) VALUES ($1, ${TURN_CHUNK_COLUMNS.map((_, i) => `$${i + 2}`).join(', ')})`, [
                turnId,
                ...TURN_CHUNK_COLUMNS.map((column) => chunk[column]),
              ]);
            }
            for (const doc of turn.relevant) {
              await tx.query('INSERT INTO ragline.turn_relevant (turn_id, document_path, source, chunk_rank) VALUES ($1, $2, $3, $4)', [turnId, doc.document_path, doc.source, doc.chunk_rank]);
            }
          }
          written.push(session);
          progress('session');
        }
        // Parents once every session is in (a fork may come before its parent).
        const ids = new Set(written.map((session) => session.id));
        for (const session of written) {
          if (session.parentSessionId && ids.has(session.parentSessionId)) await tx.query('UPDATE ragline.sessions SET parent_session_id = $1 WHERE id = $2', [session.parentSessionId, session.id]);
        }
        await tx.commit();
      } catch (error) {
        await tx.rollback();
        throw error;
      }
    },
  };
}
