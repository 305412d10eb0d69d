// Extracts the text a reader sees from an HTML file, keeping for every output
// line the source line it came from, so chunks of a web page cite lines of the
// .html file rather than lines of some derived text.
//
// Rules: script, style, noscript and template content, comments and the <head>
// are dropped (<title> is the document's title, not its text); whitespace collapses as a browser would; <pre>
// keeps its text verbatim line by line; block elements (p, div, h1-h6, lists,
// tables, ...) start a new paragraph (a blank line, so the chunker sees
// paragraph boundaries) and li, tr, dt, dd and br start a new line; table cells
// on one row are joined with " | ". h1-h6 are reported as heading marks.
//
// Page furniture is dropped too, so that chunks hold the page's content and not
// its navigation (BOILERPLATE): nav, aside, buttons ("copy"), elements marked
// role="navigation" (or banner, contentinfo, search), hidden or aria-hidden,
// tables of contents, sidebars and navigation bars (an id or class such as toc,
// sidebar or DocBook's nav, navheader and navfooter), the Next / Previous / Up
// line above and below each node of a GNU Texinfo manual (a page made by makeinfo or
// texi2any: its header or nav-panel, a div of class node in makeinfo 4), heading and
// definition permalinks ("#", "¶": an a of class mark, headerlink, copiable-anchor...), and
// the page's own header and footer (those outside article, main and section),
// and a table cell that is a menu: links each on a line of their own and little
// else (older sites lay their sidebar out in a table; libxslt's pages repeat theirs
// on every page). A cell is taken back out of the output when it closes as one.

import { Parser } from 'htmlparser2';
import { lineAt, lineStartsOf } from './chunk.js';
import { useTopFirstStacks } from './html-stack.js';
import type { TextUnit, UnitHeading } from './load.js';

const DROPPED = new Set(['script', 'style', 'noscript', 'template']);
/** Elements that may appear in <head>; anything else means the body has started. */
const HEAD_CONTENT = new Set(['title', 'meta', 'link', 'style', 'script', 'base', 'noscript', 'template']);
/** Blocks that never stand inside a heading: one opening there ends the heading (see onopentag). */
const ENDS_HEADING = new Set(['p', 'pre', 'ul', 'ol', 'dl', 'table', 'blockquote']);
const PARAGRAPH_BLOCKS = new Set([
  'address', 'article', 'aside', 'blockquote', 'body', 'center', 'dd', 'details', 'dialog', 'div', 'dl',
  'fieldset', 'figure', 'footer', 'form', 'header', 'hgroup', 'hr', 'html', 'legend', 'main', 'menu', 'nav',
  'ol', 'p', 'pre', 'section', 'table', 'tbody', 'tfoot', 'thead', 'title', 'ul', 'h1', 'h2', 'h3', 'h4',
  'h5', 'h6',
]);
const LINE_BLOCKS = new Set(['li', 'tr', 'dt', 'caption', 'figcaption', 'summary', 'option', 'br']);
const CELLS = new Set(['td', 'th']);
const HEADING_LEVEL: Record<string, number> = { h1: 1, h2: 2, h3: 3, h4: 4, h5: 5, h6: 6 };

/** Elements that are page furniture wherever they are. */
const FURNITURE = new Set(['nav', 'aside', 'button']);
/** ARIA roles of page furniture. */
const FURNITURE_ROLES = new Set(['navigation', 'banner', 'contentinfo', 'search']);
/** Ids and class names of tables of contents, sidebars, breadcrumbs and navigation bars (Node.js, Sphinx, MkDocs, Docusaurus, DocBook...). */
const FURNITURE_NAMES = new Set([
  'toc', 'gtoc', 'table-of-contents', 'toctree-wrapper', 'sidebar', 'sphinxsidebar', 'md-sidebar', 'breadcrumb', 'breadcrumbs',
  'skip-to-content', 'skip-link', 'skip-nav',
  'nav', 'navbar', 'navheader', 'navfooter', // DocBook XSL's Prev / Up / Home / Next bars (Valgrind, GNU manuals), Bootstrap's
]);
/**
 * Classes of the "Next: X, Previous: Y, Up: Z [Index]" line of a GNU Texinfo manual:
 * makeinfo 5 and 6 write it in a div (or with HEADER_IN_TABLE, a table) of class header,
 * texi2any 7 in a nav-panel. Only in a page made by makeinfo or texi2any (`isTexinfoGenerator`):
 * elsewhere a header is as likely the page's title (Doxygen's div.header holds it).
 */
