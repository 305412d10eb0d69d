// Turns one file's bytes into text units the chunker can split and cite. It
// decides the document kind from the extension, decodes UTF-8 (flagging bad
// bytes instead of failing), finds a title, and keeps enough position data that
// every chunk can point back at source lines (HTML) or pages (PDF).
// Pure: no file system, no database, no terminal output.

import type { Locator } from '../domain/index.js';
import { lineStartsOf, scanMarkdown, withLineFeeds } from './chunk.js';
import { documentExtension, kindOf, type DocumentKind } from './kinds.js';

export { kindOf, type DocumentKind };

export interface LoadedDocument {
  /** How the bytes were parsed. */
  kind: DocumentKind;
  /**
   * Document title when one is evident: Markdown front-matter `title:` (preferred)
   * or first H1; HTML <title> or first <h1>; text: the first line when it looks
   * like a title (short, no trailing period, followed by a blank line, an
   * underline or the end), or for AsciiDoc the section title it opens with, as shown;
   * PDF: metadata title. Otherwise undefined.
   */
  title?: string;
  /**
   * Text units with their locator. Markdown/text: one unit holding the whole
   * decoded text, locator 'line', lines numbered from 1 as in the source file.
   * HTML: the visible text, each output line mapped to its source line. PDF: one
   * unit per page, locator 'page'.
   */
  units: TextUnit[];
  /** True when the bytes were not valid UTF-8 and were decoded with U+FFFD replacement characters. */
  invalidUtf8: boolean;
  /**
   * True when the bytes were not UTF-8 and held no UTF-8 sequence at all (a Latin-1 or
   * Windows-1252 file: "Pokorn\xfd"), and were read as Windows-1252, as a browser reads a
   * page that declares no character set.
   */
  windows1252?: boolean;
  /**
   * The page only sends its reader elsewhere: an HTML `<meta http-equiv="refresh"
   * content="3; url=...">`, or the same in a reStructuredText or MyST `meta`
   * directive (`:http-equiv=refresh: 3; url=../getting-started/`), within seconds,
   * on a page of little text. Not a document.
   */
  redirect?: boolean;
}

/** A heading found in an HTML, reStructuredText or AsciiDoc unit, so the chunker can split there and build heading paths. */
export interface UnitHeading {
  /** 0-based index of the output line the heading starts on (an RST overline, if any). */
  line: number;
  /** 0-based index of its last line (an RST underline); `line` when absent. */
  end?: number;
  /** 1-6: h1-h6, or the section depth. */
  level: number;
  /** Heading text, whitespace collapsed. */
  text: string;
}

export interface TextUnit {
  /** The unit's text; lines separated by `\n` (CRLF also accepted by the chunker). */
  text: string;
  /** What chunk locators count: source lines, or PDF pages. */
  locator: Locator;
  /** Page number (1-based) for PDF units. */
  page?: number;
  /**
   * For HTML, and a reStructuredText page with files read in (an included fragment, a
   * CMake module's block): sourceLines[i]
   * is the 1-based source line of output line i (0-based index); absent means identity.
   */
  sourceLines?: number[];
  /** For HTML: h1-h6; for reStructuredText and AsciiDoc: section titles; in order. Absent for other kinds (Markdown headings are found in the text). */
  headings?: UnitHeading[];
}

const PDF_MAGIC = [0x25, 0x50, 0x44, 0x46, 0x2d]; // %PDF-

function isPdfBytes(bytes: Uint8Array): boolean {
  return PDF_MAGIC.every((b, i) => bytes[i] === b);
}

/**
 * Cheap binary sniff: a NUL byte in the first 8 KB. PDFs (bytes starting `%PDF-`) are
 * never reported as binary, nor is a NUL followed by a backspace: GNU Info's marker of
 * an index or an image (`\0\b[index\0\b]`), in text.
 */
