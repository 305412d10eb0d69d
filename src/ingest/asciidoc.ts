// AsciiDoc (git's manual pages, many projects' docs: `.adoc`, `.asciidoc`, and a
// `.txt` that clearly is one) out of the indexed text as the rendered page shows
// it, line for line like rst.ts: the result has exactly the source's lines, so
// chunks still cite the file's own lines.
//
// Section titles (`== Title`, or a title underlined with `=`, `-`, `~`, `^` or `+`
// as long as itself) become heading marks with their levels; a one-line title is
// written as Markdown writes it (`## Title`), an underlined one stays as it is (as
// reStructuredText's do). Attribute entries (`:toc:`), comments (`//`, `////`
// blocks), block attribute lines (`[verse]`, `[[anchor]]`), preprocessor lines
// (`ifdef::`, `include::`), a lone `+` list continuation and the delimiters of
// example, sidebar, quote, open and table blocks read as nothing; an admonition
// (`[TIP]`, `NOTE:`) reads as its word ("Tip:").
//
// What the page shows preformatted is code, fenced as Markdown fences it so that the
// answerer reads it as code (and quotes it only for a "how do I"), not as sentences:
// a listing or literal block (`----`, `....`: its delimiters become the fences), a
// paragraph styled as one (`[source,sh]`, `[literal]`, and `[verse]`, which git's
// pages use for their synopses) and an indented paragraph, which AsciiDoc shows
// literally (the style line, or the blank line or `+` before it, and the blank line
// that ends it become the fences). A `term::` (or `term;;`) of a labelled list reads
// "term:", and its description, which git indents with a tab, is written without its
// indent: it is a paragraph of prose, not a literal one, and reads as sentences.
//
// Inline: `linkgit:git-foo[1]` reads "git-foo(1)", `link:url[text]`, `url[text]` and
// `<<id,text>>` read as their text, `*bold*`, `_em_`, 'em' (git's style), `+mono+`
// and passthroughs as their text, and `x` in backquotes stays Markdown code; an
// `{attribute}` reads as the file defines it, and stays as it is otherwise.
//
// git's manual-page footer ("GIT" over "Part of the linkgit:git[1] suite", the same on
// every page) is left out: it says nothing of the page, and was quoted as an answer.
// Pure; linear in the text: every pattern that a line longer than MAX_LINE or a whole
// paragraph meets repeats its characters a bounded number of times (a link's target and
// text at most MAX_LINE), so no starting point scans on to the end of the line.

import type { UnitHeading } from './load.js';

/** The text as the page shows it, and its section titles. */
export interface AsciidocPage {
  /** Line for line with the source (CRLF read as LF). */
  text: string;
  headings: UnitHeading[];
}

/** Longer lines are not taken for titles or terms (and a long line never meets a backtracking pattern). */
const MAX_LINE = 500;

