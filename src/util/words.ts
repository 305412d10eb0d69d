// Small pieces of the sentences the CLI and doctor write.

/** `1 document`, `3 documents`. */
export function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

/** `text` as one word for a POSIX shell: as it is when it needs no quoting, else in single quotes. */
export function shellWord(text: string): string {
  return /^[\w./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

/** The first `shown` of `items`, and how many more: `a, b, c, d, e and 2 more`. */
export function fewOf(items: readonly string[], shown = 5): string {
  return `${items.slice(0, shown).join(', ')}${items.length > shown ? ` and ${items.length - shown} more` : ''}`;
}

/** `a`, `a or b`, `a, b or c`. */
export function orList(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`;
}

/**
 * `text` with each run of white space one space, and none at either end: what a typed
 * question means. In linear time; the patterns that read a question then never meet a
 * long run of spaces (a pasted question of 5,000 spaces took one of them 34 s).
 */
export function squeezeSpaces(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/**
 * A typed question as the rewriter and the answerer read it: squeezeSpaces, and a run
 * of one punctuation mark longer than three cut to three ("?????" -> "???"): the
 * patterns that read a question meet no long run of anything (20,000 dots after a
 * word took the rewriter 2 s).
 */
export function plainQuestion(text: string): string {
  return squeezeSpaces(text).replace(/([^\p{L}\p{N}\s])\1{3,}/gu, '$1$1$1');
}

/** `text` without the characters of `chars` at its end (no pattern: a long run of them stays linear). */
export function trimEndOf(text: string, chars: string): string {
  let end = text.length;
  while (end > 0 && chars.includes(text[end - 1]!)) end--;
  return text.slice(0, end);
}