export function looksBinary(bytes: Uint8Array): boolean {
  if (isPdfBytes(bytes)) return false;
  const end = Math.min(bytes.length, 8192);
  for (let i = 0; i < end; i++) if (bytes[i] === 0 && bytes[i + 1] !== 0x08) return true;
  return false;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });
const lenientUtf8 = new TextDecoder('utf-8');
const latin1 = new TextDecoder('latin1');

/**
 * Windows-1252's characters for the bytes 0x80-0x9F: 27 differ from Latin-1 (Node's
 * TextDecoder reads "windows-1252" as Latin-1, giving C1 controls there); the five it
 * leaves undefined stay the control characters they are in Latin-1.
 */
const WINDOWS_1252_HIGH = '\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178';

/** `bytes` as Windows-1252: Latin-1, with the bytes 0x80-0x9F as Windows-1252 has them (0x80 is "€", 0x97 "—"). */
function decodeWindows1252(bytes: Uint8Array): string {
  return latin1.decode(bytes).replace(/[\u0080-\u009f]/g, (c) => WINDOWS_1252_HIGH[c.charCodeAt(0) - 0x80]!);
}

interface Decoded {
  text: string;
  invalidUtf8: boolean;
  windows1252?: boolean;
}

/**
 * UTF-8 decode (BOM dropped). Bytes that are not UTF-8 and hold no UTF-8 sequence of
 * two or more bytes are a single-byte encoding: read as Windows-1252 (Latin-1's
 * superset), and reported. Otherwise invalid sequences become U+FFFD and are reported:
 * a UTF-8 file with a stray byte keeps its other characters.
 */
function decode(bytes: Uint8Array): Decoded {
  try {
    return { text: strictUtf8.decode(bytes), invalidUtf8: false };
  } catch {
    if (!holdsUtf8Sequence(bytes)) return { text: decodeWindows1252(bytes), invalidUtf8: false, windows1252: true };
    return { text: lenientUtf8.decode(bytes), invalidUtf8: true };
  }
}

/** Whether `bytes` hold a well-formed UTF-8 sequence of two to four bytes (a lead byte and its continuation bytes). */
export function holdsUtf8Sequence(bytes: Uint8Array): boolean {
  const isContinuation = (at: number) => at < bytes.length && (bytes[at]! & 0xc0) === 0x80;
  for (let i = 0; i < bytes.length; i++) {
    const lead = bytes[i]!;
    if (lead < 0xc2 || lead > 0xf4) continue;
    const length = lead < 0xe0 ? 2 : lead < 0xf0 ? 3 : 4;
    let ok = true;
    for (let k = 1; k < length && ok; k++) ok = isContinuation(i + k);
    if (!ok) continue;
    // The second byte's range that makes the sequence neither overlong, a surrogate nor past U+10FFFF.
    const second = bytes[i + 1]!;
    if ((lead === 0xe0 && second < 0xa0) || (lead === 0xed && second > 0x9f) || (lead === 0xf0 && second < 0x90) || (lead === 0xf4 && second > 0x8f)) continue;
    return true;
  }
  return false;
}

/** A file a document brings in, read by the caller: a CMake module page's .cmake file (cmake-module.ts), an included fragment (rst-include.ts). */
export interface RelatedFile {
  /** As the document names it. */
  target: string;
  bytes: Uint8Array;
}

/** Where the page's related files go: a module's block after its directive, each included fragment after its own. */
async function relatedInserts(page: string, related: readonly RelatedFile[]): Promise<{ line: number; indent: string; text: string }[]> {
  const bytesOf = new Map(related.map((file) => [file.target, file.bytes]));
  const inserts: { line: number; indent: string; text: string }[] = [];
  const { cmakeDocBlock, cmakeModuleLine, cmakeModuleTarget } = await import('./cmake-module.js');
  const { rstIncludes } = await import('./rst-include.js');
  const moduleTarget = cmakeModuleTarget(page);
  const moduleBytes = moduleTarget === undefined ? undefined : bytesOf.get(moduleTarget);
  const block = moduleBytes === undefined ? undefined : cmakeDocBlock(decode(moduleBytes).text);
  if (block !== undefined) inserts.push({ line: cmakeModuleLine(page), indent: '', text: block });
  for (const include of rstIncludes(page)) {
    const bytes = bytesOf.get(include.target);
    if (bytes !== undefined) inserts.push({ line: include.line, indent: include.indent, text: withLineFeeds(decode(bytes).text).replace(/\n$/, '') });
  }
  return inserts;
}

