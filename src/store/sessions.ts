// Chat sessions and their turns: the replayable trail. A turn's question is
// written first, as a `pending` row in its own small transaction, so it survives
// even a SIGKILL mid-answer; everything else the turn produced (standalone query,
// rewrite decision, retrieved chunks with their score parts, prompt, answer,
// models, timings, usage, topics and summary) is written in ONE transaction when
// it ends. Sessions can be renamed, removed (with every row that hangs off them)
// and forked at a turn. A new chat's session is only planned (planSession) until
// its first question: its row is written with that question, so sessions without
// turns are never stored. This module imports nothing from the rest of the app
// but the shared vocabulary in src/domain: it stores those types as they are.

import { randomBytes } from 'node:crypto';
import type { Db } from './db.js';
import type {
  AnswerKind,
  ChatMessage,
  ChunkLocation,
  FinishedStatus,
  RewriteDecision,
  Topic,
  TurnModels,
  TurnStatus,
  TurnTimings,
  TurnUsage,
} from '../domain/index.js';
import { UserError } from '../util/errors.js';

export interface SessionInfo {
  /** Short random id, e.g. `s-7f3a2c`. */
  id: string;
  name: string | null;
  /** ISO 8601 UTC. */
  createdAt: string;
  /** ISO 8601 UTC; moves when a turn starts or ends. */
  updatedAt: string;
  /** Set on a fork: the session it was copied from (null once that one is removed). */
  parentSessionId: string | null;
  /** Set on a fork: the last turn ordinal copied from the parent. */
  parentTurn: number | null;
}

export interface SessionListing extends SessionInfo {
  turns: number;
  /** Last turn's creation time, or the session's own when it has no turns. */
  lastActive: string;
  firstQuestion: string | null;
}

/** A retrieved chunk as copied into turn_chunks (RetrievedChunk satisfies it). */
export interface TurnChunkInput extends ChunkLocation {
  chunkId: number;
  heading: string;
  textHash: string;
  rank: number;
  score: number;
  vectorRank?: number;
  vectorDistance?: number;
  keywordRank?: number;
  bm25?: number;
}

export interface StoredTurnChunk extends TurnChunkInput {
  turnId: number;
}

/** Everything a finished turn records. */
export interface FinishTurnInput {
  status: FinishedStatus;
  error?: string;
  standaloneQuery?: string;
  rewriteDecision?: RewriteDecision;
  rewriteReason?: string;
  /** Error the rewriter recovered from (decision `fallback`). */
  rewriteError?: string;
  rewritePrompt?: ChatMessage[];
  /** Ranked chunks as retrieved; copied, not referenced. */
  chunks: TurnChunkInput[];
  /** The messages sent for the answer. */
  prompt?: ChatMessage[];
  answer?: string;
  answerKind?: AnswerKind;
  models: TurnModels;
  /** k, rewrite policy, scope... at the time. */
  settings?: Record<string, unknown>;
  timings: TurnTimings;
  usage: TurnUsage;
  /**
   * Tracked topics after this turn; undefined when the turn ended before it read the
   * conversation's state (stored NULL, so the next turn starts from an earlier turn's).
   */
  topics?: Topic[];
  /** Running summary of the turns that fell out of the history budget, as of this turn. */
  summary?: string;
  /** Ordinal of the last turn the summary covers (0 or undefined: no summary). */
  summaryThrough?: number;
}

export interface StoredTurn {
  id: number;
  sessionId: string;
  ordinal: number;
  createdAt: string;
  finishedAt: string | null;
  status: TurnStatus;
  error: string | null;
  question: string;
  standaloneQuery: string | null;
  rewriteDecision: RewriteDecision | null;
  rewriteReason: string | null;
  rewriteError: string | null;
  answer: string | null;
  answerKind: AnswerKind | null;
  models: TurnModels;
  prompt: ChatMessage[] | null;
  rewritePrompt: ChatMessage[] | null;
  settings: Record<string, unknown> | null;
  timings: TurnTimings | null;
  usage: TurnUsage | null;
  topics: Topic[] | null;
  summary: string | null;
  summaryThrough: number | null;
}

export interface StartedTurn {
  id: number;
  ordinal: number;
  createdAt: string;
}

