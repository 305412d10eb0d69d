// The gate-and-rewrite stage: what the rewriter sees of a turn (the question, the
// last `history.rewriteTurns` exchanges, tracked topics, running summary, scope,
// policy) is assembled here and nowhere else, and a rewriter that throws although
// it is meant to fall back by itself means searching with the question as asked.
// The chat, `replay --rerun` and eval all rewrite through `gateAndRewrite`.

import type { Config } from '../../config/index.js';
import type { RewritePolicy } from '../../domain/index.js';
import { isAbortError } from '../../providers/describe-error.js';
import type { QueryRewriter, RewriteOutcome, RewriteRequest } from '../../rewrite/index.js';
import { toConversationTurn, type TurnHistory } from './history.js';

/** Why a turn searched with its question as asked when the rewriter threw. */
export const REWRITER_FAILED_REASON = 'the rewriter failed; searching with the question as asked';

export interface RewriteInput {
  question: string;
  history: Pick<TurnHistory, 'verbatim' | 'topics' | 'summary'>;
  config: Config;
  policy: RewritePolicy;
  signal?: AbortSignal;
  /** How common a word is in the index (`termShares`), for the offline rewriter. */
  termShare?: (word: string) => number;
}

/** A turn's rewrite: the rewriter's outcome and what the turn searches with. */
export interface TurnRewrite {
  outcome: RewriteOutcome;
  /** The standalone query, trimmed; the question when the rewrite came out empty. */
  standaloneQuery: string;
  /** The model or offline rewriter that decided. */
  model: string;
}

/** The rewrite request of a turn: the last `history.rewriteTurns` exchanges, tracked topics, summary, scope. */
export function rewriteRequestFor(input: RewriteInput): RewriteRequest {
  const { question, history, config, policy, signal, termShare } = input;
  const window = config.history.rewriteTurns > 0 ? history.verbatim.slice(-config.history.rewriteTurns) : [];
  return {
    question,
    history: window.map(toConversationTurn),
    topics: history.topics,
    summary: history.summary,
    // resolveConfig leaves `assistant` out entirely when no scope is set.
    scope: config.assistant?.scope,
    policy,
    ...(termShare ? { termShare } : {}),
    signal,
  };
}

/** Rewrites the question to a standalone query; rejects only when aborted. */
export async function gateAndRewrite(rewriter: QueryRewriter, input: RewriteInput): Promise<TurnRewrite> {
  let outcome: RewriteOutcome;
  try {
    outcome = await rewriter.rewrite(rewriteRequestFor(input));
  } catch (error) {
    if (input.signal?.aborted || isAbortError(error)) throw error;
    // The rewriter is meant to fall back by itself; if it threw anyway, search with the question.
    outcome = {
      standaloneQuery: input.question,
      decision: 'fallback',
      reason: REWRITER_FAILED_REASON,
      error: error instanceof Error ? error.message : String(error),
    };
  }
  return { outcome, standaloneQuery: outcome.standaloneQuery.trim() || input.question, model: outcome.model ?? rewriter.id };
}
