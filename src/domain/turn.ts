// A chat turn's vocabulary: its status, what kind of answer it gave, which models
// it used, how long each stage took and what it spent in tokens. The chat yields
// these in its events and the store records them as they are.

import type { TokenUsage } from './usage.js';

export type TurnStatus = 'pending' | 'answered' | 'interrupted' | 'failed';
export type FinishedStatus = Exclude<TurnStatus, 'pending'>;
/** `search`: a retrieval-only turn (the MCP `search` tool): the chunks are its result, there is no answer. */
export type AnswerKind = 'llm' | 'extractive' | 'small_talk' | 'search';

export interface TurnModels {
  rewrite?: string;
  chat?: string;
  embed?: string;
}

/** Milliseconds per stage. */
export interface TurnTimings {
  historyMs: number;
  /** Part of historyMs spent (re)computing the running summary. */
  summaryMs: number;
  rewriteMs: number;
  /** Embedding the standalone query and searching. */
  retrieveMs: number;
  answerMs: number;
  /** Writing the pending row and the finished turn. */
  persistMs: number;
  totalMs: number;
}

export interface TurnUsage {
  rewrite?: TokenUsage;
  answer?: TokenUsage;
  /** Tokens spent summarising turns that fell out of the history budget. */
  summary?: TokenUsage;
  /** Tokens spent extracting the exchange's topics with a model. */
  topics?: TokenUsage;
}
