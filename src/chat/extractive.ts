// The offline answer: no language model, so quote. The retrieved chunks are cut
// into sentences (list items with their continuation lines, table rows, code
// lines), each scored by how many of the question's content terms it carries,
// compared as Porter stems with the same tokenizer and stopword list the keyword
// index uses. Terms the user typed weigh more than terms the rewrite added (the
// added ones are context for the search, e.g. "API key" for "does it expire?").
//
// A sentence is read under its section: a query term that only its chunk's
// heading or title carries counts for part of a term ("reads the contents of a
// directory recursively" under "fs.readdir(path[, options])" answers "What does
// the recursive option of fs.readdir do?"; "The recursive option is deprecated"
// under "fs.rmdir" does not). A chunk can hold several sections: a sentence is read
// under the heading it follows in the text (a page-structure heading such as
// "Description" leaves it in the chunk's section; an option's synopsis on a line of
// its own, "--track-origins=<yes|no> [default: no]" in the Valgrind manual, or an API
// reference entry's title, "Function: xsltAddKey", heads the sentences that describe
// it, which are quoted with its name), and a section whose title starts
// with a name the user typed ("process.nextTick(callback)") is about it, so its
// sentences rank above a passing mention elsewhere. Retrieval rank counts too, and the answer is
// rank-aware: it starts with the best sentence and may take two more of the same
// chunk (four sentences in all); sentences of other chunks come in only when they
// carry a question term the sentences before them lack. For "What is X?" the sentence that opens with X
// and says what it is ("Massif is a heap profiler.") ranks above one that merely
// starts with X; for "What does X do?" one that opens with the whole of X ("The
// optional `files` field is ...") above one that shares a word of it ("The `type`
// field ...").
//
// Not quoted: headings (a line over an RST underline, a sentence that is a part of
// the chunk's heading path), HTML comments (the Node.js docs' YAML change logs),
// Markdown link definitions, list items that are only a link, "See also" sections,
// RST directives, code comments, and a question of the page with only a pointer
// after it ("So you want to write a tool? Here are some instructions ..."). Code lines are
// quoted only for "how do I ..." questions, where a sentence that names a command,
// flag or identifier also scores a little more. A sentence whose subject is a
// dangling "It"/"This"/"They", or that says how to
// "do so", is quoted with the sentence before it, or not at all.
//
// Coverage threshold: quoting the "best" sentences of passages that merely share
// a word with the question is noise. So the documents count as covering the
// question only when some retrieved chunk (its text, heading and title) contains
// at least MIN_CHUNK_COVERAGE (half) of the query's distinct content terms, and a
// sentence of it contains at least one. A two-term question therefore needs one
// term in a chunk, a four-term question two; "What is the capital of France?"
// against product docs has none and gets NOT_COVERED instead of quotes. A question
// that sets a scene before it asks ("I'm reading UTF-8 text from a socket in chunks
// ... How do I decode the chunks safely?") is covered as well when a chunk holds half
// of the asking part's terms, if it has two or more ("How do I fix that?" after a
// scene about Kafka is not covered by any chunk that says "fix").

import type { RetrievedChunk } from '../retrieve/search.js';
import { ABBREVIATION, askingClause, indexedTokens, isStopword, stem, THREE_WORDS } from '../text/index.js';
import { orList, plainQuestion, trimEndOf } from '../util/words.js';

export const EXTRACTIVE_LABEL = 'Extractive answer (no language model configured):';
export const NOT_COVERED = "The documents don't seem to cover this.";
/** Share of the query's content terms the best chunk must contain. */
export const MIN_CHUNK_COVERAGE = 0.5;
/**
 * Sentences quoted at most, and at most from the chunk of the best sentence. Measured
 * on bench/realdocs, bench/answers and the bundled docs (BENCHMARKS.md): 4 and 3, with a
 * sentence of the best chunk kept on the same terms as any other (half the best
 * sentence's score), quote the fact in 8 more of 207 real-document answers than 3 and 2
 * with three quarters, and lose none elsewhere; answers are a third longer.
 */
export const MAX_SENTENCES = 4;
const MAX_FROM_FIRST_CHUNK = 3;
/** A sentence is quoted after the best one only when it scores at least this share of it. */
const KEEP_SHARE = 0.5;
const MAX_SENTENCE_CHARS = 400;
/** An underscore inside an identifier (`BC_SCALE_MAX`), which joins its parts into one word. */
const IDENTIFIER_UNDERSCORE = /(?<=[\p{L}\p{N}])_(?=[\p{L}\p{N}])/gu;
/** Share of the same words (Jaccard, stems) above which two sentences count as one. */
const NEAR_DUPLICATE = 0.7;
/** A sentence at least this long found in a quoted one makes the two overlap. */
const MIN_SHARED_CHARS = 40;
/** Weight of a query term the rewrite added, relative to one the user typed. */
const ADDED_TERM_WEIGHT = 0.3;
/** Credit for a query term only the sentence's heading or title carries. */
const HEADING_CREDIT = 0.5;
/** Score added to a sentence of the chunk at rank r: RANK_WEIGHT / r. */
const RANK_WEIGHT = 0.15;
/** Score added to a sentence whose subject is a name the user typed, or that opens a section named by the question. */
const SUBJECT_BONUS = 0.15;
/** Score added to a sentence of a section whose title starts with a name the user typed ("process.nextTick(callback)" for "What does process.nextTick do?"). */
const ABOUT_BONUS = 0.1;
/** Score added, for a "how do I" question, to a sentence naming a command, flag or identifier made of a word of the question. */
const HOW_TO_BONUS = 0.1;
/**
 * A line that is only an option's synopsis: `--name`, `--name=<value>`, `-x <file>`,
 * `--param NAME VALUE`, `--path "PATH(S)"`, several spellings (`-v or --verbose`,
 * `-o, --output FILE`), with a "[default: ...]" after it.
 */
