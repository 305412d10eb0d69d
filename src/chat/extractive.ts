// The offline answer: no language model, so quote. The retrieved chunks are cut
// into sentences (list items and code lines count as sentences), each scored by
// how many of the standalone query's content terms it contains, compared as Porter
// stems with the same tokenizer and stopword list the keyword index uses. The best
// few are returned, each followed by the [n] of its chunk. Terms the user typed
// weigh more than terms the rewrite added (the added ones are context for the
// search, e.g. "API key" for "does it expire?", not what is asked).
//
// Coverage threshold: quoting the "best" sentences of passages that merely share
// a word with the question is noise. So the documents count as covering the
// question only when some retrieved chunk (its text, heading and title) contains
// at least MIN_CHUNK_COVERAGE (half) of the query's distinct content terms, and a
// sentence of it contains at least one. A two-term question therefore needs one
// term in a chunk, a four-term question two; "What is the capital of France?"
// against product docs has none and gets NOT_COVERED instead of quotes.

import type { RetrievedChunk } from '../retrieve/search.js';
import { isStopword, stem, tokenize } from '../text/index.js';

export const EXTRACTIVE_LABEL = 'Extractive answer (no language model configured):';
export const NOT_COVERED = "The documents don't seem to cover this.";
/** Share of the query's content terms the best chunk must contain. */
export const MIN_CHUNK_COVERAGE = 0.5;
/** Sentences quoted at most. */
export const MAX_SENTENCES = 3;
const MAX_SENTENCE_CHARS = 400;
const MIN_SENTENCE_TOKENS = 3;

export interface ExtractedSentence {
  text: string;
  /** Number of the chunk it was taken from (1-based position in the retrieved list). */
  n: number;
  /** idf-weighted share of the query terms matched, plus small bonuses for chunk coverage and rank. */
  score: number;
}

export interface ExtractiveAnswer {
  /** The text to show and store. */
  text: string;
  /** False when the coverage threshold was not met (text is the not-covered message). */
  covered: boolean;
  sentences: ExtractedSentence[];
  /** Distinct content-term stems of the query. */
  queryTerms: string[];
  /** Best share of query terms found in one chunk. */
  bestCoverage: number;
}

/** Distinct stems of the non-stopword tokens of `text`. */
export function contentTerms(text: string): Set<string> {
  const terms = new Set<string>();
  for (const token of tokenize(text)) {
    if (isStopword(token)) continue;
    terms.add(stem(token));
  }
  return terms;
}

/** Weight of a query term the rewrite added, relative to one the user typed. */
const ADDED_TERM_WEIGHT = 0.3;

/**
 * `query` is the standalone query; `question`, when given, the user's own words:
 * sentences are scored mostly on those.
 */
