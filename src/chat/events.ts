// What one chat turn yields, in order: `start`, `rewrite`, `retrieval` (absent for
// small talk), `token`s, then `error` (only when the turn failed) and always `done`
// last. The REPL renders them, `--json` prints them as NDJSON, tests assert on them.

import type { RetrievedChunk } from '../retrieve/search.js';
import type { AnswerKind, FinishedStatus, RewriteDecision, TurnModels, TurnTimings, TurnUsage } from '../domain/index.js';

/** The question is stored (as a pending turn); the pipeline starts. */
export interface StartEvent {
  type: 'start';
  sessionId: string;
  turnId: number;
  /** 1-based position of this turn in its session. */
  ordinal: number;
  question: string;
  /**
   * Set when the chat's session was removed by another process (`sessions rm`,
   * `prune`) before this question: the question started a new session
   * (`sessionId`) instead of being lost.
   */
  removedSession?: { id: string; name: string | null };
}

/** The question as the search will see it. */
export interface RewriteEvent {
  type: 'rewrite';
  question: string;
  standaloneQuery: string;
  decision: RewriteDecision;
  reason: string;
  /** Model that rewrote, or the offline rewriter's id. */
  model?: string;
  ms: number;
}

/** What the standalone query found, ranked, with score parts. */
export interface RetrievalEvent {
  type: 'retrieval';
  query: string;
  /** The question as asked, searched beside a rewrite and fused in with this weight. */
  fusedWith?: { query: string; weight: number };
  chunks: RetrievedChunk[];
  ms: number;
}

/** A piece of the answer as it arrives. */
export interface TokenEvent {
  type: 'token';
  text: string;
}

/** The answer model has started reasoning before it answers (its reasoning is not shown or stored). */
export interface ThinkingEvent {
  type: 'thinking';
}

/**
 * The `text` given as tokens so far was the model's reasoning (it closed a `</think>`
 * it never opened): it is not part of the answer and is not stored.
 */
export interface RetractEvent {
  type: 'retract';
  text: string;
}

/** Something the turn is waiting on, e.g. `loading model qwen3:8b …`. */
export interface StatusEvent {
  type: 'status';
  text: string;
}

/** One `[n]` the answer cites, resolved to the chunk it numbered. */
export interface Citation {
  n: number;
  chunkId: number;
  /** e.g. `guides/auth.md:12-40`. */
  location: string;
}

/** The turn ended and is stored. Always the last event. */
export interface DoneEvent {
  type: 'done';
  turnId: number;
  ordinal: number;
  status: FinishedStatus;
  /** The whole answer; partial when interrupted, empty when failed before any token. */
  answer: string;
  answerKind: AnswerKind | null;
  /** Only numbers the answer actually cites, in order of first citation. */
  citations: Citation[];
  usage: TurnUsage;
  timings: TurnTimings;
  models: TurnModels;
}

/** The turn failed (answer model or retrieval error); a `done` with status `failed` follows. */
export interface ErrorEvent {
  type: 'error';
  message: string;
  /** What to do about it, when known. */
  hint?: string;
  status: 'failed';
}

export type TurnEvent = StartEvent | RewriteEvent | RetrievalEvent | StatusEvent | ThinkingEvent | TokenEvent | RetractEvent | DoneEvent | ErrorEvent;
