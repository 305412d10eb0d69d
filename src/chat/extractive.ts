// What an offline answer (passage.ts) needs beyond the passages themselves: whether the
// documents can cover the question at all, and the text helpers it quotes with.
//
// Names: a name the user typed that no chunk of the index holds ("How do I create a topic
// in Kafka?" over CMake's docs) means the documents do not cover the question, however many
// of its other words they share, and the answer says which; a name few chunks hold ("IPO")
// is what the question is about, and only passages that mention it are quoted.
//
// Coverage threshold: quoting the "best" passage of chunks that merely share a word with
// the question is noise. So the documents count as covering the question only when some
// retrieved chunk (its text, heading and title) contains at least MIN_CHUNK_COVERAGE (half)
// of the query's distinct content terms. A question that sets a scene before it asks
// ("I'm reading UTF-8 text from a socket in chunks ... How do I decode the chunks safely?")
// is covered as well when a chunk holds half of the asking part's terms, if it has two or
// more ("How do I fix that?" after a scene about Kafka is not covered by any chunk that says "fix").

import { askingClause, indexedTokens, isStopword, stem } from '../text/index.js';

export const EXTRACTIVE_LABEL = 'Extractive answer (no language model configured):';
export const NOT_COVERED = "The documents don't seem to cover this.";
/** Share of the query's content terms the best chunk must contain. */
export const MIN_CHUNK_COVERAGE = 0.5;

/** Distinct stems of the non-stopword tokens of `text`. */
export function contentTerms(text: string): Set<string> {
  const terms = new Set<string>();
  for (const token of indexedTokens(text)) {
    if (isStopword(token)) continue;
    terms.add(stem(token));
  }
  return terms;
}

/**
 * Which of `terms` (stems) occur in `text`: {@link contentTerms} restricted to them,
 * stemming only the tokens that start like one of them (a Porter stem keeps its word's
 * beginning but for its last letters: "happy" -> "happi", "sensibility" -> "sensibl").
 */
export function termsIn(text: string, terms: readonly string[]): Set<string> {
  const found = new Set<string>();
  const wanted = new Set(terms);
  const prefixes = terms.map((term) => term.slice(0, Math.max(1, term.length - 2)));
  for (const token of indexedTokens(text)) {
    if (!prefixes.some((prefix) => token.startsWith(prefix))) continue;
    const term = stem(token);
    if (wanted.has(term) && !isStopword(token)) found.add(term);
  }
  return found;
}

/** The word after "how" that makes a question of it ("how many", "how long"): its form, not its content. */
const HOW_FORM = /\bhow\s+(?:many|much|long|often|far|old|big|large|small|soon|quickly|fast|early|late|frequently)\b/gi;

/** Content terms of a question: {@link contentTerms} without the "how many" / "how long" form words. */
export function questionTerms(text: string): Set<string> {
  return contentTerms(text.replace(HOW_FORM, 'how'));
}