const OPTION_TERM = (() => {
  const option = String.raw`--?[A-Za-z][\w-]*`;
  const argument = String.raw`(?:[= ](?:<[^>]*>|"[^"]*"|[A-Z][A-Z0-9_()]*(?:\.\.\.)?)|=[\w|]+|\s?\[=?[^\]\s]*\])`;
  const spelling = `${option}${argument}{0,3}`;
  return new RegExp(String.raw`^${spelling}(?:(?:,\s*|\s+or\s+|\s*\|\s*)${spelling})*(?:\s*\[[^\]]*\])?$`);
})();
/** The kinds of entry an API reference titles with the entry's name: "Function: xsltAddKey", "Macro EXSLT_COMMON_NAMESPACE". */
const ENTRY_TITLE = /^(?:(Function|Macro|Variable|Struct|Enum|Typedef|Type|Method|Class|Property|Event|Constant)\s*:?\s+)?([A-Za-z_]\w*(?:(?:\.|::)[A-Za-z_]\w*)*)\s*(\(\s*\))?$/;

/**
 * The name an API reference entry's title line gives ("xsltAddKey()" for "Function:
 * xsltAddKey", "exsltRegisterAll()" for "exsltRegisterAll ()", "NODE_IS_KEYED" for
 * "Macro: NODE_IS_KEYED"): a name written as one (an underscore, a dot, `::`, a capital
 * inside) or after the kind of entry. A word alone ("Returns", "endif()") is not one.
 */
function entryName(line: string): string | undefined {
  const match = ENTRY_TITLE.exec(line);
  if (match === null) return undefined;
  const [, kind, name, called] = match;
  // (Without the kind, "()" alone is not enough: a call such as "endif()" alone on its line in a cut code block.)
  const looksLikeName = /[_.:]|[a-z][A-Z]/.test(name!);
  if (kind === undefined && !looksLikeName) return undefined;
  // A kind word before a plain word is a heading of prose ("Method chaining", "Event loop", "Type: boolean"):
  // the name must look like one, or be called, or follow "Function:"/"Macro:" and the like with their colon.
  if (kind !== undefined && !looksLikeName && called === undefined && (!/:\s*\S/.test(line) || ['Type', 'Property', 'Event'].includes(kind))) return undefined;
  const function_ = called !== undefined || kind === 'Function' || kind === 'Method';
  return function_ ? `${name}()` : name;
}

