// The cheap local gate in front of every rewrite: is this message small talk (no
// retrieval, no rewrite), a follow-up that needs the conversation to be understood
// (rewrite), or a question that stands on its own (search it as typed)? Users
// complain both about follow-ups that retrieve nothing and about every question being
// rewritten (and a model call per turn); the gate rewrites only where a signal says the
// question leans on earlier turns, and names that signal so the user can see it.

import { tokenize } from '../text/tokenize.js';
import { isStopword } from '../text/stopwords.js';
import { referenceSignal } from './reference.js';

export type QuestionKind = 'small_talk' | 'follow_up' | 'standalone';

export interface GateOptions {
  /**
   * A model does the rewrite: also call a question a follow-up when a pronoun points
   * past the question's own noun phrase ("will buying stocks give me control over it?",
   * "why does Germany keep doing this?") or when it clarifies the previous one ("I
   * meant ..."). A model leaves a standalone question as it is, so a false positive
   * costs one call, while a missed follow-up costs the search (measured on MTRAG:
   * BENCHMARKS.md). The offline rewriter only adds words, so it stays strict.
   */
  eager?: boolean;
}

export interface GateResult {
  kind: QuestionKind;
  /** Short phrase naming the signal, e.g. `pronoun 'it'`, `opener 'what about'`, `2 content words`. */
  reason: string;
}

/** Questions with at most this many content words lean on the conversation. */
export const SHORT_QUESTION_CONTENT_WORDS = 2;
/** Verbless fragments up to this many words are follow-ups ("and on Windows?", "carthage?"). */
const FRAGMENT_MAX_WORDS = 6;
/** Small talk is short; a longer message with those words is a real message. */
const SMALL_TALK_MAX_WORDS = 6;

// Words a greeting, thanks or acknowledgement is made of, in English, French, German,
// Spanish, Italian, Portuguese and Dutch (diacritics removed, as tokenize() does).
const SMALL_TALK_WORDS = new Set(
  `
hi hello hey heya hiya yo howdy greetings morning afternoon evening good night day
thanks thank thx ty tysm cheers appreciated appreciate you so much very lot a many thanks
ok okay k kk alright allright fine great cool nice perfect awesome excellent wonderful brilliant
lovely sweet neat super amazing fantastic got it understood gotcha noted sounds makes sense
bye goodbye see ya later cya welcome yes yeah yep yup no nope sure indeed right oh ah wow
that's thats thatll will do helpful helped that was this is really
bonjour salut coucou merci beaucoup bien bon d accord parfait super genial au revoir bonsoir
hallo danke schon sehr gut prima toll alles klar tschuss guten tag morgen abend
hola gracias muchas vale bueno buenos buenas dias tardes noches perfecto genial adios de acuerdo
ciao grazie mille buongiorno buonasera perfetto bene va
ola obrigado obrigada bom dia tudo bem
hoi dank je wel bedankt goedemorgen prima
`
    .split(/\s+/)
    .filter(Boolean),
);
/** A small-talk message needs one of these; "you", "so" or "that is" alone are not small talk. */
const SMALL_TALK_CORE = new Set(
  `
hi hello hey heya hiya yo howdy greetings morning afternoon evening thanks thank thx ty tysm cheers
ok okay k kk alright allright fine great cool nice perfect awesome excellent wonderful brilliant lovely
sweet neat super amazing fantastic got understood gotcha noted sounds sense bye goodbye cya welcome
yes yeah yep yup no nope sure wow appreciated helpful helped
bonjour salut coucou merci parfait genial accord revoir bonsoir hallo danke prima toll klar tschuss tag
hola gracias vale perfecto adios acuerdo ciao grazie buongiorno buonasera perfetto ola obrigado obrigada
hoi bedankt goedemorgen
`
    .split(/\s+/)
    .filter(Boolean),
);

const OPENERS: readonly string[] = [
  'what about',
  'how about',
  'and what about',
  'and how about',
  'what if',
  'what else',
  'anything else',
  'and',
  'also',
  'but',
  'or',
  'so',
  'then',
  'same for',
  'as for',
];

const COMPARATIVES = new Set(
  `cheaper faster better worse easier safer larger smaller bigger slower higher lower harder simpler
  newer older longer shorter safer riskier costlier pricier quicker stronger weaker more less`.split(/\s+/).filter(Boolean),
);

/** Words that make a sentence rather than a fragment: question words, auxiliaries, subjects, imperatives. */
const SENTENCE_MARKERS = new Set(
  `what which who whom whose how why where when whether
  is are was were be been am can could would should will shall may might must do does did have has had
  i we you me my our isn't aren't can't won't don't doesn't didn't
  tell explain list show give describe compare define help summarize summarise find name provide
  let please need want use get make set install create run configure enable disable add remove delete
  change update check see try go pay buy sell invest open close start stop keep work`.split(/\s+/).filter(Boolean),
);