/**
 * Decodes and parses one file's bytes. The kind comes from the extension;
 * unknown extensions load as text. Throws only on a PDF that cannot be parsed
 * (the caller counts it as skipped).
 */
export async function loadDocument(path: string, bytes: Uint8Array, related?: readonly RelatedFile[]): Promise<LoadedDocument> {
  const kind = kindOf(path) ?? 'text';
  if (kind === 'pdf') {
    const { loadPdf } = await import('./pdf.js'); // pdf.js and htmlparser2 load only when such a file is met
    const pdf = await loadPdf(bytes);
    return { kind, title: pdf.title, units: pdf.units, invalidUtf8: false };
  }
  const { text, invalidUtf8, windows1252: singleByte } = kind === 'html' ? decodeHtml(bytes) : decode(bytes);
  const encoding = singleByte ? { windows1252: true } : {};
  if (kind === 'html') {
    const { htmlToUnit } = await import('./html.js');
    const { unit, title } = htmlToUnit(text);
    const redirect = isRedirect(text, kind, unit.text);
    return { kind, title, units: [unit], invalidUtf8, ...encoding, ...(redirect ? { redirect } : {}) };
  }
  const redirect = isRedirect(text, kind);
  let title = kind === 'markdown' ? markdownTitle(text) : textTitle(text);
  const unit: TextUnit = { text, locator: 'line' };
  if (kind === 'markdown' && text.includes('<!--')) {
    const { markdownWithoutComments } = await import('./markdown-comments.js');
    unit.text = markdownWithoutComments(text);
  }
  if (kind === 'markdown' && (text.includes('{') || text.includes(')='))) {
    // MyST (Sphinx's Markdown): directives, roles and targets read as they show, line for line.
    const { hasMyst, mystToMarkdown } = await import('./myst.js');
    if (hasMyst(unit.text)) unit.text = mystToMarkdown(unit.text);
  }
  const extension = documentExtension(path);
  if (kind === 'text' && (extension === 'adoc' || extension === 'asciidoc' || extension === 'txt')) {
    // AsciiDoc (git's manual pages are `.txt`): read as it shows, line for line, with its section titles.
    const { asciidocToPlain, looksLikeAsciidoc } = await import('./asciidoc.js');
    if (extension !== 'txt' || looksLikeAsciidoc(text)) {
      const page = asciidocToPlain(text);
      unit.text = page.text;
      if (page.headings.length > 0) unit.headings = page.headings;
      // A page that opens with a title is titled by it as shown (`= The *Big* Book` is "The Big Book").
      const first = page.headings[0];
      if (first && page.text.split('\n', first.line).every((line) => line.trim() === '')) title = first.text;
    }
  }
  if (kind === 'text' && extension === 'info') {
    // A GNU Info manual: its nodes as sections, cited by the file's own lines.
    const { infoToPlain } = await import('./info.js');
    const page = infoToPlain(text);
    unit.text = page.text;
    if (page.headings.length > 0) unit.headings = page.headings;
    title = page.title;
  }
  if (kind === 'text' && extension === 'rst') {
    const { rstHeadings } = await import('./text-headings.js');
    let page = withLineFeeds(text);
    if (related && related.length > 0) {
      // Files the page brings in read where it brings them in; their lines cite the directive's.
      const inserts = await relatedInserts(page, related);
      if (inserts.length > 0) {
        const { insertAfterLines } = await import('./rst-include.js');
        const joined = insertAfterLines(page, inserts);
        page = joined.text;
        unit.sourceLines = joined.sourceLines;
      }
    }
    // Directives and roles read as what they show, line for line (citations keep the file's lines).
    const { rstToPlain } = await import('./rst.js');
    unit.text = rstToPlain(page);
    const headings = rstHeadings(unit.text);
    if (headings.length > 0) unit.headings = headings;
    // A first line that is a comment or a directive is not the title as written: a
    // described page is titled by its description (".. cmake-manual-description: CTest
    // Command-Line Reference"), another by its first section title (as is a page whose
    // first line is no title at all), and a page without one that is a directive
    // bringing in a file by that file (".. cmake-module:: ../../Modules/X.cmake").
    if (title === undefined || title.startsWith('..')) {
      title = (title && rstDescription(title)) || headings[0]?.text.trim() || (title && directiveFile(title)) || undefined;
    }
  }
  return { kind, title, units: [unit], invalidUtf8, ...encoding, ...(redirect ? { redirect } : {}) };
}

