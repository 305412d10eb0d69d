// How well a rewrite matches the reference rewrite, measured on what it adds to the
// question rather than on what it retrieves: the content words (stemmed, stopwords
// out) a rewrite adds to the question, against the ones the reference adds. A rewrite
// that retrieves well only because the raw question is fused back in shows here.

import { stem } from '../text/stem.js';
import { isStopword } from '../text/stopwords.js';
import { tokenize } from '../text/tokenize.js';

/** Stems of the content words of `text`: no stopwords, no one-letter words, no bare numbers. */
export function contentStems(text: string): Set<string> {
  const stems = new Set<string>();
  for (const word of tokenize(text)) {
    if (word.length < 2 || isStopword(word) || /^\d+$/.test(word)) continue;
    stems.add(stem(word));
  }
  return stems;
}

/** Stems `rewrite` has that `question` has not. */
export function addedStems(question: string, rewrite: string): Set<string> {
  const own = contentStems(question);
  return new Set([...contentStems(rewrite)].filter((word) => !own.has(word)));
}

export interface AddedTermScore {
  /** Share of the reference's added terms the rewrite also adds; undefined when the reference adds none. */
  recall?: number;
  /** Share of the rewrite's added terms the reference also adds; undefined when the rewrite adds none. */
  precision?: number;
}

/** Added-term recall and precision of one rewrite against the reference rewrite of the same question. */
export function scoreAddedTerms(question: string, rewrite: string, reference: string): AddedTermScore {
  const wanted = addedStems(question, reference);
  const added = addedStems(question, rewrite);
  let shared = 0;
  for (const word of added) if (wanted.has(word)) shared++;
  return {
    ...(wanted.size > 0 ? { recall: shared / wanted.size } : {}),
    ...(added.size > 0 ? { precision: shared / added.size } : {}),
  };
}

export interface AddedTermSummary {
  /** Mean recall over the turns whose reference adds a term (a rewrite adding nothing scores 0). */
  recall: number;
  /** Turns the recall is averaged over. */
  recallN: number;
  /** Mean precision over the turns with a reference where the rewrite adds a term. */
  precision: number;
  /** Turns the precision is averaged over. */
  precisionN: number;
}

/** Means of per-turn scores, each over the turns where it is defined. */
export function summariseAddedTerms(scores: readonly AddedTermScore[]): AddedTermSummary {
  const recalls = scores.flatMap((score) => (score.recall === undefined ? [] : [score.recall]));
  const precisions = scores.flatMap((score) => (score.precision === undefined ? [] : [score.precision]));
  const mean = (values: number[]) => (values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length);
  return { recall: mean(recalls), recallN: recalls.length, precision: mean(precisions), precisionN: precisions.length };
}