/** A word as typed, with the characters names are written with (`ssh-keygen`, `node.js`, `C++`). */
const TYPED_WORD = /[\p{L}\p{N}](?:[\p{L}\p{N}_.+#-]*[\p{L}\p{N}+#])?/gu;

/**
 * Whether a typed word is written as a name: capitalised past the first word of the
 * question ("with Kafka", "a Gradle build"), with a capital after a small letter
 * (MongoDB, GraphQL, OAuth, even first), or with a hyphen, dot or underscore inside
 * (ssh-keygen). A plain word ("straight", "algorithm") is not: a small index need
 * not use it to cover the question.
 */
function writtenAsName(word: string, first: boolean): boolean {
  if (/\p{Ll}\p{Lu}/u.test(word) || /[\p{L}\p{N}][-._][\p{L}\p{N}]/u.test(word)) return true;
  return !first && /^\p{Lu}/u.test(word);
}

/** How many chunks hold a word (as the keyword index reads and stems it), counted up to `atMost` + 1. */
export type ChunksHolding = (word: string, atMost: number) => number;

/**
 * Chunks an index holds at least for a word alone after "with", "using" or "via" to
 * count as a tool's name (typedNames): the bundled docs (a few hundred chunks) do not
 * say "ease", the real-document set (5,219) says every everyday word asked.
 */
export const MIN_CHUNKS_FOR_TOOLS = 1000;

/** Whether an index of `total()` chunks is large enough for tool names (MIN_CHUNKS_FOR_TOOLS): asked only when the question has such a word, and read once. */
function toolsCount(total: () => number): () => boolean {
  let large: boolean | undefined;
  return () => (large ??= total() >= MIN_CHUNKS_FOR_TOOLS);
}

/** A word that opens a phrase of what the question does not want: "without an APM agent" (written as a word, not as SQL's WITHOUT). */
const EXCLUDING = /^[Ww]ithout$/;
/** The second word of such an opening, after EXCLUDING_BEFORE: "instead of", "rather than", "other than". */
const EXCLUDING_AFTER = /^(?:of|than)$/i;
const EXCLUDING_BEFORE = /^(?:instead|rather|other)$/i;
/** Words that open another phrase, which ends the excluded one. */
const EXCLUSION_ENDS = /^(?:with|using|via|and|or|but|in|on|for|to|from|so|when|while|if|because)$/i;

/** A word that names the tool after it: "with pytest", "using rsync", "via ssh". */
const INSTRUMENT = /^(?:with|using|via)$/i;
/** What may follow a tool's name: the end of the clause, or a word that starts another phrase ("with cargo in release mode"). */
const AFTER_TOOL = /^(?:\s*(?:[?.!,;:)]|$)|\s+(?:in|on|for|to|from|at|into|when|while|so|and|or|but|instead|without|inside|under|as|if)\b)/i;

/**
 * The words of `question`'s asking clause written as names (writtenAsName), each once,
 * with the parts the index reads them as; none with a digit ("port 8080" asks about a
 * port). With `tools`, also a word alone after "with", "using" or "via", in any case
 * ("with pytest?"): only over an index large enough that an everyday word ("with
 * ease") is in some chunk.
 */
function typedNames(typed: string, tools: () => boolean): { word: string; parts: string[] }[] {
  const question = askingClause(typed);
  const names: { word: string; parts: string[] }[] = [];
  let after = 0; // where the last word ended
  let first = true;
  let previous = '';
  // Inside a phrase the question says it does not want ("without installing an APM agent", "instead of Docker"):
  // its first name is not asked about, and no document needs to hold it.
  let excluded = false;
  /** Words read since the phrase opened. */
  let inPhrase = 0;
  for (const match of question.matchAll(TYPED_WORD)) {
    const word = match[0];
    // Only what stands between this word and the one before decides (linear in the question).
    const between = question.slice(after, match.index);
    const opensSentence = first || /[.!?:]\s*$/.test(between);
    // (The phrase ends at punctuation or where another opens, not right after its opener: "without root using
    // podman" asks about podman, "instead of using Docker" not about Docker.)
    if (/[,;:.!?()]/.test(between) || (inPhrase > 0 && EXCLUSION_ENDS.test(word))) excluded = false;
    const opensExclusion = EXCLUDING.test(word) || (EXCLUDING_AFTER.test(word) && EXCLUDING_BEFORE.test(previous));
    // "with pytest?", "using rsync to ...": the tool a thing is done with is named, in any
    // case, when it stands alone ("with several partitions" names no tool).
    const instrument = !opensExclusion && INSTRUMENT.test(previous) && /^\s+$/.test(between) && AFTER_TOOL.test(question.slice(match.index + word.length)) && tools();
    after = match.index + word.length;
    first = false;
    previous = word;
    if (opensExclusion) {
      excluded = true;
      inPhrase = 0;
      continue;
    }
    const isName = !/\d/.test(word) && (instrument || writtenAsName(word, opensSentence));
    if (excluded) {
      inPhrase++;
      // Only the phrase's first name: "without ZooKeeper now that KRaft exists" asks about KRaft.
      if (isName) excluded = false;
      continue;
    }
    if (!isName || names.some((name) => name.word === word)) continue;
    const parts = indexedTokens(word).filter((token) => !isStopword(token));
    if (parts.length > 0) names.push({ word, parts });
  }
  return names;
}

/**
 * The names `question` asks about that no chunk of the index holds, as typed:
 * "Kafka" in "How do I create a topic in Kafka?" over docs that never name it (a
 * name of several words, ssh-keygen, when some part is in no chunk).
 */
export function namesUnknownToIndex(question: string, holding: ChunksHolding, total: () => number): string[] {
  return unknownOf(typedNames(question, toolsCount(total)), holding);
}

function unknownOf(names: readonly { word: string; parts: string[] }[], holding: ChunksHolding): string[] {
  return names.filter(({ parts }) => parts.some((part) => holding(part, 0) === 0)).map(({ word }) => word);
}

/**
 * Share of the chunks at most holding a name the question is specifically about
 * (0.3%: 15 of 5,000 chunks; no name in an index of fewer than 334 chunks). Measured
 * on the realdocs set: 0.001, 0.003 and 0.01 tried (BENCHMARKS.md).
 */
export const RARE_NAME_SHARE = 0.003;

/**
 * The names `question` asks about that the index holds in few chunks (a part of it
 * in at most `rare` of the `total`): "IPO" in "How do I turn on link-time
 * optimization (IPO) for a target?". Names no chunk holds are namesUnknownToIndex's.
 * `total` (the chunk count) is read only when the question names something.
 */
export function rareNames(question: string, holding: ChunksHolding, total: () => number, rare = RARE_NAME_SHARE): string[] {
  return rareOf(typedNames(question, toolsCount(total)), holding, total, rare);
}

function rareOf(names: readonly { word: string; parts: string[] }[], holding: ChunksHolding, total: () => number, rare: number): string[] {
  if (names.length === 0) return [];
  const limit = Math.floor(rare * total());
  if (limit < 1) return [];
  return names
    .filter(({ parts }) => {
      const counts = parts.map((part) => holding(part, limit));
      return counts.every((count) => count > 0) && counts.some((count) => count <= limit);
    })
    .map(({ word }) => word);
}

/**
 * The names of `question` as an offline answer needs them, read in one pass: those no
 * chunk holds (namesUnknownToIndex), and, when there are none, those few chunks hold
 * (rareNames). The rare ones are counted first: their counts answer the others' too.
 */
export function namesAgainstIndex(question: string, holding: ChunksHolding, total: () => number): { unknown: string[]; rare: string[] } {
  const names = typedNames(question, toolsCount(total));
  const rare = rareOf(names, holding, total, RARE_NAME_SHARE);
  const unknown = unknownOf(names, holding);
  return { unknown, rare: unknown.length > 0 ? [] : rare };
}

/** Inline markup a reader does not need: RST roles, Markdown links and reference links, HTML tags (emphasis: {@link withoutEmphasis}). */
export function cleanInline(text: string): string {
  return text
    .replace(/<\/?(?:a|i|b|em|strong|span|sup|sub|code|kbd|img)\b[^>]*>/gi, '')
    .replace(/<\/?(?:br|div|p|table|thead|tbody|tr|td|th|ul|ol|li|dl|dt|dd|h[1-6])\b[^>]*>/gi, ' ')
    .replace(/ {2,}/g, ' ')
    .trim()
    .replace(/:[\w-]+(?::[\w-]+)?:`([^`]*)`/g, (_, inner: string) => `\`${/^(.*?)\s+<[^<>]*>$/.exec(inner)?.[1] ?? inner}\``)
    .replace(/``([^`]+)``/g, '`$1`')
    .replace(/\[([^\]]+)\]\((?:[^()\s]|\([^()]*\))*\)/g, '$1')
    .replace(/\[([^\]]+)\]\[[^\]]*\]/g, '$1');
}

/** A code span (`x`, or ``x`` not yet rewritten), captured so that split keeps it. */
const CODE_SPAN = /(``[^`]+``|`[^`]+`)/;
// Emphasis markers, as Markdown (and reStructuredText's *x* and **x**) mark them: the
// opening one before a non-space and not inside a word, the closing one after a
// non-space and not before a word, so that `2 * 3`, a `*` bullet, `a*b*c`, snake_case_names,
// `__init__.py` and `obj.__dict__` are no emphasis. A letter or digit of any script counts as
// part of a word; for underscores a dot before the opening marker or before a word after the
// closing one does too (identifiers and file names).
const STRONG_EM_STARS = /(?<![\p{L}\p{N}_*])\*\*\*(?=[^\s*])([^*]*?[^\s*])\*\*\*(?![\p{L}\p{N}_*])/gu;
const STRONG_STARS = /(?<![\p{L}\p{N}_*])\*\*(?=[^\s*])((?:[^*]|\*(?!\*))*?[^\s*])\*\*(?![\p{L}\p{N}_*])/gu;
const EM_STARS = /(?<![\p{L}\p{N}_*])\*(?=[^\s*])([^*]*?[^\s*])\*(?![\p{L}\p{N}_*])/gu;
const STRONG_UNDERSCORES = /(?<![\p{L}\p{N}_.])__(?=[^\s_])((?:[^_]|_(?!_))*?[^\s_])__(?![\p{L}\p{N}_]|\.[\p{L}\p{N}])/gu;
const EM_UNDERSCORES = /(?<![\p{L}\p{N}_.])_(?=[^\s_])([^_]*?[^\s_])_(?![\p{L}\p{N}_]|\.[\p{L}\p{N}])/gu;
/** A name written between double underscores in one case, as Python's dunders (`__init__`) and C's macros (`__GNUC__`) are: a name, not strong text. */
const DUNDER_NAME = /^(?:[a-z0-9_]+|[A-Z0-9_]+)$/;

/**
 * A sentence without its emphasis markers, the emphasised words kept: "__Zstandard__, or"
 * reads "Zstandard, or", "for _all_ requirements" "for all requirements". Only outside code
 * spans (`**kwargs` and `__init__` stay as written), and once the text is cut into sentences,
 * so that the cut is the same: "... by timeout. **Default:** `'SIGTERM'`." is one sentence of
 * the Node.js docs (stripped before the cut, "Default:" would open a sentence of its own).
 */
export function withoutEmphasis(sentence: string): string {
  if (!sentence.includes('*') && !sentence.includes('_')) return sentence;
  return sentence
    .split(CODE_SPAN)
    .map((part, i) =>
      i % 2 === 1
        ? part
        : part
            .replace(STRONG_EM_STARS, '$1')
            .replace(STRONG_STARS, '$1')
            .replace(STRONG_UNDERSCORES, (whole, inner: string) => (DUNDER_NAME.test(inner) ? whole : inner))
            .replace(EM_STARS, '$1')
            .replace(EM_UNDERSCORES, '$1'),
    )
    .join('');
}
