// What a referring expression is: the one place that decides whether "it", "they",
// "them", "that", "those", "its", "the second one", "do that" or "the same" in a
// question points back at the conversation. The gate asks it whether a question
// leans on earlier turns; the offline rewriter asks it what to resolve and where the
// words stand. Two lists that disagree ("Is it recommended to rotate?" rewritten, "Is
// it safe to rotate?" left alone) cannot happen when there is one.

import { isStopword } from '../text/stopwords.js';
import { tokenize } from '../text/tokenize.js';
import { DEMONSTRATIVES, DETERMINERS, isPluralWord } from './referent.js';
import { extractTerms, isAdverb, isFiller } from './topics.js';

export type ReferenceKind =
  /** it, they, them, this, that, those, these (standing alone), he, she... */
  | 'pronoun'
  /** its, their, his, her */
  | 'possessive'
  /** "that plan", "these keys": points back, but names its own noun */
  | 'determiner'
  /** the first/second/last one, the former, the latter */
  | 'ordinal'
  /** do that, do it, do this, do the same */
  | 'action'
  /** the same, the other, instead, as well, you mentioned... */
  | 'other'
  /** "which one", "the per-user one", "to one": `one` standing for a noun said before (`text` is the word itself) */
  | 'one';

export type GrammaticalNumber = 'singular' | 'plural' | 'any';

export interface Reference {
  kind: ReferenceKind;
  /** The words as typed, e.g. `it`, `the second one`, `do that`. */
  text: string;
  /** Character offsets of `text` in the question. */
  start: number;
  end: number;
  /** What the referent must agree with: "it" a single thing, "them" a plural or a list. */
  number: GrammaticalNumber;
  /** For ordinals: 1-based position in an enumeration; -1 for "the last"/"the latter". */
  ordinal?: number;
  /** The gate's phrase for it, e.g. `pronoun 'it'`, `reference 'the second one'`. */
  signal: string;
}

export interface ReferenceOptions {
  /**
   * Also count a pronoun that follows a noun phrase of the question itself ("will
   * buying stocks give me control over it?"): a model rewrites and leaves a
   * standalone question as it is, so a false positive costs little.
   */
  eager?: boolean;
}

const SINGULAR = new Set(['it', 'its', "it's", 'this', 'that', "that's", 'he', 'she', 'him', 'her', 'his']);
const PLURAL = new Set(['they', 'them', 'their', 'theirs', 'those', 'these', "they're"]);
const POSSESSIVE = new Set(['its', 'their', 'his', 'her']);

const AUXILIARIES = new Set('is are was were be can could would should will does do did has have had may might must'.split(' '));

/** Words after `it` that make it the dummy subject ("is it possible to ...", "is it recommended to ..."). */
const DUMMY_IT_AFTER = new Set(
  `possible necessary true safe okay ok recommended worth better best wise advisable required
  important hard easy difficult allowed legal mandatory normal common typical smart so a an too really
  enough still good bad likely unlikely useful helpful fine costly expensive cheap free`.split(/\s+/).filter(Boolean),
);

/** Words before a dummy "it": "is it safe", "would it be", and none ("It is possible ..."). */
const BE_BEFORE_IT = new Set(['is', 'was', "isn't", "wasn't", 'would', 'will', 'could', 'might', 'can', 'does', 'find', 'makes', 'think', 'consider', 'how', 'why', 'if', 'when', 'so', 'and', 'but']);

/** `this year`, `this month`: time, not a reference. */
const TIME_NOUNS = new Set(['year', 'month', 'week', 'time', 'morning', 'quarter', 'weekend', 'evening', 'afternoon', 'season', 'way']);

/** Words before `that` that make it a conjunction ("check that", "sure that"). */
const THAT_CONJUNCTION_BEFORE = new Set(
  `check checks ensure ensures verify verifies say says said know knows sure mean means confirm think
  believe true given assuming show shows prove proves so such seems seem clear possible note
  requirement requires require make guarantee guarantees hope way fact`.split(/\s+/).filter(Boolean),
);

