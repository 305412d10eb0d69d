// The rewriter used without a chat model: resolves a follow-up against the tracked
// topics (or, without topics, against the earlier questions in the window). It is
// deliberately conservative: every word the user typed stays in the query and the
// rewrite only adds context terms (or puts the topic where a pronoun stood), so a
// wrong guess costs a little ranking noise, never the user's own words.

import { tokenize } from '../text/tokenize.js';
import { stem } from '../text/stem.js';
import { isStopword } from '../text/stopwords.js';
import { decide } from './decide.js';
import { rankTopics, updateTopics, wordsOf } from './topics.js';
import type { ConversationTurn, QueryRewriter, RewriteOutcome, RewriteRequest, Topic } from './types.js';

export const OFFLINE_REWRITER_ID = 'offline:rewrite-v1';

export interface OfflineRewriterOptions {
  /**
   * Most context words added to one question. Default 8: the chat also searches the
   * raw question and fuses both (retrieval.rawWeight), so the rewrite's own results
   * should be about the context; with that fusion 6-12 words beat 4 on MTRAG Cloud and
   * tie on FiQA (bench/lab/REWRITE-RESULTS.md).
   */
  maxContextWords?: number;
  /**
   * `expand`: question + "(context terms)"; `substitute`: also put the active topic
   * where a pronoun stood ("Does it expire?" -> "Does the API key expire?"). Default `substitute`.
   */
  style?: 'expand' | 'substitute';
  /** Order of context topics: `weight` (heaviest first) or `salience` (latest turn first). Default `salience` (measured better on MTRAG). */
  order?: 'weight' | 'salience';
  /**
   * A vague question (every content word in more than `share` of the indexed chunks,
   * known from `RewriteRequest.termShare`) gets at most `contextWords` context words,
   * searched at `expansionWeight` beside its own words, and its own results are fused
   * beside at `rawWeight`: its own words find little, so the context leads. A specific
   * question keeps `maxContextWords` and the default raw weight (its own words are a
   * good search). `false`: treat every question as specific. Measured on MTRAG
   * (bench/lab/REWRITE-RESULTS.md, round 3).
   */
  vague?: VagueOptions | false;
}

export interface VagueOptions {
  share: number;
  contextWords: number;
  expansionWeight: number;
  rawWeight: number;
}

export const DEFAULT_VAGUE: VagueOptions = { share: 0.01, contextWords: 4, expansionWeight: 0.85, rawWeight: 0.3 };

const PRONOUN_SUBSTITUTES = new Set(['it', 'they', 'them', 'this', 'that', 'those', 'these']);
const POSSESSIVES = new Set(['its', 'their']);

export class OfflineRewriter implements QueryRewriter {
  readonly id = OFFLINE_REWRITER_ID;
  readonly #options: Required<OfflineRewriterOptions>;

  constructor(options: OfflineRewriterOptions = {}) {
    this.#options = { maxContextWords: 8, style: 'substitute', order: 'salience', vague: DEFAULT_VAGUE, ...options };
  }

  async rewrite(request: RewriteRequest): Promise<RewriteOutcome> {
    if (request.signal?.aborted) throw request.signal.reason ?? abortError();
    return this.rewriteSync(request);
  }

