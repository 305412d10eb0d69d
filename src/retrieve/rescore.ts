// Two cheap second-stage signals on top of bm25 + vectors, measured on bench/mtrag
// (bench/lab/RESULTS.md, "Phrases and title coverage"):
// - phrase bm25: chunks where the query's words stand next to each other score better;
// - title coverage: chunks whose document title / heading path contains the query's
//   words move up. Both are pure functions over already retrieved candidates.

import type { FusedHit, RankedHit } from './fuse.js';
import { indexedTokens, keywordText, stem, STOPWORDS, tokenize } from '../text/index.js';

/** Weight of the phrase bm25 added to the terms' bm25. */
export const DEFAULT_PHRASE_WEIGHT = 0.5;
/** Fused-score bonus for a title that contains every query term (proportionally less for fewer). */
export const DEFAULT_TITLE_WEIGHT = 0.8;

/**
 * Keyword score of a chunk = its terms bm25 + `weight` x its phrase bm25 (both "lower is
 * better"). A chunk that matched a phrase but is missing from `termHits` (which is cut at
 * some depth) gets the last term score, the best it can have had. Returns the best `n`.
 */
export function addPhraseScores<Id>(
  termHits: readonly RankedHit<Id>[],
  phraseHits: readonly RankedHit<Id>[],
  weight: number,
  n: number,
): RankedHit<Id>[] {
  const scores = new Map<Id, number>(termHits.map((hit) => [hit.id, hit.score]));
  if (termHits.length > 0) {
    const floor = termHits[termHits.length - 1]!.score;
    for (const hit of phraseHits) scores.set(hit.id, (scores.get(hit.id) ?? floor) + weight * hit.score);
  }
  const order = new Map(termHits.map((hit, i) => [hit.id, i]));
  return [...scores]
    .sort((a, b) => a[1] - b[1] || (order.get(a[0]) ?? Infinity) - (order.get(b[0]) ?? Infinity))
    .slice(0, n)
    .map(([id, score], i) => ({ id, rank: i + 1, score }));
}

/** The query's distinct Porter stems as the keyword side sees them (stopwords dropped unless nothing else is left). */
export function queryStems(query: string): string[] {
  const tokens = indexedTokens(query);
  const content = tokens.filter((t) => !STOPWORDS.has(t));
  return [...new Set((content.length > 0 ? content : tokens).map(stem))];
}

/** Share of `stems` found in `title` (0..1), read as the keyword index reads it (`createServer` holds create and server). */
export function titleCoverage(stems: readonly string[], title: string): number {
  if (stems.length === 0 || !title) return 0;
  // keywordText spells C++ and the like already: tokenised as it is, not spelled twice.
  const words = new Set(tokenize(keywordText(title)).map(stem));
  let found = 0;
  for (const s of stems) if (words.has(s)) found++;
  return found / stems.length;
}

/**
 * Adds `weight` x title coverage to the fused score of the first `n` hits (whose titles
 * `titleOf` gives: document title and heading path) and re-sorts them; the rest keep their order after them.
 */
export function boostTitleMatches<Id>(
  fused: readonly FusedHit<Id>[],
  query: string,
  titleOf: (id: Id) => string,
  weight: number,
  n: number,
): FusedHit<Id>[] {
  const stems = queryStems(query);
  if (weight === 0 || stems.length === 0) return [...fused];
  const head = fused.slice(0, n).map((hit, i) => ({ hit: { ...hit, score: hit.score + weight * titleCoverage(stems, titleOf(hit.id)) }, i }));
  head.sort((a, b) => b.hit.score - a.hit.score || a.i - b.i);
  const out = [...head.map((h) => h.hit), ...fused.slice(n).map((hit) => ({ ...hit }))];
  out.forEach((hit, i) => (hit.rank = i + 1));
  return out;
}