/** A one-letter option as a word of its own: `-x`, `-L`. */
const SHORT_OPTION = /(?<![\w-])-[A-Za-z](?![\w-])/g;
/** A sentence that opens with a one-letter option, as a synopsis line or a heading shown before it: "-x Don't use ...", "`-x`: ...". */
const OPENING_SHORT_OPTION = /^[\s`*]*(-[A-Za-z])(?![\w-])/;

/** `-x` for `-X`, `-X` for `-x`. */
function swapCase(option: string): string {
  const letter = option.slice(1);
  return `-${letter === letter.toLowerCase() ? letter.toUpperCase() : letter.toLowerCase()}`;
}

/** Score added to a sentence that opens with the subject of a "What is X?" / "What does X do?" question (and, for "What is", says what it is). */
const DEFINES_BONUS = 0.15;

export interface ExtractedSentence {
  text: string;
  /** Number of the chunk it was taken from (1-based position in the retrieved list). */
  n: number;
  /** idf-weighted share of the query terms matched (heading terms in part), plus rank and how-to bonuses. */
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
function termsIn(text: string, terms: readonly string[]): Set<string> {
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

/** Stems of the non-stopword tokens of `text`, in order. */
function termSequence(text: string): string[] {
  return indexedTokens(text)
    .filter((token) => !isStopword(token))
    .map(stem);
}

/**
 * The subject of a "What is X?", "What are X?", "What does X do?" question, as stems
 * in order ("the files field in package.json" gives file, field, package, json), and
 * whether the question asks what it is (a sentence answering it says "X is ...").
 * A trailing "in CMake" / "with npm" narrows where to look, not what is asked.
 * `question` as plainQuestion gives it (no run of spaces).
 */
function questionSubject(question: string): { terms: string[]; copula: boolean } | undefined {
  // (Read without its closing "?", cut off first: the pattern then ends at the text's end.)
  const match = /^\s*what\s+(is|are|does|do)\s+(?:an?\s+|the\s+)?(\S.*?)(?:\s+(?:do|mean))?$/i.exec(trimEndOf(question, ' ?'));
  if (!match) return undefined;
  const terms = termSequence(match[2]!.replace(/\s+(?:in|with|for|on)\s+\S+$/i, ''));
  return terms.length === 0 || terms.length > 4 ? undefined : { terms, copula: /^(?:is|are)$/i.test(match[1]!) };
}

/** The word after "how" that makes a question of it ("how many", "how long"): its form, not its content. */
const HOW_FORM = /\bhow\s+(?:many|much|long|often|far|old|big|large|small|soon|quickly|fast|early|late|frequently)\b/gi;

/** Content terms of a question: {@link contentTerms} without the "how many" / "how long" form words. */
function questionTerms(text: string): Set<string> {
  return contentTerms(text.replace(HOW_FORM, 'how'));
}

/**
 * The part of a "How do I ...", "how can we ...", "how to ..." question that asks how
 * (such questions are answered by a command or setting): its asking part when that
 * asks how ("npm install fails with ERESOLVE; how do I make it ignore peer
 * dependencies?"), else the question when it opens so ("How do I install it? Is it
 * free?"); undefined for any other question.
 */
function howToPart(text: string): string | undefined {
  const asking = askingClause(text);
  if (HOW_TO.test(asking)) return asking;
  return HOW_TO.test(text) ? text : undefined;
}

/** A question that opens "how do I ...", "how to ...", "and how can we ...". */
const HOW_TO = /^\s*(?:and\s+|so\s+|but\s+)?how\s+(?:do|can|could|should|would|to|might)\b/i;

/** The stem of the verb a "how do I ..." question asks about ("install" in "How do I install the Relay agent?"), when it has one. */
function actionVerb(text: string): string | undefined {
  const verb = /^\s*(?:and\s+|so\s+|but\s+)?how\s+(?:(?:do|can|could|should|would|might)\s+(?:i|we|you|one)|to)\s+([a-z]+)/i.exec(text)?.[1]?.toLowerCase();
  return verb === undefined || isStopword(verb) ? undefined : stem(verb);
}

/** A command, flag or identifier: a code span, `--flag`, `name(`, `snake_case`, `dotted.name`. */
const NAMES_SOMETHING = /`[^`]+`|(?:^|\s)--?[a-z][\w=-]*|\b\w+\(|\b[a-z]\w*_\w+\b|\b[a-z]\w*\.[a-z]\w*\b/i;
const NAMES_SOMETHING_ALL = new RegExp(NAMES_SOMETHING.source, 'gi');

/**
 * Stems of the words inside the commands, flags and identifiers `text` names:
 * `--leak-check=full` gives leak, check, full; `http.createServer()` http, creat, server.
 */
export function namedTerms(text: string): Set<string> {
  const terms = new Set<string>();
  for (const match of text.matchAll(NAMES_SOMETHING_ALL)) {
    const words = match[0].replace(/([a-z0-9])([A-Z])/g, '$1 $2');
    for (const term of contentTerms(words)) terms.add(term);
  }
  return terms;
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

/** What a quoted word looks like in the not-covered message: “pytest”. */
const quoted = (word: string) => `\u201c${word}\u201d`;

/**
 * `query` is the standalone query; `question`, when given, the user's own words:
 * sentences are scored mostly on those. `unknown`: names the user typed that no
 * document of the index holds (namesUnknownToIndex); any one of them means the
 * documents do not cover the question, however many of its other words the chunks
 * share ("How do I build a Rust project with cargo?" over CMake's docs), and the
 * answer says which. `required`: names few chunks hold (rareNames); a chunk that
 * does not mention them is not quoted, and when none does the answer says so.
 */
export function extractiveAnswer(typedQuery: string, chunks: readonly RetrievedChunk[], typedQuestion?: string, unknown: readonly string[] = [], required: readonly string[] = []): ExtractiveAnswer {
  const query = plainQuestion(typedQuery);
  const question = typedQuestion === undefined ? undefined : plainQuestion(typedQuestion);
  // The answer that the documents don't cover the question, with why when it is a name.
  const uncovered = (why?: string, bestCoverage = 0): ExtractiveAnswer => ({
    text: `${EXTRACTIVE_LABEL} ${NOT_COVERED}${why ? ` ${why}` : ''}`,
    covered: false,
    sentences: [],
    queryTerms: [...questionTerms(query)],
    bestCoverage,
  });
  if (unknown.length > 0) return uncovered(`No document mentions ${orList(unknown.map(quoted))}.`);
  // Only chunks that mention every `required` name (rareNames) are quoted from; when none does, the answer says so.
  const requiredTerms = required.map((name) => [...contentTerms(name)]);
  const mentions = (chunk: RetrievedChunk) => {
    const terms = contentTerms(`${chunk.title ?? ''}\n${chunk.heading}\n${chunk.text}`);
    return requiredTerms.every((parts) => parts.every((part) => terms.has(part)));
  };
  if (required.length > 0 && !chunks.some(mentions)) return uncovered(`None of the passages found mentions ${orList(required.map(quoted))}.`);
  if (required.length > 0) chunks = chunks.map((chunk) => (mentions(chunk) ? chunk : { ...chunk, text: '' }));
  const queryTerms = [...questionTerms(query)];
  const typed = question === undefined ? undefined : questionTerms(question);
  const typedCounts = typed !== undefined && typed.size > 0;
  // "and on Windows?" after "How do I install the Relay agent?" is a how-to question by its rewrite.
  const typedHowToPart = howToPart(question ?? query);
  const typedHowTo = typedHowToPart !== undefined;
  const howToAsked = typedHowToPart ?? howToPart(query);
  const howTo = howToAsked !== undefined;
  const howToVerb = howToAsked === undefined ? undefined : actionVerb(howToAsked);
  // The part of the question that asks, read once for the options it names and for coverage below.
  const asking = askingClause(question ?? query);
  // Names the user typed, whole ("process.nextTick", "massif"): a sentence that opens with one is about it.
  const subject = questionSubject(question ?? query);
  // Does `text` open with the question's subject (all its words among its first ones), and say what it is when asked?
  const definesSubject = (text: string, terms: Set<string>) => {
    if (subject === undefined || !subject.terms.every((term) => terms.has(term))) return false;
    const opening = termSequence(text.slice(0, 160)).slice(0, subject.terms.length + 2);
    if (!subject.terms.every((term) => opening.includes(term))) return false;
    return !subject.copula || /^[^.;:]{0,100}?\b(?:is|are)\b/i.test(text);
  };
  // One-letter options as typed: `-x` is not `-X` ("What does git clean -x do?" was answered with -X's description).
  const shortOptions = new Set([...asking.matchAll(SHORT_OPTION)].map((match) => match[0]));
  const optionFit = (sentence: { own: string; text: string }) => {
    if (shortOptions.size === 0) return 0;
    const opens = OPENING_SHORT_OPTION.exec(sentence.own)?.[1] ?? OPENING_SHORT_OPTION.exec(sentence.text)?.[1];
    if (opens === undefined) return 0;
    if (shortOptions.has(opens)) return DEFINES_BONUS;
    return shortOptions.has(swapCase(opens)) ? -DEFINES_BONUS : 0;
  };
  const askedNames = new Set(indexedTokens(question ?? query, { identifiers: true }).filter((token) => !isStopword(token)));
  // A hyphenated name made of words typed apart ("npm-ci" for "npm ci") names them too.
  const isAsked = (token: string) => askedNames.has(token) || (token.includes('-') && token.split('-').every((part) => part === '' || askedNames.has(part)));
  const startsWithAsked = (text: string) => indexedTokens(text.slice(0, 80), { identifiers: true }).filter((token) => !isStopword(token)).slice(0, 2).some(isAsked);
  // For "how do I ...": does `text` name a command, flag or identifier made of a word of the question?
  // A how-to question only by its rewrite asks how to do what the rewrite says: its words name the command too.
  const byRewrite = howTo && !typedHowTo;
  const asksAny = (terms: Set<string>) => {
    for (const term of terms) if (typedCounts && !byRewrite ? typed.has(term) : queryTerms.includes(term)) return true;
    return false;
  };
  const namesAsked = (text: string) => asksAny(namedTerms(text));
  if (queryTerms.length === 0 || chunks.length === 0) return uncovered();

  // Sentences of the chunks that cover enough of the query, with their terms.
  interface Pooled { text: string; own: string; n: number; rank: number; position: number; terms: Set<string>; context: Set<string>; opensSection: boolean; about: boolean; code: boolean }
  const contextOf = new Map<number, Set<string>>();
  // A section longer than a chunk is cut in pieces that rank apart: a sentence of a
  // later piece counts as ranked right after the section's best piece (same document,
  // same heading), so the piece that holds a section's definition is not outranked by
  // another section's passing mention.
  const sectionRank = new Map<string, number>();
  const sectionKey = (chunk: RetrievedChunk) => `${chunk.documentPath}\u0000${chunk.heading}`;
  chunks.forEach((chunk, index) => {
    if (!sectionRank.has(sectionKey(chunk))) sectionRank.set(sectionKey(chunk), index + 1);
  });
  const pool: Pooled[] = [];
  let bestCoverage = 0;
  // Coverage is judged on what the user typed when they typed content words: a
  // rewrite's added context must not make a relevant chunk look off-topic. A question
  // that sets a scene before it asks ("I'm reading UTF-8 text from a socket in chunks
  // ... How do I decode the chunks safely?") is covered when the part that asks is, if
  // it has two content words or more: half of a long scene's words are seldom in one chunk.
  const judged = typedCounts ? [...typed] : queryTerms;
  const askingWords = asking === (question ?? query) ? [] : [...questionTerms(asking)].filter((term) => judged.includes(term));
  // One word alone ("How do I fix that?") is in too many chunks to say the question is covered.
  const askingTerms = askingWords.length >= 2 ? askingWords : [];
  const share = (terms: readonly string[], context: Set<string>, inChunk: Set<string>) =>
    terms.length === 0 ? 0 : terms.filter((term) => context.has(term) || inChunk.has(term)).length / terms.length;
  chunks.forEach((chunk, index) => {
    const context = contentTerms(`${chunk.title ?? ''}\n${chunk.heading}`);
    contextOf.set(index + 1, context);
    const inChunk = termsIn(chunk.text, judged);
    const coverage = Math.max(share(judged, context, inChunk), share(askingTerms, context, inChunk));
    bestCoverage = Math.max(bestCoverage, coverage);
    if (coverage < MIN_CHUNK_COVERAGE) return;
    const headingParts = chunk.heading.split(' > ');
    const headings = new Set([chunk.title ?? '', ...headingParts].map(headingKey).filter((key) => key !== ''));
    const longestHeading = Math.max(0, ...[chunk.title ?? '', ...headingParts].map((part) => part.length)) + 2;
    // When the section's own title names everything asked ("What does util.promisify
    // do?" under "util.promisify(original)"), its opening sentence is the answer. A
    // chunk can hold several sections: a sentence is read under the heading it follows
    // in the chunk, or the chunk's own when none comes before it.
    const chunkSection = headingParts[headingParts.length - 1] || (chunk.title ?? '');
    type Section = { terms: Set<string>; namesAll: boolean; about: boolean; name: ReturnType<typeof sectionName>; context: Set<string> };
    const sections = new Map<string, Section>();
    const sectionOf = (heading: string): Section => {
      let known = sections.get(heading);
      if (known === undefined) {
        const title = heading.replace(/^[\d.]+\s+/, '');
        const terms = contentTerms(title);
        const namesAll = judged.every((term) => terms.has(term)) && startsWithAsked(title);
        const about = isAsked(indexedTokens(title, { identifiers: true })[0] ?? '');
        known = { terms, namesAll, about, name: sectionName(title), context: heading === chunkSection ? context : new Set([...context, ...terms]) };
        sections.set(heading, known);
      }
      return known;
    };
    // The section of a sentence that follows `heading` in the text, or null under a
    // "See also" heading: such a list points elsewhere, the pages it names are not the
    // answer. A heading of the page's structure ("Description", "Synopsis") names no
    // subject: what follows it stays in the section the chunk is in.
    const under = new Map<string, Section | null>();
    const sectionUnder = (heading: string | undefined): Section | null => {
      if (heading === undefined) return sectionOf(chunkSection);
      let known = under.get(heading);
      if (known === undefined) {
        const key = headingKey(heading);
        known = NAVIGATION_HEADING.test(key) ? null : sectionOf(STRUCTURE_HEADING.test(key) ? chunkSection : heading);
        under.set(heading, known);
      }
      return known;
    };
    const sentences = chunkSentences(chunk.text);
    sentences.forEach((sentence, position) => {
      // (Only a heading in the text says "See also": a chunk's own heading can be the
      // last one of a piece whose text starts before it.)
      const section = sectionUnder(sentence.heading);
      if (section === null) return;
      let text = sentence.text;
      if (sentence.code && !howTo) {
        if (sentence.prose === undefined) return;
        text = sentence.prose; // what introduces the code, without it
      }
      if (text.length <= longestHeading && headings.has(headingKey(text))) return;
      if (isDangling(text)) {
        if (sentence.prev < 0) return;
        text = `${sentences[sentence.prev]!.text} ${text}`;
      }
      const opensSection = sentence.lead && section.namesAll;
      const terms = contentTerms(text);
      if (opensSection) for (const term of section.terms) terms.add(term);
      // Quoted from the section of a command, option or function, a sentence that does
      // not name it says which ("`add_test`: Add a test to the project ...").
      const own = text;
      const name = section.name;
      if (name !== undefined && !sentence.code && !text.toLowerCase().includes(name.core)) text = `\`${name.shown}\`: ${text}`;
      pool.push({ text, own, n: index + 1, rank: Math.min(index + 1, sectionRank.get(sectionKey(chunk))! + 1), position, terms, context: section.context, opensSection, about: section.about, code: sentence.code && howTo });
    });
  });
  // Rarer query terms weigh more (idf over the pooled sentences): "respond" says more
  // than "Orbitly". Damped (square root): in sentences retrieved for the question every
  // asked word is common, and full idf let a word of a section title ("readdir")
  // outweigh the word asked about ("recursive").
  const weight = new Map<string, number>();
  for (const term of queryTerms) {
    const df = pool.filter((sentence) => sentence.terms.has(term)).length;
    const added = typedCounts && !typed.has(term);
    weight.set(term, Math.sqrt(Math.log(1 + (pool.length + 1) / (df + 1))) * (added ? ADDED_TERM_WEIGHT : 1));
  }
  const totalWeight = queryTerms.reduce((sum, term) => sum + weight.get(term)!, 0);
  const candidates: (ExtractedSentence & { position: number; terms: Set<string>; names: boolean; showsName: boolean })[] = [];
  for (const sentence of pool) {
    let matched = 0;
    let share = 0;
    for (const term of queryTerms) {
      if (sentence.terms.has(term)) {
        matched++;
        share += weight.get(term)!;
      } else if (sentence.context.has(term)) share += HEADING_CREDIT * weight.get(term)!;
    }
    if (matched === 0) continue;
    // For "how do I <verb>", a code line (with what introduces it) is quoted only when it does that, in its words or
    // its names (`sudo apt-get install ...`, `server.setTimeout` sets), not when it shares another word (`console.log(\`Line from file\`)`) or is output.
    if (sentence.code && howToVerb !== undefined && !sentence.terms.has(howToVerb) && !namedTerms(sentence.text).has(howToVerb)) continue;
    // A code line names what it runs; in prose, a code span, flag or identifier does.
    const names = howTo && (sentence.code ? asksAny(sentence.terms) : namesAsked(sentence.text));
    // The section's name put before a sentence says where it is from; it does not show how to run it.
    const showsName = names && (sentence.code || sentence.own === sentence.text || namesAsked(sentence.own));
    const score =
      share / totalWeight +
      RANK_WEIGHT / sentence.rank +
      (names ? HOW_TO_BONUS : 0) +
      (sentence.opensSection || startsWithAsked(sentence.text) ? SUBJECT_BONUS : 0) +
      (sentence.about ? ABOUT_BONUS : 0) +
      ((sentence.opensSection && subject !== undefined) || definesSubject(sentence.own, sentence.terms) ? DEFINES_BONUS : 0) +
      optionFit(sentence);
    candidates.push({ text: sentence.text, n: sentence.n, score, position: sentence.position, terms: sentence.terms, names, showsName });
  }
  if (bestCoverage < MIN_CHUNK_COVERAGE || candidates.length === 0) return uncovered(undefined, bestCoverage);

  candidates.sort((a, b) => b.score - a.score || a.n - b.n || a.position - b.position);
  const first = candidates[0]!;
  const chosen: typeof candidates = [first];
  // A term counts as answered once a chosen sentence or its heading carries it;
  // what the user typed decides (a rewrite's added context is not what is asked).
  const asked = typedCounts ? [...typed].filter((term) => queryTerms.includes(term)) : queryTerms;
  // A chosen sentence answers the terms it carries and those of its section's heading.
  const answers = (c: (typeof candidates)[number], term: string) => c.terms.has(term) || contextOf.get(c.n)!.has(term);
  const answered = new Set(asked.filter((term) => answers(first, term)));
  // Overlapping chunks repeat sentences, and reference pages repeat each other's
  // ("Add a subdirectory to the build." / "Adds a subdirectory to the build."): a
  // sentence within another, or with nearly the same words, is quoted once.
  // A sentence quoted with the one before it ("... queue. This queue is drained ...")
  // shares that one with its neighbours: sharing a sentence counts too.
  // (Compared without the "`name`: " a sentence of a named section is shown with.)
  const unlabelled = (text: string) => text.replace(/^`[^`]+`: /, '').toLowerCase();
  const overlaps = (text: string, terms?: Set<string>) => {
    const candidate = unlabelled(text);
    const parts = candidate.split(/(?<=[.!?])\s+/).filter((part) => part.length >= MIN_SHARED_CHARS);
    return chosen.some((c) => {
      const quoted = unlabelled(c.text);
      if (quoted.includes(candidate) || candidate.includes(quoted) || parts.some((part) => quoted.includes(part))) return true;
      if (terms === undefined || terms.size === 0) return false;
      let shared = 0;
      for (const term of terms) if (c.terms.has(term)) shared++;
      return shared / (terms.size + c.terms.size - shared) >= NEAR_DUPLICATE;
    });
  };
  for (const candidate of candidates.slice(1)) {
    if (chosen.length >= MAX_SENTENCES || candidate.score < first.score * KEEP_SHARE) break;
    // A chosen sentence with the sentence that continues it ("... can share memory. They
    // do so by ..."), scoring as well, is quoted whole in its place: the rest says how.
    const extended = chosen.findIndex((c) => c.n === candidate.n && candidate.score >= c.score && candidate.text.length > c.text.length && candidate.text.startsWith(c.text));
    if (extended >= 0) {
      chosen[extended] = candidate;
      continue;
    }
    if (overlaps(candidate.text, candidate.terms)) continue;
    if (candidate.n === first.n) {
      if (chosen.filter((c) => c.n === first.n).length >= MAX_FROM_FIRST_CHUNK) continue;
    } else if (!asked.some((term) => !answered.has(term) && candidate.terms.has(term))) continue;
    chosen.push(candidate);
    for (const term of asked) if (answers(candidate, term)) answered.add(term);
  }
  // "How do I ...?" is answered by a command, flag or identifier: when no chosen
  // sentence names one in its own words (a "`add_subdirectory`: ..." label does not
  // show how to call it), the best that does takes the last place.
  if (howTo && !chosen.some((c) => c.showsName)) {
    // ... from a document already quoted: a command from another page answers another question.
    const quoted = new Set(chosen.map((c) => chunks[c.n - 1]!.documentPath));
    const naming = candidates.find((c) => !chosen.includes(c) && quoted.has(chunks[c.n - 1]!.documentPath) && c.score >= first.score * 0.4 && c.showsName && !overlaps(c.text, c.terms));
    if (naming) {
      if (chosen.length >= MAX_SENTENCES) chosen.pop();
      chosen.push(naming);
    }
  }
  const sentences = chosen.map(({ text, n, score }) => ({ text, n, score }));
  const lines = sentences.map((sentence) => `- ${sentence.text} [${sentence.n}]`);
  return { text: `${EXTRACTIVE_LABEL}\n${lines.join('\n')}`, covered: true, sentences, queryTerms, bestCoverage };
}

/**
 * The command, option or function a section title names ("add_test", "CXX_STANDARD",
 * "fs.readdir(path[, options])", "--leak-check=<no|summary|yes|full>"), as shown before a
 * sentence quoted from it (`core` lower-cased, to see whether the sentence names it).
 */
function sectionName(title: string): { shown: string; core: string } | undefined {
  const clean = title.replace(/[`*]/g, '').trim();
  // An option spelt several ways ("-v or --verbose", "-o FILE, --output FILE") is named by its long spelling.
  const core = (OPTION_TERM.test(clean) ? /(?:^|[\s,|])(--[A-Za-z][\w-]*)/.exec(clean)?.[1] : undefined) ?? /^[^\s(=<\[]+/.exec(clean)?.[0];
  if (core === undefined || core.length < 3) return undefined;
  const rest = clean.slice(clean.indexOf(core) + core.length);
  const called = rest.startsWith('(') && !/^\(\d\w*\)/.test(rest); // not a manual page's section: ctest(1)
  const flag = /^--?[a-z]/i.test(core);
  if (!(called || flag || /[_.]/.test(core.replace(/\.$/, ''))) || (!called && !flag && /\s/.test(rest.trim()))) return undefined;
  return { shown: called ? `${core}()` : core, core: core.toLowerCase() };
}

/** A heading or sentence compared as a heading: section numbers, markup and end punctuation gone. */
function headingKey(text: string): string {
  return text
    .toLowerCase()
    .replace(/^\s*(?:[\d]+\.)+\d*\s*/, '')
    .replace(/[`*_[\]]/g, '')
    .replace(/[.:!?\s]+$/, '')
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * A sentence whose subject points back ("It is ...", "This makes ...", "They ...")
 * and means nothing quoted alone. "This command" / "This variable" in a reference
 * page name the page's subject and stand alone.
 */
function isDangling(sentence: string): boolean {
  if (/^(?:in\s+(?:this|that|such\s+a)\s+case|in\s+this\s+way|for\s+this\s+reason)\b/i.test(sentence)) return true;
  // "The easiest way to do so is ...", "To do this, ...": how to do what the sentence before said.
  // ("To do this migration safely, ..." names what it does: "this" is followed by a noun there.)
  if (/^(?:\S+\s+){0,5}?(?:do|doing)\s+(?:so\b|(?:this|that)(?=\s*[,.;:!?]|\s*$|\s+(?:is|are|was|were|you|we|in|on|with|by|for|from|without|first|again|once)\b))/i.test(sentence)) return true;
  // "By default, it does not, ...": an opening adverbial leaves the subject dangling all the same.
  const match = /^[\s*`"'(]*(?:(?:by\s+default|however|otherwise|instead|also|then|thus|therefore|hence|in\s+addition|in\s+practice|in\s+general|for\s+example|for\s+instance),?\s+)?(it|its|it's|they|their|these|this|that|those)\b\s*(\S*)/i.exec(sentence);
  if (!match) return false;
  const word = match[1]!.toLowerCase();
  if (word === 'this' || word === 'these') {
    return !/^(command|commands|function|functions|module|property|properties|variable|variables|page|document|section|manual|tool|chapter|guide|policy|option|generator)\b/i.test(match[2] ?? '');
  }
  return true;
}

/** One sentence of a chunk's text. */
export interface ChunkSentence {
  text: string;
  /** A line of a code block. */
  code: boolean;
  /** Index of the sentence of prose right before it (no heading or code between), or -1. */
  prev: number;
  /** The first sentence of prose after a heading in the chunk: what the section is about. */
  lead: boolean;
  /** For a code line joined to the prose sentence that introduces it ("..., run: valgrind prog"), that sentence alone. */
  prose?: string;
  /** The last heading before it in the chunk's text, when there is one. */
  heading?: string;
}

/**
 * Where a sentence ends in a paragraph: after `.`, `!` or `?` and before a capital or a
 * digit, but not after "i.e.", "e.g.", "cf.", "vs." or "viz." ("The size of a SHA256
 * digest, i.e. 32.").
 */
const SENTENCE_END = new RegExp(String.raw`(?<=[.!?])(?<!${ABBREVIATION}\.)\s+(?=["'\`(\[]?[A-Z0-9])`);

/** A sentence that only says that something follows. */
const POINTS_ON = /^(?:here (?:is|are)|the following|see below|read on)\b[^.]*\.$/i;
/** A shell or REPL prompt that opens a typed line in a terminal session: `$ npm ci`, `> 1 + 1`, `PS> dir`, `C:\> py -m pip`. */
const PROMPT = /^\s*(?:\$|>|PS>|[A-Z]:\\[^>\s]*>)\s+/;
/** A prompt that makes a block a terminal session wherever it stands: `$ `, `C:\> ` (`> ` only in a block marked as one). */
const SESSION_PROMPT = /^(?:\$|[A-Z]:\\[^>\s]*>)\s/;
/** A line of columns: a first field, a run of two or more spaces (no-break ones too), then more. */
const COLUMNS = /^\s*\S+\s{2,}\S/;
/** A fence marked as a terminal session: ```console, ```shell-session, ```sh-session, ```pycon, ```terminal. */
const SESSION_FENCE = /^(?:```|~~~)\s*(?:console|shell-session|sh-session|pycon|terminal)\b/i;
/** Code comments: `// x`, `/* x`, ` * x`, `# x`, `#!`. */
const CODE_COMMENT = /^(?:\/\/|\/\*|\*\/|\*\s|#\s|#!|#$|<!--)/;
/** RST section adornment: a run of one punctuation character. */
const ADORNMENT = /^([-=~^"'`#*+_])\1{2,}\s*$/;
/** A numbered section title on its own line ("4.2.8. Memory leak detection"), as HTML manuals and their contents lists have. */
const NUMBERED_HEADING = /^\d+\.\d+(?:\.\d+)*\.?\s+[^.!?]{1,100}$/;
/** A version or stability note ("New in version 3.22.", "Stability: 3 - Legacy"): metadata of a section, not what it is about. */
const VERSION_NOTE = /^(?:(?:new|changed) in version|deprecated since version|added in:?|stability:)\s*v?\d/i;
/** Headings that name a part of a page rather than a subject. */
const STRUCTURE_HEADING = /^(?:description|synopsis|overview|introduction|summary|details|usage|examples?|notes?|discussion|background)$/;
/** Headings of sections that only point elsewhere. */
const NAVIGATION_HEADING = /^(?:see also|related(?: \w+)?|further reading|more information|links)$/;
/** A list item that is nothing but a link ("* [npm install](/commands/npm-install)"): navigation, not content. */
const LINK_ONLY = /^(?:\[[^\]]+\](?:\([^()\s]*\)|\[[^\]]*\])[\s,;.]*)+$/;
/** RST directive: `.. name:: argument`. */
const DIRECTIVE = /^\.\.\s+([\w-]+)::\s*(.*)$/;
/** Directives whose argument and body are prose. */
const PROSE_DIRECTIVES = new Set(['note', 'warning', 'important', 'tip', 'hint', 'attention', 'caution', 'danger', 'seealso', 'admonition', 'deprecated']);
/** Directives whose body is code. */
const CODE_DIRECTIVES = new Set(['code-block', 'code', 'sourcecode', 'parsed-literal', 'productionlist']);

/** Inline markup a reader does not need: RST roles, Markdown links and reference links, HTML tags (emphasis: {@link withoutEmphasis}). */
function cleanInline(text: string): string {
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
function withoutEmphasis(sentence: string): string {
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

/** Sentences of a chunk's text, as strings (see {@link chunkSentences}). */
export function splitSentences(text: string): string[] {
  return chunkSentences(text).map((sentence) => sentence.text);
}

/**
 * Sentences of a chunk's text: paragraphs split at sentence ends; list items (with
 * their continuation lines), table rows and code lines on their own; headings,
 * comments, link definitions, directives and fragments of fewer than three words
 * dropped.
 */
export function chunkSentences(rawText: string): ChunkSentence[] {
  let text = rawText.replace(/<!--[\s\S]*?(?:-->|$)/g, '');
  // A chunk that opens inside a comment: its end (a `-->` line) is dropped with the rest
  // of it. Not an arrow ("`/a///b` --> `/a/b`", "<--- Last few GCs --->" in a code block),
  // nor a close after a fence or a heading: the chunk was not in a comment there.
  const close = /^[ \t]*-->[ \t]*$/m.exec(text);
  if (close !== null && !/^\s*(?:```|~~~|#{1,6}\s)/m.test(text.slice(0, close.index))) text = text.slice(close.index + close[0].length);
  const out: ChunkSentence[] = [];
  let block: string[] = [];
  let item = false; // the block is a list item
  let inFence = false;
  let literalIndent = -1; // inside an indented RST literal block: the indent it must exceed
  let literalNext = false; // the next indented block is literal (after `::` or a code directive)
  let literalSession = false; // the literal block is a terminal session: only its prompt lines were typed
  // A sentence ending in ':' or '?' introduces what follows ("Working without a
  // browser?" / "If a run is still going, ... decides:"): keep the two together.
  let leadIn = '';
  let leadInPrev = -1; // the sentence before the lead-in
  let lastProse = -1; // the last sentence of prose since the last heading or code line
  let afterHeading = false; // a heading was seen and no prose sentence after it yet
  let heading: string | undefined; // the last heading seen
  const add = (raw: string, code: boolean, last = false) => {
    raw = raw.replace(/\s+/g, ' ').trim();
    // A question answered by a sentence that only points on ("So you want to write a
    // tool? Here are some instructions that may help.") answers nothing: both go.
    if (leadIn.endsWith('? ') && !code && POINTS_ON.test(raw)) {
      leadIn = '';
      return;
    }
    let sentence = `${leadIn}${raw}`.trim();
    const prose = code && leadIn ? leadIn.trim() : undefined;
    const blockPrev = lastProse;
    const prev = leadIn ? leadInPrev : blockPrev;
    leadIn = '';
    if (!code && !last && /[:?]$/.test(sentence) && sentence.length < MAX_SENTENCE_CHARS / 2) {
      leadIn = `${sentence} `;
      leadInPrev = prev;
      return;
    }
    // A question left without its answer ("What's the difference between ...?") answers nothing.
    if (!code && /\?(?:\s+\d+(?:\.\d+)*\.?)?$/.test(sentence)) return;
    // (In prose an identifier is one word: "BC_SCALE_MAX" alone, a definition's term, says
    // nothing; a code line is read as the tokenizer reads it: `NODE_ENV=production`.)
    if (!THREE_WORDS.test(code ? sentence : sentence.replace(IDENTIFIER_UNDERSCORE, ''))) return;
    if (sentence.length > MAX_SENTENCE_CHARS) sentence = `${sentence.slice(0, MAX_SENTENCE_CHARS - 1).trimEnd()}…`;
    // A lead-in joined to a code line goes with it (code), and is kept apart as `prose`.
    const lead = afterHeading && !code && !item && !VERSION_NOTE.test(sentence);
    if (lead) afterHeading = false;
    out.push({ text: sentence, code, prev, lead, ...(prose ? { prose } : {}), ...(heading !== undefined ? { heading } : {}) });
    lastProse = code ? -1 : out.length - 1;
  };
  const flush = () => {
    if (block.length === 0) return;
    const joined = cleanInline(block.join(' '));
    block = [];
    const sentences = joined.split(SENTENCE_END).map(withoutEmphasis);
    // "This means that using: <one line of code> with a compiler that ... is an error.":
    // a paragraph that goes on with a small word ("with", "and", "to") after a code line
    // its sentence led into ends that sentence; without it the lead-in and the code
    // read as advice. ("npm will detect ..." after a command is a sentence of its own.)
    const last = out.at(-1);
    const opener = /^([a-z]+)\b/.exec(sentences[0]!)?.[1];
    if (last?.code && last.prose !== undefined && !item && !afterHeading && opener !== undefined && isStopword(opener)) {
      let text = `${last.text} ${sentences.shift()!.replace(/\s+/g, ' ').trim()}`;
      if (text.length > MAX_SENTENCE_CHARS) text = `${text.slice(0, MAX_SENTENCE_CHARS - 1).trimEnd()}…`;
      out[out.length - 1] = { text, code: false, prev: last.prev, lead: last.lead, ...(last.heading !== undefined ? { heading: last.heading } : {}) };
      lastProse = out.length - 1;
    }
    for (const sentence of sentences) add(sentence, false);
    item = false;
  };
  const addCode = (line: string) => {
    if (line === '' || CODE_COMMENT.test(line)) return;
    add(line, true);
  };
  /** A line of a terminal session: what was typed after a prompt is code, the rest is what programs printed. */
  const addTyped = (rawLine: string) => {
    if (PROMPT.test(rawLine)) addCode(rawLine.trim().replace(PROMPT, ''));
  };
  const lines = text.split(/\r?\n/);
  let session = false; // the fenced block is a terminal session: prompts and what the programs printed
  lines.forEach((rawLine, index) => {
    const line = rawLine.trim();
    const indent = rawLine.length - rawLine.trimStart().length;
    if (/^(```|~~~)/.test(line)) {
      flush();
      inFence = !inFence;
      if (inFence) {
        let end = index + 1;
        while (end < lines.length && !/^\s*(```|~~~)/.test(lines[end]!)) end++;
        // "$ cmd" makes a session; "> expr" only in a block marked as one (a Markdown quote in a ```md block is not a prompt).
        const body = lines.slice(index + 1, end);
        session = body.some((next) => SESSION_PROMPT.test(next.trimStart())) || (SESSION_FENCE.test(line) && body.some((next) => PROMPT.test(next)));
      }
      return;
    }
    if (inFence) {
      // In a terminal session only what was typed is code; the rest is output ("● orbit-relay.service ...").
      if (!session) addCode(line);
      else addTyped(rawLine);
      return;
    }
    if (literalIndent >= 0) {
      if (line === '' || indent > literalIndent) {
        if (!literalSession) addCode(line);
        else addTyped(rawLine);
        return;
      }
      literalIndent = -1;
      literalSession = false;
    }
    // An indented block that opens with "$ " or "C:\> " (a code block whose directive the reader
    // dropped, pip's `.. code-block:: console`): a terminal session, not a quote.
    if (line !== '' && indent > 0 && SESSION_PROMPT.test(line) && block.length === 0 && (lines[index - 1] ?? '').trim() === '') {
      literalNext = false;
      literalIndent = indent - 1;
      literalSession = true;
      addTyped(rawLine);
      return;
    }
    if (literalNext && line !== '' && indent > 0) {
      literalNext = false;
      literalIndent = 0;
      addCode(line);
      return;
    }
    if (line === '') {
      flush();
      return;
    }
    literalNext = false;
    if (/^\[[^\]]+\]:\s*\S/.test(line)) {
      flush();
      return;
    }
    if (/^\d+(?:\.\d+)*\.?$/.test(line)) {
      flush(); // a section number alone on its line
      return;
    }
    if (/^#{1,6}\s/.test(line) || NUMBERED_HEADING.test(line)) {
      flush();
      leadIn = ''; // "The following options are available:" introduced the sections, not the first sentence of one
      heading = line.replace(/^#{1,6}\s+/, '').replace(/\s+#+$/, '');
      afterHeading = true;
      lastProse = -1;
      return;
    }
    // An option's synopsis alone in its paragraph ("--track-origins=<yes|no> [default: no]",
    // a definition term of the Valgrind manual) names what the sentences after it describe;
    // so does the title of an API reference entry ("Function: xsltAddKey", "exsltRegisterAll ()").
    const entry = block.length === 0 && (lines[index + 1] ?? '').trim() === '' ? (OPTION_TERM.test(line) ? line : entryName(line)) : undefined;
    if (entry !== undefined) {
      // A lead-in before it ("Run the tool with:") introduces the option, not its description.
      if (leadIn) add(line, false, true);
      heading = entry;
      afterHeading = true;
      lastProse = -1;
      return;
    }
    if (ADORNMENT.test(line)) {
      // An RST title sits on (or between) adornments: drop it rather than quote it.
      if (block.length === 1 && !item) {
        leadIn = '';
        heading = block[0];
        block = [];
        afterHeading = true;
        lastProse = -1;
      }
      flush();
      return;
    }
    if (/^[-=*_|:\s]{3,}$/.test(line)) {
      flush();
      return;
    }
    const directive = DIRECTIVE.exec(line);
    if (directive) {
      flush();
      const name = directive[1]!.toLowerCase();
      if (CODE_DIRECTIVES.has(name)) literalNext = true;
      else if (PROSE_DIRECTIVES.has(name) && directive[2]) block.push(directive[2]);
      return;
    }
    const listItem = /^(?:[-*+•‣◦]|\d+[.)])\s+(.*)$/.exec(line);
    if (listItem || line.startsWith('|')) {
      flush();
      if (listItem && LINK_ONLY.test(listItem[1]!.trim())) return;
      if (listItem) {
        block.push(listItem[1]!);
        item = true;
      } else add(line.replace(/\|/g, ' ').trim(), false);
      return;
    }
    // A row of columns set apart by runs of spaces, among others like it (a bug list in
    // release notes, a table in plain text): one item each, not one long run-on sentence.
    if (COLUMNS.test(rawLine) && [lines[index - 1], lines[index + 1]].some((next) => next !== undefined && COLUMNS.test(next))) {
      flush();
      add(line.replace(/\s+/g, ' '), false);
      return;
    }
    // Anything else continues the paragraph or list item it follows.
    block.push(line.replace(/^>\s?/, ''));
    if (/::$/.test(line)) {
      // "... as follows::" introduces a literal block; the colons read as one.
      block[block.length - 1] = block[block.length - 1]!.replace(/::$/, ':');
      flush();
      literalNext = true;
    }
  });
  flush();
  if (leadIn) add('', false, true);
  return out;
}
