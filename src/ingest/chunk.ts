// Splits loaded documents into retrieval-sized chunks that remember where they
// came from. Citations depend on the line numbers being exact, and ingest runs
// this over every file, so the splitter is a few linear passes over offsets in
// the original text: no regexes that can backtrack, no per-character string
// building, and every chunk's text is a slice of its unit (heading text is cleaned
// with regexes only up to a bounded length: plainHeading).
//
// Order of preference for cut points: Markdown headings (sections), blank-line
// paragraphs (fenced code blocks stay whole), sentences, lines, and finally
// words or raw characters for pathological input such as one huge line.

import type { ChunkSpan } from '../domain/index.js';
import type { LoadedDocument } from './load.js';

export interface ChunkerSettings {
  /** Target maximum chunk size in characters (UTF-16 code units). Values below 2 are treated as 2, so a surrogate pair is never split. */
  size: number;
  /** Characters of overlap carried between consecutive chunks split from one long section. Clamped to 0..size-1. */
  overlap: number;
}

/** `text` with CRLF line ends read as LF, as the chunker and the heading finders see it. */
export function withLineFeeds(text: string): string {
  return text.indexOf('\r') === -1 ? text : text.replace(/\r\n/g, '\n');
}

/** Provisional defaults; to be tuned on the retrieval benchmark. */
export const DEFAULT_CHUNKER: ChunkerSettings = { size: 3000, overlap: 150 };

/** A chunk's span: source lines, or one page for PDF (startLine equal to endLine). */
export interface Chunk extends ChunkSpan {
  /**
   * Chunk text exactly as it appears in the source unit: a contiguous slice of the
   * unit's lines (CRLF read as a line break, so lines carry no `\r`), starting and
   * ending on non-blank text. Only a split inside one line (sentence, word or
   * character cut) starts or ends mid-line.
   */
  text: string;
  /** Heading path, outermost first, e.g. ['Authentication', 'API keys', 'Rotation']. Empty before the first heading and for plain text and PDF. */
  headingPath: string[];
}

/** @internal A Markdown heading found by {@link scanMarkdown}. Lines are 0-based. */
export interface MarkdownHeading {
  /** First line of the heading (for setext headings, the first text line). */
  line: number;
  /** Last line of the heading (for setext headings, the underline). */
  end: number;
  /** 1-6. */
  level: number;
  /** Heading text without markers; may be empty. */
  text: string;
}

/** @internal The block structure of a Markdown text that chunking and title detection need. */
export interface MarkdownOutline {
  /** Index of the first line after YAML (`---`) or TOML (`+++`) front matter; 0 when there is none. */
  bodyStart: number;
  /** Headings in document order, outside code fences. */
  headings: MarkdownHeading[];
  /** Fenced code blocks as [firstLine, lastLine], 0-based inclusive; an unclosed fence runs to the last line. */
  fences: Array<[number, number]>;
}

// Character codes used by the scanners.
const NL = 10;
const SPACE = 32;
const TAB = 9;
const HASH = 35;
const BACKTICK = 96;
const TILDE = 126;
const EQUALS = 61;
const DASH = 45;
const STAR = 42;
const UNDERSCORE = 95;
const PLUS = 43;
const GT = 62;
const DOT = 46;

/** Exactly the characters String.prototype.trim removes, so "blank" means what `line.trim() === ''` means. */
function isWs(c: number): boolean {
  if (c === SPACE || (c >= 9 && c <= 13)) return true;
  if (c < 0xa0) return false;
  return (
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

/** @internal Offsets at which each line starts; lines are separated by `\n`. */
export function lineStartsOf(text: string): Int32Array {
  let count = 1;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) count++;
  const starts = new Int32Array(count);
  let n = 1;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) starts[n++] = i + 1;
  return starts;
}

/** End offset (exclusive, before the `\n`) of line `i`. */
function lineEnd(text: string, starts: Int32Array, i: number): number {
  return i + 1 < starts.length ? starts[i + 1] - 1 : text.length;
}

