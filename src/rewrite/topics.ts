// What the conversation is about, tracked locally and cheaply: key terms and noun
// phrases from each question, its rewrite and its answer, kept most recent first with
// weights that decay every turn a term is not mentioned again. The offline rewriter
// resolves "it" and fragments against these; the LLM rewriter gets them as one short
// context line; the running summary lists them. No model, no dictionary: a
// stopword-delimited chunker, a few shape rules for identifiers and names, and the
// project's Porter stemmer so "API keys" and "API key" are one topic.

import { askingClause } from '../text/clauses.js';
import { stem } from '../text/stem.js';
import { isStopword } from '../text/stopwords.js';
import type { Topic, TopicSource } from '../domain/index.js';

/** Topics kept after a turn. */
export const MAX_TOPICS = 20;
/** Every turn multiplies existing weights by this. */
export const TOPIC_DECAY = 0.6;
/** Topics lighter than this are forgotten. */
const MIN_WEIGHT = 0.05;
/** At most this many terms of an answer become topics (answers are long and noisy). */
const ANSWER_TERMS = 5;

const SOURCE_GAIN: Record<TopicSource, number> = { question: 1, rewrite: 0.5, answer: 0.3 };
const SOURCE_RANK: Record<TopicSource, number> = { question: 3, rewrite: 2, answer: 1 };

/**
 * Words that end a noun phrase although they are not stopwords: question frames,
 * common verbs and vague nouns that never name what a conversation is about.
 */
const BREAK_WORDS = new Set(
  `
which whose whom whatever how what why where when who whether
is are was were be been being am can could would should will shall may might must do does did done
have has had having get gets getting got make makes making made go goes going went take takes took
install installs installing installed create creates creating created set sets setting configure
enable enabled disable disabled run runs running ran rotate change changes changed update updated
delete deleted remove removed add added find found see seen check checked expire expires expired allow allows
allowed listen listens happen happens happened work works worked mean means meant say says said
give gives given show shows shown explain explains describe list define help helps keep keeps let lets
try tried look looks start started stop stopped send sent become seems seem call called provide provides
include includes including contain contains support supports supported require requires required
recommend recommended compare compared happen think thought wonder wondering understand tried trying
way ways thing things something anything everything nothing lot lots kind kinds type types sort
difference differences question questions example examples possible different good best better bad
okay ok yes yeah no thanks thank hi hello hey please really actually just even still already ever
always never sure right also else one ones first second third fourth fifth last next previous former
latter able etc via per without within around across among upon since though although however instead
yet every much many several another each any someone anyone everyone people person guys thing
reach reaches reached came come comes coming went gone fail fails failed failing long left keep kept told wanted needed
used using am pm today tomorrow yesterday now then here there maybe perhaps probably usually often sometimes
more less most least very quite rather too enough well fine great cool nice
`
    .split(/\s+/)
    .filter(Boolean),
);

export interface ExtractedTerm {
  /** Surface form, e.g. `Relay agent`. */
  term: string;
  /** Merge key: stems of its words, e.g. `relai agent`. */
  key: string;
  /** Occurrences, boosted for identifiers, quoted terms and names. */
  score: number;
}

/** Merge key of a term: lower-case Porter stems of its words, identifiers kept whole. */
export function topicKey(term: string): string {
  return wordsOf(term)
    .map((word) => stem(word.toLowerCase()))
    .join(' ');
}

/**
 * Key terms of `text`, best first: identifiers (`ORBIT_TOKEN`, `v1.2`, camelCase),
 * backticked and quoted spans, and noun phrases (runs of up to three content words
 * between stopwords, verbs and punctuation), capitalised names scoring higher.
 */
