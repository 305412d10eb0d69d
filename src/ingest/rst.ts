// reStructuredText markup out of the indexed text, its content kept: what a reader
// of the rendered page sees. Directives become their words (`.. versionadded:: 3.13`
// reads "New in version 3.13.", `.. note::` reads "Note:", `.. variable:: NAME`
// reads "NAME", `.. tab:: Unix/macOS` reads "Unix/macOS:"), or nothing when they only
// load or lay out (`code-block`, `include`, `index`, `cmake-module`...); their option
// lines (`:maxdepth: 2`) go, and so do link targets (`.. _name:`), comments (`.. any
// text`, with the lines indented under it), the body of `meta` and `index`, and the
// page's metadata fields before anything else (`:orphan:`). A footnote keeps its
// label (`.. [1] text` reads "[1] text"); a `toctree`'s entries read as the pages'
// names (`/module/FetchContent` reads "FetchContent", `Title <page>` reads "Title").
// Interpreted text roles keep their text (`:prop_tgt:`LINK_OPTIONS`` reads
// "LINK_OPTIONS", `:ref:`title <target>`` reads "title"), and so do hyperlink
// references (`` `Output file location`_ `` reads "Output file location"), both
// also when written over a line break (the text stays where it was written), an inline
// literal is written as Markdown writes code (``NAME`` reads `NAME`); a
// substitution reference reads as what its `replace` definition says, the
// definition itself as nothing. Line for line: the result has exactly the lines of
// the source, so chunks still cite the file's own lines. Pure; linear in the text.

/** Directives whose whole line is layout or loading, not content. */
const SILENT = new Set([
  'code-block', 'code', 'sourcecode', 'parsed-literal', 'literalinclude', 'include', 'toctree', 'contents', 'index',
  'raw', 'only', 'image', 'figure', 'highlight', 'highlightlang', 'csv-table', 'list-table', 'table', 'container',
  'sectnum', 'default-role', 'role', 'meta', 'cssclass', 'class', 'tabularcolumns', 'autosummary', 'currentmodule',
  'module', 'moduleauthor', 'sectionauthor', 'codeauthor', 'cmake-module',
]);
/** Directives whose body is code, read as written (inline markup in it is not markup). */
const CODE = new Set(['code-block', 'code', 'sourcecode']);
/** Directives whose body is not shown either: page metadata (`:http-equiv=refresh: ...`) and index entries. */
const SILENT_BODY = new Set(['meta', 'index']);
/** A field of the page's own metadata (`:orphan:`, `:tocdepth: 2`), before anything else on the page. */
const DOCINFO = /^:[^:\s][^:]*:(?:\s.*)?$/;
/** Admonitions and the word they are shown with. */
const ADMONITIONS: Record<string, string> = {
  note: 'Note', warning: 'Warning', tip: 'Tip', important: 'Important', caution: 'Caution', attention: 'Attention',
  danger: 'Danger', error: 'Error', hint: 'Hint', seealso: 'See also', todo: 'To do',
};
const VERSIONS: Record<string, string> = {
  versionadded: 'New in version',
  versionchanged: 'Changed in version',
  deprecated: 'Deprecated since version',
  versionremoved: 'Removed in version',
};

const DIRECTIVE = /^(\s*(?:[-*+][ \t]+|(?:\d+|#)\.[ \t]+)?)\.\.[ \t]+([A-Za-z][\w.:+-]*?)::(?:[ \t]+(.*?))?[ \t]*$/;
const TARGET = /^\s*\.\.[ \t]+_[^:]*:.*$|^\s*__[ \t]+\S.*$/;
const SUBSTITUTION = /^(\s*)\.\.[ \t]+\|([^|]+)\|[ \t]+([\w-]+)::(?:[ \t]+(.*?))?[ \t]*$/;
/** A substitution reference, `|name|` (or `|name|_`, a link): its name, not starting or ending with a space. */
const SUBSTITUTION_REFERENCE = /\|(\S(?:[^|\n]*\S)?)\|(?:__?)?/g;

/**
 * The page's `replace` substitutions: `.. |XXX| replace:: LIBRARY` gives XXX -> "LIBRARY".
 * A definition may go on over the lines indented under it, and may itself hold
 * references to other substitutions (CMake's `find_*` pages build their search paths
 * so): both are read as the page shows them.
 */
function substitutions(lines: readonly string[]): Map<string, string> {
  const found = new Map<string, string>();
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i]!.includes('replace::')) continue;
    const match = SUBSTITUTION.exec(lines[i]!.replace(/\r$/, ''));
    if (!match || match[3]!.toLowerCase() !== 'replace' || found.has(match[2]!)) continue;
    const parts = [match[4] ?? ''];
    for (let j = i + 1; j < lines.length && lines[j]!.trim() !== '' && indentOf(lines[j]!) > match[1]!.length; j++) parts.push(lines[j]!.trim());
    found.set(match[2]!, parts.join(' ').trim());
  }
  // References inside definitions, a few levels deep (a definition that refers to itself stays as written),
  // while a definition stays short: nested ones can grow exponentially (five levels of twenty references
  // each made 646 bytes of page 134 MB of index).
  for (let round = 0; round < 4; round++) {
    let changed = false;
    for (const [name, value] of found) {
      if (!value.includes('|')) continue;
      const next = value.replace(SUBSTITUTION_REFERENCE, (whole, inner: string) => (inner === name ? whole : found.get(inner) ?? whole));
      if (next !== value && next.length <= MAX_SUBSTITUTION) {
        found.set(name, next);
        changed = true;
      }
    }
    if (!changed) break;
  }
  return found;
}

