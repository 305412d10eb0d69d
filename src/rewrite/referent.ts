// What a referring expression stands for, from salience: the focus of the previous
// question first (the object of the action it asked about, or its subject), then the
// names it mentioned, then an enumeration in the previous answer for "the second one".
// A candidate is a whole noun phrase as the user wrote it, never a generic word, a
// piece of a name or the tail of a longer phrase; "they"/"them" want a plural or a
// list. When no candidate is clearly right the rewriter does not substitute (it
// appends context terms instead): a wrong referent in the shown query misleads more
// than none.

import { stem } from '../text/stem.js';
import { isStopword } from '../text/stopwords.js';
import { tokenize } from '../text/tokenize.js';
import { trimEndOf } from '../util/words.js';
import type { Reference } from './reference.js';
import { isAdverb, isFiller } from './topics.js';

/** A noun phrase a reference may stand for. */
export interface Candidate {
  /** As written, without its article: `package`, `HTTP server`, `npm's cache`, `fs.readdir`. */
  phrase: string;
  /** The article it had: `a`/`an`/`the` (rendered as `the`), a possessive (`my`), or none. */
  determiner?: string;
  number: 'singular' | 'plural';
  /** A name or identifier (`Valgrind`, `find_package`, `CMake`), written without an article. */
  name: boolean;
  /** Where it came from. */
  role: 'object' | 'subject' | 'owner' | 'name' | 'item';
}

/** Articles, possessives, demonstratives and quantifiers that open a noun phrase. */
export const DETERMINERS: ReadonlySet<string> = new Set(['a', 'an', 'the', 'my', 'your', 'our', 'their', 'his', 'her', 'its', 'some', 'any', 'this', 'that', 'these', 'those', 'each', 'every']);
/** This, that, these, those: a determiner before a noun, else a pronoun. */
export const DEMONSTRATIVES: ReadonlySet<string> = new Set(['this', 'that', 'these', 'those']);
const PRONOUNS = new Set(['it', 'they', 'them', 'this', 'that', 'those', 'these', 'he', 'she', 'him', 'her', 'one', 'ones', 'i', 'we', 'you']);
const PARTICLES = new Set(['up', 'out', 'off', 'down', 'on', 'in', 'for', 'with', 'to', 'into', 'from', 'about', 'over', 'back', 'away']);
const ORDINAL_WORDS = new Set(['first', 'second', 'third', 'fourth', 'fifth', 'sixth', 'last', 'former', 'latter']);
const PREPOSITIONS = new Set('of in on at for with to from by into about over under between through without within against across inside outside via instead during'.split(' '));
const SUBJECT_WORDS = new Set(['i', 'we', 'you', 'one']);
/**
 * A person one knows, whom "they" and "them" name one at a time ("a coworker ...
 * remove them"). Not a role ("a user", "a member": "list them" is the users).
 */
const PERSON_NOUNS = new Set('coworker co-worker colleague teammate friend person someone somebody'.split(' '));

/** Whether `candidate` is a person one knows: "they"/"them" may point at one ("a coworker ... remove them"). */
export function isPerson(candidate: Candidate): boolean {
  return PERSON_NOUNS.has(candidate.phrase.split(' ').at(-1)!.toLowerCase());
}

/** People, and the roles they have, that "let" and "help" make do something ("let a coworker publish", "help my users install"). */
const DOERS = new Set([...PERSON_NOUNS, ...'user users developer developers maintainer maintainers contributor contributors collaborator collaborators member members admin admins people coworkers colleagues teammates friends'.split(' ')]);

/** Verbs whose object does what follows it: "let a coworker publish", "help the linker find" ("make" and "have" also make and hold things). */
const CAUSATIVE = new Set(['let', 'help']);
const AUXILIARIES = new Set('is are was were be can could would should will does do did has have had may might must shall'.split(' '));
/** Nouns too vague to stand for anything on their own. */
const GENERIC = new Set(
  `thing things way ways difference differences option options value values version versions kind kinds type types
  part parts case cases example examples question questions answer answers one ones lot lots stuff something
  anything everything nothing problem problems issue issues default defaults time times step steps result results
  reason reasons number numbers list lists use uses need needs available best better good new old same other`.split(/\s+/).filter(Boolean),
);

