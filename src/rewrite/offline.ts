// The rewriter used without a chat model. A reference the shared module finds
// (src/rewrite/reference.ts) is replaced by its referent when one is clearly best
// (src/rewrite/referent.ts: the focus of the last question, what an earlier "it" was
// resolved to, an item of an enumeration; "do that" by the last question's action);
// "what about X?" after a how-to question asks it again for X. When no referent is
// clearly best it does not guess: the question stays as typed and the context it
// leans on is appended in parentheses. Every content word the user typed stays in
// the query, and the chat searches the question as asked beside it.

import { askingClause } from '../text/clauses.js';
import { tokenize } from '../text/tokenize.js';
import { stem } from '../text/stem.js';
import { isStopword } from '../text/stopwords.js';
import { plainQuestion, trimEndOf } from '../util/words.js';
import { decide } from './decide.js';
import { findReferences, withoutReferences, type Reference } from './reference.js';
import { answerName, enumerationItems, fits, headNoun, inlineItems, isCommonPhrase, isPerson, mainClause, phraseOf, questionFocus, questionNames, questionPhrases, render, withoutContext, type Candidate, type Focus } from './referent.js';
import { isAdverb, rankTopics, updateTopics, wordsOf } from './topics.js';
import type { Topic } from '../domain/index.js';
import { CONTEXT_MODEL, rankContext, type ContextModel } from './context.js';
import type { ConversationTurn, QueryRewriter, RewriteOutcome, RewriteRequest } from './types.js';

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
   * `expand`: question + "(context terms)"; `substitute`: also put a clear referent
   * where a reference stood ("Does it expire?" -> "Does the API key expire?"). Default `substitute`.
   */
  style?: 'expand' | 'substitute';
  /**
   * Order of context topics: `salience` (latest turn first), `weight` (heaviest first) or
   * `learned` (the model src/rewrite/context.ts fits; measured against salience in
   * bench/results/offline-rewrite.md: fewer wrong referents, but lower R@5 on MTRAG FiQA).
   * Default `salience`.
   */
  order?: 'learned' | 'weight' | 'salience';
  /** The fitted context model for `order: 'learned'` (default: src/rewrite/context-model.json). */
  model?: ContextModel;
  /** Most phrases of context, each whole (the lead counts as one). Default 3: a context a person reads at a glance. */
  maxContextPhrases?: number;
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


export class OfflineRewriter implements QueryRewriter {
  readonly id = OFFLINE_REWRITER_ID;
  readonly #options: Required<OfflineRewriterOptions>;

  constructor(options: OfflineRewriterOptions = {}) {
    this.#options = { maxContextWords: 8, maxContextPhrases: 3, model: CONTEXT_MODEL, style: 'substitute', order: 'salience', vague: DEFAULT_VAGUE, ...options };
  }

  async rewrite(request: RewriteRequest): Promise<RewriteOutcome> {
    if (request.signal?.aborted) throw request.signal.reason ?? abortError();
    return this.rewriteSync(request);
  }

