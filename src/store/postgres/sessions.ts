// Sessions and turns in Postgres, each session with its owner: a user sees and
// continues only their own (the index is shared). A turn is stored as the SQLite
// store stores it (../sessions.ts): the question first, as a pending turn (with
// its session, when that was only planned), then its whole trail in one
// transaction, so no turn is ever half-written.

import type { PoolClient } from 'pg';
import { turnChunkValues, type HistoryTurn, type SessionInfo, type SessionListing, type StartedTurn, type FinishTurnInput } from '../sessions.js';
import type { Topic, TurnTimings } from '../../domain/index.js';
import { UserError } from '../../util/errors.js';
import type { PostgresStore } from './store.js';

const SESSION_COLUMNS = `id, name, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "createdAt",
  to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "updatedAt",
  parent_session_id AS "parentSessionId", parent_turn AS "parentTurn"`;

/** A session of `owner` by id, name or `last`. */
export async function pgFindSession(store: PostgresStore, owner: string, ref: string): Promise<SessionInfo | undefined> {
  const rows =
    ref === 'last'
      ? await store.query<SessionInfo>(`SELECT ${SESSION_COLUMNS} FROM ragline.sessions WHERE owner = $1 ORDER BY updated_at DESC, id LIMIT 1`, [owner])
      : await store.query<SessionInfo>(`SELECT ${SESSION_COLUMNS} FROM ragline.sessions WHERE owner = $1 AND (id = $2 OR name = $2) ORDER BY (id = $2) DESC LIMIT 1`, [owner, ref]);
  return rows[0];
}

/** The sessions of `owner`, most recently active first. */
export async function pgListSessions(store: PostgresStore, owner: string): Promise<SessionListing[]> {
  return store.query<SessionListing>(
    `SELECT ${SESSION_COLUMNS}, count(t.id)::int AS turns,
            to_char(coalesce(max(t.created_at), s.created_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "lastActive",
            (SELECT question FROM ragline.turns f WHERE f.session_id = s.id ORDER BY ordinal LIMIT 1) AS "firstQuestion"
     FROM ragline.sessions s LEFT JOIN ragline.turns t ON t.session_id = s.id
     WHERE s.owner = $1 GROUP BY s.id ORDER BY max(coalesce(t.created_at, s.created_at)) DESC, s.id`,
    [owner],
  );
}

/**
 * Stores `question` as the next pending turn of `sessionId` (of `owner`), creating
 * the session first when it is `create`, the planned one. Two turns asked at once
 * in one session get two ordinals: the session row is locked until the turn is in.
 */
export async function pgStartTurn(store: PostgresStore, owner: string, sessionId: string, question: string, create?: SessionInfo): Promise<StartedTurn> {
  return store.transaction(async (client) => {
    const found = await client.query<{ owner: string }>('SELECT owner FROM ragline.sessions WHERE id = $1 FOR UPDATE', [sessionId]);
    if (found.rows.length === 0 || found.rows[0]!.owner !== owner) {
      if (found.rows.length > 0 || !create || create.id !== sessionId) throw new UserError(`No session with the id "${sessionId}".`, { exitCode: 2 });
      const inserted = await client.query(
        `INSERT INTO ragline.sessions (id, owner, name) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING id`,
        [sessionId, owner, create.name],
      );
      if (inserted.rowCount === 0) {
        throw new UserError(create.name ? `A session named "${create.name}" already exists.` : `A session with the id "${sessionId}" already exists.`, { exitCode: 2 });
      }
      await client.query('SELECT 1 FROM ragline.sessions WHERE id = $1 FOR UPDATE', [sessionId]);
    }
    const { rows } = await client.query<{ id: number; ordinal: number; createdAt: string }>(
      `INSERT INTO ragline.turns (session_id, ordinal, status, question)
       VALUES ($1, (SELECT coalesce(max(ordinal), 0) + 1 FROM ragline.turns WHERE session_id = $1), 'pending', $2)
       RETURNING id, ordinal, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "createdAt"`,
      [sessionId, question],
    );
    await client.query('UPDATE ragline.sessions SET updated_at = now() WHERE id = $1', [sessionId]);
    return rows[0]!;
  });
}

