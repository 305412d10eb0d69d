// The tokens SQLite FTS5's `unicode61 remove_diacritics 2` tokenizer makes, exactly, so a
// keyword index built in JS holds the same terms as chunks_fts (whose `porter` stage runs
// on these). tokenize.ts only comes close: it follows the runtime's Unicode through \p{..}
// and NFD, while FTS5 has its own older tables: it keeps が whole, counts private use and
// some emoji as letters, and ends a token at most combining marks. Those tables are read
// off SQLite itself into unicode61-data.ts; they are decoded here on first use and the
// scanner looks characters up in them, ASCII costing no more than one array read.

import { CONTINUE_ONLY, FOLDS, SEPARATORS } from './unicode61-data.js';

// Per code point: START = begins a token, CONTINUE = keeps one going, FOLDED = written
// as something else (another character, or nothing).
const START = 1;
const CONTINUE = 2;
const FOLDED = 4;

/** FTS5 cuts a longer term to this many UTF-8 bytes (FTS5_MAX_TOKEN_SIZE). */
const MAX_TOKEN_BYTES = 32768;

interface Tables {
  /** Flags of each BMP code unit; a lone surrogate has U+FFFD's (a separator). */
  bmpFlags: Uint8Array;
  /** What a FOLDED BMP code point becomes; 0 = dropped. */
  bmpFold: Uint16Array;
  /** Astral code points that are not plain token characters: sorted range starts... */
  astralStarts: Int32Array;
  /** ...their inclusive ends... */
  astralEnds: Int32Array;
  /** ...and their flags. */
  astralFlags: Uint8Array;
  /** What a FOLDED astral code point becomes. */
  astralFold: Map<number, number>;
}

let tables: Tables | undefined;

function buildTables(): Tables {
  const bmpFlags = new Uint8Array(0x10000).fill(START | CONTINUE);
  const bmpFold = new Uint16Array(0x10000);
  const astral: [number, number, number][] = [];
  const mark = (ranges: string, flags: number): void => {
    for (const range of ranges.split(' ')) {
      const [lo, hi = lo] = range.split('-').map((h) => parseInt(h, 16));
      if (lo <= 0xffff) bmpFlags.fill(flags, lo, Math.min(hi, 0xffff) + 1);
      if (hi > 0xffff) astral.push([Math.max(lo, 0x10000), hi, flags]);
    }
  };
  mark(SEPARATORS, 0);
  mark(CONTINUE_ONLY, CONTINUE | FOLDED); // folded to nothing
  astral.sort((a, b) => a[0] - b[0]);

  const astralFold = new Map<number, number>();
  for (const run of FOLDS.split(' ')) {
    const [start, delta, count = 1, stride = 1] = run.split(',').map((h) => parseInt(h, 16));
    for (let k = 0; k < count; k++) {
      const cp = start + k * stride;
      if (cp <= 0xffff) {
        bmpFlags[cp] |= FOLDED;
        bmpFold[cp] = cp + delta;
      } else {
        astralFold.set(cp, cp + delta);
      }
    }
  }
  return {
    bmpFlags,
    bmpFold,
    astralStarts: Int32Array.from(astral, (r) => r[0]),
    astralEnds: Int32Array.from(astral, (r) => r[1]),
    astralFlags: Uint8Array.from(astral, (r) => r[2]),
    astralFold,
  };
}

function astralFlagsOf(t: Tables, cp: number): number {
  const starts = t.astralStarts;
  let lo = 0;
  let hi = starts.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (starts[mid] > cp) hi = mid - 1;
    else lo = mid + 1;
  }
  // hi is the last range starting at or before cp
  const flags = hi >= 0 && cp <= t.astralEnds[hi] ? t.astralFlags[hi] : START | CONTINUE;
  return t.astralFold.has(cp) ? flags | FOLDED : flags;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** Code units taken by the character at text[i]: 2 for a surrogate pair, else 1. */
function charWidth(text: string, i: number): number {
  const code = text.charCodeAt(i);
  return code >= 0xd800 && code <= 0xdbff && isLowSurrogate(text.charCodeAt(i + 1)) ? 2 : 1;
}

