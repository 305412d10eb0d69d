// Section titles of reStructuredText files, as heading marks for the chunker (which
// splits at them and keeps the heading path with each chunk, as it does for Markdown
// and HTML; asciidoc.ts finds AsciiDoc's as it reads the page). The text itself is
// left as it is: citations keep pointing at the file's own lines. Pure; linear in the text.

import type { UnitHeading } from './load.js';

/** Longer lines are not taken for titles (and a long line never meets a backtracking pattern). */
const MAX_TITLE = 500;

/** reStructuredText's adornment characters. */
const ADORNMENT = new Set('=-`:\'"~^_*+#<>'.split(''));

/**
 * The adornment character when `line` is a run of one of them, else undefined: 4 or
 * more, or as few as `least` (the underline of a title as short as `if`: "--").
 */
function adornment(line: string, least = 4): string | undefined {
  const trimmed = line.trimEnd();
  if (trimmed.length < least) return undefined;
  const c = trimmed[0]!;
  if (!ADORNMENT.has(c)) return undefined;
  for (let i = 1; i < trimmed.length; i++) if (trimmed[i] !== c) return undefined;
  return c;
}

/**
 * reStructuredText section titles: a title line underlined (and optionally overlined)
 * with a run of one punctuation character (docutils takes a short one too, with a
 * warning), after a blank line or the overline. Levels follow
 * the order in which each style (character, with or without overline) first appears,
 * as docutils assigns them. Indented lines are not titles (literal blocks, quotes).
 */
export function rstHeadings(text: string): UnitHeading[] {
  const lines = text.split('\n');
  const styles: string[] = [];
  const headings: UnitHeading[] = [];
  const levelOf = (style: string) => {
    let at = styles.indexOf(style);
    if (at < 0) at = styles.push(style) - 1;
    return Math.min(6, at + 1);
  };
  for (let i = 0; i + 1 < lines.length; i++) {
    const title = lines[i]!.trim();
    if (title === '' || title.length > MAX_TITLE || adornment(lines[i]!) !== undefined) continue;
    // A title of two or three characters may have an underline as long as itself ("CC", "--").
    const under = adornment(lines[i + 1]!) ?? (title.length < 4 ? adornment(lines[i + 1]!, Math.max(2, title.length)) : undefined);
    if (!under) continue;
    const over = i > 0 ? adornment(lines[i - 1]!) : undefined;
    if (over === under) {
      // Overline and underline: the title may be indented; the block starts at the overline.
      headings.push({ line: i - 1, end: i + 1, level: levelOf(`${under}/${under}`), text: title });
    } else {
      if (/^\s/.test(lines[i]!)) continue;
      if (i > 0 && lines[i - 1]!.trim() !== '') continue; // the last line of a paragraph, not a title
      headings.push({ line: i, end: i + 1, level: levelOf(under), text: title });
    }
    i++; // the underline is not a title
  }
  return headings;
}