/** 0-based index of the line containing `offset`. @internal shared with html.ts */
export function lineAt(starts: Int32Array, offset: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (starts[mid] <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

function isBlankRange(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (!isWs(text.charCodeAt(i))) return false;
  return true;
}

function skipWs(text: string, from: number, to: number): number {
  while (from < to && isWs(text.charCodeAt(from))) from++;
  return from;
}

function skipWsBack(text: string, from: number, to: number): number {
  while (to > from && isWs(text.charCodeAt(to - 1))) to--;
  return to;
}

function containsChar(text: string, c: number, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (text.charCodeAt(i) === c) return true;
  return false;
}

/** Number of times `c` repeats from `at`. */
function runLength(text: string, at: number, end: number, c: number): number {
  let i = at;
  while (i < end && text.charCodeAt(i) === c) i++;
  return i - at;
}

/** A line made only of `c` repeated (spaces allowed between when `spaced`), at least `min` times, with nothing else but whitespace. */
function isRuleLine(text: string, from: number, to: number, c: number, min: number, spaced: boolean): boolean {
  let count = 0;
  let seenGap = false;
  for (let i = from; i < to; i++) {
    const ch = text.charCodeAt(i);
    if (ch === c) {
      if (seenGap && !spaced) return false;
      count++;
    } else if (ch === SPACE || ch === TAB || ch === 13) {
      seenGap = true;
    } else return false;
  }
  return count >= min;
}

function isFrontMatterFence(text: string, from: number, to: number, c: number): boolean {
  // BOM tolerated at the very start of a unit.
  if (from === 0 && text.charCodeAt(0) === 0xfeff) from = 1;
  return runLength(text, from, to, c) === 3 && isBlankRange(text, from + 3, to);
}

/** A list item or block quote marker: such a paragraph cannot become a setext heading. */
function startsContainer(text: string, p: number, end: number): boolean {
  const c = text.charCodeAt(p);
  const next = text.charCodeAt(p + 1);
  if (c === GT) return true;
  if ((c === DASH || c === STAR || c === PLUS) && (p + 1 >= end || next === SPACE || next === TAB)) return true;
  let i = p;
  while (i < end && i - p < 9 && text.charCodeAt(i) >= 48 && text.charCodeAt(i) <= 57) i++;
  if (i > p && i < end) {
    const d = text.charCodeAt(i);
    if (d === DOT || d === 41 /* ) */) return true;
  }
  return false;
}

/** ATX heading content between the marker and the optional closing `#` run. */
function atxText(text: string, from: number, to: number): string {
  const s = skipWs(text, from, to);
  let e = skipWsBack(text, s, to);
  let h = e;
  while (h > s && text.charCodeAt(h - 1) === HASH) h--;
  if (h === s) e = s;
  else if (h < e && (text.charCodeAt(h - 1) === SPACE || text.charCodeAt(h - 1) === TAB)) e = skipWsBack(text, s, h);
  return text.slice(s, e);
}

/** Longest heading text plainHeading() rewrites. */
const MAX_PLAIN_HEADING = 500;

/**
 * A heading's text without its inline Markdown, as it is shown, cited and indexed:
 * badges (an image inside a link, as README titles carry them) and inline HTML tags
 * go, a link keeps its text, an image alone its alt text, code spans and emphasis
 * lose their markers. A heading with nothing else left is kept as written.
 */
export function plainHeading(text: string): string {
  // The patterns below can take quadratic time on a long line: a heading that long
  // is not a heading anyone reads, so it stays as written.
  if (text.length > MAX_PLAIN_HEADING) return text;
  const plain = text
    .replace(/\[!\[[^\]]*\](?:\([^)]*\)|\[[^\]]*\])\](?:\([^)]*\)|\[[^\]]*\])/g, '')
    .replace(/!\[([^\]]*)\](?:\([^)]*\)|\[[^\]]*\])/g, '$1')
    .replace(/\[([^\]]+)\](?:\([^)]*\)|\[[^\]]*\])/g, '$1')
    .replace(/<\/?[A-Za-z][^>]*>/g, '')
    .replace(/(`+)(.+?)\1/g, '$2')
    .replace(/(\*\*|__)(?=\S)(.+?)(?<=\S)\1/g, '$2')
    .replace(/(^|[^\w*])\*(?=\S)(.+?)(?<=\S)\*(?![\w*])/g, '$1$2')
    .replace(/\s+/g, ' ')
    .trim();
  return plain || text;
}

/** Receives Markdown structure in document order from {@link walkMarkdown}. */
interface MarkdownVisitor {
  /** Called once, before anything else, with the first line after front matter. */
  body(bodyStart: number): void;
  /** A heading; return true to stop the walk. */
  heading(heading: MarkdownHeading): boolean | void;
  /** A fenced code block, reported when it closes (or at the end, if unclosed). */
  fence(firstLine: number, lastLine: number): void;
}

/**
 * Walks front matter, headings (ATX and setext) and fenced code blocks without
 * collecting them. Fences are recognised at any indentation (documents often
 * indent them inside list items); a fence closes with the same character
 * repeated at least as often. Headings are never inside fences, so every fence
 * before a heading has been reported by the time the heading is.
 */
function walkMarkdown(text: string, starts: Int32Array, visitor: MarkdownVisitor): void {
  const lineCount = starts.length;
  let bodyStart = 0;

  const firstLineEnd = lineEnd(text, starts, 0);
  for (const c of [DASH, PLUS]) {
    if (isFrontMatterFence(text, 0, firstLineEnd, c)) {
      for (let i = 1; i < lineCount; i++) {
        const s = starts[i];
        const e = lineEnd(text, starts, i);
        if (isFrontMatterFence(text, s, e, c) || (c === DASH && isFrontMatterFence(text, s, e, DOT))) {
          bodyStart = i + 1;
          break;
        }
      }
    }
  }

  visitor.body(bodyStart);

  let fenceChar = 0;
  let fenceLen = 0;
  let fenceStart = -1;
  // First line of the paragraph being read, or -1; -2 marks a paragraph that cannot be a setext heading.
  let paraStart = -1;

  for (let i = bodyStart; i < lineCount; i++) {
    const ls = starts[i];
    const le = lineEnd(text, starts, i);
    let p = ls;
    while (p < le && (text.charCodeAt(p) === SPACE || text.charCodeAt(p) === TAB)) p++;

    if (fenceStart >= 0) {
      if (text.charCodeAt(p) === fenceChar) {
        const run = runLength(text, p, le, fenceChar);
        if (run >= fenceLen && isBlankRange(text, p + run, le)) {
          visitor.fence(fenceStart, i);
          fenceStart = -1;
        }
      }
      continue;
    }

    if (p === le || isBlankRange(text, p, le)) {
      paraStart = -1;
      continue;
    }
    const c = text.charCodeAt(p);
    const indent = p - ls;

    if (c === BACKTICK || c === TILDE) {
      const run = runLength(text, p, le, c);
      if (run >= 3 && (c === TILDE || !containsChar(text, BACKTICK, p + run, le))) {
        fenceChar = c;
        fenceLen = run;
        fenceStart = i;
        paraStart = -1;
        continue;
      }
    }

    if (indent <= 3) {
      if (c === HASH) {
        const level = runLength(text, p, le, HASH);
        const after = p + level;
        if (level <= 6 && (after === le || text.charCodeAt(after) === SPACE || text.charCodeAt(after) === TAB)) {
          paraStart = -1;
          if (visitor.heading({ line: i, end: i, level, text: plainHeading(atxText(text, after, le)) }) === true) return;
          continue;
        }
      }
      if ((c === EQUALS || c === DASH) && paraStart >= 0 && isRuleLine(text, p, le, c, 1, false)) {
        const parts: string[] = [];
        for (let j = paraStart; j < i; j++) {
          const s = skipWs(text, starts[j], lineEnd(text, starts, j));
          parts.push(text.slice(s, skipWsBack(text, s, lineEnd(text, starts, j))));
        }
        const heading = { line: paraStart, end: i, level: c === EQUALS ? 1 : 2, text: plainHeading(parts.join(' ')) };
        paraStart = -1;
        if (visitor.heading(heading) === true) return;
        continue;
      }
      if ((c === DASH || c === STAR || c === UNDERSCORE) && isRuleLine(text, p, le, c, 3, true)) {
        paraStart = -1;
        continue;
      }
    }

    if (paraStart === -1) paraStart = indent <= 3 && !startsContainer(text, p, le) ? i : -2;
  }
  if (fenceStart >= 0) visitor.fence(fenceStart, lineCount - 1);
}

/**
 * @internal Front matter, headings and fenced code blocks of a Markdown text
 * (see {@link walkMarkdown}). With `stopAtH1`, stops after the first level-1 heading.
 */
export function scanMarkdown(text: string, starts: Int32Array, stopAtH1 = false): MarkdownOutline {
  const outline: MarkdownOutline = { bodyStart: 0, headings: [], fences: [] };
  walkMarkdown(text, starts, {
    body: (bodyStart) => {
      outline.bodyStart = bodyStart;
    },
    heading: (heading) => {
      outline.headings.push(heading);
      return stopAtH1 && heading.level === 1;
    },
    fence: (first, last) => {
      outline.fences.push([first, last]);
    },
  });
  return outline;
}

// ---------------------------------------------------------------------------
// Splitting

/**
 * Greedy packer over a stream of pieces (ranges that are never cut: whole
 * paragraphs or fences, sentences, lines, word runs). Consecutive chunks of one
 * section overlap by up to `overlap` characters. Pieces are kept in flat number
 * arrays and those before the current chunk are dropped every few thousand, so
 * a section of millions of lines costs no per-line objects.
 */
class Packer {
  private pieceStart: number[] = [];
  private pieceEnd: number[] = [];
  /** 1 for a whole fenced code block: overlap must not start inside it. */
  private pieceAtomic: number[] = [];
  /** Current chunk [chunkStart, chunkEnd), or chunkStart -1 when empty. */
  private chunkStart = -1;
  private chunkEnd = -1;
  /** Index of the piece holding chunkStart. */
  private firstPiece = 0;
  /** Offset chosen by the last successful overlapStart. */
  private carriedOffset = -1;

  constructor(
    private readonly text: string,
    private readonly size: number,
    private readonly overlap: number,
    private readonly emit: (start: number, end: number) => void,
  ) {}

  push(start: number, end: number, atomic: boolean): void {
    if (this.chunkStart < 0) {
      this.reset();
      this.chunkStart = start;
      this.chunkEnd = end;
      this.append(start, end, atomic);
      return;
    }
    const k = this.append(start, end, atomic);
    if (end - this.chunkStart <= this.size) {
      this.chunkEnd = end;
      return;
    }
    this.emit(this.chunkStart, this.chunkEnd);
    const lower = Math.max(this.chunkEnd - this.overlap, end - this.size, this.chunkStart + 1);
    const carried = this.overlapStart(lower, this.chunkEnd, k);
    if (carried >= 0) {
      this.chunkStart = this.carriedOffset;
      this.firstPiece = carried;
    } else {
      this.chunkStart = start;
      this.firstPiece = k;
    }
    this.chunkEnd = end;
    if (this.firstPiece >= 4096) this.compact();
  }

  /** Emits the last chunk and forgets all pieces. */
  finish(): void {
    if (this.chunkStart >= 0) this.emit(this.chunkStart, this.chunkEnd);
    this.chunkStart = -1;
    this.reset();
  }

  private append(start: number, end: number, atomic: boolean): number {
    this.pieceStart.push(start);
    this.pieceEnd.push(end);
    this.pieceAtomic.push(atomic ? 1 : 0);
    return this.pieceStart.length - 1;
  }

  private reset(): void {
    this.pieceStart.length = 0;
    this.pieceEnd.length = 0;
    this.pieceAtomic.length = 0;
    this.firstPiece = 0;
  }

  private compact(): void {
    const drop = this.firstPiece;
    this.pieceStart.splice(0, drop);
    this.pieceEnd.splice(0, drop);
    this.pieceAtomic.splice(0, drop);
    this.firstPiece = 0;
  }

  /**
   * Where the next chunk should start so it repeats the tail of the previous one
   * (which ends at prevEnd): the earliest piece or sentence start at or after
   * lower (a line that does not open with a lowercase letter counts as one), never
   * inside a whole code block. A line that opens with one after a line that ends no
   * sentence goes on with that sentence (hard-wrapped prose: "came with it does not
   * ..."): when the tail holds only such lines, there is no overlap rather than a
   * chunk opening mid-sentence. Only in one line too long for a chunk (the previous
   * chunk ends inside it, not at a sentence's end) is the overlap cut at a word.
   * Looks only at pieces of the previous chunk (firstPiece..before). Returns the
   * piece index (offset in carriedOffset), or -1 for no overlap.
   */
  private overlapStart(lower: number, prevEnd: number, before: number): number {
    if (lower >= prevEnd) return -1;
    const { text } = this;
    let midSentenceLine = false;
    let wordPiece = -1;
    let wordOffset = -1;
    for (let k = this.firstPiece; k < before; k++) {
      const start = this.pieceStart[k];
      const end = this.pieceEnd[k];
      if (end <= lower) continue;
      if (this.pieceAtomic[k] === 1) {
        if (start >= lower) return this.carry(start, k);
        continue;
      }
      for (let q = Math.max(lower, start); q < end; q++) {
        const c = text.charCodeAt(q);
        if (isWs(c)) continue;
        if (q === start) return this.carry(q, k);
        const prev = text.charCodeAt(q - 1);
        if (!isWs(prev)) continue;
        if (isSentenceEndBefore(text, q - 1, start)) return this.carry(q, k);
        if (prev === NL || opensLine(text, q)) {
          if (!LOWERCASE.test(text[q]!)) return this.carry(q, k);
          midSentenceLine = true;
        } else if (wordPiece < 0) {
          wordPiece = k;
          wordOffset = q;
        }
      }
    }
    // A word start is a place to carry from only when the previous chunk was cut inside its text (one line too
    // long for a chunk): after a whole sentence, it would open the chunk with the end of that sentence.
    if (wordPiece < 0 || midSentenceLine || isSentenceEndBefore(text, prevEnd - 1, lower)) return -1;
    return this.carry(wordOffset, wordPiece);
  }

  private carry(offset: number, piece: number): number {
    this.carriedOffset = offset;
    return piece;
  }
}

/** Emitted chunk range with its heading path. */
type RangeSink = (start: number, end: number, headingPath: string[]) => void;

/**
 * Chunks one unit: walks sections (text between headings) in order, emits a
 * section that fits as one range (merging small neighbours under one parent),
 * and feeds a section that does not fit to the packer piece by piece.
 */
class UnitChunker {
  /** Offset of each line's first character. */
  readonly starts: Int32Array;
  /** For each line, the last line of the fence that opens there, else -1 (allocated at the first fence). */
  private fenceEndAt: Int32Array | undefined;
  private readonly packer: Packer;

  // Heading state of the section being read.
  private readonly stack: Array<{ level: number; text: string }> = [];
  private path: string[] = [];
  private headingStart = -1;
  private headingEnd = -1;
  private cursor = 0;

  // Pending merge group of small sections: [groupStart, groupEnd) labelled groupPath.
  private groupStart = -1;
  private groupEnd = -1;
  private groupPath: string[] = [];
  private groupMaxDepth = 0;
  /** The group's first line, and whether it is only headings, each under the one before (`# A`, `## B`). */
  private groupFirstLine = -1;
  private groupHeadings = false;
  /** The heading path of the group's last section. */
  private groupLastPath: string[] = [];

  /** The last range given out, held back so that headings with nothing under them after it can join it. */
  private held: { start: number; end: number; path: string[] } | undefined;

  constructor(
    private readonly text: string,
    private readonly size: number,
    overlap: number,
    private readonly sink: RangeSink,
  ) {
    this.starts = lineStartsOf(text);
    this.packer = new Packer(text, size, overlap, (start, end) => this.emit(start, end, this.path));
  }

  private emit(start: number, end: number, path: string[]): void {
    this.release();
    this.held = { start, end, path };
  }

  private release(): void {
    if (this.held) this.sink(this.held.start, this.held.end, this.held.path);
    this.held = undefined;
  }

  markdown(): void {
    walkMarkdown(this.text, this.starts, {
      body: (bodyStart) => {
        this.cursor = bodyStart;
      },
      heading: (heading) => {
        this.heading(heading.line, heading.end, heading.level, heading.text);
      },
      fence: (first, last) => {
        this.fenceEndAt ??= new Int32Array(this.starts.length).fill(-1);
        this.fenceEndAt[first] = last;
      },
    });
    this.finish();
  }

  /** HTML: heading marks from the loader (0-based output lines); malformed marks are ignored. */
  marked(headings: ReadonlyArray<{ line: number; end?: number; level: number; text: string }>): void {
    let last = -1;
    for (const h of headings) {
      if (!Number.isInteger(h.line) || h.line <= last || h.line >= this.starts.length) continue;
      const level = Math.min(6, Math.max(1, Math.trunc(Number(h.level)) || 1));
      const end = Number.isInteger(h.end) && h.end! >= h.line ? Math.min(h.end!, this.starts.length - 1) : h.line;
      this.heading(h.line, end, level, String(h.text ?? ''));
      last = end;
    }
    this.finish();
  }

  plain(): void {
    this.finish();
  }

  private heading(line: number, end: number, level: number, text: string): void {
    if (line < this.cursor) return;
    if (line > this.cursor) this.section(this.cursor, line - 1);
    const { stack } = this;
    while (stack.length > 0 && stack[stack.length - 1].level >= level) stack.pop();
    stack.push({ level, text });
    const path: string[] = [];
    for (const h of stack) if (h.text !== '') path.push(h.text);
    this.path = path;
    this.cursor = line;
    this.headingStart = line;
    this.headingEnd = Math.min(Math.max(end, line), this.starts.length - 1);
  }

  private finish(): void {
    if (this.cursor <= this.starts.length - 1) this.section(this.cursor, this.starts.length - 1);
    this.flushGroup();
    this.release();
  }

  /**
   * Emits the pending group. Headings with nothing under them and no section of
   * theirs after (a page's last heading over a directive that shows nothing,
   * "General Options") end the chunk before them when it has room, instead of
   * being a chunk of their own: found by their words alone, such a chunk ranks for
   * questions it says nothing about.
   */
  private flushGroup(): void {
    if (this.groupStart >= 0) {
      const held = this.held;
      if (this.groupHeadings && held && held.end <= this.groupStart && this.groupEnd - held.start <= this.size) held.end = this.groupEnd;
      else this.emit(this.groupStart, this.groupEnd, this.groupPath);
    }
    this.groupStart = -1;
  }

  /** Lines first..last (0-based, inclusive) labelled with the current heading path. */
  private section(first: number, last: number): void {
    const { text, starts } = this;
    while (first <= last && isBlankRange(text, starts[first], lineEnd(text, starts, first))) first++;
    if (first > last) return;
    while (last > first && isBlankRange(text, starts[last], lineEnd(text, starts, last))) last--;
    const start = starts[first];
    const end = lineEnd(text, starts, last);
    const path = this.path;
    const bodyless = first >= this.headingStart && last <= this.headingEnd;
    const fits = end - start <= this.size;
    let from = first;
    if (this.groupStart >= 0) {
      const fitsGroup = fits && end - this.groupStart <= this.size;
      if (this.groupHeadings && path.length > this.groupLastPath.length && commonPrefix(this.groupLastPath, path).length === this.groupLastPath.length) {
        // Headings with nothing under them but this section ("8.2. Using DRD" over
        // "8.2.1. Options"): they open its chunk, labelled with its path, rather
        // than make a chunk of their own.
        if (fitsGroup) {
          this.groupEnd = end;
          this.groupPath = path;
          this.groupMaxDepth = path.length;
          this.groupHeadings = bodyless;
          this.groupLastPath = path;
          return;
        }
        from = this.groupFirstLine;
        this.groupStart = -1;
      } else {
        const common = commonPrefix(this.groupPath, path);
        const maxDepth = Math.max(this.groupMaxDepth, path.length);
        // Merge while it fits and every merged section is the shared path itself or a direct child of it.
        if (fitsGroup && common.length >= maxDepth - 1) {
          this.groupEnd = end;
          this.groupPath = common;
          this.groupMaxDepth = maxDepth;
          this.groupHeadings = false;
          this.groupLastPath = path;
          return;
        }
        this.flushGroup();
      }
    }

    if (from === first && fits) {
      this.groupStart = start;
      this.groupEnd = end;
      this.groupPath = path;
      this.groupMaxDepth = path.length;
      this.groupFirstLine = first;
      this.groupHeadings = bodyless;
      this.groupLastPath = path;
      return;
    }

    this.splitSection(from, last);
    this.packer.finish();
  }

  /** Feeds an oversized section to the packer as blocks, or finer pieces where a block exceeds size. */
  private splitSection(first: number, lastLine: number): void {
    const { text, starts, size, packer } = this;
    let i = first;
    while (i <= lastLine) {
      const ls = starts[i];
      if (isBlankRange(text, ls, lineEnd(text, starts, i))) {
        i++;
        continue;
      }
      let last: number;
      let kind: 'heading' | 'fence' | 'paragraph';
      const fenceEnd = this.fenceEndAt ? this.fenceEndAt[i] : -1;
      if (i === this.headingStart) {
        last = Math.min(this.headingEnd, lastLine);
        kind = 'heading';
      } else if (fenceEnd >= 0) {
        last = Math.min(fenceEnd, lastLine);
        kind = 'fence';
      } else {
        last = i;
        while (
          last + 1 <= lastLine &&
          !isBlankRange(text, starts[last + 1], lineEnd(text, starts, last + 1)) &&
          !(this.fenceEndAt && this.fenceEndAt[last + 1] >= 0)
        ) {
          last++;
        }
        kind = 'paragraph';
      }
      while (last > i && isBlankRange(text, starts[last], lineEnd(text, starts, last))) last--;
      const start = ls;
      const end = lineEnd(text, starts, last);
      if (end - start <= size) packer.push(start, end, kind === 'fence');
      else if (kind === 'paragraph') this.sentencePieces(start, end);
      else this.linePieces(start, end);
      i = last + 1;
    }
  }

  /** Sentences of [from, to); a sentence longer than size is split by lines. */
  private sentencePieces(from: number, to: number): void {
    const { text } = this;
    let s = skipWs(text, from, to);
    let i = s;
    while (i < to) {
      const c = text.charCodeAt(i);
      let boundary = -1;
      if (c === DOT || c === 33 /* ! */ || c === 63 /* ? */) {
        let j = i + 1;
        while (j < to && isCloser(text.charCodeAt(j))) j++;
        if (j === to || isWs(text.charCodeAt(j))) boundary = j;
      } else if (c === 0x3002 || c === 0xff01 || c === 0xff1f) {
        // Ideographic full stop, fullwidth ! and ?: no space follows in CJK text.
        let j = i + 1;
        while (j < to && isCloser(text.charCodeAt(j))) j++;
        boundary = j;
      }
      if (boundary < 0) {
        i++;
        continue;
      }
      this.sentence(s, boundary);
      s = skipWs(text, boundary, to);
      i = s;
    }
    if (s < to) this.sentence(s, skipWsBack(text, s, to));
  }

  private sentence(start: number, end: number): void {
    if (end <= start) return;
    if (end - start <= this.size) this.packer.push(start, end, false);
    else this.linePieces(start, end);
  }

  /** Lines of [from, to), skipping blank ones; a line longer than size is split by words or characters. */
  private linePieces(from: number, to: number): void {
    const { text, size } = this;
    let s = from;
    while (s < to) {
      let e = text.indexOf('\n', s);
      if (e === -1 || e > to) e = to;
      if (!isBlankRange(text, s, e)) {
        if (e - s <= size) this.packer.push(s, e, false);
        else this.charPieces(s, e);
      }
      s = e + 1;
    }
  }

  /** Cuts [from, to) into pieces of at most size: at the last whitespace in the second half of the window, else hard (never inside a surrogate pair). */
  private charPieces(from: number, to: number): void {
    const { text, size } = this;
    let s = skipWs(text, from, to);
    while (s < to) {
      const trimmedEnd = skipWsBack(text, s, to);
      if (trimmedEnd - s <= size) {
        if (trimmedEnd > s) this.packer.push(s, trimmedEnd, false);
        return;
      }
      const limit = s + size;
      const half = s + (size >> 1);
      let k = limit;
      while (k > half && !isWs(text.charCodeAt(k))) k--;
      let end: number;
      let next: number;
      if (k > half && isWs(text.charCodeAt(k))) {
        end = skipWsBack(text, s, k);
        next = k;
      } else {
        end = limit;
        const high = text.charCodeAt(end - 1);
        const low = text.charCodeAt(end);
        if (high >= 0xd800 && high <= 0xdbff && low >= 0xdc00 && low <= 0xdfff) end--;
        next = end;
      }
      this.packer.push(s, end, false);
      s = skipWs(text, next, to);
    }
  }
}

/** Closing quotes and brackets that may follow sentence-ending punctuation. */
function isCloser(c: number): boolean {
  return c === 34 || c === 39 || c === 41 || c === 93 || c === 0x201d || c === 0x2019 || c === 0xbb;
}

/** Whether only spaces or tabs stand between `q` and the start of its line (an indented line's first word). */
function opensLine(text: string, q: number): boolean {
  let i = q - 1;
  while (i >= 0 && (text.charCodeAt(i) === 32 || text.charCodeAt(i) === 9)) i--;
  return i < 0 || text.charCodeAt(i) === NL;
}

/** A lowercase letter: a line that opens with one goes on with the sentence of the line before. */
const LOWERCASE = /\p{Ll}/u;

/** Whether the whitespace run ending at `ws` (inclusive) follows a sentence end. */
function isSentenceEndBefore(text: string, ws: number, floor: number): boolean {
  let i = ws;
  while (i > floor && isWs(text.charCodeAt(i))) i--;
  while (i > floor && isCloser(text.charCodeAt(i))) i--;
  const c = text.charCodeAt(i);
  return c === DOT || c === 33 || c === 63;
}

function commonPrefix(a: string[], b: string[]): string[] {
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) n++;
  return n === a.length ? a : a.slice(0, n);
}

