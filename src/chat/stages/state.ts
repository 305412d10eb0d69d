// What one chat turn carries from stage to stage (src/chat/turn.ts composes them):
// the context it runs in, its options, and the turn state each stage fills in and
// the record stage stores.

import type { Config } from '../../config/index.js';
import type { AnswerKind, ChatMessage, RewritePolicy, TurnModels, TurnTimings, TurnUsage } from '../../domain/index.js';
import type { ChatModel } from '../../providers/types.js';
import type { RetrievedChunk, Retriever } from '../../retrieve/search.js';
import type { QueryRewriter } from '../../rewrite/index.js';
import type { Db } from '../../store/db.js';
import type { SessionInfo } from '../../store/sessions.js';
import type { TurnHistory } from './history.js';
import type { TurnRewrite } from './rewrite.js';
import { sqliteTurnStore, type TurnStore } from './store.js';

export interface TurnContext {
  /** The SQLite database the turn is stored in, unless `store` says where. */
  db?: Db;
  /** Where the turn is stored (Postgres); default the SQLite store of `db`. */
  store?: TurnStore;
  /** Searches the index; only `search` and the embedder's id are used. */
  retriever: Pick<Retriever, 'search' | 'embedder'>;
  rewriter: QueryRewriter;
  /** The answer model; undefined offline (extractive answers). */
  answerModel?: ChatModel;
  /** Summarises turns that fall out of the history budget. Default: the answer model (offline summary without one). */
  summaryModel?: ChatModel;
  /** Extracts each answered exchange's topics (the rewrite model, when one is configured); local extractor without one. */
  topicModel?: ChatModel;
  /** Models a turn waits for while they load (shown as `loading model …`). */
  loadingModels?: ChatModel[];
  config: Config;
  sessionId: string;
  /** A planned session (store's planSession) with this id: stored with the first turn's question. */
  plannedSession?: SessionInfo;
}

export interface TurnOptions {
  /** Aborting stops the turn; it is stored `interrupted` with the partial answer. */
  signal?: AbortSignal;
  /** Chunks to retrieve, instead of config.retrieval.k. */
  k?: number;
  /** Instead of config.rewrite.policy. */
  rewritePolicy?: RewritePolicy;
  /**
   * Stop after retrieval: the turn is stored `answered` with answer kind `search`
   * and no answer (the chunks are its result). It still counts as conversation
   * for the turns after it, so a follow-up is rewritten against it.
   */
  retrieveOnly?: boolean;
}

/** One turn as it goes through the stages. */
export interface TurnState {
  readonly turnId: number;
  readonly ordinal: number;
  readonly question: string;
  /** The question as the stages read it (plainQuestion): as typed, less its runs of spaces and of one punctuation mark. */
  readonly asked: string;
  readonly k: number;
  readonly policy: RewritePolicy;
  /** performance.now() when the turn began. */
  readonly started: number;
  readonly timings: TurnTimings;
  readonly usage: TurnUsage;
  readonly models: TurnModels;
  /** Set by the history stage. */
  history?: TurnHistory;
  /** Set by the gate-and-rewrite stage. */
  rewrite?: TurnRewrite;
  /** Set by the retrieve stage. */
  chunks: RetrievedChunk[];
  /** The messages sent to the answer model. */
  prompt?: ChatMessage[];
  answer: string;
  answerKind: AnswerKind | null;
  /** The exchange's topics as a model extracted them. */
  modelTopics?: string[];
  /** The record stage ran (set before it writes: a failing write is not attempted twice). */
  persisted: boolean;
}

/** Runs `work` and records how long it took under `key` (when it succeeds). */
export async function timed<T>(timings: TurnTimings, key: keyof TurnTimings, work: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const result = await work();
  timings[key] = performance.now() - started;
  return result;
}

/** Where `context`'s turn is stored: its store, else the SQLite store of its database. */
export function turnStoreOf(context: Pick<TurnContext, 'db' | 'store'>): TurnStore {
  if (context.store) return context.store;
  if (!context.db) throw new Error('A turn context needs a database or a store.');
  return sqliteTurnStore(context.db);
}

/** How long a model call may be silent before the turn says it is waiting. */
export const WAITING_NOTICE_MS = 2000;

/** Whether `promise` settles (either way) within `ms`. */
export function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  return Promise.race([
    promise.then(
      () => true,
      () => true,
    ),
    new Promise<false>((resolve) => setTimeout(resolve, ms, false).unref()),
  ]);
}