/** The longest a substitution's text may grow to by the references inside it. */
const MAX_SUBSTITUTION = 1000;
const OPTION = /^\s+:[\w-]+:(?:\s.*)?$/;
/**
 * A comment: `..` alone or followed by text that is no directive, target or
 * substitution (those are tried first), nor a footnote or citation (`.. [1] text`).
 */
const COMMENT = /^(\s*)\.\.(?:[ \t]+(?!\[)\S.*|[ \t]*)$/;
/** A footnote or citation, shown with its label: `.. [1] text` reads "[1] text". */
const FOOTNOTE = /^(\s*)\.\.[ \t]+(\[[^\]\s]+\][ \t])/;
/** `:role:`text``, `:domain:role:`text`` (the role name has no spaces; the text no backquote). */
const ROLE = /(^|[^\w`:]):(?:[A-Za-z][\w.+-]*:)*[A-Za-z][\w.+-]*:`([^`\n]+)`(?!`)/g;

/**
 * A hyperlink reference, `text`_ or `text <url>`_ (anonymous: __), and an inline
 * target _`text`: shown as their text. Not a ``literal`` (two backquotes).
 */
const REFERENCE = /(^|[^`\w])`([^`\n]+)`(?:__?)(?![\w`])/g;
/** An inline literal, ``text`` on one line (opened and closed where inline markup can be): shown as code, written as Markdown writes it (`text`). */
const LITERAL = /(^|[\s([{<'"/:-])``(\S(?:[^`\n]*\S)?)``(?=$|[\s)\]}>'".,;:!?/\\-])/g;
const INLINE_TARGET = /(^|[^`\w])_`([^`\n]+)`(?![\w`])/g;

/** A role whose text goes on to the next line: `:ref:`title <target` at the end of a line. */
const OPEN_ROLE = /(^|[^\w`:]):(?:[A-Za-z][\w.+-]*:)*[A-Za-z][\w.+-]*:`([^`]*)$/;

/** What a role shows: the title of `title <target>` (the target may hold `<>` itself), without a leading `~` or `!`. */
export function roleText(inner: string): string {
  const titled = /^(.*?\S)\s+<(?:(?!\s<).)*>$/s.exec(inner);
  const text = titled ? titled[1]! : inner;
  return text.replace(/^[~!]/, '');
}

/**
 * A role opened at the end of `line` and closed by the first backquote of `next`:
 * the title is shown where it was written, over the two lines, and the markup goes.
 */
function splitRole(line: string, next: string): [string, string] | undefined {
  const open = OPEN_ROLE.exec(line);
  const close = next.indexOf('`');
  if (!open || close === -1 || next[close + 1] === '`') return undefined;
  const head = open[2]!;
  const tail = next.slice(0, close);
  const indent = /^\s*/.exec(next)![0];
  const title = roleText(`${head.trimEnd()} ${tail.trim()}`.trim());
  const onFirst = title.length <= head.trimEnd().replace(/^[~!]/, '').length ? title : head.trimEnd().replace(/^[~!]/, '');
  const onSecond = title.slice(onFirst.length).trim();
  return [line.slice(0, open.index) + open[1]! + onFirst, indent + onSecond + next.slice(close + 1)];
}

/**
 * A hyperlink reference whose text goes on to the next line: a backquote that opens
 * inline markup (after a space, an opening bracket or quote, or at the line's start;
 * before a non-space) with no backquote after it, as in `` `wheel package `` at the
 * end of a line. Not a role (OPEN_ROLE), an inline target (`` _` ``) or a literal.
 */
const OPEN_REFERENCE = /(^|[\s'"([{<\/-])`(\S[^`]*)$/;
/** What closes it at the start of the next line's markup: a backquote and `_` (anonymous: `__`), not before a word or a backquote. */
const CLOSE_REFERENCE = /^`__?(?![\w`])/;

/**
 * A hyperlink reference opened at the end of `line` and closed by the first backquote
 * of `next` (`` `resolver `` / `` testing survey`_ ``, or `` `wheel package `` /
 * `` <https://pypi.org/project/wheel/>`_ ``): its text is shown where it was written,
 * over the two lines (the URL goes), as splitRole does for a role.
 */
function splitReference(line: string, next: string): [string, string] | undefined {
  const open = OPEN_REFERENCE.exec(line);
  const close = next.indexOf('`');
  if (!open || close === -1 || OPEN_ROLE.test(line)) return undefined;
  const marker = CLOSE_REFERENCE.exec(next.slice(close));
  if (!marker) return undefined;
  const head = open[2]!.trimEnd();
  const tail = next.slice(0, close);
  const indent = /^\s*/.exec(next)![0];
  const text = roleText(`${head} ${tail.trim()}`.trim());
  const rest = next.slice(close + marker[0].length);
  let onFirst = text.length <= head.length ? text : head;
  // A second line left with nothing (the URL alone went) would cut its paragraph in two: it keeps the text's last word.
  if (onFirst === text && rest.trim() === '') onFirst = withoutLastWord(text);
  const onSecond = text.slice(onFirst.length).trim();
  return [line.slice(0, open.index) + open[1]! + onFirst, indent + onSecond + rest];
}

/** `text` (no trailing space) without its last word and the space before it. */
function withoutLastWord(text: string): string {
  let end = text.length;
  while (end > 0 && !/\s/.test(text[end - 1]!)) end--;
  return text.slice(0, end).trimEnd();
}

/** Whether a directive is one this file reads as words (an admonition, a version note) or as nothing (layout). */
export function knownDirective(name: string): boolean {
  const lower = name.toLowerCase();
  return lower in ADMONITIONS || lower in VERSIONS || SILENT.has(lower) || TITLED.has(lower) || TABS.has(lower);
}

/** Tabs (sphinx-inline-tabs, sphinx-design): the label is shown over what the tab holds. */
const TABS = new Set(['tab', 'tab-item']);

/** Directives of prose whose argument is their title, shown as it is (`.. admonition:: Mind the gap`). */
const TITLED = new Set(['admonition', 'topic', 'sidebar', 'rubric']);

/** What a directive's own line shows (see the top of this file). */
export function directiveLine(indent: string, name: string, argument: string | undefined): string {
  const arg = argument?.trim() ?? '';
  const lower = name.toLowerCase();
  const version = VERSIONS[lower];
  if (version) {
    const [number = '', ...rest] = arg.split(/\s+/);
    return `${indent}${version} ${number}${rest.length ? `: ${rest.join(' ')}` : '.'}`.trimEnd();
  }
  const admonition = ADMONITIONS[lower];
  if (admonition) return `${indent}${admonition}:${arg ? ` ${arg}` : ''}`;
  // A tab's label names what follows ("Unix/macOS:" over its command), as the rendered tab does.
  if (TABS.has(lower)) return arg ? `${indent}${arg}:` : '';
  if (SILENT.has(lower)) return '';
  // A directive of a Sphinx extension (`pip-command-usage:: uninstall "py -m pip"`) fills the page
  // from code at build time: its argument is input to that code, not text anyone reads there.
  if (lower.includes('-') && !TITLED.has(lower)) return '';
  return arg ? indent + arg : ''; // an object or a titled block: its name or title is content
}

function indentOf(line: string): number {
  return /^[ \t]*/.exec(line)![0].length;
}

/**
 * A toctree entry as the page's name: `Title <page>` -> "Title", `/module/FetchContent`
 * -> "FetchContent", `topics/index` -> "topics"; an option line (`:hidden:`) -> nothing.
 */
export function tocEntry(line: string): string {
  const indent = /^[ \t]*/.exec(line)![0];
  const entry = line.trim();
  if (!entry || /^:[\w-]+:/.test(entry)) return '';
  const titled = /^(.*\S)\s+<[^<>]+>$/.exec(entry);
  if (titled) return indent + titled[1]!;
  const parts = entry.replace(/\/+$/, '').split('/');
  const name = parts.pop() ?? entry;
  return indent + (name === 'index' && parts.length > 0 ? parts.pop()! : name);
}

/** The text with reStructuredText directives and roles replaced by what they show, line for line. */
export function rstToPlain(text: string): string {
  const lines = text.split('\n');
  const replacements = substitutions(lines);
  let inOptions = false;
  /** The indent of the comment or toctree whose indented lines are being read, and which it is. */
  let block: { indent: number; kind: 'comment' | 'toctree' } | undefined;
  /** Nothing shown yet: only blank lines, comments, targets and metadata. */
  let atTop = true;
  /** The indent a literal block's lines exceed (after `::` or a code directive): they are code, read as written. */
  let literalIndent = -1;
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!;
    const cr = raw.endsWith('\r') ? '\r' : '';
    let line = cr ? raw.slice(0, -1) : raw;
    if (inOptions && OPTION.test(line)) {
      lines[i] = cr;
      continue;
    }
    inOptions = false;
    if (literalIndent >= 0) {
      if (line.trim() === '' || indentOf(line) > literalIndent) continue;
      literalIndent = -1;
    }
    if (block && (line.trim() === '' || indentOf(line) > block.indent)) {
      lines[i] = (block.kind === 'comment' ? '' : tocEntry(line)) + cr;
      continue;
    }
    block = undefined;
    if (atTop && DOCINFO.test(line)) {
      lines[i] = cr;
      continue;
    }
    const substitution = SUBSTITUTION.exec(line);
    // A reference shows what its definition says (the definition's own line shows nothing).
    if (!substitution && replacements.size > 0 && line.includes('|')) {
      // A line grows by at most MAX_SUBSTITUTION per reference and ten times over: past that it stays as written.
      const replaced = line.replace(SUBSTITUTION_REFERENCE, (whole, name: string) => replacements.get(name) ?? whole);
      if (replaced.length <= 10 * line.length + MAX_SUBSTITUTION) line = replaced;
    }
    const directive = substitution ? undefined : DIRECTIVE.exec(line);
    const comment = substitution || directive || TARGET.test(line) ? undefined : COMMENT.exec(line);
    if (substitution) {
      const replace = substitution[3]!.toLowerCase() === 'replace';
      line = replace || !substitution[4] ? '' : substitution[1] + substitution[4];
      // A `replace` definition's text goes on over the lines indented under it: shown where it is referred to.
      if (replace) block = { indent: substitution[1]!.length, kind: 'comment' };
    }
    else if (directive) {
      line = directiveLine(directive[1]!, directive[2]!, directive[3]);
      inOptions = true;
      const name = directive[2]!.toLowerCase();
      // Its body is indented past the column of its "..", which follows a list marker if any.
      if (name === 'toctree') block = { indent: directive[1]!.length, kind: 'toctree' };
      else if (SILENT_BODY.has(name)) block = { indent: directive[1]!.length, kind: 'comment' };
      else if (CODE.has(name)) literalIndent = directive[1]!.length;
    } else if (FOOTNOTE.test(line)) line = line.replace(FOOTNOTE, '$1$2');
    else if (comment) {
      // ".." alone and then a blank line is an empty comment: what is indented after it is a quote.
      const empty = line.trim() === '..' && (lines[i + 1] ?? '').trim() === '';
      line = '';
      if (!empty) block = { indent: comment[1]!.length, kind: 'comment' };
    } else if (TARGET.test(line)) line = '';
    else if (/^\s*::\s*$/.test(line)) {
      literalIndent = indentOf(line);
      line = ''; // a literal block marker alone
    } else if (/\S::\s*$/.test(line)) {
      literalIndent = indentOf(line);
      line = line.replace(/::(\s*)$/, ':$1'); // "as follows::" reads "as follows:"
    }
    if (line.includes(':`')) line = line.replace(ROLE, (_match, before: string, inner: string) => before + roleText(inner));
    if (line.includes('`_')) line = line.replace(REFERENCE, (_match, before: string, inner: string) => before + roleText(inner));
    if (line.includes('_`')) line = line.replace(INLINE_TARGET, '$1$2');
    if (line.includes('``')) line = line.replace(LITERAL, '$1`$2`');
    if (line.includes('`') && i + 1 < lines.length) {
      const nextRaw = lines[i + 1]!;
      const nextCr = nextRaw.endsWith('\r') ? '\r' : '';
      const next = nextCr ? nextRaw.slice(0, -1) : nextRaw;
      const split = (line.includes(':`') ? splitRole(line, next) : undefined) ?? splitReference(line, next);
      if (split) {
        line = split[0];
        lines[i + 1] = split[1] + nextCr;
      }
    }
    if (line.trim() !== '') atTop = false;
    lines[i] = line + cr;
  }
  return lines.join('\n');
}
