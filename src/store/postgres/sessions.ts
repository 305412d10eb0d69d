// Sessions and turns in Postgres, each session with its owner: a user sees and
// continues only their own (the index is shared). A turn is stored as the SQLite
// store stores it (../sessions.ts): the question first, as a pending turn (with
// its session, when that was only planned), then its whole trail in one
// transaction, so no turn is ever half-written.

import { randomBytes } from 'node:crypto';
import type { PoolClient } from 'pg';
import {
  nameTakenError,
  planFork,
  toTurn,
  turnChunkValues,
  validSessionName,
  type FinishTurnInput,
  type ForkedSession,
  type HistoryTurn,
  type SessionInfo,
  type SessionListing,
  type StartedTurn,
  type StoredTurn,
  type StoredTurnChunk,
  type TurnRow,
} from '../sessions.js';
import type { TurnStatus } from '../../domain/index.js';
import { noTurnError, type JudgmentChange, type RelevantDocument, type TurnJudgment } from '../judgments.js';
import type { ListedDocumentRow } from '../document-names.js';
import type { PruneOptions, PruneReport } from '../retention.js';
import type { Topic, TurnTimings } from '../../domain/index.js';
import { UserError } from '../../util/errors.js';
import type { PostgresStore } from './store.js';

/** A timestamp column as ISO 8601 UTC with milliseconds, as the SQLite store writes them. */
const iso = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** A new session id: longer than on SQLite, as many users make sessions in one table. */
export function newPgSessionId(): string {
  return `s-${randomBytes(6).toString('hex')}`;
}

/** Most recently active first (a turn starting or finishing, or a fork): the order `sessions` lists and `last` picks from. */
const MOST_RECENT_FIRST = 'ORDER BY s.updated_at DESC, (SELECT max(t.id) FROM ragline.turns t WHERE t.session_id = s.id) DESC NULLS LAST, s.created_at DESC, s.id DESC';

const SESSION_COLUMNS = `s.id, s.name, ${iso('s.created_at')} AS "createdAt", ${iso('s.updated_at')} AS "updatedAt",
  s.parent_session_id AS "parentSessionId", s.parent_turn AS "parentTurn"`;

/** A session of `owner` by id, name or `last`. */
export async function pgFindSession(store: PostgresStore, owner: string, ref: string): Promise<SessionInfo | undefined> {
  const wanted = ref.trim();
  const rows =
    wanted === 'last'
      ? await store.query<SessionInfo>(
          // A session without turns (the MCP server's, before its first call) is never `last`, as on SQLite.
          `SELECT ${SESSION_COLUMNS} FROM ragline.sessions s WHERE s.owner = $1 AND EXISTS (SELECT 1 FROM ragline.turns t WHERE t.session_id = s.id) ${MOST_RECENT_FIRST} LIMIT 1`,
          [owner],
        )
      : await store.query<SessionInfo>(`SELECT ${SESSION_COLUMNS} FROM ragline.sessions s WHERE s.owner = $1 AND (s.id = $2 OR s.name = $2) ORDER BY (s.id = $2) DESC LIMIT 1`, [owner, wanted]);
  return rows[0];
}

/** A session of `owner` by id. */
export async function pgGetSession(store: PostgresStore, owner: string, id: string): Promise<SessionInfo | undefined> {
  return (await store.query<SessionInfo>(`SELECT ${SESSION_COLUMNS} FROM ragline.sessions s WHERE s.owner = $1 AND s.id = $2`, [owner, id]))[0];
}

/** The sessions of `owner`, most recently active first. */
export async function pgListSessions(store: PostgresStore, owner: string): Promise<SessionListing[]> {
  return store.query<SessionListing>(
    `SELECT ${SESSION_COLUMNS}, (SELECT count(*)::int FROM ragline.turns t WHERE t.session_id = s.id) AS turns, ${iso('s.updated_at')} AS "lastActive",
            (SELECT t.question FROM ragline.turns t WHERE t.session_id = s.id ORDER BY t.ordinal LIMIT 1) AS "firstQuestion"
     FROM ragline.sessions s WHERE s.owner = $1 ${MOST_RECENT_FIRST}`,
    [owner],
  );
}

