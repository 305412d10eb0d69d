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
