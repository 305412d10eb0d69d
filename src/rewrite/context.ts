// Which of the conversation's topics an offline rewrite adds as context, and in what
// order: a logistic regression over where and how recently a topic was said, how much
// weight it gathered and how rare its words are in the index, fitted on MTRAG's
// reference rewrites and bench/realdocs' marked referents by bench/lab/fit-context-model.mjs,
// which writes context-model.json beside this file (bench/results/offline-rewrite.md:
// on what, and how it did on the conversations the fit did not see).

import type { Topic } from '../domain/index.js';
import { stem } from '../text/stem.js';
import { tokenize } from '../text/tokenize.js';
import fitted from './context-model.json' with { type: 'json' };

/** A logistic regression: feature name -> coefficient (`bias` the intercept), and the least probability a topic is added at. */
export interface ContextModel {
  weights: Record<string, number>;
  threshold: number;
}

export const CONTEXT_MODEL: ContextModel = fitted;

export const FEATURES = ['last', 'recency', 'question', 'rewrite', 'answer', 'weight', 'rarity', 'words', 'inLastQuestion'] as const;

/** The stems of the last question's words. */
export function readLastQuestion(text: string): Set<string> {
  return new Set(tokenize(text, { identifiers: true }).map((word) => stem(word)));
}

/** The model's inputs for one topic, each in [0, 1]. */
export function topicFeatures(topic: Topic, latest: number, last: ReadonlySet<string>, termShare: ((word: string) => number) | undefined): Record<(typeof FEATURES)[number], number> {
  const words = topic.term.toLowerCase().split(/\s+/).filter(Boolean);
  const rarity = words.map((word) => {
    const share = termShare?.(word) ?? 0;
    return share > 0 ? Math.min(1, -Math.log10(share) / 5) : 1;
  });
  return {
    last: topic.lastTurn === latest ? 1 : 0,
    recency: 1 / (1 + latest - topic.lastTurn),
    question: topic.source === 'question' ? 1 : 0,
    rewrite: topic.source === 'rewrite' ? 1 : 0,
    answer: topic.source === 'answer' ? 1 : 0,
    weight: Math.min(1, topic.weight / 3),
    rarity: rarity.reduce((sum, x) => sum + x, 0) / Math.max(1, rarity.length),
    words: Math.min(words.length, 4) / 4,
    inLastQuestion: words.some((word) => last.has(stem(word))) ? 1 : 0,
  };
}

export function probability(values: Record<string, number>, model: ContextModel): number {
  let z = model.weights.bias ?? 0;
  for (const [name, value] of Object.entries(values)) z += (model.weights[name] ?? 0) * value;
  return 1 / (1 + Math.exp(-z));
}

/** The topics with the model's probability that each belongs in the context, most likely first. */
export function rankContext(topics: readonly Topic[], lastQuestion: string, termShare: ((word: string) => number) | undefined, model: ContextModel = CONTEXT_MODEL): { topic: Topic; score: number }[] {
  if (topics.length === 0) return [];
  const latest = Math.max(...topics.map((topic) => topic.lastTurn));
  const last = readLastQuestion(lastQuestion);
  return topics.map((topic) => ({ topic, score: probability(topicFeatures(topic, latest, last, termShare), model) })).sort((a, b) => b.score - a.score);
}