/** The name checked as on SQLite, and free among `owner`'s sessions (but for `exceptId`'s own). */
async function checkName(client: PoolClient, owner: string, name: string, exceptId?: string): Promise<string> {
  const trimmed = validSessionName(name);
  const holder = (await client.query<{ id: string }>('SELECT id FROM ragline.sessions WHERE owner = $1 AND name = $2', [owner, trimmed])).rows[0]?.id;
  if (holder !== undefined && holder !== exceptId) throw nameTakenError(trimmed, holder);
  return trimmed;
}

/** A new session of `owner` with no turns (the MCP server's, and a saved rerun's before its turns). */
async function createWith(client: PoolClient, owner: string, options: { name?: string; parent?: { id: string; turn: number } }): Promise<SessionInfo> {
  const name = options.name === undefined ? null : await checkName(client, owner, options.name);
  const { rows } = await client.query<SessionInfo>(
    `INSERT INTO ragline.sessions AS s (id, owner, name, parent_session_id, parent_turn) VALUES ($1, $2, $3, $4, $5) RETURNING ${SESSION_COLUMNS}`,
    [newPgSessionId(), owner, name, options.parent?.id ?? null, options.parent?.turn ?? null],
  );
  return rows[0]!;
}

export async function pgCreateSession(store: PostgresStore, owner: string, options: { name?: string } = {}): Promise<SessionInfo> {
  return store.transaction((client) => createWith(client, owner, options));
}

/** Renames (or with null, unnames) a session of `owner`. */
export async function pgRenameSession(store: PostgresStore, owner: string, id: string, name: string | null): Promise<SessionInfo> {
  return store.transaction(async (client) => {
    const found = (await client.query('SELECT 1 FROM ragline.sessions WHERE owner = $1 AND id = $2 FOR UPDATE', [owner, id])).rows.length > 0;
    if (!found) throw new UserError(`No session with the id "${id}".`, { exitCode: 2 });
    const checked = name === null ? null : await checkName(client, owner, name, id);
    return (await client.query<SessionInfo>(`UPDATE ragline.sessions s SET name = $3 WHERE owner = $1 AND id = $2 RETURNING ${SESSION_COLUMNS}`, [owner, id, checked])).rows[0]!;
  });
}

/** Removes a session of `owner` with its turns, their chunks and judgments (the foreign keys cascade); forks keep their copies. */
export async function pgRemoveSession(store: PostgresStore, owner: string, id: string): Promise<boolean> {
  return store.transaction(async (client) => {
    await client.query('UPDATE ragline.sessions SET parent_session_id = NULL WHERE parent_session_id = $1', [id]);
    return ((await client.query('DELETE FROM ragline.sessions WHERE owner = $1 AND id = $2', [owner, id])).rowCount ?? 0) > 0;
  });
}

/** The columns of a table of the schema minus `except`: read from the catalog, so columns a later migration adds are copied too. */
async function columnsOf(client: PoolClient, table: string, except: string[]): Promise<string[]> {
  const { rows } = await client.query<{ name: string }>(
    `SELECT column_name AS name FROM information_schema.columns WHERE table_schema = 'ragline' AND table_name = $1 AND is_generated = 'NEVER' AND identity_generation IS NULL ORDER BY ordinal_position`,
    [table],
  );
  return rows.map((row) => row.name).filter((name) => !except.includes(name));
}

/**
 * A new session of `owner` holding copies of the finished turns 1..`atTurn` of
 * `sourceId` (chunks and judgments with them), as forkSession on SQLite (planFork says which).
 */