/**
 * Verbs of saying, seeing and knowing, after which `that` opens a clause ("The manual
 * states that in version 1.10 ...", "I noticed that for large projects ...") unless it
 * ends the clause ("Does the manual mention that?").
 */
const SAYING_BEFORE = new Set(
  `state states stated claim claims claimed notice noticed hear heard find found learn learned learnt realize realized
  realise realised assume assumed guess suppose supposed expect expected understand understood suggest suggests
  suggested recommend recommends recommended wrote written documented mention mentions doubt figured discovered
  remember forgot imagine explains explained warn warns warned imply implies implied indicate indicates`.split(/\s+/).filter(Boolean),
);

/** Words after which `that` is the pronoun: question frames and prepositions ("is that ...", "about that"). */
const THAT_PRONOUN_BEFORE = new Set(
  `what which who whom whose how why where when whether is are was were be been am can could would should
  will shall may might must do does did have has had i we you me my our tell explain show give describe
  about with for of on in to from by at and or but than after before like use get make set run configure
  enable disable add remove delete change update check see try keep undo fix if when unless once`.split(/\s+/).filter(Boolean),
);

/** Prepositions whose object is another participant than the clause's noun phrases ("of" has its own rule). */
const PREPOSITIONS = new Set(['with', 'without', 'for', 'to', 'on', 'onto', 'from', 'into', 'in', 'against', 'at', 'by', 'beside', 'alongside', 'inside', 'within', 'through', 'via']);

/** After a demonstrative, these make it a pronoun, not a determiner: "is that safe?", "do those work?". */
const NOT_A_NOUN_AFTER = new Set(
  `is are was were be can could would should will does do did has have had may might must
  work works mean means cost costs apply applies happen happens matter matters affect affects help helps
  safe possible necessary true better worse same different enough required recommended free paid available
  expensive cheap fast slow secure correct right wrong supported deprecated included`.split(/\s+/).filter(Boolean),
);

/** Words after a verb's object that start a phrase of their own or end the verb ("trigger that from", "turn that off"). */
const AFTER_OBJECT = new Set(
  `from to into onto on in at with without for by via through over under instead too again also as automatically manually
  later now first up off out down back away`.split(/\s+/).filter(Boolean),
);

/** Whether a word that ends at `end` ends its clause: punctuation or the question's end follows. */
function endsClause(question: string, end: number): boolean {
  return /^\s*(?:[?!.,;:)]|$)/.test(question.slice(end, end + 8));
}

/** Whether a word that ends at `end` ends its clause (punctuation or the question's end follows) or has a word of AFTER_OBJECT after it. */
function endsPhrase(question: string, end: number, after: string | undefined): boolean {
  return endsClause(question, end) || (after !== undefined && AFTER_OBJECT.has(after));
}

/** Stopwords that are verbs: a pronoun after them is their object ("use it", "get them"). */
const VERB_STOPWORDS = new Set(['use', 'using', 'used', 'want', 'need', 'tell']);

/** The frame of a question and its first verb: "how do I read", "can we export", "what does". */
const QUESTION_FRAME =
  /^\s*(?:(?:how|where|when|why|what|which)(?:\s+(?:often|long|much|many))?\s+)?(?:do|does|did|can|could|should|would|will|is|are|may|must)\s+(?:i|we|you|one)\s+\S+|^\s*(?:how\s+to|what\s+does|what\s+do)\s+\S*/i;

/** "... a promise version of" -> "...": the words "of" and the phrase it belongs to. */
function withoutGovernor(text: string): string {
  const words = text.trimEnd().split(/\s+/);
  if (words.at(-1)?.toLowerCase() === 'of') words.pop();
  for (let n = 0; n < 3 && words.length > 0 && !isStopword(words.at(-1)!.toLowerCase()); n++) words.pop();
  return words.join(' ');
}