const ID_PATTERN = /^s-[0-9a-f]{6}$/;

function now(): string {
  return new Date().toISOString();
}

function newSessionId(db: Db): string {
  const exists = db.prepare('SELECT 1 FROM sessions WHERE id = ?').pluck();
  for (let attempt = 0; attempt < 100; attempt++) {
    const id = `s-${randomBytes(3).toString('hex')}`;
    if (exists.get(id) === undefined) return id;
  }
  // 16M ids: reaching this means something else is wrong; a longer id still works.
  return `s-${randomBytes(6).toString('hex')}`;
}

/** A session name as given, trimmed; a UserError when it cannot be one (on either store). */
export function validSessionName(name: string): string {
  const trimmed = name.trim();
  if (trimmed === '') throw new UserError('A session name cannot be empty.', { exitCode: 2 });
  // A name is printed in listings and headers: nothing in it may act on a terminal.
  if (/[\u0000-\u001f\u007f-\u009f\u200b\u200e\u200f\u202a-\u202e\u2028\u2029\u2060-\u2069\ufeff]/.test(trimmed)) {
    throw new UserError('A session name cannot contain control characters, line breaks or invisible characters.', {
      hint: 'Choose a plain name, e.g. "billing-questions".',
      exitCode: 2,
    });
  }
  if (trimmed === 'last' || ID_PATTERN.test(trimmed)) {
    throw new UserError(`"${trimmed}" cannot be a session name: it reads as a session reference.`, {
      hint: 'Choose another name, e.g. "billing-questions".',
      exitCode: 2,
    });
  }
  return trimmed;
}

/** The error of a name another session holds already. */
export function nameTakenError(name: string, holder: string): UserError {
  return new UserError(`A session named "${name}" already exists (${holder}).`, {
    hint: 'Choose another name, or continue that session with --session ' + JSON.stringify(name) + '.',
    exitCode: 2,
  });
}

function checkName(db: Db, name: string, exceptId?: string): string {
  const trimmed = validSessionName(name);
  const holder = db.prepare('SELECT id FROM sessions WHERE name = ?').pluck().get(trimmed) as string | undefined;
  if (holder !== undefined && holder !== exceptId) throw nameTakenError(trimmed, holder);
  return trimmed;
}

const SESSION_COLUMNS = `id, name, created_at AS createdAt, updated_at AS updatedAt,
  parent_session_id AS parentSessionId, parent_turn AS parentTurn`;

export function createSession(db: Db, options: { name?: string } = {}): SessionInfo {
  return db
    .transaction(() => {
      const name = options.name === undefined ? null : checkName(db, options.name);
      const id = newSessionId(db);
      const at = now();
      db.prepare('INSERT INTO sessions (id, name, created_at, updated_at) VALUES (?, ?, ?, ?)').run(id, name, at, at);
      return { id, name, createdAt: at, updatedAt: at, parentSessionId: null, parentTurn: null };
    })
    .immediate();
}

/**
 * A new session that is not stored yet: its id and (checked) name are chosen now,
 * and its row is written by startTurn together with its first question (pass it as
 * `create`). A chat left without a question stores nothing.
 */
export function planSession(db: Db, options: { name?: string } = {}): SessionInfo {
  const name = options.name === undefined ? null : checkName(db, options.name);
  const at = now();
  return { id: newSessionId(db), name, createdAt: at, updatedAt: at, parentSessionId: null, parentTurn: null };
}

/** Whether the session has a row (a planned session has none until its first turn). */
export function isStored(db: Db, id: string): boolean {
  return db.prepare('SELECT 1 FROM sessions WHERE id = ?').pluck().get(id) !== undefined;
}

export function getSession(db: Db, id: string): SessionInfo | undefined {
  return db.prepare(`SELECT ${SESSION_COLUMNS} FROM sessions WHERE id = ?`).get(id) as SessionInfo | undefined;
}

/**
 * Sessions most recently active first (a turn starting or finishing, or a fork,
 * makes one active): the order `sessions` lists and `last` picks from. Timestamps
 * have millisecond resolution: ties go to the newest turn, then the newest session.
 */