  /** The same as `rewrite`, synchronously (it does no I/O). */
  rewriteSync(typed: RewriteRequest): RewriteOutcome {
    const request = { ...typed, question: plainQuestion(typed.question) };
    const decision = decide(request);
    if (!decision.rewrite) return decision.outcome;
    const question = request.question;
    const topics = request.topics.length > 0 ? request.topics : topicsFromHistory(request);
    const vague = this.#options.vague && request.termShare && isVague(question, request.termShare, this.#options.vague.share) ? this.#options.vague : undefined;
    const maxContextWords = vague ? vague.contextWords : this.#options.maxContextWords;
    const references = findReferences(question);
    const substitute = this.#options.style === 'substitute';
    // "How often should I do that?" after "How do I rotate an API key?": the pronoun
    // stands for the last question's action, not for a noun phrase.
    const action = substitute ? substituteAction(question, references, request.history) : undefined;
    // "does it expire?", "how do I run the second one?": the referent in place, when one is clearly best.
    const resolved = !action && substitute ? resolveReference(question, references, request.history, request.termShare) : undefined;
    // "what about compile definitions?" after "How do I add an include directory to a target?".
    const replaced = !action && !resolved && substitute && references.length === 0 ? replaceFocus(question, request.history) : undefined;
    let standaloneQuery: string;
    let reason = decision.reason;
    if (action) {
      standaloneQuery = action.text;
      reason = `${reason}; '${action.pronoun}' is the last question's action`;
    } else if (resolved) {
      standaloneQuery = resolved.text;
      reason = `${reason}; '${resolved.reference}' is ${resolved.referent}`;
    } else if (replaced) {
      standaloneQuery = replaced.text;
      reason = `${reason}; ${replaced.back === 0 ? 'the last question' : 'the question before the last'}, for this instead`;
    } else {
      // Unsure: the question as typed and, apart, at most three phrases it leans on, most salient first.
      const lead = contextLead(request.history);
      const context = contextTopics(question, lead, topics, request.history.at(-1)?.standaloneQuery ?? '', { ...this.#options, maxContextWords }, request.termShare);
      if (context.length === 0) {
        return { standaloneQuery: question, decision: 'skipped', reason: `${decision.reason}; no topic to resolve it with`, model: this.id };
      }
      standaloneQuery = `${question.trim()} (${context.join(', ')})`;
      reason = `${reason}; the question as typed, with words of the conversation in parentheses`;
    }
    // In place, the rewrite is what was asked; with context appended, the question is, less the words that point back.
    const asked = standaloneQuery.startsWith(`${question.trim()} (`) ? withoutReferences(question, references) : standaloneQuery;
    if (!vague) return { standaloneQuery, decision: 'rewritten', reason, model: this.id, asked };
    return {
      standaloneQuery,
      decision: 'rewritten',
      asked,
      // Its words are all common: the rewrite leads the search, the question as typed only joins it.
      reason: `${reason}; a general question: searched mostly as rewritten`,
      model: this.id,
      weighting: { expansion: vague.expansionWeight, raw: vague.rawWeight },
    };
  }
}

/** Every content word of the question is in more than `share` of the indexed chunks (or it has none). */
export function isVague(question: string, termShare: (word: string) => number, share: number): boolean {
  return contentWords(question)
    .filter(isContextWord)
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
  const text = mainClause(question);
  for (const pattern of ASKED_ACTION) {
    const action = pattern.exec(text)?.[1]?.trim();
    // The action must say something: "how do I do that" gives none.
    if (action && contentWords(action).length > 0 && !ACTION_PRONOUN.test(action)) return action;
  }
  return undefined;
}

/** Verbs of two syllables stressed on the last, which double their last letter. */
const DOUBLING = new Set(['commit', 'submit', 'admit', 'omit', 'permit', 'emit', 'transmit', 'begin', 'forget', 'control', 'patrol', 'prefer', 'refer', 'defer', 'occur', 'recur', 'compel', 'expel', 'equip', 'regret', 'upset', 'reset', 'debug', 'unzip', 'embed', 'rerun', 'outrun']);

/**
 * `action` with its verb in the -ing form: "rotate an API key" -> "rotating an API key",
 * "run the tests" -> "running the tests", "set up CI" -> "setting up CI".
 */
export function ingForm(action: string): string {
  const [verb = '', ...rest] = action.split(' ');
  const lower = verb.toLowerCase();
  let ing: string;
  if (/ie$/.test(lower)) ing = `${verb.slice(0, -2)}ying`;
  else if (/(?:ee|ye|oe)$/.test(lower) || lower === 'be') ing = `${verb}ing`;
  else if (/[^aeiou]e$|ue$/.test(lower)) ing = `${verb.slice(0, -1)}ing`; // use -> using, continue -> continuing
  // A last syllable that is stressed and ends consonant-vowel-consonant doubles its last
  // letter: run -> running, set -> setting, quit -> quitting, commit -> committing.
  else if (/^(?:[^aeiouy]*|[^aeiouy]*qu)[aeiou][bdgklmnprt]$/.test(lower) || DOUBLING.has(lower)) ing = `${verb}${verb.slice(-1)}ing`;
  else ing = `${verb}ing`;
  return [ing, ...rest].join(' ');
}

/**
 * The question with its "do that" / "do the same" replaced by the action the latest
 * earlier question asked about ("How often should I do that?" -> "How often should I
 * rotate an API key?"), and the words that stood there; undefined when either side does not fit.
 */
function substituteAction(question: string, references: readonly Reference[], history: readonly ConversationTurn[]): { text: string; pronoun: string } | undefined {
  const reference = references.find((candidate) => candidate.kind === 'action');
  if (!reference) return undefined;
  let action: string | undefined;
  for (let i = history.length - 1; i >= Math.max(0, history.length - 3) && !action; i--) {
    action = askedAction(history[i]!.standaloneQuery) ?? askedAction(history[i]!.question);
  }
  // "rotate it" names nothing until its "it" is resolved: better no substitution than a guess.
  if (!action || /\b(?:it|them|they|this|that|those|these)\b/i.test(action)) return undefined;
  // "doing that" and "undo that" want the action's verb in its -ing form ("undo publishing a package").
  const [verb, ...rest] = reference.text.split(/\s+/);
  const said = verb!.toLowerCase();
  const acted = said === 'do' ? action : said === 'doing' ? ingForm(action) : `undo ${ingForm(action)}`;
  return { text: question.slice(0, reference.start) + acted + question.slice(reference.end), pronoun: `${said} ${rest.join(' ').toLowerCase()}` };
}

/** Topics built from the window's earlier questions when none are tracked. */
function topicsFromHistory(request: RewriteRequest): Topic[] {
  let topics: Topic[] = [];
  request.history.forEach((turn, index) => {
    topics = updateTopics(topics, { ordinal: index + 1, question: turn.question, standaloneQuery: turn.standaloneQuery, answer: '' });
  });
  return topics;
}

/** The focus of the latest earlier question that has one (a question about "it" passes it on), and that turn. */
function lastFocus(history: readonly ConversationTurn[]): { focus: Focus; turn: ConversationTurn } | undefined {
  for (let i = history.length - 1; i >= Math.max(0, history.length - 3); i--) {
    const turn = history[i]!;
    // The referent an earlier "it" was resolved to is still what the conversation is about.
    const continued = continuedReferent(turn);
    if (continued) return { focus: { candidate: continued }, turn };
    const focus = questionFocus(turn.standaloneQuery);
    if (focus.candidate) return { focus, turn };
    if (!focus.pronoun) return undefined;
  }
  return undefined;
}

/**
 * What a turn's pronoun or ordinal was resolved to in its standalone query ("does it
 * expire?" -> "does the API key expire?": API key), read from the words put in its place.
 */
function continuedReferent(turn: ConversationTurn): Candidate | undefined {
  if (turn.standaloneQuery === turn.question || /\)\s*$/.test(turn.standaloneQuery)) return undefined;
  const references = findReferences(turn.question).filter((reference) => ['pronoun', 'possessive', 'ordinal', 'one'].includes(reference.kind));
  if (references.length === 0) return undefined;
  const asked = turn.question.trim().split(/\s+/);
  const shown = turn.standaloneQuery.trim().split(/\s+/);
  let start = 0;
  while (start < asked.length && start < shown.length && asked[start]!.toLowerCase() === shown[start]!.toLowerCase()) start++;
  let end = 0;
  while (end < asked.length - start && end < shown.length - start && asked[asked.length - 1 - end]!.toLowerCase() === shown[shown.length - 1 - end]!.toLowerCase()) end++;
  // "the console one" -> "the console pool": the words before `one` are the referent's too.
  const one = references.find((reference) => reference.kind === 'one');
  if (one) {
    const before = one.signal.slice("reference '".length, -1).split(/\s+/).slice(0, -1).filter((word) => word !== 'which');
    if (before.length > 0 && before.every((word, i) => shown[start - before.length + i]?.toLowerCase() === word)) start -= before.length;
  }
  const inserted = shown.slice(start, shown.length - end).join(' ');
  if (!inserted) return undefined;
  // "the second one" -> "the helgrind tool": the article both share is the referent's too.
  const article = start > 0 && /^(?:the|a|an)$/i.test(shown[start - 1]!) ? `${shown[start - 1]} ` : '';
  return phraseOf(article + inserted) ?? phraseOf(inserted);
}

/**
 * The question with its first resolvable reference replaced by its referent, when one
 * is clearly best: an item of the last answer's enumeration (or of the last
 * question's "X and Y") for an ordinal; for a pronoun the focus of the last question
 * (for "its", the one name the last question mentioned), then what the focus belongs
 * to. Undefined when nothing fits: the caller appends context instead.
 */
function resolveReference(
  question: string,
  references: readonly Reference[],
  history: readonly ConversationTurn[],
  termShare: ((word: string) => number) | undefined,
): { text: string; reference: string; referent: string } | undefined {
  const last = history.at(-1);
  if (!last) return undefined;
  // "where does it look for it by default?": two of "it" in one clause are two things
  // (one thing twice would be "itself"); which is which would be a guess.
  const pronouns = references.filter((reference) => reference.kind === 'pronoun' && reference.number === 'singular');
  for (let i = 1; i < pronouns.length; i++) {
    if (!CLAUSE_BREAK.test(question.slice(pronouns[i - 1]!.end, pronouns[i]!.start))) return undefined;
  }
  for (const reference of references) {
    let chosen: Candidate | undefined;
    // The last question's focus and the "of ..." phrase it belongs to, when the pronoun takes that focus.
    let focusOf: Candidate | undefined;
    let owner: Candidate | undefined;
    if (reference.kind === 'ordinal') {
      // The latest answer that enumerated ("and the fourth one?" after "how do I run the second one?"), else the last
      // question's "X and Y" (the user's own order), else names listed in a sentence of the latest answer that has them.
      const recent = history.slice(Math.max(0, history.length - 3)).reverse();
      let items: Candidate[] = [];
      // (An answer that quotes the documents lists sentences, not the things asked about: "the second one" of
      // "git subtree or submodules?" is submodules, not the subject of its second quote.)
      for (const turn of recent) if (items.length === 0 && !turn.quoted) items = enumerationItems(turn.answer);
      if (items.length === 0) items = questionFocus(last.standaloneQuery).list ?? [];
      for (const turn of recent) if (items.length === 0) items = inlineItems(turn.answer);
      const index = reference.ordinal === -1 ? items.length - 1 : (reference.ordinal ?? 0) - 1;
      chosen = items[index];
      if (!chosen) return undefined;
    } else if (reference.kind === 'pronoun' || reference.kind === 'possessive') {
      if (reference.number === 'any') return undefined;
      const found = lastFocus(history);
      const candidates: Candidate[] = [];
      if (reference.kind === 'possessive') {
        const names = questionNames(found?.turn.standaloneQuery ?? last.standaloneQuery);
        if (names.length === 1) candidates.push(names[0]!);
      }
      if (found) {
        // "it" against "npm ci and npm install" is ambiguous; "them" is the list.
        if (found.focus.list && reference.number === 'singular') return undefined;
        // "Do I have to use a certain browser to use this service?": "this service" is as salient as the focus, and
        // "it can detect" may be either; which one would be a guess.
        // (Not one after a preposition, a circumstance: "install the Relay agent on this machine".)
        if (reference.kind === 'pronoun' && !found.focus.candidate!.name && competingDemonstrative(withoutContext(found.turn.standaloneQuery), reference.number)) return undefined;
        // "them" after "How do I run a script in all of the workspaces?": a phrase that is plural beats a generic "a script"
        // (not a person: "remove them" after "let a coworker publish" is the coworker).
        if (reference.number === 'plural' && found.focus.candidate!.number === 'singular' && !isPerson(found.focus.candidate!)) {
          candidates.push(...questionPhrases(found.turn.standaloneQuery).filter((phrase) => phrase.number === 'plural'));
        }
        candidates.push(found.focus.candidate!);
        if (found.focus.owner) candidates.push(found.focus.owner);
        focusOf = found.focus.candidate;
        owner = found.focus.owner;
      }
      chosen = candidates.find((candidate) => fits(candidate, reference, question) && !isCommonPhrase(candidate.phrase, termShare));
      // "Is there something that parses those for me?" names no focus; "it" next is what the answer named.
      if (!chosen && !found && reference.number === 'singular' && ASKS_WHETHER_THERE_IS.test(mainClause(askingClause(withoutContext(last.standaloneQuery).trim())))) {
        const named = answerName(last.answer);
        if (named && fits(named, reference, question)) chosen = named;
      }
      if (!chosen) return undefined;
    } else if (reference.kind === 'one') {
      // "which one prints a compilation database?" after "What tools does ninja -t provide?": "which tool";
      // after another reference of the question ("two of them, which one wins?") it stands for that one's referent.
      if (references[0] !== reference) return undefined;
      // It stands for one of several: a plural focus ("What are pools?"), or what an earlier `one` stood for.
      const found = lastFocus(history);
      const candidate = found?.focus.candidate;
      const several = candidate !== undefined && !found!.focus.list && (candidate.number === 'plural' || findReferences(found!.turn.question).some((earlier) => earlier.kind === 'one'));
      const head = several ? headNoun(candidate, reference.number === 'plural' ? 'plural' : 'singular') : undefined;
      if (head === undefined) return undefined;
      // "to one?" -> "to a pool?"; "the console one" -> "the console pool".
      const alone = reference.signal === `reference '${reference.text.toLowerCase()}'`;
      const phrase = alone ? `${anArticle(head) ? 'an' : 'a'} ${head}` : head;
      return { text: question.slice(0, reference.start) + phrase + question.slice(reference.end), reference: reference.text.toLowerCase(), referent: `'${phrase}'` };
    } else {
      continue;
    }
    const before = question.slice(0, reference.start);
    let referent = render(chosen, reference, before.trim() === '');
    // "how do I change it?" after "what is the default value of scale in bc?": the value of scale, not any default value.
    if (reference.kind === 'pronoun' && owner !== undefined && chosen === focusOf) referent = `${referent} of ${render(owner, { kind: 'pronoun', number: owner.number }, false)}`;
    // "one of them" -> "one of the tests", not "one of tests".
    if (/\bof\s*$/i.test(before) && !chosen.name && !/^(?:the|my|your|our)\s|'s?\b/i.test(referent)) referent = `the ${referent}`;
    return { text: question.slice(0, reference.start) + referent + question.slice(reference.end), reference: reference.text.toLowerCase(), referent: `'${referent}'` };
  }
  return undefined;
}

/** Whether `noun` takes "an": a vowel sound first ("an option", "an update"), not a "yoo" ("a user", "a unit"). */
function anArticle(noun: string): boolean {
  return (/^(?:[aeio]|u(?!s[aeiu]|ni|ti|r[aeiou]|ri))/i.test(noun) && !/^(?:one|once|eu)/i.test(noun)) || /^(?:hour|honou?r|honest|heir)/i.test(noun);
}

/** Whether `question` has a demonstrative phrase of `number` that is a verb's subject or object ("use this service"), not a preposition's ("on this machine"). */
function competingDemonstrative(question: string, number: Reference['number']): boolean {
  return findReferences(question).some(
    (earlier) => earlier.kind === 'determiner' && earlier.number === number && !AFTER_PREPOSITION.test(question.slice(Math.max(0, earlier.start - 12), earlier.start)),
  );
}

/** A preposition just before a phrase. */
const AFTER_PREPOSITION = /\b(?:on|in|to|for|with|from|at|into|onto|of|by|via|under|inside|within|across|through|over|about|behind|without|like)\s+$/i;

/** Manners that exclude each other: "and horizontally?" after "... vertically?" asks instead, not as well. */
const OPPOSITE_MANNER = new Map(
  [
    ['vertically', 'horizontally'],
    ['globally', 'locally'],
    ['statically', 'dynamically'],
    ['synchronously', 'asynchronously'],
    ['temporarily', 'permanently'],
    ['manually', 'automatically'],
    ['explicitly', 'implicitly'],
    ['remotely', 'locally'],
    ['recursively', 'non-recursively'],
    ['interactively', 'non-interactively'],
  ].flatMap(([a, b]) => [
    [a!, b!],
    [b!, a!],
  ]),
);

/** "Is there something that parses those?", "is there an npm command that ...", "are there any tools for ...": asks what does a job. */
const ASKS_WHETHER_THERE_IS =
  /^(?:is|are)\s+there\s+(?:(?:a|an|any|some)\s+)?(?:[\w.+#-]+\s+){0,2}?(?:something|anything|way|tool|tools|command|commands|option|options|function|setting|flag|module|api|method|program|utility|helper|variable|property|built-?in)\b(?!\s+(?:wrong|else|odd|off|missing|broken|weird|strange|bad|amiss)\b)/i;

/** What ends a clause between two pronouns: "does it work, and can I stream it?" */
const CLAUSE_BREAK = /[,;]|\b(?:and|or|but|then|so|if|when|because|while)\b/i;

/** The prepositions a follow-up's fragment may open with ("and on Windows?"), naming a circumstance of the last question. */
const CIRCUMSTANCE = 'for|on|in|with|under|inside|from|via|using|without|behind';
/** Words after which a phrase that a preposition opened has ended: another preposition, a conjunction. */
const PHRASE_BREAK = `${CIRCUMSTANCE}|and|or|to|by|at|after|before|when|if|while`;

/** "and for helgrind?", "what about on Windows?": a fragment that is a preposition and the new thing. */
const PREPOSITION_FRAGMENT = new RegExp(`^\\s*(?:(?:and|but|ok|okay|so)[,\\s]+)?(?:(?:what|how)\\s+about\\s+)?(${CIRCUMSTANCE})\\s+(\\S.*)$`, 'i');

/** A fragment that opens with one of them: "on Windows". */
const OPENS_WITH_CIRCUMSTANCE = new RegExp(`^(?:${CIRCUMSTANCE})\\s`, 'i');

/** Where a phrase after a preposition ends: at the next preposition or conjunction, or punctuation. */
const PHRASE_END = new RegExp(`\\s+(?:${PHRASE_BREAK})\\b|[?.!,;:]|$`, 'i');

/**
 * `earlier` with the phrase after its last `preposition` swapped for `phrase`: "How do
 * I write a suppression file for valgrind?" and "for helgrind" give "How do I write a
 * suppression file for helgrind?". Undefined when `earlier` has no such phrase.
 */
function swapPrepositionPhrase(earlier: string, preposition: string, phrase: string): string | undefined {
  const pattern = new RegExp(`\\b${preposition}\\s+`, 'gi');
  const starts = [...earlier.matchAll(pattern)].map((match) => match.index + match[0].length);
  // The last one that leads a phrase: "log in to the CLI" has "in" as a particle, not before a thing.
  for (const after of starts.reverse()) {
    const rest = earlier.slice(after);
    if (LEADS_NO_PHRASE.test(rest)) continue;
    const end = PHRASE_END.exec(rest)!.index;
    if (end > 0) return `${trimEndOf(`${earlier.slice(0, after)}${phrase}${rest.slice(end)}`, ' ?.!')}?`;
  }
  return undefined;
}

/** What follows a particle, not a preposition: another preposition or a conjunction ("log in to the CLI"). */
const LEADS_NO_PHRASE = new RegExp(`^(?:${PHRASE_BREAK}|into|onto)\\b`, 'i');

/** "what about X?", "and X?", "how about X?": a fragment naming only the new thing. */
const SWAP_OPENER = /^\s*(?:(?:and|but|ok|okay|so)[,\s]+)?(?:what|how)\s+about\s+(\S.*)$|^\s*and\s+(?:for\s+)?(\S.*)$/i;

/**
 * A question about doing something that "what about X?" can ask again of X: how to do
 * it ("How do I add ...", "how to ...") or whether one can ("can I link ...", "should we
 * pin ...").
 */
const ASKS_HOW_OR_WHETHER = /^(?:how\s+(?:do|can|should|would)\s+(?:i|we|you)|how\s+to|(?:can|could|should|do)\s+(?:i|we))\s/i;

/**
 * "what about compile definitions?" after "How do I add an include directory to a
 * target?": that question again with its focus swapped ("How do I add compile
 * definitions to a target?"). Only after a question of the last two turns about doing
 * something (ASKS_HOW_OR_WHETHER), and only when the fragment is a noun phrase.
 */
function replaceFocus(question: string, history: readonly ConversationTurn[]): { text: string; back: number } | undefined {
  // (Read without the closing punctuation, cut off first: the patterns then end at the text's end.)
  const fragment = trimEndOf(question, ' ?.!');
  const match = SWAP_OPENER.exec(fragment);
  const prepositional = match ? PREPOSITION_FRAGMENT.exec(fragment) : null;
  const swapped = (match?.[1] ?? match?.[2])?.trim();
  if (!swapped) return undefined;
  // "and -a?" after "what does time -p do?": the same question of the other option. After a
  // question about doing something ("what about --squash?" after "How do I split a subtree
  // out?"), an option of that action, maybe as well as one named: the question keeps its
  // words and gets the last question as context.
  if (OPTION.test(swapped)) return replaceOption(swapped, history);
  // "and on Windows?", "and recursively?": the same question, in that circumstance or manner.
  const circumstance = OPENS_WITH_CIRCUMSTANCE.test(swapped) || (/^[a-z]+ly$/i.test(swapped) && isAdverb(swapped));
  const asked = circumstance ? {} : questionFocus(swapped);
  if (!circumstance && (!asked.candidate || asked.candidate.phrase.split(' ').length !== swapped.replace(/^(?:the|a|an)\s+/i, '').split(/\s+/).length)) return undefined;
  for (let i = history.length - 1; i >= Math.max(0, history.length - 2); i--) {
    // "and how do I kill the child process?" is a how-to question too: its opener is not asked again.
    const earlier = mainClause(history[i]!.standaloneQuery).replace(/^(?:and|so|but|then|also|ok(?:ay)?)\s*,?\s+(?=how\b)/i, '');
    if (!ASKS_HOW_OR_WHETHER.test(earlier)) continue;
    // Its rewrite left a pronoun in place ("how do I change it for one test? (time limit,
    // ctest)"): asked again, the question would point at nothing; the context says more.
    if (findReferences(earlier).some((reference) => reference.kind === 'pronoun' || reference.kind === 'possessive')) return undefined;
    const back = history.length - 1 - i;
    // "and for helgrind?" after "... a suppression file for valgrind?": the phrase after the same preposition.
    const inPlace = prepositional ? swapPrepositionPhrase(earlier, prepositional[1]!, prepositional[2]!) : undefined;
    if (inPlace) return { text: inPlace, back };
    if (circumstance) {
      if (earlier.toLowerCase().includes(swapped.toLowerCase())) return undefined;
      // "and horizontally?" after "How do I split a window vertically?": the opposite manner in place of the one it had.
      const opposite = OPPOSITE_MANNER.get(swapped.toLowerCase());
      const manner = opposite === undefined ? undefined : new RegExp(`\\b${opposite}\\b`, 'i').exec(earlier);
      if (manner) return { text: `${earlier.slice(0, manner.index)}${swapped}${earlier.slice(manner.index + manner[0].length)}?`, back };
      return { text: `${earlier} ${swapped}?`, back };
    }
    const focus = questionFocus(earlier).candidate;
    // Only a focus that is clearly a noun phrase ("an include directory", "memory leaks"), not "get rid".
    if (!focus || (!focus.determiner && !focus.name && !focus.phrase.includes(' '))) return undefined;
    // "what about npm unpublish?" after "How do I publish a package?" names another action, not another thing to publish.
    if (namesAction(swapped, askedAction(earlier))) return undefined;
    const written = focus.determiner ? `${focus.determiner} ${focus.phrase}` : focus.phrase;
    const at = earlier.indexOf(written);
    if (at < 0) return undefined;
    return { text: `${earlier.slice(0, at)}${swapped}${earlier.slice(at + written.length)}?`, back };
  }
  return undefined;
}

/** A command-line option alone: `-a`, `--squash`, `--leak-check=full`. */
const OPTION = /^-{1,2}[\p{L}\p{N}][\p{L}\p{N}_-]*(?:=\S+)?$/u;
/** An option within a question, as a word of its own. */
const OPTION_IN_TEXT = /(?<=^|\s)-{1,2}[\p{L}\p{N}][\p{L}\p{N}_-]*(?:=\S+?)?(?=[\s?.,!]|$)/gu;

/**
 * "and -a?" after "what does time -p do?": the last question, when it asked what one
 * option does or is, again with that option swapped ("what does time -a do?");
 * undefined when it asked something else or named no option or several (the fragment
 * then gets the last question as context: "and --force?" after "How do I install it
 * with -g?" may be as well as -g).
 */
function replaceOption(option: string, history: readonly ConversationTurn[]): { text: string; back: number } | undefined {
  const last = history.at(-1);
  const earlier = last === undefined ? undefined : mainClause(last.standaloneQuery);
  if (earlier === undefined || !/^\s*what\s+(?:does|do|is|are)\s/i.test(earlier)) return undefined;
  const options = [...earlier.matchAll(OPTION_IN_TEXT)];
  if (options.length !== 1 || options[0]![0] === option) return undefined;
  const at = options[0]!.index!;
  const text = `${earlier.slice(0, at)}${option}${earlier.slice(at + options[0]![0].length)}`;
  return { text: /[?.!]$/.test(text) ? text : `${text}?`, back: 0 };
}

/** Whether `fragment` holds the verb of `action` (its first word), or that verb undone or redone ("unpublish", "reinstall"). */
function namesAction(fragment: string, action: string | undefined): boolean {
  const verb = action?.split(/\s+/)[0]?.toLowerCase();
  if (!verb) return false;
  const key = stem(verb);
  return tokenize(fragment).some((word) => stem(word) === key || stem(word.replace(/^(?:un|re|de|dis)(?=[a-z]{3})/, '')) === key);
}

/**
 * What the context of an unsure rewrite starts with: the action the last question
 * (or the one whose focus still holds) asked about, as written, when it is short:
 * "does it work with large files? (read a file line by line in Node.js)". A focus
 * phrase alone is left to the topics (as a lead it cost 1-2 tasks of R@5 on MTRAG).
 */
function contextLead(history: readonly ConversationTurn[]): string | undefined {
  const asked = lastFocus(history)?.turn ?? history.at(-1);
  if (!asked) return undefined;
  const action = askedAction(asked.standaloneQuery);
  if (action && action.split(/\s+/).length <= 8 && !/\b(?:it|them|they|its|their)\b/i.test(action)) return action;
  return undefined;
}

/**
 * Context for the question: the lead (the last question's action), then whole topic
 * terms with words the question lacks, in `order`, at most `maxContextPhrases` phrases
 * and about `maxContextWords` words. A term is taken whole or not at all (a phrase cut
 * to its first words named nothing a reader could check); stopwords, bare numbers,
 * one-letter words and terms too common in this index to name anything add nothing.
 */
function contextTopics(
  question: string,
  lead: string | undefined,
  topics: Topic[],
  lastQuestion: string,
  options: Pick<Required<OfflineRewriterOptions>, 'maxContextWords' | 'maxContextPhrases' | 'order' | 'model'>,
  termShare: ((word: string) => number) | undefined,
): string[] {
  const present = new Set(tokenize(question, { identifiers: true }).map((word) => stem(word)));
  const ordered =
    options.order === 'learned'
      ? rankContext(topics, lastQuestion, termShare, options.model).flatMap(({ topic, score }) => (score >= options.model.threshold ? [topic] : []))
      : options.order === 'salience'
        ? rankTopics(topics)
        : [...topics].sort((a, b) => b.weight - a.weight || b.lastTurn - a.lastTurn);
  const chosen: string[] = [];
  let words = 0;
  const budget = Math.max(options.maxContextWords, LEAD_WORDS);
  const take = (term: string) => {
    const missing = wordsOf(term).filter((part) => !present.has(stem(part.toLowerCase())) && isContextWord(part.toLowerCase()));
    if (missing.length === 0 || words + missing.length > budget) return;
    chosen.push(term);
    words += missing.length;
    for (const part of wordsOf(term)) present.add(stem(part.toLowerCase()));
  };
  // The lead is what the question most likely leans on: taken whole, even past a small budget.
  if (lead) take(lead);
  for (const topic of ordered) {
    if (words >= options.maxContextWords || chosen.length >= options.maxContextPhrases) break;
    if (!isCommonPhrase(topic.term, termShare)) take(topic.term);
  }
  return chosen;
}

/** Most words of the lead (the last question's action or focus) added as context. */
const LEAD_WORDS = 8;

/** A word worth searching for: not a stopword, not a bare number, longer than one letter. */
function isContextWord(word: string): boolean {
  return word.length > 1 && !isStopword(word) && !/^\d+$/.test(word);
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