/** The character set a page declares in its first bytes: `<meta charset="...">` or `content="text/html; charset=..."`. */
const DECLARED_CHARSET = /<meta\b[^>]*?\bcharset\s*=\s*["']?([\w.:-]+)/i;

/**
 * An HTML page's text: UTF-8 when its bytes are, else in the character set the page
 * declares (libxslt's pages say ISO-8859-1: "Stéphane" was read as "St\uFFFDphane"),
 * else as decode() reads any file: Windows-1252 when it holds no UTF-8 sequence (as a
 * browser reads a page that declares nothing), else UTF-8 with replacement characters.
 */
function decodeHtml(bytes: Uint8Array): Decoded {
  const utf8 = decode(bytes);
  if (!utf8.invalidUtf8 && !utf8.windows1252) return utf8;
  const label = DECLARED_CHARSET.exec(latin1.decode(bytes.subarray(0, 2048)))?.[1];
  if (!label || /^utf-?8$/i.test(label)) return utf8;
  let decoder: InstanceType<typeof TextDecoder>;
  try {
    decoder = new TextDecoder(label);
  } catch {
    return utf8; // a label TextDecoder does not know
  }
  // ISO-8859-1, Latin-1 and ASCII are read as Windows-1252 (as browsers do), which Node's decoder does not quite.
  return { text: decoder.encoding === 'windows-1252' ? decodeWindows1252(bytes) : decoder.decode(bytes), invalidUtf8: false };
}

/** A refresh to another address, as HTML writes it in a meta tag and Sphinx (RST, MyST) in a `meta` directive; the delay captured. */
const HTML_REFRESH = /<meta\b(?=[^>]*\bhttp-equiv\s*=\s*["']?refresh\b)(?=[^>]*\bcontent\s*=\s*["']?\s*(\d+)\s*;\s*url\s*=)[^>]*>/i;
const FIELD_REFRESH = /^[ \t]*:http-equiv=refresh:[ \t]*(\d+)[ \t]*;[ \t]*url[ \t]*=/im;
/** A redirect sends its reader on at once or within seconds ("redirected automatically in 3 seconds"). */
const REDIRECT_MAX_SECONDS = 10;
/** And says little itself: a page with more text than this is content that also refreshes (a status page). */
const REDIRECT_MAX_CHARS = 2000;

/**
 * Whether the page only redirects (see LoadedDocument.redirect): a refresh to an
 * address within seconds, looked for in its first 4,000 characters, on a page of
 * little text (`shown`: its visible text, when known apart from its source).
 */
function isRedirect(text: string, kind: DocumentKind, shown = text): boolean {
  const refresh = (kind === 'html' ? HTML_REFRESH : FIELD_REFRESH).exec(text.slice(0, 4000));
  return refresh !== null && Number(refresh[1]) <= REDIRECT_MAX_SECONDS && shown.trim().length <= REDIRECT_MAX_CHARS;
}

/** Front-matter `title:` (YAML) or `title =` (TOML) if present, else the first H1. */
function markdownTitle(rawText: string): string | undefined {
  const text = withLineFeeds(rawText);
  const starts = lineStartsOf(text);
  const outline = scanMarkdown(text, starts, true);
  for (let i = 1; i < outline.bodyStart - 1; i++) {
    const line = text.slice(starts[i], i + 1 < starts.length ? starts[i + 1] - 1 : text.length);
    const value = frontMatterTitle(line);
    if (value) return value;
  }
  const h1 = outline.headings.find((h) => h.level === 1 && h.text.trim() !== '');
  return h1?.text.trim();
}

function frontMatterTitle(line: string): string | undefined {
  if (!line.startsWith('title')) return undefined;
  const rest = line.slice(5).trimStart();
  if (rest[0] !== ':' && rest[0] !== '=') return undefined;
  let value = rest.slice(1).trim();
  if (value.length >= 2 && (value[0] === '"' || value[0] === "'") && value.endsWith(value[0])) value = value.slice(1, -1).trim();
  return value === '' ? undefined : value;
}

const TITLE_MAX = 100;

/** The text of a first-line RST `.. something-description: text` comment. */
function rstDescription(line: string): string | undefined {
  return /^\.\.\s+[\w-]*description:\s+(\S.*)$/i.exec(line)?.[1]?.trim() || undefined;
}

/** The name of the file a directive brings in: `.. cmake-module:: ../../Modules/X.cmake` -> `X` (a path, not a word: not `.. highlight:: cmake`). */
function directiveFile(line: string): string | undefined {
  const argument = /^\.\.\s+[\w:-]+::\s+(\S*[/.]\S*)\s*$/.exec(line)?.[1];
  const name = argument?.split('/').pop()?.replace(/\.[\w]+$/, '');
  return name && /^[\w.-]+$/.test(name) ? name : undefined;
}

/**
 * The first non-blank line of a plain-text file when it reads like a title: at
 * most 100 characters, containing a letter or digit, not ending in sentence or
 * clause punctuation, and followed by a blank line, an underline (reStructuredText)
 * or the end of the file. reStructuredText overlines and the AsciiDoc `= ` marker
 * are stripped.
 */
function textTitle(text: string): string | undefined {
  const lines: string[] = [];
  let from = 0;
  // Only the first few lines matter; avoid splitting the whole file.
  while (lines.length < 8 && from <= text.length) {
    let nl = text.indexOf('\n', from);
    if (nl === -1) nl = text.length;
    lines.push(text.slice(from, nl).replace(/\r$/, ''));
    from = nl + 1;
  }
  let i = 0;
  while (i < lines.length && (lines[i].trim() === '' || isAdornment(lines[i]))) i++;
  if (i >= lines.length) return undefined;
  let candidate = lines[i].trim();
  if (candidate.startsWith('= ')) candidate = candidate.slice(2).trim();
  const next = lines[i + 1];
  const endsWell = next === undefined || next.trim() === '' || isAdornment(next);
  if (!endsWell) return undefined;
  if (candidate.length === 0 || candidate.length > TITLE_MAX) return undefined;
  if (!/[\p{L}\p{N}]/u.test(candidate)) return undefined;
  if (/[.,;:]$/.test(candidate)) return undefined;
  return candidate;
}

/** A reStructuredText section adornment such as `=====` or `-----`. */
function isAdornment(line: string): boolean {
  const t = line.trim();
  if (t.length < 3) return false;
  const c = t[0];
  if (!'=-~^"\'`#*+_:.<>'.includes(c)) return false;
  for (const ch of t) if (ch !== c) return false;
  return true;
}
