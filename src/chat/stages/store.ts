// Where a turn is stored, and what it reads of the index besides its search: the
// SQLite store (synchronous, wrapped here) or Postgres (asynchronous). The stages
// await each call, so either serves the same turn.

import type { Db } from '../../store/db.js';
import type { FinishTurnInput, HistoryTurn, SessionInfo, StartedTurn } from '../../store/sessions.js';
import { finishTurn, latestConversationState, loadHistoryTurns, startTurn } from '../../store/sessions.js';
import { chunkCount, chunksHolding, termShares, type TermShare } from '../../retrieve/term-stats.js';
import type { Topic, TurnTimings } from '../../domain/index.js';

/** The conversation's state as of a turn: topics and running summary. */
export interface StoredConversationState {
  topics: Topic[];
  summary: string | null;
  summaryThrough: number | null;
}

/** What the extractive answer asks of the index about the names a question types. */
export interface IndexNames {
  /** How many chunks hold `word`, counted up to `atMost` + 1. */
  holding(word: string, atMost: number): number;
  /** How many chunks the index holds. */
  total(): number;
}

export interface TurnStore {
  /** Stores the question as the next pending turn (creating `create`, the planned session, with it). */
  startTurn(sessionId: string, question: string, create?: SessionInfo): Promise<StartedTurn>;
  /** Stores the turn's whole trail in one transaction; the timings as stored. */
  finishTurn(turnId: number, input: FinishTurnInput): Promise<TurnTimings>;
  /** The turns before `beforeOrdinal` and the state as of the latest that stored one, from one snapshot. */
  history(sessionId: string, beforeOrdinal: number): Promise<{ turns: HistoryTurn[]; state?: StoredConversationState }>;
  /** How common a word is in the index, for the offline rewriter; undefined where the store cannot say cheaply. */
  termShare(): TermShare | undefined;
  /** The index's counts for the names typed in `question` (read before the answer, which asks synchronously). */
  names(question: string): Promise<IndexNames>;
}

/** The SQLite store's turns (src/store/sessions.ts) behind TurnStore. */
export function sqliteTurnStore(db: Db): TurnStore {
  return {
    startTurn: async (sessionId, question, create) => startTurn(db, sessionId, question, { create }),
    finishTurn: async (turnId, input) => finishTurn(db, turnId, input),
    history: async (sessionId, beforeOrdinal) => {
      // One read transaction: the exchanges and the state from one snapshot (see loadHistory).
      const [turns, state] = db.transaction(() => [loadHistoryTurns(db, sessionId, beforeOrdinal), latestConversationState(db, sessionId, beforeOrdinal)] as const)();
      return { turns, state };
    },
    termShare: () => termShares(db),
    names: async () => {
      let chunks: number | undefined;
      return { holding: chunksHolding(db), total: () => (chunks ??= chunkCount(db)) }; // the count read once, when a name asks for it
    },
  };
}
