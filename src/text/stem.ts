// Porter (1980) stemmer, exactly as SQLite FTS5's `porter` tokenizer applies it to the
// tokens unicode61 hands it, so that terms computed in JS (the in-memory keyword index,
// vocabulary lookups, the offline embedder) are the terms FTS5 holds. Where FTS5
// departs from the textbook algorithm, this follows FTS5:
// - every token of 3 to 64 UTF-8 bytes is stemmed, digits and other scripts included
//   (`401ks` -> `401k`); any byte other than a, e, i, o, u (and y after a consonant)
//   counts as a consonant, so a multi-byte character is a run of consonants;
// - in each step the first rule whose suffix ends the word (and is shorter than it)
//   decides; when its condition fails, no shorter suffix is tried;
// - the `*v*` condition counts `y` as a vowel anywhere but at the start.
// Checked token by token against SQLite's own tokenizer (test/stem.test.ts).

type Condition = (word: Uint8Array, length: number) => boolean;
interface Rule {
  suffix: Uint8Array;
  condition: Condition | undefined;
  replacement: Uint8Array;
  /** Step 1b: the stem is tidied after -ed and -ing, not after -eed. */
  tidy?: boolean;
}

const MAX_TOKEN_BYTES = 64;
const A = 97, E = 101, I = 105, O = 111, U = 117, Y = 121;

function isVowel(c: number | undefined, yIsVowel: boolean): boolean {
  return c === A || c === E || c === I || c === O || c === U || (yIsVowel && c === Y);
}

/** Skips one vowel run then ends at the next consonant: the index after it, or 0 when there is none. */
function vowelThenConsonant(word: Uint8Array, from: number, to: number, previousConsonant: boolean): number {
  let consonant = previousConsonant;
  let i = from;
  for (; i < to; i++) {
    consonant = !isVowel(word[i], consonant);
    if (!consonant) break;
  }
  for (i++; i < to; i++) {
    consonant = !isVowel(word[i], consonant);
    if (consonant) return i + 1;
  }
  return 0;
}

/** m > 0 for the first `n` bytes. */
const measureAbove0: Condition = (word, n) => vowelThenConsonant(word, 0, n, false) !== 0;

/** m > 1. */
const measureAbove1: Condition = (word, n) => {
  const first = vowelThenConsonant(word, 0, n, false);
  return first !== 0 && vowelThenConsonant(word, first, n, true) !== 0;
};

/** m = 1. */
const measureIs1: Condition = (word, n) => {
  const first = vowelThenConsonant(word, 0, n, false);
  return first !== 0 && vowelThenConsonant(word, first, n, true) === 0;
};

/** *o: ends consonant-vowel-consonant, the last not w, x or y. */
const endsCvc: Condition = (word, n) => {
  const last = word[n - 1];
  if (last === 119 || last === 120 || last === Y) return false;
  let mask = 0;
  let consonant = false;
  for (let i = 0; i < n; i++) {
    consonant = !isVowel(word[i], consonant);
    mask = (mask << 1) | (consonant ? 1 : 0);
  }
  return (mask & 7) === 5;
};

/** m > 1 and the stem ends in s or t (for -ion). */
const measureAbove1EndsST: Condition = (word, n) => (word[n - 1] === 115 || word[n - 1] === 116) && measureAbove1(word, n);

/** *v*: the stem holds a vowel (y counts after the first byte). */
const hasVowel: Condition = (word, n) => {
  for (let i = 0; i < n; i++) if (isVowel(word[i], i > 0)) return true;
  return false;
};

const bytes = (s: string) => Uint8Array.from(s, (ch) => ch.charCodeAt(0));
const rules = (condition: Condition | undefined, list: [string, string][], tidy = false): Rule[] =>
  list.map(([suffix, replacement]) => ({ suffix: bytes(suffix), condition, replacement: bytes(replacement), tidy }));

const STEP1B: Rule[] = [
  ...rules(measureAbove0, [['eed', 'ee']]),
  ...rules(hasVowel, [['ed', ''], ['ing', '']], true),
];
const STEP1B2: Rule[] = rules(undefined, [['at', 'ate'], ['bl', 'ble'], ['iz', 'ize']]);
const STEP2: Rule[] = rules(measureAbove0, [
  ['ational', 'ate'], ['tional', 'tion'], ['enci', 'ence'], ['anci', 'ance'], ['izer', 'ize'], ['logi', 'log'],
  ['bli', 'ble'], ['alli', 'al'], ['entli', 'ent'], ['eli', 'e'], ['ousli', 'ous'], ['ization', 'ize'],
  ['ation', 'ate'], ['ator', 'ate'], ['alism', 'al'], ['iveness', 'ive'], ['fulness', 'ful'], ['ousness', 'ous'],
  ['aliti', 'al'], ['iviti', 'ive'], ['biliti', 'ble'],
]);
const STEP3: Rule[] = rules(measureAbove0, [
  ['ical', 'ic'], ['ness', ''], ['icate', 'ic'], ['iciti', 'ic'], ['ful', ''], ['ative', ''], ['alize', 'al'],
]);
const STEP4: Rule[] = [
  ...rules(measureAbove1, [['al', ''], ['ance', ''], ['ence', ''], ['er', ''], ['ic', ''], ['able', ''], ['ible', ''],
    ['ant', ''], ['ement', ''], ['ment', ''], ['ent', '']]),
  ...rules(measureAbove1EndsST, [['ion', '']]),
  ...rules(measureAbove1, [['ou', ''], ['ism', ''], ['ate', ''], ['iti', ''], ['ous', ''], ['ive', ''], ['ize', '']]),
];