const TEXINFO_NAVIGATION = new Set(['header', 'nav-panel']);
/**
 * Classes of a Texinfo manual's menus and tables of contents: makeinfo's menu table
 * (`table.menu`) and contents (`div.contents`, `div.shortcontents`, with their
 * headings), texi2any 7's mini table of contents under a node (`ul.section-toc`) and
 * its contents elements. Each lists the sections by title: every page of libffi's
 * manual held "What is libffi? Using libffi Memory Usage Missing Features Index".
 */
const TEXINFO_CONTENTS = new Set([
  'menu', 'section-toc', 'mini-toc', 'contents', 'shortcontents', 'contents-heading', 'shortcontents-heading',
  'contents_element', 'shortcontents_element', 'element-contents', 'element-shortcontents',
  'summary-letter', // the "Jump to: B C F P" letters above and below an index
]);
/**
 * Classes of a Texinfo index (`@printindex`): makeinfo's `table.index-cp` (concepts;
 * `-fn` functions, `-vr` variables, ...), texi2any 7's `cp-entries-printindex` and its
 * letter bars. Entries and the sections they point to, one to a row: quoted, they read
 * "P patches, contributing: | | Reporting bugs".
 */
const TEXINFO_INDEX = /^(?:index-[a-z]{2}|[a-z]{2}-(?:entries|letters-header|letters-footer)-printindex)$/;
/** Classes of heading permalinks ("#", "¶"), and of Texinfo's "¶" after each definition and heading. */
const PERMALINK_CLASSES = new Set(['mark', 'headerlink', 'anchor', 'anchorjs-link', 'hash-link', 'header-anchor', 'heading-anchor', 'permalink', 'copiable-anchor', 'copiable-link']);
/** Elements inside which a header or footer belongs to the content, not to the page. */
const CONTENT_CONTAINERS = new Set(['article', 'main', 'section']);

/** Whether a `<meta>` says the page was made by GNU Texinfo: `name="Generator"` and `content="makeinfo"` (makeinfo 4: "makeinfo 4.13"), or "texi2any" (7). */
function isTexinfoGenerator(attributes: Record<string, string>): boolean {
  return attributes.name?.trim().toLowerCase() === 'generator' && /^\s*(?:makeinfo|texi2any)\b/i.test(attributes.content ?? '');
}

/** Whether an element is page furniture, not content (see the module header); `texinfo`: the page was made by makeinfo or texi2any. */
function isFurniture(name: string, attributes: Record<string, string>, inContent: boolean, texinfo: boolean): boolean {
  if (FURNITURE.has(name)) return true;
  if ((name === 'header' || name === 'footer') && !inContent) return true;
  if (attributes.hidden !== undefined || attributes['aria-hidden'] === 'true') return true;
  if (attributes.role !== undefined && FURNITURE_ROLES.has(attributes.role.trim().toLowerCase())) return true;
  const names = namesOf(attributes);
  if (names.some((n) => FURNITURE_NAMES.has(n))) return true;
  if (texinfo) {
    const classes = names.slice(1);
    // makeinfo 4 wrote the line in a div of class node (texi2any 7's h1-h4 of class node are node headings).
    if (classes.some((n) => TEXINFO_NAVIGATION.has(n) || TEXINFO_CONTENTS.has(n) || TEXINFO_INDEX.test(n)) || (name === 'div' && classes.includes('node'))) return true;
  }
  return isPermalink(name, attributes);
}

/** Whether an element is a permalink ("#", "¶" after a heading or definition): it goes from its line without breaking it. */
function isPermalink(name: string, attributes: Record<string, string>): boolean {
  return name === 'a' && namesOf(attributes).some((n) => PERMALINK_CLASSES.has(n));
}

/** An element's id and then its classes, in lower case. */
function namesOf(attributes: Record<string, string>): string[] {
  return [attributes.id ?? '', ...(attributes.class ?? '').split(/\s+/)].map((n) => n.toLowerCase());
}

