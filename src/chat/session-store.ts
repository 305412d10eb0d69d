// Sessions, turns and judgments behind one asynchronous interface, so the
// operations on them (src/app/sessions.ts, replay, eval's session tasks) run on
// either store: the SQLite file (its synchronous functions, wrapped here) or
// Postgres (./postgres/session-store.ts), where a user sees only their own sessions.

import type { Topic } from '../domain/index.js';
import { sqliteTurnStore, type TurnStore } from './stages/store.js';
import { termShares, type TermShare } from '../retrieve/term-stats.js';
import { sqliteChunkHashes, type ChunkHashes } from '../store/chunk-hashes.js';
import type { Db } from '../store/db.js';
import { DocumentNaming } from '../store/document-names.js';
import { clearJudgment, judgeTurn, loadJudgments, requireTurnId, type JudgmentChange, type TurnJudgment } from '../store/judgments.js';
import {
  createSession,
  findSession,
  finishTurn,
  forkSession,
  getSession,
  latestTopics,
  listSessions,
  loadTurnChunks,
  loadTurns,
  removeSession,
  renameSession,
  startTurn,
  type FinishTurnInput,
  type ForkedSession,
  type SessionInfo,
  type SessionListing,
  type StoredTurn,
  type StoredTurnChunk,
} from '../store/sessions.js';

/** What judgments and replay read of the index: document names and where stored chunks stand. */
export interface IndexView {
  names: DocumentNaming;
  /** The chunks of the text hashes asked for (all of them on SQLite). */
  chunks: ChunkHashes;
  /** How common a word is in the index; undefined where the store cannot say cheaply. */
  termShare?: TermShare;
}

/** A turn of a session written whole (a saved rerun). */
export interface WrittenTurn {
  question: string;
  finish: FinishTurnInput;
}

export interface SessionStore {
  /** Every session (of this user, on Postgres), most recently active first. */
  list(): Promise<SessionListing[]>;
  /** The session with this id or name, or `last` (the most recently active). */
  find(ref: string): Promise<SessionInfo | undefined>;
  get(id: string): Promise<SessionInfo | undefined>;
  create(options?: { name?: string }): Promise<SessionInfo>;
  rename(id: string, name: string | null): Promise<SessionInfo>;
  /** Removes a session with its turns, their chunks and judgments; false when there was none. */
  remove(id: string): Promise<boolean>;
  /** A new session holding copies of the finished turns 1..`atTurn` of `sourceId` (planFork). */
  fork(sourceId: string, atTurn: number, name?: string): Promise<ForkedSession>;
  /** A session's turns, oldest first. */
  turns(sessionId: string): Promise<StoredTurn[]>;
  /** The chunks a turn retrieved, by rank. */
  turnChunks(turnId: number): Promise<StoredTurnChunk[]>;
  /** The topics the next turn of `sessionId` starts from. */
  latestTopics(sessionId: string): Promise<Topic[]>;
  /** Judgments of a session's turns, by turn id. */
  judgments(sessionId: string): Promise<Map<number, TurnJudgment>>;
  /** Applies `change` to a turn's judgment in one transaction. */
  judge(turnId: number, change: JudgmentChange): Promise<TurnJudgment>;
  clearJudgment(turnId: number): Promise<void>;
  /** The id of turn `ordinal`; a UserError naming the turns there are when there is none. */
  turnId(session: SessionInfo, ordinal: number): Promise<number>;
  /** A new session named `name` holding `turns`, written in one transaction. */
  write(name: string, turns: WrittenTurn[]): Promise<SessionInfo>;
  /** Document names and the chunks holding `textHashes`, for judgments and replay. */
  index(textHashes: readonly string[]): Promise<IndexView>;
  /** Where a (re-run) turn's history is read. */
  turnStore(): TurnStore;
}

/** The SQLite store's sessions (src/store/sessions.ts, judgments.ts) behind SessionStore. */
export function sqliteSessionStore(db: Db): SessionStore {
  return {
    list: async () => listSessions(db),
    find: async (ref) => findSession(db, ref),
    get: async (id) => getSession(db, id),
    create: async (options) => createSession(db, options),
    rename: async (id, name) => renameSession(db, id, name),
    remove: async (id) => removeSession(db, id),
    fork: async (sourceId, atTurn, name) => forkSession(db, sourceId, atTurn, name),
    turns: async (sessionId) => loadTurns(db, sessionId),
    turnChunks: async (turnId) => loadTurnChunks(db, turnId),
    latestTopics: async (sessionId) => latestTopics(db, sessionId),
    judgments: async (sessionId) => loadJudgments(db, sessionId),
    judge: async (turnId, change) => judgeTurn(db, turnId, change),
    clearJudgment: async (turnId) => clearJudgment(db, turnId),
    turnId: async (session, ordinal) => requireTurnId(db, session, ordinal),
    write: async (name, turns) =>
      db
        .transaction(() => {
          const session = createSession(db, { name });
          for (const turn of turns) finishTurn(db, startTurn(db, session.id, turn.question).id, turn.finish);
          return findSession(db, session.id) ?? session;
        })
        .immediate(),
    index: async () => ({ names: new DocumentNaming(db), chunks: sqliteChunkHashes(db), termShare: termShares(db) }),
    turnStore: () => sqliteTurnStore(db),
  };
}