/** Adjectives that may follow a noun ("the plans available") without being part of it. */
const TRAILING_ADJECTIVES = new Set(['available', 'new', 'same', 'other', 'good', 'best', 'better', 'possible', 'necessary', 'required', 'needed', 'supported', 'enabled', 'disabled']);

interface Token {
  /** As written, punctuation trimmed (a possessive `'s` kept). */
  text: string;
  lower: string;
  /** Punctuation that followed it (a comma or a question mark ends a phrase). */
  trailing: string;
}

function tokens(text: string): Token[] {
  return text
    .split(/\s+/)
    .filter(Boolean)
    .map((raw) => {
      const text = raw.replace(/^[^\p{L}\p{N}_$@.`"'“]+/u, '').replace(/^[`"'“]+/u, '').replace(/[^\p{L}\p{N}_+#%']+$/u, '').replace(/'$/, '');
      const trailing = raw.slice(raw.lastIndexOf(text) + text.length);
      return { text, lower: text.toLowerCase().replace(/’/g, "'"), trailing };
    })
    .filter((token) => token.text !== '');
}

/** A name or identifier: capitalised after the first word, all caps, or with `_` `.` `-` `+` `#` between letters. */
function isName(token: Token, index: number): boolean {
  const word = token.text.replace(/'s$/, '');
  if (/[\p{L}\p{N}][_.+#-]|[_.][\p{L}\p{N}]/u.test(word) && /\p{L}/u.test(word)) return true;
  if (/^\p{Lu}[\p{Lu}\d]+s?$/u.test(word)) return true;
  if (/^\p{Ll}+\p{Lu}/u.test(word)) return true;
  return index > 0 && /^\p{Lu}/u.test(word);
}

function nounWord(token: Token): boolean {
  const bare = token.lower.replace(/'s$/, '');
  // ("an environment variable inside those": a preposition ends the phrase.)
  if (PRONOUNS.has(bare) || isAdverb(bare) || PREPOSITIONS.has(bare)) return false;
  return !isFiller(bare) || /[_.+#]/.test(bare);
}

/** The first word after an article may be a word that is usually a verb: "an include directory", "the run step". */
function modifierWord(token: Token): boolean {
  const bare = token.lower.replace(/'s$/, '');
  return !PRONOUNS.has(bare) && !isStopword(bare) && !AUXILIARIES.has(bare) && !isAdverb(bare) && !/^\d+$/.test(bare);
}

/** The plural of an English noun (good enough for the heads of documentation phrases). */
function pluralise(word: string): string {
  if (/(s|x|z|ch|sh)$/i.test(word)) return `${word}es`;
  if (/[^aeiou]y$/i.test(word)) return `${word.slice(0, -1)}ies`;
  return `${word}s`;
}

function numberOf(words: Token[]): 'singular' | 'plural' {
  const head = words.at(-1)!.lower.replace(/'s$/, '');
  if (/[._]/.test(head)) return 'singular';
  if (/^[\p{Lu}\d_.+#-]+$/u.test(words.at(-1)!.text) && !/[a-z]s$/.test(words.at(-1)!.text)) return 'singular';
  return isPluralWord(head) ? 'plural' : 'singular';
}

/** A lower-case noun in the plural ("threads", not "class", "status" or "analysis"), roughly. */
export function isPluralWord(word: string): boolean {
  return /[^su]s$/.test(word) && !/(ss|us|is)$/.test(word);
}

/**
 * The noun phrase starting at `start`: an optional article, then up to four noun
 * words. `subject`: the phrase is a clause's subject, so a content word that ends it
 * right before an object is the verb ("does the compiler support it"). `most`: noun
 * words read at most (by default five, and a run of five is no phrase; one after
 * "let a coworker").
 */
function phraseAt(list: Token[], start: number, role: Candidate['role'], subject = false, most = 5): { candidate?: Candidate; pronoun?: string; end: number } {
  let i = start;
  let determiner: string | undefined;
  if (i < list.length && DETERMINERS.has(list[i]!.lower) && list[i + 1] && modifierWord(list[i + 1]!)) determiner = list[i++]!.lower;
  // "does that slow the program down?", "will this break my build?": a demonstrative
  // whose next word has an article or a possessive after it is the subject itself, and
  // that word its verb (the phrase was "the slow").
  if (determiner !== undefined && DEMONSTRATIVES.has(determiner) && DETERMINERS.has(list[i + 1]?.lower ?? '')) return { pronoun: determiner, end: i };
  if (i < list.length && PRONOUNS.has(list[i]!.lower)) return { pronoun: list[i]!.lower, end: i + 1 };
  // "its output", "their limits": about something named earlier.
  if (determiner === 'its' || determiner === 'their') return { pronoun: determiner, end: i };
  const words: Token[] = [];
  while (i < list.length && (nounWord(list[i]!) || (determiner !== undefined && words.length === 0 && modifierWord(list[i]!))) && words.length < most) {
    // "a script defined in ...": a participle after the noun starts another phrase.
    if (words.length > 0 && /ed$/.test(list[i]!.lower) && !isName(list[i]!, i)) break;
    // "a file line by line": "line by line" says how, it is not part of the noun.
    if (list[i + 1]?.lower === 'by' && list[i + 2]?.lower === list[i]!.lower) break;
    words.push(list[i]!);
    i++;
    if (/[,;:?!]/.test(list[i - 1]!.trailing)) break;
  }
  // "Does IBM offer document databases?": a name without an article, then a lower-case word, is the subject before its verb.
  const verbAt = words.findIndex((word, index) => index > 0 && /^\p{Ll}/u.test(word.text) && !isName(word, 1));
  let verbFound = false;
  if (subject && !determiner && words.length >= 2 && isName(words[0]!, 1) && verbAt > 0) {
    i -= words.length - verbAt;
    words.splice(verbAt);
    verbFound = true;
  }
  // "the second one", "the first option": points into a list, names nothing itself.
  if (words.some((word) => ORDINAL_WORDS.has(word.lower))) return { pronoun: 'ordinal', end: i };
  if (subject && !verbFound && words.length >= 2 && !PREPOSITIONS.has(list[i]?.lower ?? '')) {
    const stop = list[i]?.lower;
    const endedByVerb = stop !== undefined && (AUXILIARIES.has(stop) || (isFiller(stop) && !isStopword(stop)));
    const endedByEnd = stop === undefined && /\?/.test(words.at(-1)!.trailing);
    if (endedByVerb) {
      // "How does npm ci work?": the run is the subject.
    } else if (stop === undefined && words.length >= 3 && (!determiner || endedByEnd)) {
      // A run without an article (or one ending at a "?" left in the clause) to the clause's end is the subject, its verb and the verb's object: "How does curl
      // handle proxies?" is about curl ("curl handle" is no thing); with more words ("How does git rebase handle
      // conflicts?") where the verb stands is a guess, and there is no focus rather than a wrong one.
      if (words.length > 3) return { end: i };
      words.splice(1);
      i -= 2;
    } else {
      // "does the compiler support it?": the run's last word is the verb.
      words.pop();
      i--;
    }
  }
  // "the Lite pricing plans available": an adjective after the noun is not part of it.
  while (words.length > 1 && TRAILING_ADJECTIVES.has(words.at(-1)!.lower)) words.pop();
  if (words.length === 0 || words.length > 4) return { end: i };
  const phrase = words.map((word) => word.text).join(' ');
  const name = words.length === 1 && isName(words[0]!, start + (determiner ? 1 : 0)) && !determiner;
  const head = words.at(-1)!.lower.replace(/'s$/, '');
  if (GENERIC.has(head) && words.length === 1) return { end: i };
  return { candidate: { phrase, ...(determiner ? { determiner } : {}), number: numberOf(words), name, role }, end: i };
}

export interface Focus {
  /** The phrase the question is about, or a pronoun when it is about something earlier. */
  candidate?: Candidate;
  pronoun?: string;
  /** The "of ..." owner of the focus ("the recursive option of fs.readdir" -> fs.readdir). */
  owner?: Candidate;
  /** A coordination at the focus ("npm ci and npm install"), in order. */
  list?: Candidate[];
}

const ASK_ACTION = /^(?:(?:how|where|when|why)(?:\s+(?:often|long|quickly|soon|frequently|much|many))?\s+)?(?:do|can|could|should|would|shall|must|may)\s+(?:i|we|you|one)\s+/i;
const ASK_ABOUT = /^(?:what|which|who)\s+(?:is|are|was|were)\s+/i;
const ASK_SUBJECT = /^(?:(?:how|why|when|where|what|which)(?:\s+\w+){0,2}\s+)?(?:does|do|is|are|can|will|did|should|would|could|has|have|was|were)\s+/i;
const ASK_WHICH = /^(?:which|what)\s+(?=\S+\s+(?:do|does|is|are|can|come|comes|should)\b)/i;
const INFINITIVE = /^(?:is|was|would|will)\s+it\s+\S+\s+to\s+/i;
/** "who wrote ...", "what causes ...": a question word as the subject of a verb that is no auxiliary. */
const ASK_WHO_DOES = /^(?:who|what)\s+(?!(?:is|are|was|were|be|does|do|did|can|could|should|would|will|shall|has|have|had|may|might|must|about|if|kind|kinds|type|types|version|versions)\b)[a-z]+(?:s|ed)?\s+(?=\S)/i;

/** Strips the context an offline rewrite appended and the final punctuation. */
export function mainClause(text: string): string {
  return trimEndOf(withoutContext(text), ' \t\r\n?.!').trim();
}

/** `text` without the context an offline rewrite appended in parentheses at its end. */
export function withoutContext(text: string): string {
  // Cut from the end without patterns that scan to it from every space (a long run of them stays linear).
  const clause = trimEndOf(text, ' \t\r\n');
  if (clause.endsWith(')')) {
    const open = clause.lastIndexOf('(');
    if (open >= 0 && !clause.slice(open + 1, -1).includes(')')) return clause.slice(0, open);
  }
  return clause;
}

/** Where the object of a verb starts: after the verb, a particle ("set up", "turn on") and a preposition ("listen for"). */
function objectStart(list: Token[], verbIndex: number): number {
  // "need to purchase it", "want to delete a workspace": the verb after "to".
  while (list[verbIndex + 1]?.lower === 'to' && list[verbIndex + 2] && ['need', 'want', 'have', 'like', 'try', 'able'].includes(list[verbIndex]!.lower)) verbIndex += 2;
  let i = verbIndex + 1;
  while (i < list.length && PARTICLES.has(list[i]!.lower) && i < verbIndex + 3) i++;
  return i;
}

/** The focus of a question: what it asks about, as a noun phrase (or the pronoun it used). */
export function questionFocus(question: string): Focus {
  const text = mainClause(question);
  const list = tokens(text);
  if (list.length === 0) return {};
  const lower = text.toLowerCase();
  let start: number | undefined;
  /** The phrase after the auxiliary is a subject followed by its verb ("does the compiler support it"); not after "is"/"are". */
  let subject = false;
  /** At most this many noun words in the focus (phraseAt's own bound when undefined). */
  let most: number | undefined;
  const skip = (prefix: RegExpExecArray | null) => (prefix ? tokens(prefix[0]).length : undefined);

  let matched = skip(INFINITIVE.exec(lower));
  if (matched !== undefined) start = objectStart(list, matched);
  if (start === undefined) {
    matched = skip(ASK_ACTION.exec(lower)) ?? skip(/^how\s+to\s+/i.exec(lower)) ?? skip(/^(?:i|we)\s+(?:want|need|would\s+like)\s+to\s+/i.exec(lower));
    if (matched !== undefined) {
      // "how do I make it listen": the object of "make".
      start = objectStart(list, matched);
      // "let a coworker publish new versions": the person "let" makes do the rest, with its article
      // (what else it makes do, "the build system find", is left as read: a noun or a verb, unknown).
      if (CAUSATIVE.has(list[matched]?.lower ?? '') && DETERMINERS.has(list[start]?.lower ?? '') && DOERS.has(list[start + 1]?.lower ?? '')) most = 1;
    }
  }
  if (start === undefined) {
    matched = skip(ASK_ABOUT.exec(lower));
    if (matched !== undefined) {
      start = matched;
      // "what is the difference between X and Y": the things compared.
      const between = list.findIndex((token) => token.lower === 'between');
      if (between > 0 && between <= matched + 2) start = between + 1;
    }
  }
  if (start === undefined && ASK_WHICH.test(lower)) start = 1;
  // "Who wrote the Frobnicator?", "What causes a memory leak?": "who"/"what" is the
  // subject, the word after it its verb, and the focus that verb's object.
  if (start === undefined && ASK_WHO_DOES.test(lower)) start = objectStart(list, 1);
  if (start === undefined) {
    matched = skip(ASK_SUBJECT.exec(lower));
    if (matched !== undefined && !SUBJECT_WORDS.has(list[matched]?.lower ?? '')) {
      start = matched;
      subject = !['is', 'are', 'was', 'were'].includes(list[matched - 1]?.lower ?? '');
    }
  }
  if (start === undefined) {
    // A fragment ("and Helgrind?", "what about compile definitions?"): its first noun
    // phrase. A longer statement ("Excuse me, I meant ...") has no focus to take.
    if (list.length > 6) return {};
    // "Whatar are intents?": a sentence with a verb, misspelt, is not a fragment.
    if (list.some((token) => AUXILIARIES.has(token.lower))) return {};
    const opener = /^(?:(?:and|but|or|so|also)\s+)?(?:what|how)\s+about\s+|^(?:and|but|or|so|also)\s+/i.exec(lower);
    start = opener ? tokens(opener[0]).length : 0;
    // "what about in CI?", "and on Windows?": a circumstance of the earlier question, whose focus still holds.
    if (PREPOSITIONS.has(list[start]?.lower ?? '')) return { pronoun: 'circumstance' };
    while (start < list.length && !nounWord(list[start]!) && !DETERMINERS.has(list[start]!.lower) && !PRONOUNS.has(list[start]!.lower)) start++;
  }

  const first = phraseAt(list, start, matched !== undefined && start === matched ? 'subject' : 'object', subject, most);
  if (first.pronoun) return { pronoun: first.pronoun };
  if (!first.candidate) return {};
  const focus: Focus = { candidate: first.candidate };
  let next = first.end;
  if (list[next]?.lower === 'of') {
    const owner = phraseAt(list, next + 1, 'owner');
    if (owner.candidate) focus.owner = owner.candidate;
  }
  // "npm ci and npm install", "Memcheck, Cachegrind and Massif": a list.
  const items = [first.candidate];
  while (/,/.test(list[next - 1]?.trailing ?? '') || ['and', 'or'].includes(list[next]?.lower ?? '')) {
    if (['and', 'or'].includes(list[next]?.lower ?? '')) next++;
    const item = phraseAt(list, next, 'item');
    if (!item.candidate) break;
    items.push(item.candidate);
    next = item.end;
  }
  if (items.length > 1) focus.list = distributeHead(items);
  return focus;
}

/**
 * "the memcheck and helgrind tools": one plural head shared by the words before it,
 * so the items are "the memcheck tool" and "the helgrind tool", not "memcheck" and
 * "helgrind tools". Only when every item but the last is one word and the last ends
 * in a plural noun; any other list is left as written.
 */
function distributeHead(items: Candidate[]): Candidate[] {
  const last = items.at(-1)!;
  const words = last.phrase.split(' ');
  if (words.length < 2 || last.number !== 'plural' || last.name) return items;
  if (!items.slice(0, -1).every((item) => !item.phrase.includes(' ') && item.number === 'singular' && !/'s$/.test(item.phrase))) return items;
  const head = singularise(words.at(-1)!);
  const determiner = items[0]!.determiner ?? 'the';
  return items.map((item, index) => ({
    ...item,
    phrase: index === items.length - 1 ? [...words.slice(0, -1), head].join(' ') : `${item.phrase} ${head}`,
    determiner,
    number: 'singular' as const,
    name: false,
  }));
}

/** The singular of an English plural noun (the inverse of pluralise, roughly). */
function singularise(word: string): string {
  if (/[^aeiou]ies$/i.test(word)) return `${word.slice(0, -3)}y`;
  // "classes", "boxes", "patches", "approaches" lose "es"; "caches", "sizes", "files" only their "s".
  if (/(?:ss|x|zz|sh|[^aeiou]ch|[aeiou]{2}ch)es$/i.test(word)) return word.slice(0, -2);
  return word.replace(/s$/i, '');
}

/**
 * The noun `one`/`ones` stands for when it takes `candidate`'s place ("which one" after
 * "What tools does ninja -t provide?": tool): the head of a phrase that is no name, in
 * the reference's number; undefined for a name ("the faster one" of "Memcheck"?).
 */
export function headNoun(candidate: Candidate, number: 'singular' | 'plural'): string | undefined {
  if (candidate.name) return undefined;
  const head = candidate.phrase.split(/\s+/).at(-1)!;
  if (!/^\p{Ll}[\p{Ll}-]*$/u.test(head) || GENERIC.has(head.toLowerCase())) return undefined;
  const singular = candidate.number === 'plural' ? singularise(head) : head;
  return number === 'plural' ? pluralise(singular) : singular;
}

/** The noun phrase a text is, or undefined ("the package" -> package; "Massif's" -> Massif). */
export function phraseOf(text: string): Candidate | undefined {
  const list = tokens(text.replace(/['’]s?\s*$/u, '').replace(/[?.!]+$/, ''));
  const found = phraseAt(list, 0, 'subject');
  if (!found.candidate || found.end !== list.length) return undefined;
  // A single word written with a capital is a name wherever it stands.
  if (list.length === 1 && /^\p{Lu}/u.test(list[0]!.text)) return { ...found.candidate, name: true };
  return found.candidate;
}

/** Every noun phrase of a question, in order (for "they"/"them": a plural one may be meant). */
export function questionPhrases(question: string): Candidate[] {
  const list = tokens(mainClause(question));
  const phrases: Candidate[] = [];
  let i = 0;
  while (i < list.length) {
    const found = phraseAt(list, i, 'name');
    if (found.candidate) phrases.push(found.candidate);
    i = Math.max(i + 1, found.end);
  }
  return phrases;
}

/** Names and identifiers a question mentions, in order ("Valgrind", "find_package"), without its focus. */
export function questionNames(question: string): Candidate[] {
  const list = tokens(mainClause(question));
  const names: Candidate[] = [];
  list.forEach((token, index) => {
    if (!isName(token, index) || isFiller(token.lower)) return;
    const text = token.text.replace(/'s$/, '');
    if (names.some((name) => name.phrase === text)) return;
    names.push({ phrase: text, number: 'singular', name: true, role: 'name' });
  });
  return names;
}


/** A code span of an answer that names one thing: an identifier, a call, an option, or a command of up to three words (`npm fund`). */
const NAMING_SPAN = /^(?:[A-Za-z_$][\w$]*(?:(?:\.|::|-)[\w$]+)*(?:\(\))?|--?[A-Za-z][\w-]*|[a-z][\w-]*(?: [a-z][\w-]*){1,2})$/;
/** An identifier in an answer's prose that is written as one: an underscore or a dot between its parts, or a call. */
const PROSE_IDENTIFIER = /(?<![\w.$`-])_*[A-Za-z$][A-Za-z0-9$]*(?:[_.]+[A-Za-z0-9$]+)+_*(?:\(\))?(?![\w`])/g;

/** An example's name, not a tool's: a file (`app.js`, `main.c`), or one made up for the example (`my_server`, `foo.bar`). */
const PLACEHOLDER = /\.(?:js|mjs|cjs|ts|jsx|tsx|py|rb|go|rs|java|c|h|cc|cpp|hpp|txt|json|md|ya?ml|toml|xml|html|sh|log|conf|cfg|ini)$|^(?:my|your|our|foo|bar|baz|example|sample|test)(?:[._]|$)/i;

/**
 * The thing an answer names most, when a question asked whether there is something
 * that does a job ("Is there something that parses those for me?") and the answer
 * said what: the identifier, call, option or command written in code or as an
 * identifier most often in it, at least twice (a name quoted once is as likely an
 * example's). Undefined when no name is repeated, or two are repeated equally.
 */
export function answerName(answer: string): Candidate | undefined {
  const counts = new Map<string, { shown: string; count: number }>();
  const count = (written: string) => {
    const shown = written.trim();
    // (As written: `MY_INSTALL` is not `my_install`.)
    const key = shown.replace(/\(\)$/, '');
    if (key.length < 3 || isFiller(key.toLowerCase()) || /^(?:i\.e|e\.g|cf|vs|etc)$/i.test(key) || PLACEHOLDER.test(key)) return;
    const entry = counts.get(key);
    if (entry) entry.count++;
    else counts.set(key, { shown, count: 1 });
  };
  const prose = answer.replace(/(`{1,2})([^`\n]+?)\1/g, (_, ticks: string, span: string) => {
    if (NAMING_SPAN.test(span.trim())) count(span);
    return ' '.repeat(span.length + 2 * ticks.length);
  });
  for (const match of prose.matchAll(PROSE_IDENTIFIER)) count(match[0]);
  const ranked = [...counts.values()].sort((a, b) => b.count - a.count);
  const best = ranked[0];
  if (!best || best.count < 2 || ranked[1]?.count === best.count) return undefined;
  return { phrase: best.shown, number: 'singular', name: true, role: 'name' };
}

/** Between two code spans of one inline list: a comma, "and" or "or", around a Markdown link's brackets ("[`a()`][], [`b()`][]"). */
const SPAN_SEPARATOR = /^\]?(?:\[[^\]\n]*\]|\([^)\s]*\))?\s*(?:,\s*(?:(?:and|or)\s+)?|\s(?:and|or)\s+)\[?$/;

/**
 * The items of a list of code spans in a sentence of an answer ("``Debug``,
 * ``Release``, ``RelWithDebInfo`` and ``MinSizeRel``"): the longest run (the first
 * of equals) of two or more; empty when there is none.
 */
export function inlineItems(answer: string): Candidate[] {
  const spans = [...answer.matchAll(/(`{1,2})([^`\n]+?)\1/g)];
  let run: string[] = [];
  let best: string[] = [];
  spans.forEach((span, i) => {
    const previous = spans[i - 1];
    const between = previous ? answer.slice(previous.index! + previous[0].length, span.index) : undefined;
    const item = span[2]!.trim();
    run = between !== undefined && SPAN_SEPARATOR.test(between) && !run.includes(item) ? [...run, item] : [item];
    if (run.length > best.length) best = run;
  });
  if (best.length < 2) return [];
  return best.map((phrase) => ({ phrase, number: 'singular' as const, name: true, role: 'item' as const }));
}

/**
 * The items of an enumeration in an answer ("1. Memcheck, a memory error detector.
 * 2. Cachegrind, ..."; "- **Helgrind**: ..."), each as its leading name; empty when
 * the answer lists no short names (quoted sentences are not an enumeration).
 */
export function enumerationItems(answer: string): Candidate[] {
  let parts: string[] = [];
  const numbered = answer.split(/(?:^|\s)\d{1,2}[.)]\s+/).slice(1);
  if (numbered.length >= 2) parts = numbered;
  else {
    const bullets = answer.split(/\n\s*[-*•]\s+/).slice(1);
    if (bullets.length >= 2) parts = bullets;
  }
  const items: Candidate[] = [];
  for (const part of parts) {
    const lead = part
      .replace(/\*\*|__|`/g, '')
      .split(/\s*(?:[,:;(\n]|\s[-–—]\s|\s(?:is|are|was|lets|which)\s)/)[0]!
      .replace(/[.!?\s]+$/, '')
      .trim();
    const words = lead.split(/\s+/).filter(Boolean);
    if (words.length === 0 || words.length > 4) return [];
    if (words.some((word) => isStopword(word.toLowerCase()))) return [];
    items.push({ phrase: lead, number: numberOf(tokens(lead)), name: words.length === 1 && /^\p{Lu}|[_.]/u.test(lead), role: 'item' });
  }
  return items.length >= 2 ? items : [];
}

/** The referent's words as they go into the question: "the package", "Valgrind", "npm's cache", "tests". */
export function render(candidate: Candidate, reference: Pick<Reference, 'kind' | 'number'>, sentenceStart: boolean): string {
  let phrase = candidate.phrase;
  let determiner = candidate.determiner;
  // "them" after "How do I add a test?": the tests in general (after "let a coworker publish", the coworker: a person).
  if (reference.number === 'plural' && candidate.number === 'singular' && (determiner === 'a' || determiner === 'an') && !isPerson(candidate)) {
    const words = phrase.split(' ');
    words[words.length - 1] = pluralise(words.at(-1)!);
    phrase = words.join(' ');
    determiner = undefined;
  }
  if (determiner === 'a' || determiner === 'an' || determiner === 'this' || determiner === 'that' || determiner === 'these' || determiner === 'those') determiner = 'the';
  if (determiner === 'some' || determiner === 'any' || determiner === 'each' || determiner === 'every' || determiner === 'its') determiner = 'the';
  // A name goes without an article; a possessive phrase as written: "npm's cache", "the downloaded file's hash".
  if (candidate.name) determiner = undefined;
  let text = determiner ? `${determiner} ${phrase}` : phrase;
  if (reference.kind === 'possessive') text = /s$/i.test(text) && candidate.number === 'plural' ? `${text}'` : `${text}'s`;
  if (sentenceStart && determiner) text = text[0]!.toUpperCase() + text.slice(1);
  return text;
}

/** Stems of the content words of a text. */
function stems(text: string): Set<string> {
  return new Set(tokenize(text, { identifiers: true }).filter((word) => !isStopword(word)).map((word) => stem(word)));
}

/** A candidate fits a reference: number agrees, and it is not what the question already names ("what other options does it take"). */
export function fits(candidate: Candidate, reference: Pick<Reference, 'number'>, question: string): boolean {
  const own = stems(question);
  const head = candidate.phrase.split(' ').at(-1)!.replace(/'s$/, '');
  if (tokenize(head, { identifiers: true }).some((word) => own.has(stem(word)))) return false;
  if (reference.number === 'singular' && candidate.number === 'plural') return false;
  if (reference.number === 'plural' && candidate.number === 'singular' && candidate.determiner !== 'a' && candidate.determiner !== 'an') return false;
  return true;
}

/**
 * Whether a term is too common in this index to name anything: a single word, not a
 * name, in more than `share` of the chunks ("version", "available"). A phrase of several words is
 * not judged by its words: in a small index about one API, "API" and "key" are in
 * most chunks while "API key" still names one thing.
 */
export function isCommonPhrase(phrase: string, termShare: ((word: string) => number) | undefined, share = 0.2): boolean {
  if (!termShare) return false;
  // A name ("Valgrind", "CMake") names one thing however often the index mentions it.
  if (/\p{Lu}|[_.]\p{L}/u.test(phrase)) return false;
  const words = tokenize(phrase).filter((word) => !isStopword(word) && word.length > 1);
  return words.length === 1 && termShare(words[0]!) > share;
}