const MOST_RECENT_FIRST = 'ORDER BY s.updated_at DESC, (SELECT max(t.id) FROM turns t WHERE t.session_id = s.id) DESC NULLS LAST, s.rowid DESC';

/**
 * Finds a session by id, by name, or `last`: the most recently active one that holds
 * a turn (a session left without turns, by an older version or a process stopped
 * between its writes, is never what `last` continues or replays).
 */
export function findSession(db: Db, ref: string): SessionInfo | undefined {
  const wanted = ref.trim();
  if (wanted === 'last') {
    return db
      .prepare(
        `SELECT ${SESSION_COLUMNS} FROM sessions s
         WHERE EXISTS (SELECT 1 FROM turns t WHERE t.session_id = s.id)
         ${MOST_RECENT_FIRST}
         LIMIT 1`,
      )
      .get() as SessionInfo | undefined;
  }
  return (
    getSession(db, wanted) ??
    (db.prepare(`SELECT ${SESSION_COLUMNS} FROM sessions WHERE name = ?`).get(wanted) as SessionInfo | undefined)
  );
}

/** Like findSession, but a missing session is a UserError naming what was asked for. */
export function requireSession(db: Db, ref: string): SessionInfo {
  const session = findSession(db, ref);
  if (!session) throw noSessionError(ref);
  return session;
}

/** The error of a session reference that names none (on either store). */
export function noSessionError(ref: string): UserError {
  return new UserError(ref.trim() === 'last' ? 'There are no chat sessions yet.' : `No session with the id or name "${ref.trim()}".`, {
    hint: 'List sessions with `ragline sessions`, or start one with `ragline chat --new`.',
    exitCode: 2,
  });
}

/** Every session, most recently active first (MOST_RECENT_FIRST). */
export function listSessions(db: Db): SessionListing[] {
  return db
    .prepare(
      `SELECT s.id, s.name, s.created_at AS createdAt, s.updated_at AS updatedAt,
              s.parent_session_id AS parentSessionId, s.parent_turn AS parentTurn,
              (SELECT count(*) FROM turns t WHERE t.session_id = s.id) AS turns,
              s.updated_at AS lastActive,
              (SELECT t.question FROM turns t WHERE t.session_id = s.id ORDER BY t.ordinal LIMIT 1) AS firstQuestion
       FROM sessions s
       ${MOST_RECENT_FIRST}`,
    )
    .all() as SessionListing[];
}

/** Renames (or with null, unnames) a session. */
export function renameSession(db: Db, id: string, name: string | null): SessionInfo {
  return db
    .transaction(() => {
      const session = getSession(db, id);
      if (!session) throw new UserError(`No session with the id "${id}".`, { exitCode: 2 });
      const checked = name === null ? null : checkName(db, name, id);
      db.prepare('UPDATE sessions SET name = ? WHERE id = ?').run(checked, id);
      return { ...session, name: checked };
    })
    .immediate();
}

/** Removes a session with its turns, their chunks and judgments. Forks of it keep their copies. Returns false when it did not exist. */
export function removeSession(db: Db, id: string): boolean {
  return db
    .transaction(() => {
      // Explicit deletes rather than relying on ON DELETE CASCADE, so no orphan row
      // is left even on a connection opened without foreign_keys.
      db.prepare('DELETE FROM turn_chunks WHERE turn_id IN (SELECT id FROM turns WHERE session_id = ?)').run(id);
      db.prepare('DELETE FROM turn_relevant WHERE turn_id IN (SELECT id FROM turns WHERE session_id = ?)').run(id);
      db.prepare('DELETE FROM turns WHERE session_id = ?').run(id);
      db.prepare('UPDATE sessions SET parent_session_id = NULL WHERE parent_session_id = ?').run(id);
      return db.prepare('DELETE FROM sessions WHERE id = ?').run(id).changes > 0;
    })
    .immediate();
}

/**
 * Writes the question as a `pending` turn, in its own transaction, before anything
 * else happens: whatever follows, the question is kept.
 */