export async function pgForkSession(store: PostgresStore, owner: string, sourceId: string, atTurn: number, name?: string): Promise<ForkedSession> {
  return store.transaction(async (client) => {
    const source = (await client.query<{ name: string | null }>('SELECT name FROM ragline.sessions WHERE owner = $1 AND id = $2 FOR SHARE', [owner, sourceId])).rows[0];
    if (!source) throw new UserError(`No session with the id "${sourceId}".`, { exitCode: 2 });
    const turns = (await client.query<{ id: number; ordinal: number; status: TurnStatus }>('SELECT id, ordinal, status FROM ragline.turns WHERE session_id = $1 ORDER BY ordinal', [sourceId])).rows;
    const { copied, unfinished } = planFork(source.name ?? sourceId, turns, atTurn);
    const fork = await createWith(client, owner, { name, parent: { id: sourceId, turn: atTurn } });
    const turnColumns = (await columnsOf(client, 'turns', ['session_id'])).join(', ');
    const chunkColumns = (await columnsOf(client, 'turn_chunks', ['turn_id'])).join(', ');
    for (const turn of copied) {
      const copy = (await client.query<{ id: number }>(`INSERT INTO ragline.turns (session_id, ${turnColumns}) SELECT $1, ${turnColumns} FROM ragline.turns WHERE id = $2 RETURNING id`, [fork.id, turn.id])).rows[0]!.id;
      await client.query(`INSERT INTO ragline.turn_chunks (turn_id, ${chunkColumns}) SELECT $1, ${chunkColumns} FROM ragline.turn_chunks WHERE turn_id = $2`, [copy, turn.id]);
      await client.query(
        'INSERT INTO ragline.turn_relevant (turn_id, document_path, source, chunk_rank) SELECT $1, document_path, source, chunk_rank FROM ragline.turn_relevant WHERE turn_id = $2 ORDER BY id',
        [copy, turn.id],
      );
    }
    return { ...fork, unfinished };
  });
}

/** The columns of a turn as TurnRow names them (JSON as text, timestamps as ISO). */
const TURN_COLUMNS = `id, session_id, ordinal, ${iso('created_at')} AS created_at, ${iso('finished_at')} AS finished_at, status, error, question,
  standalone_query, rewrite_decision, rewrite_reason, rewrite_error, answer, answer_kind, rewrite_model, chat_model, embed_model,
  prompt_json::text AS prompt_json, rewrite_prompt_json::text AS rewrite_prompt_json, settings_json::text AS settings_json,
  timings_json::text AS timings_json, usage_json::text AS usage_json, topics_json::text AS topics_json, summary, summary_through`;

/** A session's turns, oldest first (every status, pending included). */
export async function pgLoadTurns(store: PostgresStore, sessionId: string): Promise<StoredTurn[]> {
  return (await store.query<TurnRow>(`SELECT ${TURN_COLUMNS} FROM ragline.turns WHERE session_id = $1 ORDER BY ordinal`, [sessionId])).map(toTurn);
}

/** The chunks a turn retrieved, by rank, shaped as on SQLite (absent score parts left out). */
export async function pgLoadTurnChunks(store: PostgresStore, turnId: number): Promise<StoredTurnChunk[]> {
  const rows = await store.query(
    `SELECT turn_id AS "turnId", rank, chunk_id AS "chunkId", document_path AS "documentPath", start_line AS "startLine",
            end_line AS "endLine", locator, heading, text_hash AS "textHash", score, vector_rank AS "vectorRank",
            vector_distance AS "vectorDistance", keyword_rank AS "keywordRank", bm25
     FROM ragline.turn_chunks WHERE turn_id = $1 ORDER BY rank`,
    [turnId],
  );
  return rows.map((row) => Object.fromEntries(Object.entries(row).filter(([, value]) => value !== null))) as unknown as StoredTurnChunk[];
}

/** The topics the next turn of `sessionId` starts from. */
export async function pgLatestTopics(store: PostgresStore, sessionId: string): Promise<Topic[]> {
  return (await pgHistoryState(store, sessionId, 2 ** 31 - 1))?.topics ?? [];
}