  /** The same as `rewrite`, synchronously (it does no I/O). */
  rewriteSync(request: RewriteRequest): RewriteOutcome {
    const decision = decide(request);
    if (!decision.rewrite) return decision.outcome;
    const question = request.question;
    const topics = request.topics.length > 0 ? request.topics : topicsFromHistory(request);
    const vague = this.#options.vague && request.termShare && isVague(question, request.termShare, this.#options.vague.share) ? this.#options.vague : undefined;
    const maxContextWords = vague ? vague.contextWords : this.#options.maxContextWords;
    // "How often should I do that?" after "How do I rotate an API key?": the pronoun
    // stands for the last question's action, not for a noun phrase.
    const action = this.#options.style === 'substitute' ? substituteAction(question, request.history.at(-1)) : undefined;
    const context = contextTopics(action?.text ?? question, topics, { ...this.#options, maxContextWords });
    if (!action && context.length === 0) {
      return { standaloneQuery: question, decision: 'skipped', reason: `${decision.reason}; no topic to resolve it with`, model: this.id };
    }
    // With the action in place nothing is left to substitute: the topics are appended.
    const standaloneQuery = action ? resolve(action.text, context, 'expand') : resolve(question, context, this.#options.style);
    const reason = action ? `${decision.reason}; 'do ${action.pronoun}' is the last question's action` : decision.reason;
    if (!vague) return { standaloneQuery, decision: 'rewritten', reason, model: this.id };
    return {
      standaloneQuery,
      decision: 'rewritten',
      reason: `${reason}; only common words`,
      model: this.id,
      weighting: { expansion: vague.expansionWeight, raw: vague.rawWeight },
    };
  }
}

/** Every content word of the question is in more than `share` of the indexed chunks (or it has none). */
export function isVague(question: string, termShare: (word: string) => number, share: number): boolean {
  return contentWords(question)
    .filter((word) => word.length > 1 && !/^\d+$/.test(word))
    .every((word) => termShare(word) > share);
}

/** "do that", "do it", "do this" (not "do that migration": there `that` is a determiner). */
const ACTION_PRONOUN = /\b(do)\s+(that|it|this)\b(?![._\-/@$][\p{L}\p{N}])/iu;

/**
 * Ways of asking how to do something, and the action they ask about:
 * "How do I rotate an API key?", "How often should I rotate it?", "Can we export a report as CSV?",
 * "What's the best way to install the relay?", "How to pin a version?",
 * "I want to delete a workspace".
 */
const ASKED_ACTION = [
  /^(?:how(?:\s+(?:often|long|quickly|soon|frequently))?|where|when|why)\s+(?:do|can|could|should|would|shall|must|may)\s+(?:i|we|you|one)\s+(.+)$/i,
  /^(?:can|could|should|may|must|do)\s+(?:i|we|you|one)\s+(.+)$/i,
  /^(?:what(?:'s|’s|\s+is)|which\s+is)\s+the\s+(?:\w+\s+)?way\s+to\s+(.+)$/i,
  /^how\s+to\s+(.+)$/i,
  /^(?:i|we)\s+(?:want|need|would\s+like|'d\s+like|’d\s+like)\s+to\s+(.+)$/i,
];

/** The action an earlier question asked how to do, e.g. "rotate an API key"; undefined when it asked something else. */
export function askedAction(question: string): string | undefined {
  const text = question
    .replace(/\s*\([^()]*\)\s*$/, '') // the context an offline rewrite appended
    .replace(/[\s?.!]+$/, '')
    .trim();
  for (const pattern of ASKED_ACTION) {
    const action = pattern.exec(text)?.[1]?.trim();
    // The action must say something: "how do I do that" gives none.
    if (action && contentWords(action).length > 0 && !ACTION_PRONOUN.test(action)) return action;
  }
  return undefined;
}

/**
 * The question with its "do that" replaced by the action the last question asked
 * about ("How often should I do that?" -> "How often should I rotate an API key?"),
 * and the pronoun that stood there; undefined when either side does not fit.
 */
function substituteAction(question: string, last: ConversationTurn | undefined): { text: string; pronoun: string } | undefined {
  const match = ACTION_PRONOUN.exec(question);
  if (!match || !last) return undefined;
  // "do that" followed by a content word ("do that migration") is a determiner: leave it.
  const after = /^\s+([\p{L}\p{N}'’_-]+)/u.exec(question.slice(match.index + match[0].length))?.[1];
  if (match[2]!.toLowerCase() !== 'it' && after && !isStopword(after.toLowerCase())) return undefined;
  const action = askedAction(last.standaloneQuery) ?? askedAction(last.question);
  if (!action) return undefined;
  return { text: question.slice(0, match.index) + action + question.slice(match.index + match[0].length), pronoun: match[2]!.toLowerCase() };
}

/** Topics built from the window's earlier questions when none are tracked. */
function topicsFromHistory(request: RewriteRequest): Topic[] {
  let topics: Topic[] = [];
  request.history.forEach((turn, index) => {
    topics = updateTopics(topics, { ordinal: index + 1, question: turn.question, standaloneQuery: turn.standaloneQuery, answer: '' });
  });
  return topics;
}

/**
 * Context for the question: the topics' words that the question lacks, best topic
 * first, up to the word budget. Counted in words, not whole terms: the last topic may
 * be cut to its first missing words, and stopwords, bare numbers and one-letter words
 * of a term are not added (a term is only `topic.term` again when nothing was cut).
 */
function contextTopics(question: string, topics: Topic[], options: Pick<Required<OfflineRewriterOptions>, 'maxContextWords' | 'order'>): Topic[] {
  const present = new Set(tokenize(question, { identifiers: true }).map((word) => stem(word)));
  const ordered = options.order === 'salience' ? rankTopics(topics) : [...topics].sort((a, b) => b.weight - a.weight || b.lastTurn - a.lastTurn);
  const chosen: Topic[] = [];
  let words = 0;
  for (const topic of ordered) {
    const parts = wordsOf(topic.term);
    const missing = parts.filter((part) => {
      const key = stem(part.toLowerCase());
      return !present.has(key) && isContextWord(part.toLowerCase());
    });
    if (missing.length === 0) continue;
    const taken = missing.slice(0, options.maxContextWords - words);
    chosen.push(taken.length === parts.length ? topic : { ...topic, term: taken.join(' ') });
    words += taken.length;
    for (const part of parts) present.add(stem(part.toLowerCase()));
    if (words >= options.maxContextWords) break;
  }
  return chosen;
}

/** A word worth searching for: not a stopword, not a bare number, longer than one letter. */
function isContextWord(word: string): boolean {
  return word.length > 1 && !isStopword(word) && !/^\d+$/.test(word);
}

/**
 * The question with its first pointing pronoun replaced by the first topic (when the
 * style allows and the pronoun is not a determiner), and the remaining topics appended
 * in parentheses.
 */
function resolve(question: string, context: Topic[], style: 'expand' | 'substitute'): string {
  let text = question.trim();
  let rest = context;
  if (style === 'substitute') {
    const substituted = substitutePronoun(text, context[0]!);
    if (substituted !== undefined) {
      text = substituted;
      rest = context.slice(1);
    }
  }
  if (rest.length === 0) return text;
  return `${text} (${rest.map((topic) => topic.term).join(', ')})`;
}

/** Replaces the first pronoun standing for a noun phrase; undefined when there is none. */
function substitutePronoun(text: string, topic: Topic): string | undefined {
  const wordPattern = /[\p{L}\p{N}][\p{L}\p{N}'’_-]*/gu;
  const matches = [...text.matchAll(wordPattern)];
  for (let i = 0; i < matches.length; i++) {
    const match = matches[i]!;
    const word = match[0].toLowerCase().replace(/[’]/g, "'");
    const next = matches[i + 1]?.[0].toLowerCase();
    const start = match.index!;
    const end = start + match[0].length;
    // Part of an identifier or path ("it.example", "this/that"): not a pronoun.
    const joiner = /[._\-/@$]/;
    const wordChar = /[\p{L}\p{N}]/u;
    if (joiner.test(text[start - 1] ?? '') && wordChar.test(text[start - 2] ?? '')) continue;
    if (joiner.test(text[end] ?? '') && wordChar.test(text[end + 1] ?? '')) continue;
    if (PRONOUN_SUBSTITUTES.has(word)) {
      // "that plan", "these keys": a determiner, keep it and let the topic be appended.
      if ((word === 'this' || word === 'that' || word === 'those' || word === 'these') && next && !isStopword(next)) return undefined;
      if (word === 'it' && next && ['possible', 'necessary', 'true', 'worth', 'safe'].includes(next)) continue;
      if (word === 'that' && i > 0 && !isStopword(matches[i - 1]![0].toLowerCase())) continue;
      return text.slice(0, start) + phrase(topic, start === 0) + text.slice(end);
    }
    if (POSSESSIVES.has(word)) {
      return text.slice(0, start) + `${phrase(topic, start === 0)}'s` + text.slice(end);
    }
    if (word === "it's" || word === "that's") {
      return text.slice(0, start) + `${phrase(topic, start === 0)} is` + text.slice(end);
    }
  }
  return undefined;
}

/** "the API key", or the bare term for identifiers and names. */
function phrase(topic: Topic, sentenceStart: boolean): string {
  const term = topic.term;
  const bare = /^(the|a|an)\s/i.test(term) || /[_`]/.test(term) || /^\p{Lu}[\p{Lu}\d]+s?$/u.test(term) || wordsOf(term).length === 0;
  if (bare) return term;
  return `${sentenceStart ? 'The' : 'the'} ${term}`;
}

/** The content words of a text (lower-case tokens that are not stopwords), for checks and tests. */
export function contentWords(text: string): string[] {
  return tokenize(text, { identifiers: true }).filter((word) => !isStopword(word));
}

function abortError(): Error {
  const error = new Error('The rewrite was cancelled.');
  error.name = 'AbortError';
  return error;
}