export function extractiveAnswer(query: string, chunks: readonly RetrievedChunk[], question?: string): ExtractiveAnswer {
  const queryTerms = [...contentTerms(query)];
  const typed = question === undefined ? undefined : contentTerms(question);
  const notCovered = (bestCoverage: number): ExtractiveAnswer => ({
    text: `${EXTRACTIVE_LABEL} ${NOT_COVERED}`,
    covered: false,
    sentences: [],
    queryTerms,
    bestCoverage,
  });
  if (queryTerms.length === 0 || chunks.length === 0) return notCovered(0);

  // Sentences of the chunks that cover enough of the query, with their terms.
  const pool: { text: string; n: number; coverage: number; terms: Set<string> }[] = [];
  let bestCoverage = 0;
  chunks.forEach((chunk, index) => {
    const chunkTerms = contentTerms(`${chunk.title ?? ''}\n${chunk.heading}\n${chunk.text}`);
    // Coverage is judged on what the user typed when they typed content words: a
    // rewrite's added context must not make a relevant chunk look off-topic.
    const judged = typed !== undefined && typed.size > 0 ? [...typed] : queryTerms;
    const coverage = judged.filter((term) => chunkTerms.has(term)).length / judged.length;
    bestCoverage = Math.max(bestCoverage, coverage);
    if (coverage < MIN_CHUNK_COVERAGE) return;
    for (const sentence of splitSentences(chunk.text)) pool.push({ text: sentence, n: index + 1, coverage, terms: contentTerms(sentence) });
  });
  // Rarer query terms weigh more (idf over the pooled sentences): "respond" says more than "Orbitly".
  const weight = new Map<string, number>();
  for (const term of queryTerms) {
    const df = pool.filter((sentence) => sentence.terms.has(term)).length;
    const added = typed !== undefined && typed.size > 0 && !typed.has(term);
    weight.set(term, Math.log(1 + (pool.length + 1) / (df + 1)) * (added ? ADDED_TERM_WEIGHT : 1));
  }
  const totalWeight = queryTerms.reduce((sum, term) => sum + weight.get(term)!, 0);
  const candidates: ExtractedSentence[] = [];
  for (const sentence of pool) {
    const matched = queryTerms.filter((term) => sentence.terms.has(term));
    if (matched.length === 0) continue;
    const share = matched.reduce((sum, term) => sum + weight.get(term)!, 0) / totalWeight;
    candidates.push({ text: sentence.text, n: sentence.n, score: share + 0.15 * sentence.coverage + 0.05 / sentence.n });
  }
  if (bestCoverage < MIN_CHUNK_COVERAGE || candidates.length === 0) return notCovered(bestCoverage);

  candidates.sort((a, b) => b.score - a.score || a.n - b.n);
  const best = candidates[0]!.score;
  const chosen: ExtractedSentence[] = [];
  const seen = new Set<string>();
  for (const candidate of candidates) {
    if (chosen.length >= MAX_SENTENCES || candidate.score < best * 0.5) break;
    const key = candidate.text.toLowerCase();
    if (seen.has(key)) continue; // overlapping chunks repeat sentences
    seen.add(key);
    chosen.push(candidate);
  }
  const lines = chosen.map((sentence) => `- ${sentence.text} [${sentence.n}]`);
  return { text: `${EXTRACTIVE_LABEL}\n${lines.join('\n')}`, covered: true, sentences: chosen, queryTerms, bestCoverage };
}

/**
 * Sentences of a chunk's text: paragraphs split at sentence ends; list items, table
 * rows and code lines on their own; headings, fences and fragments of fewer than
 * three words dropped.
 */
export function splitSentences(text: string): string[] {
  const out: string[] = [];
  let paragraph: string[] = [];
  let inFence = false;
  const flush = () => {
    if (paragraph.length === 0) return;
    const joined = paragraph.join(' ');
    paragraph = [];
    for (const sentence of joined.split(/(?<=[.!?])\s+(?=["'`(\[]?[A-Z0-9])/)) add(sentence);
  };
  // A sentence ending in ':' or '?' introduces what follows ("Working without a
  // browser?" / "If a run is still going, ... decides:"): keep the two together.
  let leadIn = '';
  const add = (raw: string, last = false) => {
    let sentence = `${leadIn}${raw.replace(/\s+/g, ' ').trim()}`.trim();
    leadIn = '';
    if (!last && /[:?]$/.test(sentence) && sentence.length < MAX_SENTENCE_CHARS / 2) {
      leadIn = `${sentence} `;
      return;
    }
    if (tokenize(sentence).length < MIN_SENTENCE_TOKENS) return;
    if (sentence.length > MAX_SENTENCE_CHARS) sentence = `${sentence.slice(0, MAX_SENTENCE_CHARS - 1).trimEnd()}…`;
    out.push(sentence);
  };
  for (const rawLine of text.split(/\r?\n/)) {
    const line = rawLine.trim();
    if (/^(```|~~~)/.test(line)) {
      flush();
      inFence = !inFence;
      continue;
    }
    if (inFence) {
      add(line);
      continue;
    }
    if (line === '' || /^#{1,6}\s/.test(line) || /^[-=*_|:\s]{3,}$/.test(line)) {
      flush();
      continue;
    }
    const item = /^(?:[-*+]|\d+[.)])\s+(.*)$/.exec(line);
    if (item || line.startsWith('|')) {
      flush();
      add((item ? item[1]! : line.replace(/\|/g, ' ')).trim());
      continue;
    }
    paragraph.push(line.replace(/^>\s?/, ''));
  }
  flush();
  if (leadIn) add('', true);
  return out;
}