async function pgHistoryState(store: PostgresStore, sessionId: string, beforeOrdinal: number): Promise<{ topics: Topic[] } | undefined> {
  const rows = await store.query<{ topics: Topic[] }>(
    'SELECT topics_json AS topics FROM ragline.turns WHERE session_id = $1 AND ordinal < $2 AND topics_json IS NOT NULL ORDER BY ordinal DESC LIMIT 1',
    [sessionId, beforeOrdinal],
  );
  return rows[0];
}

// ---- judgments (as ../judgments.ts) ---------------------------------------

async function judgmentsOf(client: PoolClient | PostgresStore, where: string, value: unknown): Promise<Map<number, TurnJudgment>> {
  const run = async <R extends object>(sql: string, values: unknown[]) =>
    'pool' in client ? await client.query<R & Record<string, unknown>>(sql, values) : (await client.query<R & Record<string, unknown>>(sql, values)).rows;
  const turns = await run<{ id: number; judgedAt: string; none: boolean }>(
    `SELECT id, ${iso('judged_at')} AS "judgedAt", judged_none AS none FROM ragline.turns WHERE ${where} AND judged_at IS NOT NULL ORDER BY ordinal`,
    [value],
  );
  const relevant = await run<RelevantDocument & { turnId: number }>(
    `SELECT r.turn_id AS "turnId", r.document_path AS "documentPath", r.source, r.chunk_rank AS "chunkRank"
     FROM ragline.turn_relevant r JOIN ragline.turns t ON t.id = r.turn_id WHERE t.${where} ORDER BY r.id`,
    [value],
  );
  return new Map(
    turns.map((turn) => [
      turn.id,
      { turnId: turn.id, judgedAt: turn.judgedAt, noneUseful: turn.none, relevant: relevant.filter((doc) => doc.turnId === turn.id).map(({ turnId: _, ...doc }) => doc) },
    ]),
  );
}

/** Judgments of a session's turns, by turn id. */
export async function pgLoadJudgments(store: PostgresStore, sessionId: string): Promise<Map<number, TurnJudgment>> {
  return judgmentsOf(store, 'session_id = $1', sessionId);
}

/** Applies `change` to a turn's judgment in one transaction (as judgeTurn on SQLite) and returns the result. */
export async function pgJudgeTurn(store: PostgresStore, turnId: number, change: JudgmentChange): Promise<TurnJudgment> {
  return store.transaction(async (client) => {
    const turn = (await client.query<{ none: boolean; judged: boolean }>('SELECT judged_none AS none, judged_at IS NOT NULL AS judged FROM ragline.turns WHERE id = $1 FOR UPDATE', [turnId])).rows[0];
    if (!turn) throw new Error(`turn ${turnId} does not exist`);
    let none = change.replace ? false : turn.judged && turn.none;
    if (change.replace) await client.query('DELETE FROM ragline.turn_relevant WHERE turn_id = $1', [turnId]);
    if (change.noneUseful === true) {
      none = true;
      await client.query(`DELETE FROM ragline.turn_relevant WHERE turn_id = $1 AND source = 'retrieved'`, [turnId]);
    } else if (change.noneUseful === false) {
      none = false;
    }
    for (const doc of change.add ?? []) {
      await client.query(
        `INSERT INTO ragline.turn_relevant (turn_id, document_path, source, chunk_rank) VALUES ($1, $2, $3, $4)
         ON CONFLICT (turn_id, document_path) DO UPDATE SET source = excluded.source, chunk_rank = excluded.chunk_rank`,
        [turnId, doc.documentPath, doc.source, doc.chunkRank ?? null],
      );
    }
    await client.query('UPDATE ragline.turns SET judged_at = now(), judged_none = $2 WHERE id = $1', [turnId, none]);
    return (await judgmentsOf(client, 'id = $1', turnId)).get(turnId)!;
  });
}