/** A one-line section title: `= Title` ... `====== Title` (or Markdown's `#`), with optional closing marks (withoutClosingMarks). */
const ONE_LINE_TITLE = /^(={1,6}|#{1,6})[ \t]+(\S.*)$/;
/** Underline characters of two-line titles, by level: `=` the document title, `-` a section, then deeper. */
const UNDERLINE_LEVEL: Record<string, number> = { '=': 1, '-': 2, '~': 3, '^': 4, '+': 5 };
/** Delimiters of blocks: the character repeated four or more times (`--`, an open block, exactly twice); tables `|===`. */
const DELIMITER = /^(?:(-{4,}|\.{4,}|={4,}|\*{4,}|_{4,}|\+{4,}|\/{4,})|(--)|([|!,:]={3,}))[ \t]*$/;
/** A block attribute line: `[verse]`, `[source,sh]`, `[[anchor]]`, `[#id.role]`, `[NOTE]` (as Asciidoctor tells one). */
const BLOCK_ATTRIBUTES = /^\[(?:|[#.%\w{,"'[].*)\][ \t]*$/;
/** An attribute entry: `:name: value`, `:name!:`. */
const ATTRIBUTE_ENTRY = /^:(!?)([\w][\w-]*)(!?):(?:[ \t]+(.*\S))?[ \t]*$/;
/** Preprocessor and block macro lines that show nothing: `ifdef::x[]`, `endif::[]`, `include::f.adoc[]`, `toc::[]`. */
const DIRECTIVE_LINE = /^(?:ifdef|ifndef|ifeval|endif|include|toc|video|audio)::[^\s\[]*\[.*\][ \t]*$/;
/** A block image: `image::path[alt]` shows its alt text. */
const BLOCK_IMAGE = /^image::[^\s\[]+\[([^\],]*)(?:,[^\]]*)?\][ \t]*$/;
/** A labelled list item: `term::`, `term:::`, `term::::` or `term;;`, with its description on the same line or not. */
const TERM = /^([ \t]*)(\S.*?)(:{2,4}|;;)(?:[ \t]+(.*\S))?[ \t]*$/;
/** A list item: `*`, `-`, `.` markers (repeated for nesting) or `1.`, `a.`. */
const LIST_ITEM = /^[ \t]*(?:[*.]{1,5}|-|\d+\.|[a-zA-Z]\.)[ \t]+\S/;
/** A block title: `.Title` (not `..`, not `. item`). */
const BLOCK_TITLE = /^\.([^\s.].*)$/;
/** A paragraph that is an admonition: `NOTE: text`. */
const ADMONITION_PARAGRAPH = /^(NOTE|TIP|IMPORTANT|WARNING|CAUTION):[ \t]+/;
const ADMONITION_WORD: Record<string, string> = { NOTE: 'Note', TIP: 'Tip', IMPORTANT: 'Important', WARNING: 'Warning', CAUTION: 'Caution' };
/** The only line of the last section of each of git's manual pages, under the title "GIT". */
const GIT_FOOTER = /^Part of the linkgit:git\[\d\] suite\.?$/;
/** Block styles whose paragraph is shown as preformatted lines: code to the answerer. */
const CODE_STYLES = new Set(['source', 'listing', 'literal', 'verse']);

/** A two-line title's underline level when `underline` underlines `title` (a run of one title character, its length within one of the title's). */
function underlineLevel(title: string, underline: string): number | undefined {
  const run = underline.trimEnd();
  const level = UNDERLINE_LEVEL[run[0] ?? ''];
  if (level === undefined || run.length < 2) return undefined;
  for (let i = 1; i < run.length; i++) if (run[i] !== run[0]) return undefined;
  const text = title.trimEnd();
  if (Math.abs([...text].length - run.length) > 1) return undefined;
  if (text.length > MAX_LINE || /^[\s.]/.test(text) || text.startsWith('//') || !/[\p{L}\p{N}]/u.test(text)) return undefined;
  if (BLOCK_ATTRIBUTES.test(text) || DELIMITER.test(text)) return undefined;
  return level;
}

/** A one-line title's text without the marks that may close it (`Install` of `== Install ==`), as long as those that open it. */
function withoutClosingMarks(title: string, marks: string): string {
  const before = title[title.length - marks.length - 1];
  return title.endsWith(marks) && (before === ' ' || before === '\t') ? trimSpaces(title.slice(0, -marks.length)) : title;
}

/** The style of a block attribute line (`source` of `[source,sh]`, `NOTE` of `[NOTE]`) and its second value (`sh`). */
function blockStyle(line: string): { style: string; language?: string } {
  const inner = line.trim().slice(1, -1);
  if (inner.startsWith('[')) return { style: '' }; // an anchor, [[id]]
  const [first = '', second] = inner.split(',').map((part) => part.trim());
  const style = /^[\w-]*/.exec(first)![0];
  return { style, ...(second && /^[\w+#.-]+$/.test(second) ? { language: second } : {}) };
}

/**
 * Whether a `.txt` file is AsciiDoc: it opens (after blank lines and `//` comments)
 * with a document title, `= Title` or a title underlined with `=` as long as itself,
 * and it holds a construct only AsciiDoc has: a `linkgit:`, `link:` or `xref:`
 * macro, a titled `<<id,cross reference>>` (not a bare `<<name>>`: Perl's
 * `require <<module>>` in git's release notes), a block style line (`[verse]`, `[source,sh]`,
 * `[NOTE]`, `[[anchor]]`), a labelled list item (`term::` with its description
 * after it), a listing or literal block (`----`, `....` around lines), a lone `+`
 * joining blocks of a list item, or a preprocessor line (`ifdef::x[]`). A file with
 * reStructuredText's directives (`.. note::`) or roles (`:ref:`x``) is not.
 */
export function looksLikeAsciidoc(rawText: string): boolean {
  const head = rawText.slice(0, 4096).replace(/\r\n/g, '\n').split('\n');
  let i = 0;
  while (i < head.length && (head[i]!.trim() === '' || /^\/\/(?!\/\/)/.test(head[i]!))) i++;
  const first = head[i] ?? '';
  const titled = /^=[ \t]+\S/.test(first) || (!/^\s/.test(first) && underlineLevel(first, head[i + 1] ?? '') === 1);
  if (!titled) return false;
  const text = rawText.replace(/\r\n/g, '\n');
  if (/^\.\.[ \t]+(?:[\w:-]+::|_[^:\n]*:|\|[^|\n]+\|)|(?:^|[\s(]):[\w:.-]+:`[^`\n]+`/m.test(text)) return false;
  if (/\b(?:linkgit:[\w.-]+\[\d\w*\]|(?:link|xref|mailto):[^\s\[]{1,500}\[[^\]\n]{0,500}\])|<<[\w:.-]{1,500},[^>\n]{1,500}>>/.test(text)) return true;
  const lines = text.split('\n');
  const delimiters = new Map<string, number>();
  for (let k = 0; k < lines.length; k++) {
    const line = lines[k]!.trimEnd();
    const before = k > 0 ? lines[k - 1]!.trim() : '';
    const after = (lines[k + 1] ?? '').trim();
    if (line.length > MAX_LINE || line === '') continue;
    if (/^\[(?:verse|source|listing|literal|quote|example|sidebar|NOTE|TIP|IMPORTANT|WARNING|CAUTION|cols=|options=|subs=)[^\]]*\]$|^\[\[[\w:.-]+(?:,[^\]]*)?\]\]$/.test(line) && before === '') return true;
    if (/^(?:ifdef|ifndef|ifeval|endif|include)::[^\s\[]*\[.*\]$/.test(line)) return true;
    if (line === '+' && before !== '' && after !== '') return true;
    const term = line.includes('::') ? TERM.exec(line) : null;
    if (term && term[3] === '::' && !/^\s/.test(line) && (term[4] !== undefined || (after !== '' && !/^(?:-{3,}|={3,})$/.test(after)))) return true;
    // A listing or literal block: a run of four or more, at a block's start, closed by the same run.
    if (/^(?:-{4,}|\.{4,})$/.test(line) && after !== '') {
      const open = delimiters.get(line);
      if (open !== undefined && before !== '') return true;
      if ((before === '' || BLOCK_ATTRIBUTES.test(before) || before === '+') && underlineLevel(before, line) === undefined) delimiters.set(line, k);
    }
  }
  return false;
}

/** Inline passes over one paragraph's text (newlines kept where they are). */
function inlineText(text: string, attributes: ReadonlyMap<string, string>): string {
  let out = text
    // Passthroughs show their text as it is: $$<user@host>$$, +++<b>+++, pass:[x].
    .replace(/\$\$([^$]{0,500}?)\$\$/g, '$1')
    .replace(/\+\+\+([^+]{0,500}?)\+\+\+/g, '$1')
    .replace(/\bpass:[a-z,]*\[([^\]]{0,500})\]/g, '$1')
    // ``quoted'' (git's double quotes) reads "quoted"; ``mono`` reads `mono`.
    .replace(/``([^`']{0,500}?)''/g, '"$1"')
    .replace(/``([^`]{1,500}?)``/g, '`$1`')
    // `+{x}+` is code whose text is taken as it is: `{x}`.
    .replace(/`\+([^`+]{1,500})\+`/g, '`$1`');
  // Code spans keep their text as written; everything else has its markup read.
  const parts = out.split(/(`[^`]{1,500}`)/);
  for (let i = 0; i < parts.length; i += 2) parts[i] = inlineMarkup(parts[i]!, attributes);
  out = parts.join('');
  return out;
}

/** The markup of text outside code spans: macros, cross references, formatting, attributes. */
function inlineMarkup(text: string, attributes: ReadonlyMap<string, string>): string {
  if (attributes.size > 0 && text.includes('{')) {
    text = text.replace(/(^|[^\\])\{([\w][\w-]*)\}/g, (whole, before: string, name: string) => {
      const value = attributes.get(name.toLowerCase());
      return value === undefined ? whole : before + value;
    });
  }
  return text
    .replace(/\blinkgit:([\w.-]+)\[(\d\w*)\]/g, '$1($2)')
    .replace(/\b(?:link|xref|mailto):([^\s\[]{1,500})\[([^\]]{0,500})\]/g, (whole, target: string, label: string) => keepLines(whole, shownLabel(label) || target))
    .replace(/\b((?:https?|ftp|irc|file):\/\/[^\s\[<>]{1,500})\[([^\]]{0,500})\]/g, (whole, url: string, label: string) => keepLines(whole, shownLabel(label) || url))
    .replace(/<<([\w:./#-]{1,500})(?:,([^>]{1,500}?))?>>/g, (whole, id: string, label: string | undefined) => keepLines(whole, label === undefined || label.trim() === '' ? id : trimSpaces(label)))
    .replace(/\b(?:kbd|btn):\[([^\]]{0,200})\]/g, '$1')
    .replace(/\bimage:[^\s\[]{1,500}\[([^\],]{0,500})(?:,[^\]]{0,500})?\]/g, (whole, alt: string) => keepLines(whole, alt))
    // Anchors and index terms that are not shown ((((primary, secondary)))) show nothing, their newlines kept.
    .replace(/\banchor:[\w:.-]{1,500}\[[^\]]{0,500}\]|\[\[\[?[\w:.-]{1,500}(?:,[^\]]{0,500})?\]\]\]?/g, (whole) => keepLines(whole, ''))
    .replace(/\(\(\([^()]{0,200}\)\)\)/g, (whole) => keepLines(whole, ''))
    .replace(/\(\(([^()]{1,200})\)\)/g, '$1')
    // Unconstrained, then constrained formatting: **b**, __e__, ++m++; *b*, _e_, 'e', +m+.
    .replace(/\*\*(?=\S)([^*]{0,500}?\S|\S)\*\*/g, '$1')
    .replace(/__(?=\S)([^_]{0,500}?\S|\S)__/g, '$1')
    .replace(/\+\+(?=\S)([^+]{0,500}?\S|\S)\+\+/g, '$1')
    .replace(/(^|[^\w*])\*(?=\S)([^*]{0,500}?\S|\S)\*(?![\w*])/g, '$1$2')
    .replace(/(^|[^\w_])_(?=\S)([^_]{0,500}?\S|\S)_(?![\w_])/g, '$1$2')
    .replace(/(^|[^\w'])'(?=\S)([^']{0,500}?\S|\S)'(?![\w'])/g, '$1$2')
    .replace(/(^|[^\w+])\+(?=\S)([^+]{0,500}?\S|\S)\+(?![\w+])/g, '$1$2')
    // A hard line break: "text +" at the end of a line.
    .replace(/[ \t]\+(?=\n|$)/g, '');
}

/**
 * A link's label as shown: its text before any `,attribute=` and without a `^` (open in a
 * new window); empty when it shows no text. A label written over lines keeps its newlines.
 */
function shownLabel(label: string): string {
  const shown = trimSpaces(label.replace(/,\s*\w+=.*$/s, '').replace(/\^$/, '').replace(/^"(.*)"$/s, '$1'));
  return shown.trim() === '' ? '' : shown;
}

/** `text` without the spaces and tabs at its ends; its newlines stay, as they hold the lines after it in place. */
function trimSpaces(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && (text[start] === ' ' || text[start] === '\t')) start++;
  while (end > start && (text[end - 1] === ' ' || text[end - 1] === '\t')) end--;
  return text.slice(start, end);
}

/** A line as read, without the spaces at its ends that a construct showing nothing there left (a line written with them keeps them). */
function spacesAsWritten(written: string, shown: string): string {
  const space = (c: string | undefined) => c === ' ' || c === '\t';
  let start = 0;
  let end = shown.length;
  if (!space(written[0])) while (start < end && space(shown[start])) start++;
  if (!space(written.at(-1))) while (end > start && space(shown[end - 1])) end--;
  return shown.slice(start, end);
}

/**
 * What a construct shows, over as many lines as the construct was written on: a newline
 * of a part that shows nothing (`,window=_blank` on the next line, an index term, an
 * anchor) is kept after the text, so that what follows on that line stays on it.
 */
function keepLines(whole: string, shown: string): string {
  let missing = 0;
  for (let at = whole.indexOf('\n'); at !== -1; at = whole.indexOf('\n', at + 1)) missing++;
  for (let at = shown.indexOf('\n'); at !== -1; at = shown.indexOf('\n', at + 1)) missing--;
  return missing > 0 ? shown + '\n'.repeat(missing) : shown;
}

/**
 * The page as it shows, line for line, and its section titles (see the top of
 * this file).
 */
export function asciidocToPlain(rawText: string): AsciidocPage {
  const source = rawText.replace(/\r\n/g, '\n').split('\n');
  const lines = source.slice();
  const headings: UnitHeading[] = [];
  const attributes = new Map<string, string>();
  /** Whether each output line has its inline markup read, and with the line before it (one paragraph). */
  const inline = new Uint8Array(lines.length); // 0: no, 1: starts a run, 2: continues the run, 3: a run of its own
  /** The delimited blocks open around the current line, innermost last; a verbatim one holds no markup. */
  const open: { delimiter: string; verbatim: boolean; comment: boolean }[] = [];
  /** What the current paragraph is, when inside one: prose, literal (kept as written), code (fenced), or a list item's description. */
  let paragraph: 'prose' | 'literal' | 'code' | 'description' | undefined;
  /** A term was read and its description not yet: an indented paragraph after it is the description. */
  let awaitingDescription = false;
  /** The style of the next block, from its attribute line: `source`, `verse`... */
  let style: { style: string; language?: string } | undefined;
  /** The code paragraph is a verse (a synopsis): its markup is read. */
  let verse = false;
  /** The line that closed the last fenced paragraph. */
  let closedFence = -1;

  /** Marks line i for inline reading: with the line before it when that one is read so too (`alone`: never, nor the next with it). */
  const markInline = (i: number, alone = false) => {
    inline[i] = alone ? 3 : i > 0 && (inline[i - 1] === 1 || inline[i - 1] === 2) && lines[i - 1] !== '' ? 2 : 1;
  };

  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trimEnd();
    const blank = line.trim() === '';
    const verbatim = open.at(-1);
    if (verbatim?.verbatim) {
      // Only the same delimiter closes a listing, literal, passthrough or comment block.
      if (line === verbatim.delimiter) {
        open.pop();
        lines[i] = verbatim.comment || verbatim.delimiter.startsWith('+') ? '' : '```';
      } else if (verbatim.comment) lines[i] = '';
      continue;
    }
    if (blank) {
      // A fenced paragraph ends at the blank line after it: that line closes the fence.
      lines[i] = paragraph === 'code' ? '```' : '';
      if (paragraph === 'code') closedFence = i;
      paragraph = undefined;
      continue;
    }
    if (paragraph === 'literal' || paragraph === 'code') {
      if (paragraph === 'code' && verse) markInline(i);
      continue;
    }
    const atBlockStart = paragraph === undefined;
    if (line.length > MAX_LINE) {
      if (atBlockStart) paragraph = 'prose';
      markInline(i);
      continue;
    }
    // Comments.
    if (/^\/\/(?!\/\/)/.test(line) || (line.startsWith('////') && !/^\/{4,}$/.test(line))) {
      lines[i] = '';
      continue;
    }
    // Section titles, at a block's start outside delimited blocks: one line, or underlined (before a delimiter is taken for one).
    if (atBlockStart && open.length === 0) {
      const oneLine = ONE_LINE_TITLE.exec(line);
      const underlined = !oneLine && i + 1 < lines.length ? underlineLevel(line, lines[i + 1]!) : undefined;
      if (oneLine || underlined !== undefined) {
        const level = oneLine ? oneLine[1]!.length : underlined!;
        const title = oneLine ? withoutClosingMarks(oneLine[2]!, oneLine[1]!) : line;
        lines[i] = oneLine ? `${'#'.repeat(level)} ${title}` : title;
        markInline(i, true);
        headings.push({ line: i, end: oneLine ? i : i + 1, level, text: title });
        if (!oneLine) i++; // the underline stays as written
        style = undefined;
        awaitingDescription = false;
        continue;
      }
    }
    const delimiter = DELIMITER.exec(line);
    if (delimiter && (atBlockStart || paragraph === 'description' || paragraph === 'prose')) {
      paragraph = undefined;
      const run = delimiter[0].trimEnd();
      const inner = open.at(-1);
      if (inner && inner.delimiter === run) {
        open.pop();
        lines[i] = '';
        continue;
      }
      const c = run[0]!;
      const code = c === '-' && run.length >= 4 ? true : c === '.';
      if (code) {
        const language = style?.style === 'source' ? style.language ?? '' : '';
        lines[i] = `\`\`\`${language}`;
      } else lines[i] = '';
      open.push({ delimiter: run, verbatim: code || c === '+' || c === '/', comment: c === '/' });
      style = undefined;
      awaitingDescription = false;
      continue;
    }
    if ((atBlockStart || paragraph === 'prose' || paragraph === 'description') && BLOCK_ATTRIBUTES.test(line)) {
      paragraph = undefined;
      const found = blockStyle(line);
      const admonition = ADMONITION_WORD[found.style];
      if (admonition) lines[i] = `${admonition}:`;
      else if (found.style !== '' || !style) style = found;
      if (!admonition) lines[i] = '';
      // A paragraph styled as code (`[verse]`, `[source,sh]` before no delimiter) is fenced: this line opens it.
      if (CODE_STYLES.has(found.style) && !DELIMITER.test((lines[i + 1] ?? '').trimEnd())) {
        lines[i] = `\`\`\`${found.style === 'source' ? found.language ?? '' : ''}`;
        paragraph = 'code';
        verse = found.style === 'verse';
        style = undefined;
      }
      continue;
    }
    if (atBlockStart) {
      const entry = ATTRIBUTE_ENTRY.exec(line);
      if (entry) {
        const name = entry[2]!.toLowerCase();
        if (entry[1] || entry[3]) attributes.delete(name);
        else attributes.set(name, inlineMarkup(entry[4] ?? '', attributes));
        lines[i] = '';
        continue;
      }
      if (DIRECTIVE_LINE.test(line)) {
        lines[i] = '';
        continue;
      }
      const image = BLOCK_IMAGE.exec(line);
      if (image) {
        lines[i] = image[1]!.trim();
        if (lines[i] !== '') markInline(i);
        continue;
      }
      if (line === "'''" || line === '<<<') {
        lines[i] = '';
        continue;
      }
    }
    if (line === '+') {
      // A list continuation: the next block belongs to the item. Shows nothing.
      lines[i] = '';
      paragraph = undefined;
      awaitingDescription = false;
      continue;
    }
    // A list item starts a block, or interrupts a list item's text (not a paragraph of prose).
    const inList = atBlockStart || paragraph === 'description';
    const term = inList && (line.includes('::') || line.includes(';;')) ? TERM.exec(line) : null;
    if (term && !DIRECTIVE_LINE.test(line) && !/^[ \t]*(?:https?|ftp|file):/.test(line)) {
      const [, indent = '', text = '', , description] = term;
      lines[i] = `${indent}${text}:${description ? ` ${description}` : ''}`;
      markInline(i);
      paragraph = 'description';
      awaitingDescription = !description;
      style = undefined;
      continue;
    }
    const indented = /^[ \t]/.test(line);
    if (atBlockStart) {
      style = undefined;
      if (indented && !awaitingDescription && !LIST_ITEM.test(line)) {
        // An indented paragraph is a literal block, kept as written: code, fenced from the
        // line before it that shows nothing (a blank line, a `+`), or in the fence that a
        // code paragraph just before it closed, which then goes on.
        if (closedFence === i - 1) lines[i - 1] = '';
        else if (i > 0 && lines[i - 1] === '') lines[i - 1] = '```';
        else {
          paragraph = 'literal'; // no line to fence it from (right under a title): kept as it is
          continue;
        }
        paragraph = 'code';
        verse = false;
        continue;
      }
      paragraph = awaitingDescription ? 'description' : 'prose';
      awaitingDescription = false;
      const title = BLOCK_TITLE.exec(line);
      if (title && !LIST_ITEM.test(line)) {
        lines[i] = title[1]!;
        markInline(i);
        paragraph = undefined;
        continue;
      }
      const admonition = ADMONITION_PARAGRAPH.exec(line);
      if (admonition) {
        lines[i] = `${ADMONITION_WORD[admonition[1]!]}:${line.slice(admonition[1]!.length + 1)}`;
        markInline(i);
        continue;
      }
      if (LIST_ITEM.test(line)) paragraph = 'description';
    } else if (inList && LIST_ITEM.test(line)) paragraph = 'description';
    // A list item's text and a description are prose: written without their indent.
    lines[i] = paragraph === 'description' ? line.trimStart() : line;
    markInline(i);
  }

  // Inline markup, a paragraph at a time (a span may go on to the next line); lines stay where they are.
  for (let i = 0; i < lines.length; ) {
    if (inline[i] === 0) {
      i++;
      continue;
    }
    let end = i + 1;
    while (end < lines.length && inline[end] === 2) end++;
    let converted = inlineText(lines.slice(i, end).join('\n'), attributes).split('\n');
    // Every construct keeps the lines it spans; should one not, the paragraph is read a line at a
    // time (a span over a line break then stays as written) rather than cite the wrong lines.
    if (converted.length !== end - i) converted = lines.slice(i, end).map((line) => inlineText(line, attributes));
    for (let k = i; k < end; k++) lines[k] = spacesAsWritten(lines[k]!, converted[k - i]!);
    i = end;
  }
  // git's manual-page footer, the same on every page ("GIT / Part of the git(1) suite"), says nothing of the page.
  const footer = headings.at(-1);
  if (footer && /^GIT$/.test(source[footer.line]!.replace(/^=+[ \t]+/, '').trim())) {
    const body = source.slice((footer.end ?? footer.line) + 1).filter((line) => line.trim() !== '');
    if (body.length === 1 && GIT_FOOTER.test(body[0]!.trim())) {
      for (let i = footer.line; i < lines.length; i++) lines[i] = '';
      headings.pop();
    }
  }
  for (const heading of headings) {
    const shown = lines[heading.line]!.replace(/^#{1,6}(?:[ \t]+|$)/, '');
    heading.text = shown.replace(/\s+/g, ' ').trim() || heading.text;
  }
  return { text: lines.join('\n'), headings };
}