/**
 * Classifies a chat message. Small talk first (whatever the history), then the first
 * turn (nothing to resolve), then the follow-up signals in a fixed order.
 */
export function classifyQuestion(question: string, hasHistory: boolean, options: GateOptions = {}): GateResult {
  const words = tokenize(question.replace(/['’]/g, "'"), { identifiers: true });
  if (words.length === 0) return { kind: 'small_talk', reason: 'no words' };
  if (isSmallTalk(question)) return { kind: 'small_talk', reason: 'small talk' };
  if (!hasHistory) return { kind: 'standalone', reason: 'first turn: no history' };
  const signal = followUpSignal(question, options);
  if (signal) return { kind: 'follow_up', reason: signal };
  return { kind: 'standalone', reason: 'standalone: no reference to earlier turns' };
}

/** True for greetings, thanks and acknowledgements ("hi", "thanks!", "ok great", "merci beaucoup"). */
export function isSmallTalk(message: string): boolean {
  const words = tokenize(message.replace(/['’]/g, ' '));
  if (words.length === 0 || words.length > SMALL_TALK_MAX_WORDS) return false;
  return words.every((word) => SMALL_TALK_WORDS.has(word)) && words.some((word) => SMALL_TALK_CORE.has(word));
}

/** The first follow-up signal found in `question`, as a short phrase, or undefined. */
export function followUpSignal(question: string, options: GateOptions = {}): string | undefined {
  const text = question.toLowerCase().replace(/[’‘]/g, "'");
  const all = text.match(/[\p{L}\p{N}][\p{L}\p{N}_'.\-]*/gu)?.map((word) => word.replace(/[.\-']+$/, '')) ?? [];
  // "ok, and on Windows?", "thanks, what about CI?": the acknowledgement is not the question.
  let lead = 0;
  while (lead < all.length - 1 && (SMALL_TALK_CORE.has(all[lead]!) || all[lead] === 'well')) lead++;
  const words = all.slice(lead);
  if (words.length === 0) return undefined;

  const joined = words.join(' ');
  for (const opener of OPENERS) {
    if (joined === opener || joined.startsWith(`${opener} `)) return `opener '${opener}'`;
  }

  // Pronouns, ordinals, "do that", "the same": one module decides, for the gate and the rewriter alike.
  const reference = referenceSignal(text, options);
  if (reference) return reference;

  const content = words.filter((word) => !isStopword(word) && !SENTENCE_MARKERS.has(word) && !/^\d+$/.test(word));
  const comparative = content.length > 0 && !words.includes('than') ? lastComparative(words) : undefined;
  if (comparative) return `comparative '${comparative}' without 'than'`;

  // A short question naming something specific ("What is WACC?", "how can I use WebSocket API?") stands alone.
  if (content.length <= SHORT_QUESTION_CONTENT_WORDS && !namesSomethingSpecific(question)) {
    return `${content.length} content word${content.length === 1 ? '' : 's'}`;
  }

  if (words.length <= FRAGMENT_MAX_WORDS && !words.some((word) => SENTENCE_MARKERS.has(word))) {
    return 'fragment without a verb';
  }
  return undefined;
}

/**
 * A comparative at the end of the question with nothing compared to: "is it cheaper?",
 * "which one is faster?", "is that more expensive?". Only stopwords may follow it, or
 * the one adjective after "more"/"less".
 */
function lastComparative(words: string[]): string | undefined {
  for (let i = words.length - 1; i >= Math.max(0, words.length - 4); i--) {
    const word = words[i]!;
    if (!COMPARATIVES.has(word)) continue;
    const rest = words.slice(i + 1);
    if (rest.every((after) => isStopword(after))) return word;
    if ((word === 'more' || word === 'less') && rest.length === 1) return `${word} ${rest[0]}`;
    return undefined;
  }
  return undefined;
}

/** An acronym, identifier or a capitalised name after the first word: "WACC", "max_connections", "CocoaPods". */
function namesSomethingSpecific(question: string): boolean {
  const words = question.split(/\s+/).map((word) => word.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '')).filter(Boolean);
  return words.some(
    (word, index) =>
      /^\p{Lu}[\p{Lu}\d]+s?$/u.test(word) ||
      /[_]/.test(word) ||
      /^\p{Ll}+\p{Lu}/u.test(word) ||
      /^\p{Lu}\p{Ll}+\p{Lu}/u.test(word) ||
      (index > 0 && /^\p{Lu}\p{Ll}/u.test(word) && word !== 'I'),
  );
}