/** Removes a turn's judgment. */
export async function pgClearJudgment(store: PostgresStore, turnId: number): Promise<void> {
  await store.transaction(async (client) => {
    await client.query('DELETE FROM ragline.turn_relevant WHERE turn_id = $1', [turnId]);
    await client.query('UPDATE ragline.turns SET judged_at = NULL, judged_none = false WHERE id = $1', [turnId]);
  });
}

/** The id of turn `ordinal` of a session; a UserError naming the turns there are when it does not exist. */
export async function pgTurnId(store: PostgresStore, session: SessionInfo, ordinal: number): Promise<number> {
  const rows = await store.query<{ id: number; ordinal: number }>('SELECT id, ordinal FROM ragline.turns WHERE session_id = $1 ORDER BY ordinal', [session.id]);
  const found = rows.find((row) => row.ordinal === ordinal);
  if (found) return found.id;
  throw noTurnError(session, ordinal, rows.map((row) => row.ordinal));
}

/** A new session of `owner` named `name` holding `turns`, each stored as a turn is (asked, then finished), in one transaction. */
export async function pgWriteSession(store: PostgresStore, owner: string, name: string, turns: { question: string; finish: FinishTurnInput }[]): Promise<SessionInfo> {
  return store.transaction(async (client) => {
    const session = await createWith(client, owner, { name });
    for (const turn of turns) await finishTurnWith(client, (await startTurnWith(client, session.id, turn.question)).id, turn.finish, performance.now());
    return (await client.query<SessionInfo>(`SELECT ${SESSION_COLUMNS} FROM ragline.sessions s WHERE s.id = $1`, [session.id])).rows[0]!;
  });
}

// ---- the index, as judgments and replay read it ----------------------------

/** Every document row, in ingest order, and the documents holding chunks of `textHashes`. */
export async function pgIndexRows(
  store: PostgresStore,
  textHashes: readonly string[],
): Promise<{ documents: ListedDocumentRow[]; chunks: { textHash: string; id: number; root: string; path: string }[] }> {
  return store.transaction(
    async (client) => {
      const documents = (
        await client.query<ListedDocumentRow>(
          `SELECT id, root, path, title, kind, size, chunk_count AS chunks, ${iso('ingested_at')} AS "ingestedAt" FROM ragline.documents ORDER BY id`,
        )
      ).rows;
      const chunks =
        textHashes.length === 0
          ? []
          : (
              await client.query<{ textHash: string; id: number; root: string; path: string }>(
                `SELECT DISTINCT c.text_hash AS "textHash", d.id, d.root, d.path FROM ragline.chunks c JOIN ragline.documents d ON d.id = c.document_id WHERE c.text_hash = ANY($1)`,
                [[...new Set(textHashes)]],
              )
            ).rows;
      return { documents, chunks };
    },
    { isolation: 'repeatable read' },
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
    return startTurnWith(client, sessionId, question);
  });
}

/** Stores `question` as the next pending turn of `sessionId`, on a connection in a transaction that holds the session row. */
async function startTurnWith(client: PoolClient, sessionId: string, question: string): Promise<StartedTurn> {
  const { rows } = await client.query<StartedTurn>(
    `INSERT INTO ragline.turns (session_id, ordinal, status, question)
     VALUES ($1, (SELECT coalesce(max(ordinal), 0) + 1 FROM ragline.turns WHERE session_id = $1), 'pending', $2)
     RETURNING id, ordinal, ${iso('created_at')} AS "createdAt"`,
    [sessionId, question],
  );
  await client.query('UPDATE ragline.sessions SET updated_at = now() WHERE id = $1', [sessionId]);
  return rows[0]!;
}

/** Records how a turn ended, with its whole trail, in one transaction (as finishTurn on SQLite). */
export async function pgFinishTurn(store: PostgresStore, turnId: number, input: FinishTurnInput): Promise<TurnTimings> {
  const started = performance.now();
  return store.transaction((client) => finishTurnWith(client, turnId, input, started));
}