/** Records how a turn ended, with its whole trail, in one transaction (as finishTurn on SQLite). */
export async function pgFinishTurn(store: PostgresStore, turnId: number, input: FinishTurnInput): Promise<TurnTimings> {
  const started = performance.now();
  return store.transaction(async (client) => {
    const { rows } = await client.query<{ session_id: string }>('SELECT session_id FROM ragline.turns WHERE id = $1 FOR UPDATE', [turnId]);
    if (rows.length === 0) {
      throw new UserError('The session was removed by another process while this question was answered: the answer was shown but not saved.', {
        hint: 'Ask it again to keep it: the next question starts a new session.',
      });
    }
    await client.query('DELETE FROM ragline.turn_chunks WHERE turn_id = $1', [turnId]);
    await insertTurnChunks(client, turnId, input);
    const spent = performance.now() - started;
    const timings: TurnTimings = { ...input.timings, persistMs: input.timings.persistMs + spent, totalMs: input.timings.totalMs + spent };
    const json = (value: unknown) => (value === undefined ? null : JSON.stringify(value));
    await client.query(
      `UPDATE ragline.turns SET finished_at = now(), status = $2, error = $3, standalone_query = $4, rewrite_decision = $5, rewrite_reason = $6,
         rewrite_error = $7, answer = $8, answer_kind = $9, rewrite_model = $10, chat_model = $11, embed_model = $12,
         prompt_json = $13, rewrite_prompt_json = $14, settings_json = $15, timings_json = $16, usage_json = $17, topics_json = $18,
         summary = $19, summary_through = $20
       WHERE id = $1`,
      [
        turnId,
        input.status,
        input.error ?? null,
        input.standaloneQuery ?? null,
        input.rewriteDecision ?? null,
        input.rewriteReason ?? null,
        input.rewriteError ?? null,
        input.answer ?? null,
        input.answerKind ?? null,
        input.models.rewrite ?? null,
        input.models.chat ?? null,
        input.models.embed ?? null,
        json(input.prompt),
        json(input.rewritePrompt),
        json(input.settings),
        json(timings),
        json(input.usage),
        json(input.topics),
        input.summary ?? null,
        input.summaryThrough ?? null,
      ],
    );
    await client.query('UPDATE ragline.sessions SET updated_at = now() WHERE id = $1', [rows[0]!.session_id]);
    return timings;
  });
}

async function insertTurnChunks(client: PoolClient, turnId: number, input: FinishTurnInput): Promise<void> {
  if (input.chunks.length === 0) return;
  const values: unknown[] = [];
  const tuples = input.chunks.map((chunk, i) => {
    values.push(...turnChunkValues(turnId, chunk));
    return `(${Array.from({ length: 14 }, (_, j) => `$${i * 14 + j + 1}`).join(', ')})`;
  });
  await client.query(
    `INSERT INTO ragline.turn_chunks (turn_id, rank, chunk_id, document_path, start_line, end_line, locator, heading,
                                      text_hash, score, vector_rank, vector_distance, keyword_rank, bm25)
     VALUES ${tuples.join(', ')}`,
    values,
  );
}

/** What the history of turn `beforeOrdinal` reads: the earlier turns, and the topics and summary as of the latest that stored them. */
export async function pgHistory(
  store: PostgresStore,
  sessionId: string,
  beforeOrdinal: number,
): Promise<{ turns: HistoryTurn[]; state?: { topics: Topic[]; summary: string | null; summaryThrough: number | null } }> {
  return store.transaction(
    async (client) => {
      const turns = (
        await client.query<HistoryTurn>(
          `SELECT id, ordinal, status, question, standalone_query AS "standaloneQuery", answer, answer_kind AS "answerKind"
           FROM ragline.turns WHERE session_id = $1 AND ordinal < $2 ORDER BY ordinal`,
          [sessionId, beforeOrdinal],
        )
      ).rows;
      const state = (
        await client.query<{ topics: Topic[]; summary: string | null; summaryThrough: number | null }>(
          `SELECT topics_json AS topics, summary, summary_through AS "summaryThrough" FROM ragline.turns
           WHERE session_id = $1 AND ordinal < $2 AND topics_json IS NOT NULL ORDER BY ordinal DESC LIMIT 1`,
          [sessionId, beforeOrdinal],
        )
      ).rows[0];
      return { turns, state };
    },
    { isolation: 'repeatable read' },
  );
}

/** Whether a session of this id exists (for any owner). */
export async function pgIsStored(store: PostgresStore, sessionId: string): Promise<boolean> {
  return (await store.query('SELECT 1 FROM ragline.sessions WHERE id = $1', [sessionId])).length > 0;
}