function normalise(settings: ChunkerSettings | undefined): { size: number; overlap: number } {
  const rawSize = Math.floor(Number(settings?.size));
  const size = Number.isNaN(rawSize) ? DEFAULT_CHUNKER.size : Math.max(2, rawSize);
  const rawOverlap = Math.floor(Number(settings?.overlap));
  const overlap = Number.isNaN(rawOverlap) ? 0 : Math.min(Math.max(0, rawOverlap), size - 1);
  return { size, overlap };
}

/**
 * Splits a loaded document into chunks. Markdown is split at headings, then
 * blank-line paragraphs (fenced code kept whole unless one block exceeds size),
 * then sentences, lines and characters; small adjacent sections under one parent
 * heading are merged while they fit. HTML, reStructuredText and AsciiDoc use the
 * unit's heading marks; other text and PDF pages are split by paragraphs then sentences. Pure and linear-time; never
 * throws for any unit text.
 */
export function chunkDocument(doc: LoadedDocument, settings: ChunkerSettings = DEFAULT_CHUNKER): Chunk[] {
  const { size, overlap } = normalise(settings);
  const chunks: Chunk[] = [];
  doc.units.forEach((unit, index) => {
    const raw = typeof unit.text === 'string' ? unit.text : '';
    const text = withLineFeeds(raw);
    if (text.length === 0) return;
    const isPage = unit.locator === 'page' || doc.kind === 'pdf';
    const page = Number.isInteger(unit.page) ? (unit.page as number) : index + 1;
    const sourceLines = Array.isArray(unit.sourceLines) ? unit.sourceLines : undefined;
    const mapLine = (line0: number): number => {
      const mapped = sourceLines?.[line0];
      return typeof mapped === 'number' && Number.isFinite(mapped) ? mapped : line0 + 1;
    };
    const chunker = new UnitChunker(text, size, overlap, (start, end, headingPath) => {
      let startLine = page;
      let endLine = page;
      if (!isPage) {
        startLine = mapLine(lineAt(chunker.starts, start));
        endLine = Math.max(startLine, mapLine(lineAt(chunker.starts, end - 1)));
      }
      chunks.push({
        text: text.slice(start, end),
        headingPath: headingPath.slice(),
        startLine,
        endLine,
        locator: isPage ? 'page' : 'line',
      });
    });
    if (doc.kind === 'markdown') chunker.markdown();
    else if (Array.isArray(unit.headings)) chunker.marked(unit.headings);
    else chunker.plain();
  });
  return chunks;
}