/** Flags of the (non-ASCII) character at text[i], whose first code unit is `code`. */
function flagsAt(t: Tables, text: string, i: number, code: number): number {
  if (code >= 0xd800 && code <= 0xdbff) {
    const low = text.charCodeAt(i + 1);
    if (isLowSurrogate(low)) return astralFlagsOf(t, ((code - 0xd800) << 10) + (low - 0xdc00) + 0x10000);
  }
  return t.bmpFlags[code];
}

const ASCII_UPPER = /[A-Z]+/g;

/** Cuts a term to MAX_TOKEN_BYTES of UTF-8 as FTS5 does; a character cut in two reads back as U+FFFD. */
function capLength(term: string): string {
  if (term.length * 3 <= MAX_TOKEN_BYTES) return term;
  let bytes = 0;
  for (let i = 0; i < term.length; i++) {
    const code = term.charCodeAt(i);
    // a token holds no lone surrogates: a high one is half of a 4-byte character
    const width = code < 0x80 ? 1 : code < 0x800 ? 2 : code >= 0xd800 && code <= 0xdbff ? 4 : 3;
    if (bytes + width > MAX_TOKEN_BYTES) return term.slice(0, i) + (bytes < MAX_TOKEN_BYTES ? '\uFFFD' : '');
    bytes += width;
    if (width === 4) i++;
  }
  return term;
}

/**
 * The tokens SQLite FTS5's `unicode61 remove_diacritics 2` tokenizer produces for `text`, in order: case-folded, diacritics removed, before any stemming.
 * A token over 32768 UTF-8 bytes is cut there, as FTS5 stores it.
 */
export function unicode61Tokens(text: string): string[] {
  const t = (tables ??= buildTables());
  const flags = t.bmpFlags;
  const out: string[] = [];
  const n = text.length;
  // All-ASCII tokens are cut from a lower-cased copy, which must line up with `text`.
  // toLowerCase keeps every length but İ's (U+0130 -> i + U+0307), and then only
  // ASCII is lowered.
  let lower = text.toLowerCase();
  if (lower.length !== n) lower = text.replace(ASCII_UPPER, (s) => s.toLowerCase());
  let start = -1; // where the current token began, -1 between tokens
  let i = 0;
  while (i < n) {
    // a tight loop over ASCII, the bulk of most text
    for (; i < n; i++) {
      const code = text.charCodeAt(i);
      if (code >= 0x80) break;
      if (flags[code] & START) {
        if (start < 0) start = i;
      } else if (start >= 0) {
        out.push(lower.slice(start, i));
        start = -1;
      }
    }
    if (i < n) {
      i = nonAsciiAt(t, text, lower, start, i, out);
      start = -1;
    }
  }
  if (start >= 0) out.push(lower.slice(start, n));

  // Only a text this long can hold a token over FTS5's size limit.
  if (n * 3 > MAX_TOKEN_BYTES) {
    for (let k = 0; k < out.length; k++) out[k] = capLength(out[k]);
  }
  return out;
}

/**
 * Deals with the non-ASCII character at text[i], met in the token that began at `start`
 * (-1 between tokens): either it is a separator, ending that token, or the whole token is
 * read here, folded character by character (ASCII capitals too, through the same table).
 * Returns where the caller goes on.
 */
function nonAsciiAt(t: Tables, text: string, lower: string, start: number, i: number, out: string[]): number {
  const { bmpFlags, bmpFold } = t;
  const flags = flagsAt(t, text, i, text.charCodeAt(i));
  if ((flags & (start < 0 ? START : CONTINUE)) === 0) {
    if (start >= 0) out.push(lower.slice(start, i));
    return i + charWidth(text, i);
  }
  const n = text.length;
  const from = start < 0 ? i : start;
  let folded = ''; // the token up to `copied`
  let copied = from;
  let j = from;
  while (j < n) {
    const code = text.charCodeAt(j);
    const f = code < 0x80 ? bmpFlags[code] : flagsAt(t, text, j, code);
    if ((f & CONTINUE) === 0) break;
    const width = code >= 0xd800 && code <= 0xdbff ? 2 : 1; // a lone surrogate is a separator
    if (f & FOLDED) {
      const to = width === 1 ? bmpFold[code] : t.astralFold.get(text.codePointAt(j)!)!;
      folded += text.slice(copied, j);
      if (to !== 0) folded += String.fromCodePoint(to);
      copied = j + width;
    }
    j += width;
  }
  out.push(folded + text.slice(copied, j));
  return j;
}
