// What a question or a search query may be: not empty, and a few lines at most. A
// question of 100,000 characters is a document pasted by mistake; it was searched and
// stored whole. The CLI, the library and the MCP server refuse the same texts.

import { UserError } from '../util/errors.js';

/** The longest query or question taken. */
export const MAX_TEXT_CHARS = 10_000;

/** A UserError (exit 2) when `text` is empty or longer than MAX_TEXT_CHARS; `name` says what it is ("question", "query"). */
export function checkAskable(text: string, name: string, example: string): void {
  const trimmed = text.trim();
  if (trimmed === '') throw new UserError(`The ${name} is empty.`, { hint: example, exitCode: 2 });
  // Characters in code points (an emoji is one, where UTF-16 counts it twice), counted only past the limit in UTF-16 units.
  // (Not grapheme clusters: Intl.Segmenter took 92 s over a 144,000-character paste.)
  const length = trimmed.length > MAX_TEXT_CHARS ? codePoints(trimmed) : trimmed.length;
  if (length > MAX_TEXT_CHARS) {
    throw new UserError(`The ${name} is ${length.toLocaleString('en')} characters long; at most ${MAX_TEXT_CHARS.toLocaleString('en')} are taken.`, {
      hint: `Give the ${name} in a few sentences; to find where a passage is, search for a distinctive sentence of it.`,
      exitCode: 2,
    });
  }
}

/** The number of code points of `text`. */
function codePoints(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}
