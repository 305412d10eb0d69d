// The retrieve stage: a rewritten query is searched beside the question as asked
// (without the words that point back: "the second one" is not searched for "second"),
// fused with `retrieval.rawWeight`, so a bad rewrite cannot lose what the question
// alone finds (measured on bench/mtrag: BENCHMARKS.md). The chat, `replay --rerun`
// and eval decide how to search a turn with `retrievalSettingsFor`.

import type { Config } from '../../config/index.js';
import { contentWords, ownWords, type RewriteOutcome } from '../../rewrite/index.js';
import type { RetrievalSettings, RetrievedChunk, Retriever } from '../../retrieve/search.js';
import type { TurnRewrite } from './rewrite.js';

/**
 * How a turn retrieves. When the rewriter says how to weigh its rewrite
 * (`outcome.weighting`, the offline rewriter on a vague question), the words it
 * added count that much and its raw weight is the default.
 */
export function retrievalSettingsFor(
  question: string,
  outcome: { decision: string; standaloneQuery: string; model?: string; weighting?: RewriteOutcome['weighting']; asked?: string },
  k: number,
  config: Config,
): RetrievalSettings {
  const rewritten = outcome.decision === 'rewritten' && outcome.standaloneQuery !== question;
  if (!rewritten) return { k };
  const rawWeight = config.retrieval.rawWeight ?? outcome.weighting?.raw ?? defaultRawWeight(outcome.model);
  // The question's own words, without those that point back: "the second one" is not searched for "second".
  const asTyped = ownWords(question);
  if (asTyped !== question && contentWords(asTyped).length === 0) return { k };
  return {
    k,
    ...(rawWeight > 0 ? { secondary: { query: asTyped, weight: rawWeight } } : {}),
    // What was asked counts whole: a referent put in place is not a word the rewrite added.
    ...(outcome.weighting ? { expansion: { core: outcome.asked ?? asTyped, weight: outcome.weighting.expansion } } : {}),
  };
}

/**
 * The raw question's weight beside a rewrite when none is configured. Measured on
 * bench/mtrag (BENCHMARKS.md): the offline rewriter's query expansion needs the
 * question as asked beside it at full weight; a model's rewrite is better trusted
 * more (0.3 beat 1 and 0.5 on both domains).
 */
export function defaultRawWeight(rewriterId: string | undefined): number {
  return rewriterId === undefined || rewriterId.startsWith('offline:') ? 1 : 0.3;
}

export interface TurnRetrieval {
  settings: RetrievalSettings;
  chunks: RetrievedChunk[];
}

/** Searches the index for a turn's rewrite, the top `k`. */
export async function retrieve(
  retriever: Pick<Retriever, 'search'>,
  question: string,
  rewrite: TurnRewrite,
  k: number,
  config: Config,
  signal?: AbortSignal,
): Promise<TurnRetrieval> {
  const settings = retrievalSettingsFor(question, rewrite.outcome, k, config);
  return { settings, chunks: await retriever.search(rewrite.standaloneQuery, settings, signal) };
}
