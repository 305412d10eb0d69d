// The prompt envelope: text a model is given as DATA (retrieved documents, and
// whatever a model wrote about them: the running summary, the tracked topics)
// goes between markers, `<document …>…</document>` and
// `<conversation-notes>…</conversation-notes>`, and can neither close its own
// envelope, open another, nor speak in a chat template's control tokens. Shared by
// the answer prompt (src/chat) and the rewrite and summary prompts (src/rewrite).

/** The tag of the envelope that holds what a model wrote about the conversation. */
export const NOTES_TAG = 'conversation-notes';

// Code points that render as nothing or act on nothing a model reads, and could split
// a marker so that it is not matched, yet still read as one: every Unicode
// Default_Ignorable_Code_Point (zero-width spaces and joiners, bidi controls, the soft
// hyphen, variation selectors U+FE00-FE0F and U+E0100-E01EF, the Mongolian free
// variation selectors U+180B-180F, tag characters U+E0000-E007F, Hangul fillers, the
// BOM...) and every control character (DEL, backspace, C1...). Matched one character at a time.
const IGNORED = /[\p{Default_Ignorable_Code_Point}\p{Cc}]/gu;

// The letters of the marker words with the Latin, Cyrillic and Greek letters that look alike in each place.
const LOOKALIKE: Record<string, string> = {
  a: 'aAаАαΑ',
  c: 'cCсСϲϹᴄ',
  d: 'dDԁᏧᴅ',
  e: 'eEеЕΕҽ',
  i: 'iIіІΙɪ',
  m: 'mMмМΜᴍ',
  n: 'nNոΝ',
  o: 'oOоОοΟᴏ',
  r: 'rRгᴦ',
  s: 'sSѕЅ',
  t: 'tTтТτΤᴛ',
  u: 'uUսᴜ',
  v: 'vVѵᴠ',
};
/** A hyphen in a marker word: `-`, or a dash that NFKC leaves as it is (U+2010-U+2015, U+2212). */
const DASH = '[\\-\\u2010-\\u2015\\u2212]';
const markerWord = (word: string) => [...word].map((letter) => (letter === '-' ? DASH : `[${LOOKALIKE[letter]}]`)).join('');
/**
 * `<document`, `</documents`, `< /document`, `</ document`, `<conversation-notes`,
 * with look-alike letters: the `<` of any envelope marker.
 */
const ENVELOPE_MARKER = new RegExp(
  `<(?=\\s*/?\\s*(?:${markerWord('document')}[${LOOKALIKE.s}]?|${markerWord(NOTES_TAG)})(?![\\p{L}\\p{N}_]))`,
  'gu',
);
/**
 * Chat-template control tokens that a model's template gives meaning to:
 * `<|im_start|>`, `<|im_end|>`, `<|eot_id|>`, `<|start_header_id|>` and their kin,
 * Llama 2's `[INST]`, `[/INST]`, `<<SYS>>`, `<</SYS>>`, `<s>`, `</s>`, and Gemma's
 * `<start_of_turn>` / `<end_of_turn>`.
 */
const TEMPLATE_TOKEN = /<\|[^|<>\n]{0,40}\|>|\[\s*\/?\s*INST\s*\]|<<\s*\/?\s*SYS\s*>>|<\/?s>|<\/?(?:start|end)_of_turn>/gi;

/** What a marker's brackets become: look-alikes a model reads as text. */
const DEFUSED: Record<string, string> = { '<': '‹', '>': '›', '[': '⟦', ']': '⟧' };

/**
 * Text that cannot open or close an envelope of its own, nor speak in a chat
 * template's control tokens. Markers are looked for in a folded copy of the text:
 * default-ignorable code points and controls removed first, then each character in
 * Unicode NFKC form (fullwidth `＜` is `<`), so neither an invisible character inside
 * a marker (`</d\uFE0Focument>`, a tag character, U+180B, DEL, BS) nor a look-alike
 * hides one. A marker found there is defused in the text itself by turning its
 * brackets into look-alike quotation marks (`‹/document>`, `‹|im_end|›`, `⟦INST⟧`),
 * which a model reads as text. Everything else is left as written: `10⁶` stays `10⁶`
 * (NFKC would make it `106`).
 */
export function neutraliseMarkers(text: string): string {
  // The folded copy, and for each of its UTF-16 units the character it came from.
  const chars = Array.from(text);
  let folded = '';
  const origin: number[] = [];
  chars.forEach((char, index) => {
    // Ignored before NFKC, and again after it (a halfwidth filler folds to one).
    const form = char.replace(IGNORED, '').normalize('NFKC').replace(IGNORED, '');
    folded += form;
    for (let unit = 0; unit < form.length; unit++) origin.push(index);
  });
  const defuse = new Set<number>();
  for (const match of folded.matchAll(TEMPLATE_TOKEN)) {
    for (let at = match.index; at < match.index + match[0].length; at++) if (DEFUSED[folded[at]!]) defuse.add(origin[at]!);
  }
  for (const match of folded.matchAll(ENVELOPE_MARKER)) defuse.add(origin[match.index]!);
  if (defuse.size === 0) return text;
  return chars.map((char, index) => (defuse.has(index) ? char.normalize('NFKC').replace(/[<>[\]]/g, (c) => DEFUSED[c]!) : char)).join('');
}

/**
 * What a model wrote about the conversation (the running summary, the tracked
 * topics), one labelled line each, as data between `<conversation-notes>` markers;
 * '' when there is nothing to say.
 */
export function conversationNotes(lines: readonly string[]): string {
  const kept = lines.map((line) => line.trim()).filter(Boolean);
  if (kept.length === 0) return '';
  return `<${NOTES_TAG}>\n${neutraliseMarkers(kept.join('\n'))}\n</${NOTES_TAG}>`;
}
