// Turns any user text into a safe FTS5 MATCH expression. User text is never passed to
// FTS5 as syntax: it is tokenized here and every token is emitted as a double-quoted
// string (embedded quotes doubled), joined with OR (or AND), so words such as AND, NOT,
// NEAR and characters such as * ^ : - + ( " cannot form operators or cause a syntax error.
// Names such as C++ and C# are spelled as words first, as the indexed text is (symbols.ts).

import { indexedTokens } from '../text/symbols.js';
import { STOPWORDS } from '../text/stopwords.js';

/** Options for {@link buildFtsQuery}. */
export interface FtsQueryOptions {
  /** How terms are combined. `OR` ranks by bm25 over any match (measured best); `AND` needs all. Default `OR`. */
  operator?: 'OR' | 'AND';
  /** Drop English stopwords when at least one other term remains. Default true. */
  dropStopwords?: boolean;
  /** Keep identifiers such as `max_connections` as one quoted token (FTS5 reads it as a phrase). Default true. */
  identifiers?: boolean;
  /** At most this many distinct terms, in order of first appearance. Default 64. */
  maxTerms?: number;
  /** Extra terms appended (e.g. pseudo-relevance feedback); tokenized and quoted the same way. */
  extraTerms?: readonly string[];
}

/** Quotes one token as an FTS5 string: `he"llo` -> `"he""llo"`. */
export function quoteFtsToken(token: string): string {
  return `"${token.replace(/"/g, '""')}"`;
}

/**
 * Builds an FTS5 MATCH expression from arbitrary user text, or returns null when no
 * searchable token is left (empty text, punctuation, emoji only...). The result is
 * always valid FTS5 syntax for a table using the unicode61 (optionally porter) tokenizer.
 */
export function buildFtsQuery(userText: string, options: FtsQueryOptions = {}): string | null {
  const operator = options.operator ?? 'OR';
  const dropStopwords = options.dropStopwords ?? true;
  const maxTerms = options.maxTerms ?? 64;
  const tokens = indexedTokens(userText, { identifiers: options.identifiers ?? true });
  for (const extra of options.extraTerms ?? []) tokens.push(...indexedTokens(extra, { identifiers: true }));

  const distinct: string[] = [];
  const seen = new Set<string>();
  for (const t of tokens) {
    if (seen.has(t)) continue;
    seen.add(t);
    distinct.push(t);
  }
  let terms = distinct;
  if (dropStopwords) {
    const content = distinct.filter((t) => !STOPWORDS.has(t));
    if (content.length > 0) terms = content;
  }
  terms = terms.slice(0, Math.max(1, maxTerms));
  if (terms.length === 0) return null;
  return terms.map(quoteFtsToken).join(operator === 'AND' ? ' AND ' : ' OR ');
}

/**
 * The query's adjacent pairs of content words as FTS5 phrases joined with OR
 * (`"mobile sdk" OR "sdk install"`), or null when there is no such pair. Ranked by bm25
 * and added with a small weight to the terms' bm25, this rewards chunks where the
 * query's words stand next to each other (sequential dependence). Pairs with a stopword
 * are left out: matching "the mobile" reads the position lists of "the" in every chunk
 * (10 ms of a 100k-chunk search, against 1 ms without) for no measured gain.
 */
export function buildFtsPhraseQuery(userText: string, maxPhrases = 64): string | null {
  const tokens = indexedTokens(userText);
  const phrases = new Set<string>();
  for (let i = 0; i + 1 < tokens.length && phrases.size < maxPhrases; i++) {
    const a = tokens[i];
    const b = tokens[i + 1];
    if (STOPWORDS.has(a) || STOPWORDS.has(b)) continue;
    phrases.add(quoteFtsToken(`${a} ${b}`));
  }
  return phrases.size > 0 ? [...phrases].join(' OR ') : null;
}
