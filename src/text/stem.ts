// Porter (1980) stemmer for English words, written out here because ragline ships no
// stemmer package. It is the same algorithm SQLite's FTS5 `porter` tokenizer applies,
// so stems computed in JS (offline embedder, lab BM25) agree with the FTS index.
// Only plain ASCII lower-case words are stemmed; anything else is returned unchanged.

const STEP2: Record<string, string> = {
  ational: 'ate', tional: 'tion', enci: 'ence', anci: 'ance', izer: 'ize', bli: 'ble',
  alli: 'al', entli: 'ent', eli: 'e', ousli: 'ous', ization: 'ize', ation: 'ate',
  ator: 'ate', alism: 'al', iveness: 'ive', fulness: 'ful', ousness: 'ous', aliti: 'al',
  iviti: 'ive', biliti: 'ble', logi: 'log',
};
const STEP3: Record<string, string> = {
  icate: 'ic', ative: '', alize: 'al', iciti: 'ic', ical: 'ic', ful: '', ness: '',
};

// A consonant run C and vowel run V; `y` after a consonant counts as a vowel, which the
// upper-case `Y` trick below approximates exactly as Porter's reference implementation does.
const c = '[^aeiou]';
const v = '[aeiouy]';
const C = `${c}[^aeiouy]*`;
const V = `${v}[aeiou]*`;
const MGR0 = new RegExp(`^(${C})?${V}${C}`); // measure > 0
const MEQ1 = new RegExp(`^(${C})?${V}${C}(${V})?$`); // measure == 1
const MGR1 = new RegExp(`^(${C})?${V}${C}${V}${C}`); // measure > 1
const S_V = new RegExp(`^(${C})?${v}`); // stem contains a vowel
const CVC = new RegExp(`^${C}${v}[^aeiouwxy]$`);
const DOUBLE_END = /([^aeiouylsz])\1$/;
const STEP2_RE =
  /^(.+?)(ational|tional|enci|anci|izer|bli|alli|entli|eli|ousli|ization|ation|ator|alism|iveness|fulness|ousness|aliti|iviti|biliti|logi)$/;
const STEP3_RE = /^(.+?)(icate|ative|alize|iciti|ical|ful|ness)$/;
const STEP4_RE = /^(.+?)(al|ance|ence|er|ic|able|ible|ant|ement|ment|ent|ou|ism|ate|iti|ous|ive|ize)$/;
const STEP4_ION = /^(.+?)(s|t)(ion)$/;
const ASCII_WORD = /^[a-z]+$/;

function porter(word: string): string {
  let w = word;
  const firstY = w[0] === 'y';
  if (firstY) w = 'Y' + w.slice(1);

  // Step 1a: plurals.
  let m: RegExpExecArray | null;
  if ((m = /^(.+?)(ss|i)es$/.exec(w))) w = m[1] + m[2];
  else if ((m = /^(.+?)([^s])s$/.exec(w))) w = m[1] + m[2];

  // Step 1b: -eed, -ed, -ing.
  if ((m = /^(.+?)eed$/.exec(w))) {
    if (MGR0.test(m[1])) w = w.slice(0, -1);
  } else if ((m = /^(.+?)(ed|ing)$/.exec(w))) {
    const stem = m[1];
    if (S_V.test(stem)) {
      w = stem;
      if (/(at|bl|iz)$/.test(w)) w += 'e';
      else if (DOUBLE_END.test(w)) w = w.slice(0, -1);
      else if (CVC.test(w)) w += 'e';
    }
  }

  // Step 1c: y -> i when the stem has a vowel.
  if ((m = /^(.+?)y$/.exec(w)) && S_V.test(m[1])) w = m[1] + 'i';

  // Step 2 and 3: double and single suffixes.
  if ((m = STEP2_RE.exec(w)) && MGR0.test(m[1])) w = m[1] + STEP2[m[2]];
  if ((m = STEP3_RE.exec(w)) && MGR0.test(m[1])) w = m[1] + STEP3[m[2]];

  // Step 4: drop suffixes when measure > 1.
  if ((m = STEP4_RE.exec(w))) {
    if (MGR1.test(m[1])) w = m[1];
  } else if ((m = STEP4_ION.exec(w))) {
    const stem = m[1] + m[2];
    if (MGR1.test(stem)) w = stem;
  }

  // Step 5: final -e and -ll.
  if ((m = /^(.+?)e$/.exec(w))) {
    const stem = m[1];
    if (MGR1.test(stem) || (MEQ1.test(stem) && !CVC.test(stem))) w = stem;
  }
  if (/ll$/.test(w) && MGR1.test(w)) w = w.slice(0, -1);

  if (firstY) w = 'y' + w.slice(1);
  return w;
}

const cache = new Map<string, string>();
const CACHE_LIMIT = 200_000;

/**
 * Porter stem of one lower-case word ("connections" -> "connect"). Words shorter than
 * three letters or containing anything but a-z (digits, identifiers, other scripts) come
 * back unchanged. Results are memoised, since a corpus repeats a small vocabulary.
 */
export function stem(word: string): string {
  if (word.length < 3) return word;
  const hit = cache.get(word);
  if (hit !== undefined) return hit;
  const out = ASCII_WORD.test(word) ? porter(word) : word;
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(word, out);
  return out;
}
