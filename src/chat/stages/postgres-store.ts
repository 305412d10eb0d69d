// A turn stored in Postgres (store/postgres/sessions.ts), in the sessions of one
// owner. The offline rewriter is not told how common a word is there (its share
// would cost a count per word); the extractive answer's name counts are read
// before it asks for them (every content word of the question: a superset of the
// parts of its names), each counted only as far as the answer reads it.

import { chunksHoldingInPostgres } from '../../store/postgres/inspect.js';
import { indexedTokens } from '../../text/symbols.js';
import { isStopword } from '../../text/stopwords.js';
import { RARE_NAME_SHARE } from '../extractive.js';
import { pgFinishTurn, pgHistory, pgStartTurn } from '../../store/postgres/sessions.js';
import type { PostgresStore } from '../../store/postgres/store.js';
import type { IndexNames, TurnStore } from './store.js';

export function postgresTurnStore(store: PostgresStore, owner: string): TurnStore {
  return {
    startTurn: (sessionId, question, create) => pgStartTurn(store, owner, sessionId, question, create),
    finishTurn: (turnId, input) => pgFinishTurn(store, turnId, input),
    history: (sessionId, beforeOrdinal) => pgHistory(store, sessionId, beforeOrdinal),
    termShare: () => undefined,
    names: async (question) => {
      const words = [...new Set(indexedTokens(question).filter((word) => !isStopword(word)))];
      // The answer asks whether a name is held at all, and whether by at most a share of the index.
      const { total, counts } = await chunksHoldingInPostgres(store, words, (chunks) => Math.floor(RARE_NAME_SHARE * chunks));
      const names: IndexNames = {
        // A word not counted (none should be) reads as common: never as a name the documents lack.
        holding: (word, atMost) => Math.min(counts.get(word.toLowerCase()) ?? Infinity, atMost + 1),
        total: () => total,
      };
      return names;
    },
  };
}