/** Records how a turn ended on a connection in a transaction; `started`: when the caller began storing it. */
async function finishTurnWith(client: PoolClient, turnId: number, input: FinishTurnInput, started: number): Promise<TurnTimings> {
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

// ---- retention (as ../retention.ts) -----------------------------------------

/**
 * Removes (or with dryRun, counts) the turns of `owner`'s sessions created before
 * `cutoff`, with their retrieval rows and judgments, and the sessions left without
 * turns, in one transaction; `keepSessionId` is kept whole. Other users' sessions are
 * theirs to prune.
 */
export async function pgPruneTurns(store: PostgresStore, owner: string, cutoff: Date, options: PruneOptions = {}): Promise<PruneReport> {
  const iso = cutoff.toISOString();
  return store.transaction(async (client) => {
    const values = [owner, iso, options.keepSessionId ?? null];
    const old = `SELECT t.id FROM ragline.turns t JOIN ragline.sessions s ON s.id = t.session_id
      WHERE s.owner = $1 AND t.created_at < $2 AND s.id IS DISTINCT FROM $3`;
    const counted = (
      await client.query<{ turns: number; rows: number }>(
        `SELECT (SELECT count(*)::int FROM (${old}) o) AS turns, (SELECT count(*)::int FROM ragline.turn_chunks WHERE turn_id IN (${old})) AS rows`,
        values,
      )
    ).rows[0]!;
    // Left without turns: created before the cutoff, or holding only older turns (a fork of an old conversation keeps its turns' times).
    const emptied = (
      await client.query<{ id: string }>(
        `SELECT s.id FROM ragline.sessions s
         WHERE s.owner = $1 AND s.id IS DISTINCT FROM $3
           AND (s.created_at < $2 OR EXISTS (SELECT 1 FROM ragline.turns t WHERE t.session_id = s.id AND t.created_at < $2))
           AND NOT EXISTS (SELECT 1 FROM ragline.turns t WHERE t.session_id = s.id AND t.created_at >= $2)`,
        values,
      )
    ).rows.map((row) => row.id);
    if (!options.dryRun) {
      // turn_chunks and turn_relevant go with their turns (ON DELETE CASCADE).
      await client.query(`DELETE FROM ragline.turns WHERE id IN (${old})`, values);
      if (emptied.length > 0) {
        await client.query('UPDATE ragline.sessions SET parent_session_id = NULL WHERE parent_session_id = ANY($1)', [emptied]);
        await client.query('DELETE FROM ragline.sessions WHERE id = ANY($1)', [emptied]);
      }
    }
    return { cutoff: iso, turns: counted.turns, retrievalRows: counted.rows, sessions: emptied.length, dryRun: Boolean(options.dryRun) };
  });
}

// ---- forgetting a folder ------------------------------------------------------

/** The folders of the index, with their documents and chunks. */
export async function pgStoredFolders(store: PostgresStore): Promise<{ root: string; documents: number; chunks: number }[]> {
  return store.query(`SELECT root, count(*)::int AS documents, coalesce(sum(chunk_count), 0)::int AS chunks FROM ragline.documents GROUP BY root ORDER BY root`);
}

/** Removes every document of the folder `root` with its chunks (they cascade), in one transaction; sessions are kept. */
export async function pgRemoveFolder(store: PostgresStore, root: string): Promise<{ documents: number; chunks: number }> {
  return store.transaction(async (client) => {
    const counted = (
      await client.query<{ documents: number; chunks: number }>(
        'SELECT count(*)::int AS documents, (SELECT count(*)::int FROM ragline.chunks c JOIN ragline.documents d ON d.id = c.document_id WHERE d.root = $1) AS chunks FROM ragline.documents WHERE root = $1',
        [root],
      )
    ).rows[0]!;
    await client.query('DELETE FROM ragline.documents WHERE root = $1', [root]);
    return counted;
  });
}
