// The sessions of one user in Postgres (store/postgres/sessions.ts) behind
// SessionStore: the same operations as on an SQLite file, each on the sessions
// `owner` has; the index is shared. The index's document names and the chunks a
// replay asks about are read once per call, as the name lookups are synchronous.

import { chunkHashesOf } from '../store/chunk-hashes.js';
import { DocumentNaming, documentRowsOf } from '../store/document-names.js';
import {
  pgClearJudgment,
  pgCreateSession,
  pgFindSession,
  pgForkSession,
  pgGetSession,
  pgIndexRows,
  pgJudgeTurn,
  pgLatestTopics,
  pgListSessions,
  pgLoadJudgments,
  pgLoadTurnChunks,
  pgLoadTurns,
  pgRemoveSession,
  pgRenameSession,
  pgTurnId,
  pgWriteSession,
} from '../store/postgres/sessions.js';
import type { PostgresStore } from '../store/postgres/store.js';
import type { SessionStore } from './session-store.js';
import { postgresTurnStore } from './stages/postgres-store.js';

export function postgresSessionStore(store: PostgresStore, owner: string): SessionStore {
  return {
    list: () => pgListSessions(store, owner),
    find: (ref) => pgFindSession(store, owner, ref),
    get: (id) => pgGetSession(store, owner, id),
    create: (options) => pgCreateSession(store, owner, options),
    rename: (id, name) => pgRenameSession(store, owner, id, name),
    remove: (id) => pgRemoveSession(store, owner, id),
    fork: (sourceId, atTurn, name) => pgForkSession(store, owner, sourceId, atTurn, name),
    turns: (sessionId) => pgLoadTurns(store, sessionId),
    turnChunks: (turnId) => pgLoadTurnChunks(store, turnId),
    latestTopics: (sessionId) => pgLatestTopics(store, sessionId),
    judgments: (sessionId) => pgLoadJudgments(store, sessionId),
    judge: (turnId, change) => pgJudgeTurn(store, turnId, change),
    clearJudgment: (turnId) => pgClearJudgment(store, turnId),
    turnId: (session, ordinal) => pgTurnId(store, session, ordinal),
    write: (name, turns) => pgWriteSession(store, owner, name, turns),
    index: async (textHashes) => {
      const { documents, chunks } = await pgIndexRows(store, textHashes);
      // termShare: not told (a count per word); the topics are ranked without it.
      return { names: new DocumentNaming(documentRowsOf(documents)), chunks: chunkHashesOf(chunks) };
    },
    turnStore: () => postgresTurnStore(store, owner),
  };
}