export function extractTerms(text: string): ExtractedTerm[] {
  const found = new Map<string, ExtractedTerm & { order: number }>();
  let order = 0;
  const add = (term: string, score: number) => {
    const cleaned = term.trim();
    if (!cleaned || cleaned.length > 60) return;
    const key = topicKey(cleaned);
    if (!key) return;
    const existing = found.get(key);
    if (existing) {
      existing.score += score;
      return;
    }
    found.set(key, { term: cleaned, key, score, order: order++ });
  };

  // Backticked and quoted spans are what the user named on purpose.
  for (const match of text.matchAll(/`([^`\n]{2,60})`|"([^"\n]{2,40})"|“([^”\n]{2,40})”/g)) {
    const span = match[1] ?? match[2] ?? match[3] ?? '';
    if (wordsOf(span).some((word) => !isFiller(word))) add(span, 2);
  }

  // Noun-phrase chunks within punctuation-free segments.
  // A dot ends a sentence only before a space or the end: "Node.js" and "fs.readdir" stay whole.
  // `+` and `#` end a word only where they do not belong to it: "C++", "C#" and "issue#12" stay whole.
  for (const segment of text.split(/\.+(?=\s|$)|[,;:!?()[\]{}<>"“”«»`|/\\\n\r\t*=~]+|(?<![\p{L}\p{N}+#])[+#]+|\s[-–—]+\s/u)) {
    const words = segment.split(/\s+/).map(trimWord).filter(Boolean);
    const verbs = verbPositions(words);
    let run: { word: string; bonus: number }[] = [];
    const flush = () => {
      if (run.length > 0) {
        const phrase = run.slice(-3); // the head of an English noun phrase is at its end
        const bonus = phrase.reduce((sum, part) => sum + part.bonus, 0);
        add(phrase.map((part) => part.word).join(' '), 1 + bonus + 0.25 * (phrase.length - 1));
      }
      run = [];
    };
    words.forEach((word, index) => {
      if (isIdentifier(word)) {
        add(word, isAcronym(word) ? 1 : 2);
        if (!isAcronym(word)) {
          flush();
          return;
        }
        // An acronym is also part of its phrase ("IBM Cloud VPC").
        run.push({ word, bonus: 0.5 });
        return;
      }
      if (isFiller(word) || verbs.has(index)) {
        flush();
        return;
      }
      // A capital letter mid-sentence marks a name ("the Relay agent").
      const capitalised = index > 0 && /^\p{Lu}/u.test(word);
      run.push({ word, bonus: capitalised ? 0.5 : 0 });
    });
    flush();
  }

  return [...found.values()]
    .sort((a, b) => b.score - a.score || a.order - b.order)
    .map(({ term, key, score }) => ({ term, key, score }));
}

/**
 * Topics after one turn: existing ones decay, the question's terms (strongest), the
 * terms its rewrite carried over and the answer's most frequent terms are added or
 * refreshed. Most recent first (then heaviest), at most `MAX_TOPICS`.
 */
export function updateTopics(
  topics: Topic[],
  turn: { ordinal: number; question: string; standaloneQuery: string; answer: string },
  /** Terms a model extracted from the exchange, most important first; they stand in for the answer's local terms. */
  modelTerms?: readonly string[],
): Topic[] {
  const byKey = new Map<string, Topic>();
  for (const topic of topics) {
    const key = topicKey(topic.term);
    if (!key || byKey.has(key)) continue;
    byKey.set(key, { ...topic, weight: topic.weight * TOPIC_DECAY });
  }
  const seenThisTurn = new Set<string>();
  const refresh = (terms: ExtractedTerm[], source: TopicSource) => {
    for (const [index, extracted] of terms.entries()) {
      // Among equals, the earlier term is more likely the subject ("run a job every night at 2am").
      const gain = SOURCE_GAIN[source] * Math.min(2, extracted.score) * Math.max(0.7, 1 - 0.1 * index);
      const existing = byKey.get(extracted.key);
      if (seenThisTurn.has(extracted.key) && existing) {
        // Already refreshed by a stronger source this turn: only a little more weight.
        existing.weight += gain * 0.25;
        continue;
      }
      seenThisTurn.add(extracted.key);
      byKey.set(extracted.key, {
        term: extracted.term,
        weight: (existing?.weight ?? 0) + gain,
        lastTurn: turn.ordinal,
        source,
      });
    }
  };
  // A question that sets a scene before it asks is about what it asks: those terms first, then the whole
  // question's (the asking part's again, a quarter more weight: measured better than reading them once, BENCHMARKS.md).
  const asking = askingClause(turn.question);
  refresh(asking === turn.question ? extractTerms(turn.question) : [...extractTerms(asking), ...extractTerms(turn.question)], 'question');
  refresh(extractTerms(turn.standaloneQuery), 'rewrite');
  if (modelTerms && modelTerms.length > 0) {
    // A model read the whole exchange: its terms are names, weighted like strong answer terms.
    refresh(
      modelTerms.map((term) => ({ term, key: topicKey(term), score: 2 })).filter((term) => term.key !== ''),
      'answer',
    );
  } else {
    // From an answer only what looks like a name: phrases, identifiers, capitalised or repeated terms.
    refresh(
      extractTerms(turn.answer)
        .filter((term) => term.score >= 1.5)
        .slice(0, ANSWER_TERMS),
      'answer',
    );
  }

  return [...byKey.values()]
    .filter((topic) => topic.weight >= MIN_WEIGHT)
    .sort(byRecency)
    .slice(0, MAX_TOPICS);
}

/**
 * What "it" most likely means now: the heaviest term of the latest turn, taken from
 * its question before its rewrite before its answer.
 */
export function activeTopic(topics: readonly Topic[]): Topic | undefined {
  let best: Topic | undefined;
  for (const topic of topics) {
    if (!best || compareSalience(topic, best) < 0) best = topic;
  }
  return best;
}

/** Topics by how likely they are meant now: latest turn, then question over answer, then weight. */
export function rankTopics(topics: readonly Topic[]): Topic[] {
  return [...topics].sort(compareSalience);
}

/** Share of the chunks of the index holding a word (see src/retrieve/term-stats.ts). */
export type WordShare = (word: string) => number;

/** Above this share of the chunks a word names nothing in particular ("version", "available"). */
export const GENERIC_SHARE = 0.05;

/**
 * How specific a term is in this index: the mean inverse document frequency of its
 * words (-ln of each word's share of the chunks; an unknown word counts as rare), so
 * "fs.readdir" or "generator expressions" rank above "version" or "available".
 */
export function specificity(term: string, termShare: WordShare): number {
  const words = wordsOf(term).filter((word) => !isFiller(word));
  if (words.length === 0) return 0;
  const idf = words.map((word) => -Math.log(Math.max(termShare(word), 1e-4)));
  return idf.reduce((sum, value) => sum + value, 0) / idf.length;
}

/**
 * Not a name, and a single word in more than GENERIC_SHARE of the chunks, or a phrase whose every word
 * is in more than four times that ("working directory" names something even where
 * "working" and "directory" are both common).
 */
export function isGenericTerm(term: string, termShare: WordShare): boolean {
  const words = wordsOf(term).filter((word) => !isFiller(word));
  // A name or identifier ("Valgrind", "fs.readdir") names one thing however often it occurs.
  if (words.some((word) => /\p{Lu}/u.test(word) || isIdentifier(word))) return false;
  const share = words.length > 1 ? 4 * GENERIC_SHARE : GENERIC_SHARE;
  return words.length === 0 || words.every((word) => termShare(word) > share);
}

/**
 * Topics for people to read (`/topics`): the active one first (the most salient that is
 * not generic in this index), then the others by weight times specificity; generic
 * ones last.
 */
export function rankTopicsForDisplay(topics: readonly Topic[], termShare: WordShare): Topic[] {
  const salient = rankTopics(topics);
  const active = salient.find((topic) => !isGenericTerm(topic.term, termShare)) ?? salient[0];
  const rest = topics
    .filter((topic) => topic !== active)
    .map((topic) => ({ topic, generic: isGenericTerm(topic.term, termShare), score: topic.weight * specificity(topic.term, termShare) }))
    .sort((a, b) => Number(a.generic) - Number(b.generic) || b.score - a.score)
    .map((entry) => entry.topic);
  return active ? [active, ...rest] : rest;
}

/** The topics as one short line, e.g. `API key, Relay agent, webhooks`. */
export function topicsLine(topics: readonly Topic[], max = 6): string {
  return rankTopics(topics)
    .slice(0, max)
    .map((topic) => topic.term)
    .join(', ');
}

function compareSalience(a: Topic, b: Topic): number {
  return (
    b.lastTurn - a.lastTurn ||
    SOURCE_RANK[b.source ?? 'question'] - SOURCE_RANK[a.source ?? 'question'] ||
    b.weight - a.weight ||
    b.term.length - a.term.length
  );
}

function byRecency(a: Topic, b: Topic): number {
  return b.lastTurn - a.lastTurn || b.weight - a.weight;
}

/** Words of a term as typed, without surrounding punctuation. */
export function wordsOf(text: string): string[] {
  return text.split(/[\s/]+/).map(trimWord).filter(Boolean);
}

function trimWord(word: string): string {
  // `.NET` keeps its dot: without it, it is the word "net".
  return word.replace(/^(?!\.net\b)[^\p{L}\p{N}_$@]+|[^\p{L}\p{N}_+#%]+$/giu, '').replace(/['’]s$/u, '');
}

/** Not part of a noun phrase: stopwords, question frames, common verbs, adverbs, pure numbers. */
export function isFiller(word: string): boolean {
  const lower = word.toLowerCase();
  if (isAdverb(lower)) return true;
  if (lower.length < 2 && !/\p{N}/u.test(lower)) return true;
  if (/^\d+([.,]\d+)?$/.test(lower)) return true;
  return isStopword(lower) || BREAK_WORDS.has(lower) || isStopword(lower.replace(/['’].*$/u, ''));
}

/** Subject pronouns: after "do I", "can we", "will it", the next word is a verb. */
const SUBJECTS = new Set(['i', 'you', 'we', 'they', 'he', 'she', 'it']);
/** Subject pronouns that are never an object: "I", "we", "they", "he", "she" are followed by their verb. */
const NOMINATIVE = new Set(['i', 'we', 'they', 'he', 'she', "i've", "we've", "they've", "you've", "i'd", "we'd", "they'd", "you'd", "i'll", "we'll", "they'll", "you'll"]);
/** Auxiliaries and modals a verb follows once their subject is named ("can I turn"); not "be" ("is it secure"). */
const AUXILIARIES = new Set(`do does did don't doesn't didn't can could would should will shall may might must can't cannot couldn't wouldn't shouldn't won't have has had haven't hasn't`.split(' '));
/** Words that start a clause of their own before "to" + a verb ("how to turn off"). */
const WH_WORDS = new Set(['how', 'where', 'when', 'what', 'which', 'whether', 'why']);
/** Words that open an object: an imperative's verb stands right before one ("Put the key ..."). */
const OBJECT_OPENERS = new Set(['the', 'a', 'an', 'my', 'your', 'our', 'their', 'its', 'this', 'these', 'those', 'it', 'them', 'me', 'us']);

/**
 * The positions in `words` (one segment of a sentence) where English puts a verb, read
 * from the closed-class words around them, so "turn" in "How do I turn off alerts?"
 * and "put" in "Where should I put the file?" are never taken for topics: after an
 * auxiliary and its subject pronoun ("do I _", "can we _", "will it _"), after a
 * subject that is never an object ("I _", "we've _"), after a wh-word and "to"
 * ("how to _"), and the first word when an object follows it ("Put the key ...").
 */
export function verbPositions(words: readonly string[]): Set<number> {
  const lower = words.map((word) => word.toLowerCase().replace(/’/g, "'"));
  const verbs = new Set<number>();
  lower.forEach((word, i) => {
    if (i === 0) {
      if (lower.length > 1 && OBJECT_OPENERS.has(lower[1]!) && !isStopword(word) && !SUBJECTS.has(word)) verbs.add(0);
      return;
    }
    const before = lower[i - 1]!;
    const twoBefore = i > 1 ? lower[i - 2]! : undefined;
    if (SUBJECTS.has(before) && twoBefore !== undefined && AUXILIARIES.has(twoBefore)) verbs.add(i);
    else if (NOMINATIVE.has(before) && !(twoBefore !== undefined && /^(is|are|was|were|am)$/.test(twoBefore))) verbs.add(i);
    else if (before === 'to' && twoBefore !== undefined && WH_WORDS.has(twoBefore)) verbs.add(i);
  });
  return verbs;
}

/** `ORBIT_TOKEN`, `max_connections`, `v1.2`, `camelCase`, `SDK` (all caps, 2+ letters). */
function isIdentifier(word: string): boolean {
  if (/[_]/.test(word) && /\p{L}/u.test(word)) return true;
  if (/^[\p{L}\p{N}]+[.\-][\p{L}\p{N}.\-]+$/u.test(word) && /\d/.test(word) && /\p{L}/u.test(word)) return true;
  // Dotted names: `Node.js`, `fs.readdir`, `package.json` (not `e.g`).
  if (/^\p{L}[\p{L}\p{N}_]+(?:\.[\p{L}\p{N}_]{2,})+$/u.test(word)) return true;
  if (/^\p{Ll}+\p{Lu}/u.test(word)) return true;
  return isAcronym(word);
}

function isAcronym(word: string): boolean {
  return /^\p{Lu}[\p{Lu}\d]+s?$/u.test(word) && word !== 'OK';
}

/** Nouns and adjectives that end in -ly; other words that do are adverbs ("do that regularly"). */
const LY_NOUNS = new Set(['monthly', 'daily', 'weekly', 'yearly', 'quarterly', 'hourly', 'nightly', 'early', 'friendly', 'family', 'assembly', 'supply', 'reply', 'anomaly', 'monopoly', 'butterfly', 'italy', 'july', 'rally', 'ally', 'fly', 'poly', 'only']);

/** An adverb such as "regularly", "automatically", "later". */
export function isAdverb(word: string): boolean {
  const lower = word.toLowerCase();
  if (['later', 'again', 'instead', 'too', 'first', 'now', 'then', 'anyway', 'afterwards', 'also'].includes(lower)) return true;
  return lower.length > 4 && lower.endsWith('ly') && !LY_NOUNS.has(lower);
}