/** "... tell Valgrind to use" -> "... tell": the verb, its auxiliaries and its subject phrase. */
function withoutVerbAndSubject(text: string): string {
  const words = text.trimEnd().split(/\s+/);
  words.pop();
  while (words.length > 0 && (AUXILIARIES.has(words.at(-1)!.toLowerCase()) || /n't$|^(?:not|to|that|which|who|also|just)$/i.test(words.at(-1)!))) words.pop();
  for (let n = 0; n < 4 && words.length > 0 && !isStopword(words.at(-1)!.toLowerCase()); n++) words.pop();
  while (words.length > 0 && /^(?:the|a|an|my|your|our|their|its|this|these|those)$/i.test(words.at(-1)!)) words.pop();
  return words.join(' ');
}

/** A phrase whose head is plural ("worker threads"), roughly. */
function isPluralPhrase(phrase: string): boolean {
  return isPluralWord(phrase.split(/\s+/).at(-1)!.toLowerCase());
}

/** "what signal does", "how many workspaces does": what the question asks for is not what "it" is. */
const WH_PHRASE = /^\s*(?:(?:in|on|at|for|from|with|since|by|to|of|under|until)\s+)?(?:what|which|how\s+many|how\s+much)\s+(?:[\p{L}\p{N}_.'’-]+\s+){1,4}?(?=(?:do|does|did|is|are|was|were|can|could|will|would|should|has|have)\b)/iu;

const ORDINALS: Record<string, number> = {
  first: 1,
  second: 2,
  third: 3,
  fourth: 4,
  fifth: 5,
  sixth: 6,
  seventh: 7,
  last: -1,
  former: 1,
  latter: -1,
};

const ORDINAL_PATTERN =
  /\b(?:the\s+)?(first|second|third|fourth|fifth|sixth|seventh|last|former|latter)(?:\s+(one|ones|option|options|step|steps|method|methods|approach|approaches|choice|item|tool|tools|command|commands|way|ways))?\b/giu;
const ACTION_PATTERN = /\b(do|doing|undo)\s+(that|it|this|the\s+same)\b(?![._\-/@$][\p{L}\p{N}])/giu;
const OTHER_PATTERNS: readonly RegExp[] = [
  /\bthe\s+(?:other|previous|next|above|same|earlier)(?:\s+(?:one|ones|option|options|step|steps|method|methods|approach|choice|item|way))?\b/giu,
  /\b(?:same thing|same one|the others?)\b/giu,
  /\b(?:as well|instead|either one|neither one|both of them|mentioned|you said|you mentioned)\b/giu,
  /^same\b/giu,
];
/** Clarifications of the previous question, for the eager gate: "I meant for a deceased relative". */
const EAGER_PATTERN = /^(?:i meant|i mean|i was asking|i was talking|i'm asking|i am asking)\b/iu;

interface Word {
  lower: string;
  start: number;
  end: number;
}

/** The words of a question with their offsets; apostrophes normalised, trailing `.`/`-` dropped. */
function wordsOf(question: string): Word[] {
  const words: Word[] = [];
  for (const match of question.matchAll(/[\p{L}\p{N}][\p{L}\p{N}'’_.\-]*/gu)) {
    const raw = match[0].replace(/[.\-'’]+$/u, '');
    words.push({ lower: raw.toLowerCase().replace(/’/g, "'"), start: match.index!, end: match.index! + raw.length });
  }
  return words;
}

/** Part of an identifier or path ("it.example", "this/that", "$it"): not a word of the sentence. */
function insideIdentifier(question: string, start: number, end: number): boolean {
  const joiner = /[._\-/@$]/;
  const wordChar = /[\p{L}\p{N}]/u;
  if (joiner.test(question[start - 1] ?? '') && (question[start - 1] === '$' || wordChar.test(question[start - 2] ?? ''))) return true;
  return joiner.test(question[end] ?? '') && wordChar.test(question[end + 1] ?? '');
}

/**
 * `question` without the words of its references ("tell me more about the second one"
 * -> "tell me more about"): what it says in its own words, where "second" or "one" would
 * otherwise be searched or quoted as if they were asked about.
 */
export function withoutReferences(question: string, references: readonly Reference[] = findReferences(question)): string {
  let text = question;
  for (const reference of [...references].sort((a, b) => b.start - a.start)) text = text.slice(0, reference.start) + text.slice(reference.end);
  // A space before punctuation goes (left where a reference was cut: "about ?"); not one
  // before a word that starts with it (".ts files", ".NET").
  return text.replace(/\s+/g, ' ').replace(/\s+([?.!,;:])(?![\p{L}\p{N}])/gu, '$1').trim();
}

/**
 * What `question` says in its own words: without the references that carry words of
 * their own ("the second one", "the last option"), which would be searched or quoted
 * as if they were asked about; pronouns, stopwords anyway, stay. The question itself
 * when it has none.
 */
export function ownWords(question: string): string {
  const pointing = findReferences(question).filter((reference) => tokenize(reference.text, { identifiers: true }).some((word) => !isStopword(word)));
  return pointing.length > 0 ? withoutReferences(question, pointing) : question;
}

/**
 * The referring expressions of `question`, in the order they appear. A pronoun that
 * does not point back is left out: the dummy "it" ("is it safe to ...", "is it
 * recommended to ..."), "that" as a conjunction or relative pronoun ("check that ...",
 * "targets that link"), "this year", parts of identifiers, and (unless `eager`) a
 * subject or possessive pronoun after a noun phrase of the question itself ("my
 * credit card ... it keeps failing"). An object pronoun right after a verb ("use it",
 * "support it") points back even then: a verb's object is not its own subject.
 */
export function findReferences(question: string, options: ReferenceOptions = {}): Reference[] {
  const found: Reference[] = [];
  // The characters references already hold (one mark each: a check costs the reference's length, not the references found).
  const taken = new Uint8Array(question.length);
  let pronounFound = false;
  const add = (reference: Omit<Reference, 'signal'>, signal: string) => {
    for (let at = reference.start; at < reference.end; at++) if (taken[at]) return;
    taken.fill(1, reference.start, reference.end);
    found.push({ ...reference, signal });
    if (reference.kind === 'pronoun') pronounFound = true;
  };
  // The question with its quoted spans blanked (same length): a name in quotes is not a phrase a pronoun points at.
  let unquoted: string | undefined;

  for (const match of question.matchAll(ACTION_PATTERN)) {
    const object = match[2]!.toLowerCase().replace(/\s+/g, ' ');
    const start = match.index!;
    const end = start + match[0].length;
    // "do that migration": a determiner; the noun-phrase rules see it.
    const after = /^\s+([\p{L}\p{N}'’_-]+)/u.exec(question.slice(end))?.[1]?.toLowerCase();
    if (object !== 'it' && object !== 'the same' && after && !isStopword(after) && !NOT_A_NOUN_AFTER.has(after) && !isAdverb(after)) continue;
    const signal = object === 'the same' ? "reference 'the same'" : `pronoun '${object}'`;
    add({ kind: 'action', text: match[0], start, end, number: 'any' }, signal);
  }

  for (const match of question.matchAll(ORDINAL_PATTERN)) {
    const hasThe = /^the\s/i.test(match[0]);
    const noun = match[2];
    const word = match[1]!.toLowerCase();
    // "the first time", "first, ...", "last year": an ordinal needs "the" and no other noun, or "one"/a list noun.
    if (!hasThe && !noun) continue;
    if (hasThe && !noun && word !== 'former' && word !== 'latter') {
      const next = /^\s+([\p{L}\p{N}'’_-]+)/u.exec(question.slice(match.index! + match[0].length))?.[1]?.toLowerCase();
      // "the second plan" names its noun; "the second allow" (a verb) or "the second?" does not.
      if (next && !isStopword(next) && !NOT_A_NOUN_AFTER.has(next) && !isFiller(next)) continue;
    }
    if (!hasThe && noun && !/^ones?$/.test(noun)) continue;
    const number: GrammaticalNumber = noun && /s$/.test(noun) ? 'plural' : 'singular';
    add({ kind: 'ordinal', text: match[0], start: match.index!, end: match.index! + match[0].length, number, ordinal: ORDINALS[word] }, `reference '${match[0].toLowerCase()}'`);
  }

  for (const pattern of OTHER_PATTERNS) {
    for (const match of question.matchAll(pattern)) {
      // "at the same time", "the next week": a time, not a thing said before.
      const after = /^\s+([\p{L}]+)/u.exec(question.slice(match.index! + match[0].length))?.[1]?.toLowerCase();
      if (/^the\s+\w+$/i.test(match[0]) && after && TIME_NOUNS.has(after)) continue;
      add({ kind: 'other', text: match[0], start: match.index!, end: match.index! + match[0].length, number: 'any' }, `reference '${match[0].toLowerCase()}'`);
    }
  }
  if (options.eager) {
    const match = EAGER_PATTERN.exec(question.trim().toLowerCase());
    if (match) {
      const start = question.length - question.trimStart().length;
      add({ kind: 'other', text: question.slice(start, start + match[0].length), start, end: start + match[0].length, number: 'any' }, `reference '${match[0]}'`);
    }
  }

  const words = wordsOf(question);
  for (let i = 0; i < words.length; i++) {
    const from = phraseOfOne(question, words, i);
    if (from !== undefined) {
      const { lower, start, end } = words[i]!;
      add({ kind: 'one', text: question.slice(start, end), start, end, number: lower === 'ones' ? 'plural' : 'singular' }, `reference '${question.slice(from, end).toLowerCase()}'`);
    }
  }
  for (let i = 0; i < words.length; i++) {
    const { lower, start, end } = words[i]!;
    const word = lower.replace(/'s$/, '');
    const isPronounWord = SINGULAR.has(lower) || PLURAL.has(lower) || SINGULAR.has(word) || PLURAL.has(word);
    if (!isPronounWord) continue;
    if (insideIdentifier(question, start, end)) continue;
    const before = words[i - 1]?.lower;
    const after = words[i + 1]?.lower;
    // "is it safe", "would it be worth", "it is possible": a dummy subject; "make it a requirement" is not.
    const beforeBe = before === undefined || BE_BEFORE_IT.has(before);
    if (word === 'it' && after && beforeBe && DUMMY_IT_AFTER.has(after)) continue;
    // ("one entry in it is an array": after a preposition "it" is an object, never the dummy subject.)
    if (word === 'it' && (after === 'is' || after === 'be') && words[i + 2] && DUMMY_IT_AFTER.has(words[i + 2]!.lower) && !(before && PREPOSITIONS.has(before))) continue;
    // "is it <anything> to <verb>": the dummy subject of an infinitive ("is it wise to pin it?").
    if (word === 'it' && before && ['is', 'was', "isn't", "wasn't"].includes(before) && after && !isStopword(after) && words[i + 2]?.lower === 'to') continue;
    if (DEMONSTRATIVES.has(word) && after && TIME_NOUNS.has(after)) continue;
    // ("Which version added that?", "how do I trigger that from a terminal?": a conjunction or a relative
    // pronoun opens a clause; a "that" its clause ends with, or a preposition follows, is a verb's object.)
    if (word === 'that' && before && (THAT_CONJUNCTION_BEFORE.has(before) || (SAYING_BEFORE.has(before) && !endsClause(question, end)) || (!THAT_PRONOUN_BEFORE.has(before) && !endsPhrase(question, end, after)))) continue;

    // "that command", "those files": a demonstrative with its noun names what it points back to.
    // ("will this break my build?": an article or possessive after the next word makes it a verb, "this" its subject.)
    const withNoun =
      DEMONSTRATIVES.has(word) && after !== undefined && !isStopword(after) && !NOT_A_NOUN_AFTER.has(after) && !/^\d/.test(after) && !DETERMINERS.has(words[i + 2]?.lower ?? '');
    // (A demonstrative standing alone after a verb is its object too: "which version added that?")
    const afterVerb =
      before !== undefined && (!isStopword(before) || VERB_STOPWORDS.has(before)) && !AUXILIARIES.has(before) && !POSSESSIVE.has(word) && !(DEMONSTRATIVES.has(word) && (withNoun || !endsPhrase(question, end, after)));
    // The object of a preposition ("use two-factor auth with it", "run Memcheck on it",
    // "add a user to it") is another participant than the clause's own noun phrases;
    // after an earlier pronoun ("does it propagate to targets that link against it?")
    // it is read as the rules below read it.
    // (Only "it" and "them": a possessive there, "with its employees", belongs to the clause.)
    const afterPreposition = (word === 'it' || word === 'them') && before !== undefined && PREPOSITIONS.has(before) && !pronounFound;
    if (!options.eager && !afterPreposition && !withNoun) {
      // A pronoun after a noun phrase of the question itself most likely points at that
      // ("my credit card ... it keeps failing") when their number agrees ("how many
      // workspaces does it allow?" asks about something earlier). Not a phrase of the
      // question's frame ("how do I read"), nor the phrase the pronoun is part of ("a
      // promise version of it"), nor the subject of the verb whose object it is ("tell
      // Valgrind to use it", "the compiler doesn't support it": a verb's object is not
      // its own subject).
      unquoted ??= question.replace(/"[^"]*"|“[^”]*”|`[^`]*`/g, (span) => ' '.repeat(span.length));
      let earlier = textBefore(unquoted, start);
      if (afterVerb) earlier = withoutVerbAndSubject(earlier);
      earlier = earlier.replace(QUESTION_FRAME, ' ').replace(WH_PHRASE, ' ');
      if (before === 'of') earlier = withoutGovernor(earlier);
      const plural = PLURAL.has(word);
      if (extractTerms(earlier).some((term) => isPluralPhrase(term.term) === plural)) continue;
    }

    const number: GrammaticalNumber = PLURAL.has(word) ? 'plural' : ['he', 'she', 'him', 'her', 'his'].includes(word) ? 'any' : 'singular';
    let kind: ReferenceKind = POSSESSIVE.has(word) ? 'possessive' : 'pronoun';
    if (withNoun) kind = 'determiner';
    add({ kind, text: question.slice(start, end), start, end, number }, `pronoun '${lower}'`);
  }

  return found.sort((a, b) => a.start - b.start);
}

/** Verbs that set a number, after which "to one" is the number: "set the depth to one", "limit jobs to one". */
const SETS_A_QUANTITY = /\b(?:set|sets|setting|limit|limits|limited|limiting|reduce|reduces|reduced|cap|caps|capped|increase|increases|decrease|decreases|lower|lowers|raise|raises|restrict|restricts|defaults?|equals?|bump|drop|drops|shrink|scale)\b/i;
/** A number, in digits or words: "two", "10". */
const NUMBER_WORD = /^(?:\d+|two|three|four|five|six|seven|eight|nine|ten|twenty|hundred|many|several)$/;

/** The clause of `question` that ends at `end`: back to the last punctuation mark, at most EARLIER_CHARS. */
function ownClause(question: string, end: number): string {
  const before = question.slice(Math.max(0, end - EARLIER_CHARS), end);
  const breakAt = Math.max(before.lastIndexOf('.'), before.lastIndexOf('?'), before.lastIndexOf('!'), before.lastIndexOf(';'), before.lastIndexOf(','));
  return before.slice(breakAt + 1);
}

/** Words that open a phrase whose noun `one` stands for: "which one", "the per-user one", "a faster one". */
const ONE_DETERMINERS = new Set(['which', 'the', 'this', 'that', 'these', 'those', 'a', 'an']);

/**
 * When the word at `i` is `one`/`ones` standing for a noun said before, where its phrase
 * starts: "which one prints a compilation database?", "the per-user one", "the ones
 * that failed", "assign it to one?". Undefined for a number ("one file", "one more"),
 * "one of them" (its pronoun points back), "no one", the generic pronoun ("how does
 * one ..."), or "a one".
 */
function phraseOfOne(question: string, words: readonly Word[], i: number): number | undefined {
  const { lower, start, end } = words[i]!;
  if (lower !== 'one' && lower !== 'ones') return undefined;
  if (insideIdentifier(question, start, end)) return undefined;
  const after = words[i + 1]?.lower;
  if (after === 'of' || after === 'more' || after === 'another' || after === 'by') return undefined;
  const before = words[i - 1]?.lower;
  if (before === undefined) return undefined;
  // "which one ...": always a stand-in.
  if (before === 'which') return words[i - 1]!.start;
  // A preposition's object that ends the clause: "to one?", "from one".
  if (PREPOSITIONS.has(before)) {
    if (lower !== 'one' || !endsPhrase(question, end, after)) return undefined;
    // The number: "from one to two pools", "set the depth to one", "limit parallel jobs to one" (a verb of its own clause).
    if (after === 'to' && NUMBER_WORD.test(words[i + 2]?.lower ?? '')) return undefined;
    if (before === 'to' && SETS_A_QUANTITY.test(ownClause(question, start))) return undefined;
    return start;
  }
  // An article or demonstrative, then up to two modifiers: "the console one", "a newer one".
  let at = i - 1;
  let modifiers = 0;
  while (at >= 0 && modifiers < 2 && !isStopword(words[at]!.lower) && !AUXILIARIES.has(words[at]!.lower)) {
    at--;
    modifiers++;
  }
  const determiner = words[at]?.lower;
  if (determiner === undefined || !ONE_DETERMINERS.has(determiner)) return undefined;
  // "Is it true that one can ...": a conjunction, then the generic pronoun.
  if (determiner === 'that' && modifiers === 0 && THAT_CONJUNCTION_BEFORE.has(words[at - 1]?.lower ?? '')) return undefined;
  if ((determiner === 'a' || determiner === 'an') && modifiers === 0) return undefined;
  // What follows ends the phrase: the clause's end, a preposition, a verb or a relative pronoun, not a noun ("the one file").
  return endsPhrase(question, end, after) || (after !== undefined && (isStopword(after) || NOT_A_NOUN_AFTER.has(after))) ? words[at]!.start : undefined;
}

/**
 * How far back, in characters, a pronoun's own question is read for a noun phrase it
 * points at: a question's own antecedent stands within a sentence or two of it, and
 * reading the whole prefix for every pronoun took time quadratic in a long paste
 * ("it. it. it. ..." of 16,000 characters: 8.6 s in the gate).
 */
const EARLIER_CHARS = 400;

/** The text before `end`, at most EARLIER_CHARS of it, from a word's start. */
function textBefore(question: string, end: number): string {
  const begin = end - EARLIER_CHARS;
  if (begin <= 0 || /\s/.test(question[begin - 1]!)) return question.slice(Math.max(0, begin), end);
  const from = question.slice(begin, end);
  const space = from.search(/\s/);
  return space < 0 ? '' : from.slice(space + 1);
}

/** The gate's signal: an ordinal or a phrase such as "the same" before any pronoun, else the earliest reference. */
export function referenceSignal(question: string, options: ReferenceOptions = {}): string | undefined {
  const references = findReferences(question, options);
  return (references.find((reference) => reference.kind === 'ordinal' || reference.kind === 'other') ?? references[0])?.signal;
}
