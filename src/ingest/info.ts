// GNU Info manuals (`sed.info`, `coreutils.info.gz`, the parts of a split one,
// `find.info-1.gz`): the form in which bash, make, sed, grep, gawk and coreutils ship
// their full manuals. Read line for line, so citations keep the file's own lines:
// each node's header line (`File: sed.info,  Node: Invoking sed,  Next: ...`) becomes
// the node's name and a heading mark for the chunker, at the level its title's
// underline gives (`***` a chapter, `===` a section, `---` a subsection, `...` below);
// what Info keeps for its reader, not for people (the separators, the preamble's
// directory entry, a split manual's table of parts, the tag table, the index markers),
// is blanked. Pure; linear in the text.

import type { UnitHeading } from './load.js';

/** What starts a node, or the tag table: a line holding only the Unit Separator. */
const SEPARATOR = '\u001f';
/** A node's header: `File: sed.info,  Node: Invoking sed,  Next: sed scripts,  Prev: Introduction,  Up: Top`. */
const NODE_HEADER = /^File:\s*[^,]*,\s*Node:\s*([^,\t]+?)\s*(?:,|$)/;
/** Title underlines, by the level makeinfo gives them. */
const UNDERLINE_LEVEL: Record<string, number> = { '*': 1, '=': 2, '-': 3, '.': 4 };
/** Index and image markers: `\0\b[index\0\b]`, `\0\b[image src="x.png"\0\b]`. */
const MARKER = /\u0000\u0008\[[^\u0000]*\u0000\u0008\]/g;
/** Lines after a node's header where its title is looked for. */
const TITLE_WITHIN = 4;

export interface InfoPage {
  /** The text, line for line with the file; what is not for people blanked. */
  text: string;
  /** One per node, at its header line. */
  headings: UnitHeading[];
  /** The manual's title: its Top node's title, else the name the file gives itself (`find` for `This is find.info`). */
  title?: string;
}

/** The underline's level when `line` is a run of one of Info's title underline characters, else undefined. */
function underlineLevel(line: string): number | undefined {
  const trimmed = line.trimEnd();
  if (trimmed.length < 2) return undefined;
  const level = UNDERLINE_LEVEL[trimmed[0]!];
  if (level === undefined) return undefined;
  for (let i = 1; i < trimmed.length; i++) if (trimmed[i] !== trimmed[0]) return undefined;
  return level;
}

/** Whether `text` reads as an Info file: a node header after a separator line. */
export function looksLikeInfo(text: string): boolean {
  return /(?:^|\n)\u001f\r?\nFile:[^\n]*\bNode:/.test(text.slice(0, 200_000));
}

/** Reads an Info file (see the module header). */
export function infoToPlain(source: string): InfoPage {
  const lines = source.replace(MARKER, '').split('\n');
  const headings: UnitHeading[] = [];
  let title: string | undefined;
  let topTitle: string | undefined;
  /** Inside what Info keeps for itself, until the next separator. */
  let blanking: 'tags' | 'entry' | undefined;
  let started = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.replace(/\r$/, '');
    if (line === SEPARATOR || line.startsWith(SEPARATOR)) {
      lines[i] = '';
      started = true;
      const next = lines[i + 1]?.replace(/\r$/, '') ?? '';
      const header = NODE_HEADER.exec(next);
      if (header) {
        const name = header[1]!.trim();
        lines[i + 1] = name;
        // The node's title is underlined a line or two below its header.
        let level = 1;
        let shown: string | undefined;
        for (let k = i + 2; k < Math.min(lines.length - 1, i + 2 + TITLE_WITHIN); k++) {
          const under = underlineLevel(lines[k + 1]!);
          if (under !== undefined && lines[k]!.trim() !== '') {
            level = under;
            shown = lines[k]!.trim();
            break;
          }
        }
        headings.push({ line: i + 1, level, text: name });
        if (name === 'Top' && shown) topTitle ??= shown;
        blanking = undefined;
        i++;
      } else {
        // The tag table, a split manual's table of its parts, or local variables: not text.
        blanking = 'tags';
      }
      continue;
    }
    if (!started) {
      // The preamble: its "This is x.info, produced by makeinfo" line and its directory entry are for Info.
      const made = /^This is (\S+?)\.info\b.*\bproduced by\b/.exec(line);
      if (made) {
        title ??= made[1];
        lines[i] = '';
        continue;
      }
      if (/^INFO-DIR-SECTION\b/.test(line)) {
        lines[i] = '';
        continue;
      }
      if (/^START-INFO-DIR-ENTRY\b/.test(line)) blanking = 'entry';
      if (blanking === 'entry') {
        if (/^END-INFO-DIR-ENTRY\b/.test(line)) blanking = undefined;
        lines[i] = '';
        continue;
      }
    }
    if (blanking === 'tags') lines[i] = '';
  }
  return { text: lines.join('\n'), headings, title: topTitle ?? title };
}
