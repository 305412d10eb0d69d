// unicode61Tokens against the real thing: every case here is also run through SQLite's
// FTS5 unicode61 tokenizer (the one in better-sqlite3), and the terms must be identical.

import fc from 'fast-check';
import { afterAll, describe, expect, test } from 'vitest';
import { SEPARATORS, CONTINUE_ONLY, FOLDS } from '../src/text/unicode61-data.js';
import { unicode61Tokens } from '../src/text/unicode61.js';
import { openFts5Oracle, probesOf } from './helpers/fts5-terms.mjs';

const oracle = openFts5Oracle();
afterAll(() => oracle.close());

const hex = (cp: number) => `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;

/** The probes of `cps` whose tokens differ from SQLite's, as readable lines. */
function mismatches(cps: number[]): string[] {
  const probes = cps.flatMap(probesOf);
  const expected = oracle.terms(probes);
  const out: string[] = [];
  probes.forEach((probe, k) => {
    const actual = unicode61Tokens(probe);
    if (JSON.stringify(actual) !== JSON.stringify(expected[k])) {
      out.push(`${hex(cps[k >> 1])} in ${JSON.stringify(probe)}: ${JSON.stringify(actual)}, SQLite ${JSON.stringify(expected[k])}`);
    }
  });
  return out;
}

/** Every code point the generated tables name, with its neighbours. */
function tableBoundaries(): number[] {
  const cps = new Set<number>();
  for (const range of `${SEPARATORS} ${CONTINUE_ONLY}`.split(' ')) {
    const [lo, hi = lo] = range.split('-').map((h) => parseInt(h, 16));
    for (const cp of [lo - 1, lo, hi, hi + 1]) cps.add(cp);
  }
  for (const run of FOLDS.split(' ')) {
    const [start, , count = 1, stride = 1] = run.split(',').map((h) => parseInt(h, 16));
    for (const cp of [start - 1, start, start + (count - 1) * stride, start + (count - 1) * stride + 1]) cps.add(cp);
  }
  return [...cps].filter((cp) => cp >= 0 && cp <= 0x10ffff);
}

describe('unicode61Tokens, code point by code point', () => {
  test('every BMP code point starts, continues, ends and folds a token as SQLite does', () => {
    const cps = Array.from({ length: 0x10000 }, (_, cp) => cp);
    expect(mismatches(cps)).toEqual([]);
  });

  test('astral code points too: all of plane 1 (emoji, Deseret), every table boundary, and a sample of the rest', () => {
    const cps = new Set<number>(tableBoundaries().filter((cp) => cp > 0xffff));
    for (let cp = 0x10000; cp < 0x20000; cp++) cps.add(cp);
    for (let cp = 0x20000; cp <= 0x10ffff; cp += 101) cps.add(cp);
    for (const cp of [0xeffff, 0xf0000, 0xffffd, 0xfffff, 0x100000, 0x10fffd, 0x10ffff]) cps.add(cp);
    expect(mismatches([...cps].sort((a, b) => a - b))).toEqual([]);
  });
});

describe('unicode61Tokens, hand-picked', () => {
  const cases: [string, string[]][] = [
    ['Ünïcödé', ['unicode']],
    ['ありがとう', ['ありがとう']],
    ['がぎぐ パピプ', ['がぎぐ', 'パピプ']], // precomposed dakuten stays
    ['か\u3099', ['か']], // a combining dakuten is not a diacritic to FTS5: it separates
    ['disabl\u06EAset', ['disabl', 'set']],
    ['e\u0301te', ['ete']],
    ['\u0301e', ['e']], // a diacritic cannot start a token
    ['\uF8FF', ['\uF8FF']],
    ['🤔 thinking', ['🤔', 'thinking']],
    ['Hello, World! IBM Cloud 2023', ['hello', 'world', 'ibm', 'cloud', '2023']],
    ['max_connections v1.2.3', ['max', 'connections', 'v1', '2', '3']],
    ['İstanbul İZMİR Ankara', ['istanbul', 'izmir', 'ankara']], // İ lower-cases to two code units in JS
    ['\u212A is Kelvin', ['k', 'is', 'kelvin']],
    ['x\uD800y \uDC00z', ['x', 'y', 'z']], // lone surrogates reach SQLite as U+FFFD, a separator
    ['\u{10400}\u{10428}', ['\u{10428}\u{10428}']],
    ['', []],
  ];
  test.each(cases)('%j', (text, expected) => {
    expect(unicode61Tokens(text)).toEqual(expected);
    expect(oracle.terms([text])[0]).toEqual(expected);
  });

  test('a term is cut to 32768 UTF-8 bytes, as FTS5 stores it', () => {
    const texts = [
      'a'.repeat(40000) + ' tail',
      'B'.repeat(32768) + 'c',
      'a'.repeat(32767) + 'é end',
      'a'.repeat(32767) + 'あ end', // cut inside a character: SQLite reads back U+FFFD
      'a'.repeat(32766) + 'あ end',
      'a'.repeat(32766) + '🤔 end',
      'é'.repeat(20000),
      'あ'.repeat(11000) + 'A',
    ];
    const expected = oracle.terms(texts);
    texts.forEach((text, k) => expect(unicode61Tokens(text)).toEqual(expected[k]));
  });
});

// Characters from the places where unicode61 and \p{..}-based tokenizers part ways.
const fromRange = (lo: number, hi: number) => fc.integer({ min: lo, max: hi }).map((cp) => String.fromCodePoint(cp));
const charArb = fc.oneof(
  { weight: 6, arbitrary: fromRange(0x20, 0x7e) },
  { weight: 1, arbitrary: fc.constantFrom('\n', '\t', '\0', '\r') },
  { weight: 3, arbitrary: fc.constantFrom(...'ÀÁÂÃÄÅÇÈÉÊËÌÍÎÏÑÒÓÔÕÖØÙÚÛÜÝàáâãäåçèéêëìíîïñòóôõöøùúûüýÿĀāĂăĄąĆćČčĎďĒēĘęĚěĞğİıŁłŃńŇňŐőŒœŘřŚśŞşŠšŢţŤťŮůŰűŸŹźŻżŽžǅǈǋẞßḀḁẠạỳỸﬁ') },
  { weight: 2, arbitrary: fromRange(0x300, 0x36f) }, // combining diacritics
  { weight: 1, arbitrary: fc.oneof(fromRange(0x1ab0, 0x1aff), fromRange(0x1dc0, 0x1dff), fromRange(0x20d0, 0x20ff)) },
  { weight: 2, arbitrary: fromRange(0x4e00, 0x9fff) }, // CJK
  { weight: 2, arbitrary: fromRange(0x3040, 0x30ff) }, // kana, with combining and spacing dakuten
  { weight: 1, arbitrary: fromRange(0xac00, 0xd7a3) }, // Hangul
  { weight: 2, arbitrary: fc.oneof(fromRange(0x1f300, 0x1faff), fc.constantFrom('\u200d', '\ufe0f', '\u{1f3fb}', '\u2764')) },
  { weight: 1, arbitrary: fc.oneof(fromRange(0xe000, 0xf8ff), fromRange(0xf0000, 0x10ffff)) }, // private use
  { weight: 2, arbitrary: fromRange(0x600, 0x6ff) }, // Arabic and its marks
  { weight: 1, arbitrary: fromRange(0x370, 0x52f) }, // Greek, Cyrillic
  { weight: 1, arbitrary: fc.oneof(fromRange(0x10400, 0x1044f), fc.constantFrom('\u212a', '\u2126', '\u0130', '\u1e9e')) },
  { weight: 1, arbitrary: fromRange(0xd800, 0xdfff) }, // surrogates, paired by chance or lone
  { weight: 1, arbitrary: fromRange(0, 0x10ffff) },
);
const textArb = fc.array(charArb, { maxLength: 80 }).map((chars) => chars.join(''));

describe('unicode61Tokens, random text', () => {
  test('gives the terms SQLite FTS5 indexes, in order', () => {
    fc.assert(
      fc.property(textArb, (text) => {
        expect(unicode61Tokens(text)).toEqual(oracle.terms([text])[0]);
      }),
      { numRuns: 2000 },
    );
  });
});