export function startTurn(db: Db, sessionId: string, question: string, options: { create?: SessionInfo } = {}): StartedTurn {
  return db
    .transaction(() => {
      if (!getSession(db, sessionId)) {
        // A planned session (planSession) is written with its first question, in the same transaction.
        const planned = options.create;
        if (!planned || planned.id !== sessionId) throw new UserError(`No session with the id "${sessionId}".`, { exitCode: 2 });
        const name = planned.name === null ? null : checkName(db, planned.name);
        const at = now();
        db.prepare('INSERT INTO sessions (id, name, created_at, updated_at) VALUES (?, ?, ?, ?)').run(sessionId, name, at, at);
      }
      const ordinal =
        ((db.prepare('SELECT max(ordinal) FROM turns WHERE session_id = ?').pluck().get(sessionId) as number | null) ?? 0) + 1;
      const createdAt = now();
      const id = Number(
        db
          .prepare(
            `INSERT INTO turns (session_id, ordinal, created_at, status, question) VALUES (?, ?, ?, 'pending', ?)`,
          )
          .run(sessionId, ordinal, createdAt, question).lastInsertRowid,
      );
      db.prepare('UPDATE sessions SET updated_at = ? WHERE id = ?').run(createdAt, sessionId);
      return { id, ordinal, createdAt };
    })
    .immediate();
}

/**
 * Records how a turn ended, with its whole trail, in one transaction. `persistMs`
 * and `totalMs` in the stored (and returned) timings are extended by the time this
 * call spends before its final write, so the row and the caller agree.
 */
