// The contract between the chat turn pipeline (src/chat) and the query rewriters:
// what a rewrite sees (the question, a window of earlier turns, tracked topics) and
// what it returns (the standalone query and a decision with a human-readable reason,
// so the user can always see why a question was or was not rewritten).

import type { ChatMessage, RewriteDecision, RewritePolicy, TokenUsage, Topic } from '../domain/index.js';

/** One earlier exchange as the rewriter sees it. */
export interface ConversationTurn {
  /** What the user typed. */
  question: string;
  /** What that question was searched as (its own rewrite, or the question itself). */
  standaloneQuery: string;
  /** The assistant's answer. */
  answer: string;
  /** The answer quotes the documents (offline): its bullets are quoted sentences, not a list of things. */
  quoted?: boolean;
}

export interface RewriteRequest {
  /** The user's new message. */
  question: string;
  /** Earlier turns, oldest first, already cut to the rewrite window. */
  history: ConversationTurn[];
  /** Tracked topics, most recent first (see `updateTopics`). */
  topics: Topic[];
  /** Running summary of turns that fell out of the history window. */
  summary?: string;
  /** What the documents are about, e.g. "the Orbitly API"; given to the model as context. */
  scope?: string;
  /** `auto`: rewrite follow-ups only; `always`: rewrite whenever there is history; `never`: search the question as typed. */
  policy: RewritePolicy;
  /**
   * Share of the indexed chunks that hold a word (0 when unknown), e.g. from FTS5's
   * vocabulary. Lets the offline rewriter tell a vague question from a specific one.
   */
  termShare?: (word: string) => number;
  signal?: AbortSignal;
}

export interface RewriteOutcome {
  /** What to search with. The raw question whenever the decision is not `rewritten`. */
  standaloneQuery: string;
  decision: RewriteDecision;
  /**
   * What the user asked, in their words, for an answer that quotes the documents: the
   * question with what it refers to put in place ("does the API key expire?"), or,
   * when the rewrite only appended context, the question without its referring words
   * ("tell me more about" for "tell me more about the second one"). Unset: the question.
   */
  asked?: string;
  /** Short human-readable phrase: the follow-up signal, why it was skipped, or why the rewrite was discarded. */
  reason: string;
  /** Id of the model or offline rewriter that produced the rewrite. */
  model?: string;
  /** Messages sent to the model, for replay and `--json`. */
  prompt?: ChatMessage[];
  usage?: TokenUsage;
  /** The provider's error message when the decision is `fallback` because the call failed. */
  error?: string;
  /**
   * How to weigh a rewritten query when searching, when the rewriter knows: the words
   * it added count `expansion` times the question's own, and the question's own results
   * are fused beside at `raw` (instead of the default raw weight).
   */
  weighting?: { expansion: number; raw: number };
}

export interface QueryRewriter {
  /** e.g. `openai:gpt-4o-mini` or `offline:rewrite-v1`. */
  readonly id: string;
  /** Never rejects for provider failures (falls back to the question); rejects when `request.signal` aborts. */
  rewrite(request: RewriteRequest): Promise<RewriteOutcome>;
}