/** HTML's ASCII whitespace (a no-break space is not collapsed, as in browsers). */
function isHtmlWs(c: number): boolean {
  return c === 32 || c === 9 || c === 10 || c === 13 || c === 12;
}

/** A table cell being read: the output when it opened, and the characters written in it. */
interface CellFrame {
  lines: number;
  headings: number;
  /** The line being written then: its pieces (the array, kept only while the line is open) and its length. */
  parts: string[];
  partCount: number;
  lineChars: number;
  lineHasText: boolean;
  lineSource: number;
  pendingBreak: number;
  pendingSep: string;
  /** Characters of words written in the cell, those in links, and its links that open a line of their own. */
  text: number;
  linkText: number;
  links: number;
}

/**
 * A table cell with at least this many links each on a line of its own, and at least
 * this share of its text in links, is a menu (a cell of an API table listing
 * "_read(), _write(), _writev(), _final()" on one line is not).
 */
const MENU_LINKS = 4;
const MENU_LINK_SHARE = 0.8;

/** Visible text of an HTML document as one 'line' unit with a source line map and heading marks. */
export function htmlToUnit(html: string): { unit: TextUnit; title?: string } {
  const starts = lineStartsOf(html);
  const sourceLineOf = (offset: number): number => lineAt(starts, offset) + 1;

  const lines: string[] = [];
  const sourceLines: number[] = [];
  const headings: UnitHeading[] = [];
  let parts: string[] = [];
  /** Characters in `parts`. */
  let lineChars = 0;
  let lineHasText = false;
  let lineSource = 1;
  /** Break owed before the next text: 0 none, 1 new line, 2 new paragraph. */
  let pendingBreak = 0;
  /** Separator owed before the next word on the current line. */
  let pendingSep = '';
  let droppedDepth = 0;
  /** Open elements since page furniture began (0: not inside furniture). */
  let furnitureDepth = 0;
  /** For each open element, whether it is an article, main or section (or role="main"): a header or footer inside one is content. */
  const contentStack: boolean[] = [];
  /** How many of contentStack are true: counted, as a look through it at every tag costs depth² on a deeply nested page. */
  let contentOpen = 0;
  let inHead = false;
  /** The page was made by GNU Texinfo (its <meta name="Generator">): its navigation lines are furniture. */
  let texinfo = false;
  let titleDepth = 0;
  let titleWords: string[] | undefined;
  let title: string | undefined;
  let preDepth = 0;
  let preFresh = false;
  // A <pre> can hold several <code> blocks side by side (the Node.js docs put the
  // CommonJS and the ES module version of each example in one <pre> and show one):
  // each starts on a line of its own, or "});" and "import" would run together.
  // Set when a <code> closes in a <pre>, cleared by text after it: only a <code>
  // that follows another directly starts a new block.
  let preCodeClosed = false;
  let heading: { level: number; line: number; words: string[] } | undefined;
  let firstH1: string | undefined;
  /**
   * The open table cells, each with the output as it was when it opened and the text
   * written in it (in links, and all): a cell that is a list of links (a site's menu
   * laid out in a table, as older sites have it) is taken back out when it closes.
   */
  const cells: CellFrame[] = [];
  /** Open <a href> elements, and whether the one opened last has written nothing yet. */
  let inLink = 0;
  let linkFresh = false;

  const pushLine = (text: string, source: number): void => {
    lines.push(text);
    sourceLines.push(source);
  };
  const endLine = (): void => {
    pushLine(parts.join(''), lineSource);
    parts = [];
    lineChars = 0;
    lineHasText = false;
    pendingSep = '';
  };
  const requestBreak = (kind: 1 | 2): void => {
    if (kind > pendingBreak) pendingBreak = kind;
  };
  const applyBreak = (offset: number): void => {
    if (pendingBreak === 0) return;
    if (lineHasText) endLine();
    if (pendingBreak === 2 && lines.length > 0 && lines[lines.length - 1] !== '') pushLine('', sourceLineOf(offset));
    pendingBreak = 0;
  };
  const emit = (word: string, offset: number): void => {
    const cell = cells.at(-1);
    if (cell) {
      cell.text += word.length;
      if (inLink > 0) cell.linkText += word.length;
      if (linkFresh && (pendingBreak > 0 || !lineHasText)) cell.links++;
    }
    linkFresh = false;
    applyBreak(offset);
    if (!lineHasText) {
      lineHasText = true;
      lineSource = sourceLineOf(offset);
    } else if (pendingSep !== '') {
      parts.push(pendingSep);
      lineChars += pendingSep.length;
    }
    if (heading && heading.line < 0) heading.line = lines.length;
    pendingSep = '';
    parts.push(word);
    lineChars += word.length;
  };
  const finishHeading = (): void => {
    if (heading && heading.words.length > 0 && heading.line >= 0) {
      // Sphinx, MkDocs and others end each heading with a "¶" permalink: not part of its name.
      const text = heading.words.join(' ').replace(/\s*¶$/u, '');
      headings.push({ line: heading.line, level: heading.level, text });
      if (heading.level === 1 && firstH1 === undefined) firstH1 = text;
    }
    heading = undefined;
  };

  const parser: Parser = new Parser(
    {
      onopentag(name, attributes) {
        if (name === 'head') {
          inHead = true;
          return;
        }
        if (inHead && (name === 'body' || !HEAD_CONTENT.has(name))) inHead = false;
        if (name === 'meta' && isTexinfoGenerator(attributes)) texinfo = true;
        if (furnitureDepth > 0) {
          furnitureDepth++;
          return;
        }
        if (!inHead && isFurniture(name, attributes, contentOpen > 0, texinfo)) {
          furnitureDepth = 1;
          // Furniture still separates what comes before it from what comes after; a permalink
          // is a mark on its line (Texinfo's "¶" ends a definition's line, its text follows).
          if (!isPermalink(name, attributes)) requestBreak(2);
          return;
        }
        const content = CONTENT_CONTAINERS.has(name) || attributes.role === 'main';
        contentStack.push(content);
        if (content) contentOpen++;
        if (CELLS.has(name)) {
          cells.push({ lines: lines.length, headings: headings.length, parts, partCount: parts.length, lineChars, lineHasText, lineSource, pendingBreak, pendingSep, text: 0, linkText: 0, links: 0 });
        } else if (name === 'a' && attributes.href !== undefined) {
          inLink++;
          linkFresh = true;
        }
        if (DROPPED.has(name)) {
          droppedDepth++;
          return;
        }
        if (name === 'title') {
          titleDepth++;
          titleWords = [];
        }
        // A paragraph or a block inside a heading ends it: a heading holds a line of text, and
        // makeinfo writes a footnote's number as "<h5>(1)</h3>" (an end tag no parser matches),
        // which left the footnote's text in the heading.
        if (heading !== undefined && ENDS_HEADING.has(name)) finishHeading();
        if (PARAGRAPH_BLOCKS.has(name)) requestBreak(2);
        else if (LINE_BLOCKS.has(name)) requestBreak(1);
        else if (CELLS.has(name) && lineHasText && pendingBreak === 0) pendingSep = ' | ';
        const level = HEADING_LEVEL[name];
        if (level !== undefined) {
          finishHeading();
          heading = { level, line: -1, words: [] };
        }
        if (name === 'pre') {
          preDepth++;
          preFresh = true;
          preCodeClosed = false;
        } else if (name === 'code' && preDepth > 0 && preCodeClosed) {
          requestBreak(2);
        }
      },
      onclosetag(name) {
        if (name === 'head') {
          inHead = false;
          return;
        }
        if (furnitureDepth > 0) {
          furnitureDepth--;
          return;
        }
        if (contentStack.pop()) contentOpen--;
        if (name === 'a' && inLink > 0) inLink--;
        if (CELLS.has(name) && cells.length > 0) closeCell(cells.pop()!);
        if (DROPPED.has(name)) {
          if (droppedDepth > 0) droppedDepth--;
          return;
        }
        if (name === 'title' && titleDepth > 0) {
          titleDepth--;
          if (title === undefined && titleWords && titleWords.length > 0) title = titleWords.join(' ');
          titleWords = undefined;
        }
        if (name === 'pre' && preDepth > 0) preDepth--;
        if (name === 'code' && preDepth > 0) preCodeClosed = true;
        if (HEADING_LEVEL[name] !== undefined) finishHeading();
        if (PARAGRAPH_BLOCKS.has(name)) requestBreak(2);
        else if (LINE_BLOCKS.has(name) && name !== 'br') requestBreak(1);
      },
      ontext(data) {
        if (droppedDepth > 0 || furnitureDepth > 0 || (inHead && titleDepth === 0)) return;
        if (titleDepth > 0) {
          // The page's title, not its text: a browser shows it in the tab, and it is
          // indexed as the document's title ("2. NEWS" was a chunk of its own).
          for (const word of data.split(/[\t\n\f\r ]+/)) if (word) titleWords?.push(word);
          return;
        }
        const base = parser.startIndex;
        if (preDepth > 0) {
          if (data.trim() !== '') preCodeClosed = false;
          preText(data, base);
          return;
        }
        flowText(data, base);
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  // Its own stacks cost depth² on a deeply nested page (html-stack.ts).
  useTopFirstStacks(parser);

  /**
   * A closed cell that is a menu (at least MENU_LINKS links on lines of their own, and
   * its text nearly all theirs) is taken back out of the output; another one's counts
   * go to the cell around it.
   */
  const closeCell = (cell: CellFrame): void => {
    if (cell.links >= MENU_LINKS && cell.text > 0 && cell.linkText >= MENU_LINK_SHARE * cell.text) {
      // The line open then: still the same pieces, or since ended as the first line after the cell's start.
      if (lines.length === cell.lines && parts === cell.parts) parts.length = cell.partCount;
      else parts = cell.lineChars > 0 ? [(lines[cell.lines] ?? '').slice(0, cell.lineChars)] : [];
      lineChars = cell.lineChars;
      lines.length = cell.lines;
      sourceLines.length = cell.lines;
      headings.length = cell.headings;
      if (heading && heading.line >= cell.lines) heading = undefined;
      ({ lineHasText, lineSource, pendingBreak, pendingSep } = cell);
      return;
    }
    const outer = cells.at(-1);
    if (outer) {
      outer.text += cell.text;
      outer.linkText += cell.linkText;
      outer.links += cell.links;
    }
  };

  /** Collapsing text: words separated by single spaces. */
  const flowText = (data: string, base: number): void => {
    let i = 0;
    const n = data.length;
    while (i < n) {
      let j = i;
      while (j < n && isHtmlWs(data.charCodeAt(j))) j++;
      if (j > i && lineHasText && pendingSep === '') pendingSep = ' ';
      if (j >= n) break;
      let k = j;
      while (k < n && !isHtmlWs(data.charCodeAt(k))) k++;
      const word = data.slice(j, k);
      emit(word, base + j);
      heading?.words.push(word);
      titleWords?.push(word);
      i = k;
    }
  };

  /** Preformatted text: every newline ends an output line, spacing kept. */
  const preText = (data: string, base: number): void => {
    let from = 0;
    if (preFresh) {
      // A newline right after <pre> is not content.
      if (data.startsWith('\r\n')) from = 2;
      else if (data.startsWith('\n')) from = 1;
    }
    preFresh = false;
    while (from <= data.length) {
      let nl = data.indexOf('\n', from);
      const last = nl === -1;
      if (last) nl = data.length;
      let segment = data.slice(from, nl);
      if (segment.endsWith('\r')) segment = segment.slice(0, -1);
      if (segment !== '') {
        emit(segment, base + from);
        const words = segment.trim();
        if (words !== '') {
          heading?.words.push(words);
          titleWords?.push(words);
        }
      }
      if (last) break;
      applyBreak(base + nl);
      if (lineHasText) endLine();
      else pushLine('', sourceLineOf(base + nl));
      from = nl + 1;
    }
  };

  parser.write(html);
  parser.end();
  finishHeading();
  if (lineHasText) endLine();
  while (lines.length > 0 && lines[lines.length - 1].trim() === '') {
    lines.pop();
    sourceLines.pop();
  }

  const unit: TextUnit = { text: lines.join('\n'), locator: 'line', sourceLines };
  if (headings.length > 0) unit.headings = headings;
  return { unit, title: title ?? firstH1 };
}