export function finishTurn(db: Db, turnId: number, input: FinishTurnInput): TurnTimings {
  const started = performance.now();
  return db
    .transaction(() => {
      const row = db.prepare('SELECT session_id AS sessionId FROM turns WHERE id = ?').get(turnId) as
        | { sessionId: string }
        | undefined;
      if (!row) {
        // Its session was removed (`sessions rm`, prune) by another process while it was answered.
        throw new UserError('The session was removed by another process while this question was answered: the answer was shown but not saved.', {
          hint: 'Ask it again to keep it: the next question starts a new session.',
        });
      }
      db.prepare('DELETE FROM turn_chunks WHERE turn_id = ?').run(turnId);
      const insertChunk = db.prepare(`
        INSERT INTO turn_chunks (turn_id, rank, chunk_id, document_path, start_line, end_line, locator, heading,
                                 text_hash, score, vector_rank, vector_distance, keyword_rank, bm25)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
      for (const chunk of input.chunks) insertChunk.run(...turnChunkValues(turnId, chunk));
      const finishedAt = now();
      const spent = performance.now() - started;
      const timings: TurnTimings = {
        ...input.timings,
        persistMs: input.timings.persistMs + spent,
        totalMs: input.timings.totalMs + spent,
      };
      db.prepare(
        `UPDATE turns SET finished_at = @finishedAt, status = @status, error = @error,
           standalone_query = @standaloneQuery, rewrite_decision = @rewriteDecision, rewrite_reason = @rewriteReason,
           rewrite_error = @rewriteError, answer = @answer, answer_kind = @answerKind,
           rewrite_model = @rewriteModel, chat_model = @chatModel, embed_model = @embedModel,
           prompt_json = @prompt, rewrite_prompt_json = @rewritePrompt, settings_json = @settings,
           timings_json = @timings, usage_json = @usage, topics_json = @topics,
           summary = @summary, summary_through = @summaryThrough
         WHERE id = @id`,
      ).run({
        id: turnId,
        finishedAt,
        status: input.status,
        error: input.error ?? null,
        standaloneQuery: input.standaloneQuery ?? null,
        rewriteDecision: input.rewriteDecision ?? null,
        rewriteReason: input.rewriteReason ?? null,
        rewriteError: input.rewriteError ?? null,
        answer: input.answer ?? null,
        answerKind: input.answerKind ?? null,
        rewriteModel: input.models.rewrite ?? null,
        chatModel: input.models.chat ?? null,
        embedModel: input.models.embed ?? null,
        prompt: input.prompt ? JSON.stringify(input.prompt) : null,
        rewritePrompt: input.rewritePrompt ? JSON.stringify(input.rewritePrompt) : null,
        settings: input.settings ? JSON.stringify(input.settings) : null,
        timings: JSON.stringify(timings),
        usage: JSON.stringify(input.usage),
        topics: input.topics ? JSON.stringify(input.topics) : null,
        summary: input.summary ?? null,
        summaryThrough: input.summaryThrough ?? null,
      });
      db.prepare('UPDATE sessions SET updated_at = ? WHERE id = ?').run(finishedAt, row.sessionId);
      return timings;
    })
    .immediate();
}

export interface TurnRow {
  id: number;
  session_id: string;
  ordinal: number;
  created_at: string;
  finished_at: string | null;
  status: TurnStatus;
  error: string | null;
  question: string;
  standalone_query: string | null;
  rewrite_decision: RewriteDecision | null;
  rewrite_reason: string | null;
  rewrite_error: string | null;
  answer: string | null;
  answer_kind: AnswerKind | null;
  rewrite_model: string | null;
  chat_model: string | null;
  embed_model: string | null;
  prompt_json: string | null;
  rewrite_prompt_json: string | null;
  settings_json: string | null;
  timings_json: string | null;
  usage_json: string | null;
  topics_json: string | null;
  summary: string | null;
  summary_through: number | null;
}

function parse<T>(json: string | null): T | null {
  if (json === null) return null;
  try {
    return JSON.parse(json) as T;
  } catch {
    return null;
  }
}

export function toTurn(row: TurnRow): StoredTurn {
  return {
    id: row.id,
    sessionId: row.session_id,
    ordinal: row.ordinal,
    createdAt: row.created_at,
    finishedAt: row.finished_at,
    status: row.status,
    error: row.error,
    question: row.question,
    standaloneQuery: row.standalone_query,
    rewriteDecision: row.rewrite_decision,
    rewriteReason: row.rewrite_reason,
    rewriteError: row.rewrite_error,
    answer: row.answer,
    answerKind: row.answer_kind,
    models: {
      ...(row.rewrite_model === null ? {} : { rewrite: row.rewrite_model }),
      ...(row.chat_model === null ? {} : { chat: row.chat_model }),
      ...(row.embed_model === null ? {} : { embed: row.embed_model }),
    },
    prompt: parse<ChatMessage[]>(row.prompt_json),
    rewritePrompt: parse<ChatMessage[]>(row.rewrite_prompt_json),
    settings: parse<Record<string, unknown>>(row.settings_json),
    timings: parse<TurnTimings>(row.timings_json),
    usage: parse<TurnUsage>(row.usage_json),
    topics: parse<Topic[]>(row.topics_json),
    summary: row.summary,
    summaryThrough: row.summary_through,
  };
}

/** A session's turns, oldest first (every status, pending included). */
export function loadTurns(db: Db, sessionId: string): StoredTurn[] {
  const rows = db.prepare('SELECT * FROM turns WHERE session_id = ? ORDER BY ordinal').all(sessionId) as TurnRow[];
  return rows.map(toTurn);
}

/** What the history of a later turn needs of an earlier one: no prompts, settings or other JSON. */
export type HistoryTurn = Pick<StoredTurn, 'id' | 'ordinal' | 'status' | 'question' | 'standaloneQuery' | 'answer' | 'answerKind'>;

/** The turns of `sessionId` before `beforeOrdinal`, oldest first, with only what a history needs (cheap at thousands of turns). */
export function loadHistoryTurns(db: Db, sessionId: string, beforeOrdinal: number): HistoryTurn[] {
  return db
    .prepare(
      `SELECT id, ordinal, status, question, standalone_query AS standaloneQuery, answer, answer_kind AS answerKind
       FROM turns WHERE session_id = ? AND ordinal < ? ORDER BY ordinal`,
    )
    .all(sessionId, beforeOrdinal) as HistoryTurn[];
}

/** The tracked topics and running summary as of the latest turn before `beforeOrdinal` that stored them. */
export function latestConversationState(
  db: Db,
  sessionId: string,
  beforeOrdinal: number,
): { topics: Topic[]; summary: string | null; summaryThrough: number | null } | undefined {
  const row = db
    .prepare(
      `SELECT topics_json AS topics, summary, summary_through AS summaryThrough FROM turns
       WHERE session_id = ? AND ordinal < ? AND topics_json IS NOT NULL ORDER BY ordinal DESC LIMIT 1`,
    )
    .get(sessionId, beforeOrdinal) as { topics: string; summary: string | null; summaryThrough: number | null } | undefined;
  if (!row) return undefined;
  const topics = parse<Topic[]>(row.topics);
  return topics === null ? undefined : { topics, summary: row.summary, summaryThrough: row.summaryThrough };
}

/** The topics the next turn of `sessionId` starts from (what `/topics` and `sessions show` list). */
export function latestTopics(db: Db, sessionId: string): Topic[] {
  return latestConversationState(db, sessionId, Number.MAX_SAFE_INTEGER)?.topics ?? [];
}

export function getTurn(db: Db, turnId: number): StoredTurn | undefined {
  const row = db.prepare('SELECT * FROM turns WHERE id = ?').get(turnId) as TurnRow | undefined;
  return row ? toTurn(row) : undefined;
}

/** The chunks a turn retrieved, by rank. */
export function loadTurnChunks(db: Db, turnId: number): StoredTurnChunk[] {
  const rows = db
    .prepare(
      `SELECT turn_id AS turnId, rank, chunk_id AS chunkId, document_path AS documentPath, start_line AS startLine,
              end_line AS endLine, locator, heading, text_hash AS textHash, score, vector_rank AS vectorRank,
              vector_distance AS vectorDistance, keyword_rank AS keywordRank, bm25
       FROM turn_chunks WHERE turn_id = ? ORDER BY rank`,
    )
    .all(turnId) as Record<string, unknown>[];
  // Absent score parts come back as null; drop them so the shape matches what was stored.
  return rows.map((row) => Object.fromEntries(Object.entries(row).filter(([, value]) => value !== null))) as unknown as StoredTurnChunk[];
}

/** A fork as forkSession made it: the new session, and the turns it left out. */
export interface ForkedSession extends SessionInfo {
  /** Ordinals of the turns up to `parentTurn` not copied: still being answered (or never finished, their process gone). */
  unfinished: number[];
}

/**
 * A new session holding copies of the finished turns 1..`atTurn` of `sourceId` (with
 * their turn_chunks, topics, summary and judgments as they stood), remembering where
 * it came from. A turn still `pending` is being answered by another process (or was
 * left so by one that was killed): its copy would stay pending for good, so it is not
 * copied. Turn `atTurn` itself must be finished, and the fork holds at least one turn:
 * a session without turns is never made. The original is untouched.
 */
export function forkSession(db: Db, sourceId: string, atTurn: number, name?: string): ForkedSession {
  return db
    .transaction(() => {
      const source = getSession(db, sourceId);
      if (!source) throw new UserError(`No session with the id "${sourceId}".`, { exitCode: 2 });
      const turns = db
        .prepare('SELECT id, ordinal, status FROM turns WHERE session_id = ? ORDER BY ordinal')
        .all(sourceId) as { id: number; ordinal: number; status: TurnStatus }[];
      const { copied, unfinished } = planFork(source.name ?? sourceId, turns, atTurn);
      const checkedName = name === undefined ? null : checkName(db, name);
      const id = newSessionId(db);
      const at = now();
      db.prepare(
        'INSERT INTO sessions (id, name, created_at, updated_at, parent_session_id, parent_turn) VALUES (?, ?, ?, ?, ?, ?)',
      ).run(id, checkedName, at, at, sourceId, atTurn);

      const columns = columnsOf(db, 'turns', ['id', 'session_id']).join(', ');
      const chunkColumns = columnsOf(db, 'turn_chunks', ['turn_id']).join(', ');
      const copyTurn = db.prepare(
        `INSERT INTO turns (session_id, ${columns}) SELECT ?, ${columns} FROM turns WHERE id = ?`,
      );
      const copyChunks = db.prepare(
        `INSERT INTO turn_chunks (turn_id, ${chunkColumns}) SELECT ?, ${chunkColumns} FROM turn_chunks WHERE turn_id = ?`,
      );
      // Judgments: judged_at and judged_none are turn columns (copied above); the relevant documents here.
      const copyRelevant = db.prepare(
        'INSERT INTO turn_relevant (turn_id, document_path, source, chunk_rank) SELECT ?, document_path, source, chunk_rank FROM turn_relevant WHERE turn_id = ? ORDER BY rowid',
      );
      for (const turn of copied) {
        const newTurnId = Number(copyTurn.run(id, turn.id).lastInsertRowid);
        copyChunks.run(newTurnId, turn.id);
        copyRelevant.run(newTurnId, turn.id);
      }
      return { id, name: checkedName, createdAt: at, updatedAt: at, parentSessionId: sourceId, parentTurn: atTurn, unfinished };
    })
    .immediate();
}

/**
 * Which turns of a session (`turns`, in order) a fork at `atTurn` copies: the finished
 * ones up to it, and the ordinals of those left out as unfinished; a UserError when
 * the session has no turn `atTurn` or it is not finished (on either store).
 */
export function planFork<T extends { ordinal: number; status: TurnStatus }>(label: string, turns: readonly T[], atTurn: number): { copied: T[]; unfinished: number[] } {
  const target = Number.isInteger(atTurn) ? turns.find((turn) => turn.ordinal === atTurn) : undefined;
  if (!target) {
    throw new UserError(
      turns.length === 0
        ? `Session ${label} has no turns to fork from.`
        : `Session ${label} has ${turnsPhrase(turns.map((turn) => turn.ordinal))}; there is no turn ${atTurn} to fork at.`,
      { hint: `See its turns with: ragline sessions show ${label}`, exitCode: 2 },
    );
  }
  if (target.status === 'pending') {
    const earlier = turns.filter((turn) => turn.ordinal < atTurn && turn.status !== 'pending').at(-1);
    throw new UserError(`Turn ${atTurn} of session ${label} is not finished: it is still being answered, or its chat was stopped before it ended.`, {
      hint: earlier ? `Fork at an earlier turn (e.g. --at ${earlier.ordinal}), or at this one once its answer is stored.` : 'Fork at this turn once its answer is stored.',
      exitCode: 2,
    });
  }
  return {
    copied: turns.filter((turn) => turn.ordinal <= atTurn && turn.status !== 'pending'),
    unfinished: turns.filter((turn) => turn.ordinal <= atTurn && turn.status === 'pending').map((turn) => turn.ordinal),
  };
}

/**
 * The turns a session holds, in words: "turns 1 to 3", "turn 2", or "turns 2 to 5" after
 * `prune` removed the first (ordinals are kept, so they need not start at 1).
 */
export function turnsPhrase(ordinals: readonly number[]): string {
  if (ordinals.length === 0) return 'no turns';
  const first = Math.min(...ordinals);
  const last = Math.max(...ordinals);
  if (ordinals.length === 1) return `only turn ${first}`;
  if (ordinals.length === last - first + 1) return `turns ${first} to ${last}`;
  return ordinals.length <= 8 ? `turns ${ordinals.join(', ')}` : `${ordinals.length} turns, numbered ${first} to ${last} with gaps`;
}

/** The ordinals of a session's turns, in order. */
export function turnOrdinals(db: Db, sessionId: string): number[] {
  return db.prepare('SELECT ordinal FROM turns WHERE session_id = ? ORDER BY ordinal').pluck().all(sessionId) as number[];
}

/** A table's columns minus `except`: read from the schema so columns added by later migrations are copied too. */
function columnsOf(db: Db, table: string, except: string[]): string[] {
  const names = db.prepare(`SELECT name FROM pragma_table_info('${table}')`).pluck().all() as string[];
  return names.filter((name) => !except.includes(name));
}

/**
 * A retrieved chunk's row of turn_chunks, in column order (turn_id, rank, chunk_id,
 * document_path, start_line, end_line, locator, heading, text_hash, score, vector_rank,
 * vector_distance, keyword_rank, bm25): one list for the SQLite and the Postgres store.
 */
export function turnChunkValues(turnId: number, chunk: TurnChunkInput): unknown[] {
  return [
    turnId,
    chunk.rank,
    chunk.chunkId,
    chunk.documentPath,
    chunk.startLine,
    chunk.endLine,
    chunk.locator,
    chunk.heading,
    chunk.textHash,
    chunk.score,
    chunk.vectorRank ?? null,
    chunk.vectorDistance ?? null,
    chunk.keywordRank ?? null,
    chunk.bm25 ?? null,
  ];
}