function endsWith(word: Uint8Array, n: number, suffix: Uint8Array): boolean {
  if (n <= suffix.length) return false; // the stem left must not be empty
  for (let i = 0; i < suffix.length; i++) if (word[n - suffix.length + i] !== suffix[i]) return false;
  return true;
}

/**
 * Applies the first rule whose suffix ends the word, if its condition holds, in place
 * (`word` has room to grow). Returns the new length and the rule that fired.
 */
function applyRules(word: Uint8Array, n: number, list: Rule[]): [number, Rule | undefined] {
  for (const rule of list) {
    if (!endsWith(word, n, rule.suffix)) continue;
    const stemLength = n - rule.suffix.length;
    if (rule.condition && !rule.condition(word, stemLength)) return [n, undefined];
    word.set(rule.replacement, stemLength);
    return [stemLength + rule.replacement.length, rule];
  }
  return [n, undefined];
}

function porterBytes(word: Uint8Array, n: number): number {
  // Step 1a: plurals.
  if (word[n - 1] === 115) {
    if (word[n - 2] === E) {
      n = (n > 4 && word[n - 4] === 115 && word[n - 3] === 115) || (n > 3 && word[n - 3] === I) ? n - 2 : n - 1;
    } else if (word[n - 2] !== 115) n -= 1;
  }
  // Step 1b: -eed, -ed, -ing, then tidy the stem.
  let fired: Rule | undefined;
  [n, fired] = applyRules(word, n, STEP1B);
  if (fired?.tidy) {
    let tidied: Rule | undefined;
    [n, tidied] = applyRules(word, n, STEP1B2);
    if (!tidied) {
      const c = word[n - 1];
      if (!isVowel(c, false) && c !== 108 && c !== 115 && c !== 122 && n > 1 && c === word[n - 2]) n -= 1;
      else if (measureIs1(word, n) && endsCvc(word, n)) word[n++] = E;
    }
  }
  // Step 1c: y -> i after a stem with a vowel.
  if (word[n - 1] === Y && hasVowel(word, n - 1)) word[n - 1] = I;
  [n] = applyRules(word, n, STEP2);
  [n] = applyRules(word, n, STEP3);
  [n] = applyRules(word, n, STEP4);
  // Step 5a: final e.
  if (word[n - 1] === E && (measureAbove1(word, n - 1) || (measureIs1(word, n - 1) && !endsCvc(word, n - 1)))) n -= 1;
  // Step 5b: -ll.
  if (n > 1 && word[n - 1] === 108 && word[n - 2] === 108 && measureAbove1(word, n - 1)) n -= 1;
  return n;
}

const buffer = new Uint8Array(MAX_TOKEN_BYTES + 16);
const encoder = new TextEncoder();
const decoder = new TextDecoder();
const ASCII_WORD = /^[a-z]+$/;
const cache = new Map<string, string>();
const CACHE_LIMIT = 200_000;

/**
 * The term FTS5's porter tokenizer stores for one unicode61 token (lower-case,
 * diacritics removed): `connections` -> `connect`, `401ks` -> `401k`. Memoised, since a
 * corpus repeats a small vocabulary.
 */
export function ftsStem(token: string): string {
  const hit = cache.get(token);
  if (hit !== undefined) return hit;
  let out = token;
  if (token.length <= MAX_TOKEN_BYTES) {
    const { written, read } = encoder.encodeInto(token, buffer.subarray(0, MAX_TOKEN_BYTES + 1));
    if (written >= 3 && written <= MAX_TOKEN_BYTES && read === token.length) out = decoder.decode(buffer.subarray(0, porterBytes(buffer, written)));
  }
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(token, out);
  return out;
}

/**
 * Porter stem of a plain word of a-z ("connections" -> "connect"); anything else
 * (digits, identifiers, other scripts, under three letters) comes back unchanged. The
 * offline embedder's stem feature, and the stems that query words and titles are
 * compared by.
 */
export function stem(word: string): string {
  return word.length >= 3 && ASCII_WORD.test(word) ? ftsStem(word) : word;
}
