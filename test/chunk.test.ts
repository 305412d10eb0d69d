// Unit tests for the chunker: headings and heading paths, fenced code, front
// matter, pathological lines, CRLF, exact line numbers, HTML and PDF locators.

import { describe, expect, test } from 'vitest';
import { chunkDocument, DEFAULT_CHUNKER, lineStartsOf, plainHeading, scanMarkdown, type Chunk, type ChunkerSettings } from '../src/ingest/chunk.js';
import type { DocumentKind, LoadedDocument, TextUnit } from '../src/ingest/load.js';

function doc(kind: DocumentKind, text: string, extra: Partial<TextUnit> = {}): LoadedDocument {
  return { kind, units: [{ text, locator: 'line', ...extra }], invalidUtf8: false };
}

function md(text: string, settings?: ChunkerSettings): Chunk[] {
  return chunkDocument(doc('markdown', text), settings);
}

/** The source lines a chunk claims, joined as the chunker joins them. */
function claimedLines(source: string, chunk: Chunk): string {
  return source.split(/\r?\n/).slice(chunk.startLine - 1, chunk.endLine).join('\n');
}

/**
 * A chunk's text lies exactly on its claimed lines: it starts inside line
 * startLine, ends inside line endLine, and is a slice of those lines. Chunks
 * that begin and end at line boundaries therefore equal their lines.
 */
function expectLocated(source: string, chunk: Chunk): void {
  const lines = source.split(/\r?\n/);
  expect(chunk.startLine).toBeGreaterThanOrEqual(1);
  expect(chunk.endLine).toBeGreaterThanOrEqual(chunk.startLine);
  expect(chunk.endLine).toBeLessThanOrEqual(lines.length);
  const textLines = chunk.text.split('\n');
  expect(textLines.length).toBe(chunk.endLine - chunk.startLine + 1);
  expect(lines[chunk.startLine - 1].endsWith(textLines[0]) || textLines.length === 1).toBe(true);
  expect(lines[chunk.endLine - 1].startsWith(textLines[textLines.length - 1]) || textLines.length === 1).toBe(true);
  expect(textLines.slice(1, -1)).toEqual(lines.slice(chunk.startLine, chunk.endLine - 1));
  expect(claimedLines(source, chunk)).toContain(chunk.text);
}

const words = (n: number, word = 'lorem'): string => Array.from({ length: n }, () => word).join(' ');

describe('markdown headings', () => {
  test('each section carries its heading path, outermost first, and starts with its heading line', () => {
    const source = [
      '# Authentication',
      '',
      words(30),
      '',
      '## API keys',
      '',
      words(30),
      '',
      '### Rotation',
      '',
      words(30),
      '',
      '## Sessions',
      '',
      words(30),
    ].join('\n');
    const chunks = md(source, { size: 200, overlap: 0 });
    expect(chunks.map((c) => c.headingPath)).toEqual([
      ['Authentication'],
      ['Authentication', 'API keys'],
      ['Authentication', 'API keys', 'Rotation'],
      ['Authentication', 'Sessions'],
    ]);
    expect(chunks.map((c) => c.text.split('\n')[0])).toEqual(['# Authentication', '## API keys', '### Rotation', '## Sessions']);
  });

  test('heading paths drop inline Markdown: badges, link targets, code and emphasis markers', () => {
    const source = [
      '# better-sqlite3 [![Build Status](https://ci.example/badge.svg)](https://ci.example) [![npm](https://img.example/v.svg)](https://npm.example)',
      '',
      words(20),
      '',
      '## Using [commander](https://example.com/commander) with `parseAsync` and **care**',
      '',
      words(20),
      '',
      'The *setext* one',
      '----------------',
      '',
      words(20),
      '',
      '## [![only a badge](b.svg)](l)',
      '',
      words(20),
    ].join('\n');
    const chunks = md(source, { size: 150, overlap: 0 });
    const paths = [...new Set(chunks.map((c) => JSON.stringify(c.headingPath)))].map((p) => JSON.parse(p) as string[]);
    expect(paths).toEqual([
      ['better-sqlite3'],
      ['better-sqlite3', 'Using commander with parseAsync and care'],
      ['better-sqlite3', 'The setext one'],
      ['better-sqlite3', '[![only a badge](b.svg)](l)'], // nothing left without the badge: kept as written
    ]);
    expect(plainHeading('Use [x] for snake_case_names, 2*3*4 and C++')).toBe('Use [x] for snake_case_names, 2*3*4 and C++');
    expect(plainHeading('Install <img src="logo.png"> it, see ![the logo](logo.png)')).toBe('Install it, see the logo');
  });

  test('setext headings and ATX closing hashes are recognised', () => {
    const source = ['Guide', '=====', '', words(20), '', '## Install ##', '', words(20), '', 'Usage', '-----', '', words(20)].join('\n');
    const chunks = md(source, { size: 150, overlap: 0 });
    expect(chunks.map((c) => c.headingPath)).toEqual([['Guide'], ['Guide', 'Install'], ['Guide', 'Usage']]);
    expect(chunks.map((c) => [c.startLine, c.endLine])).toEqual([
      [1, 4],
      [6, 8],
      [10, 13],
    ]);
  });

  test('a dash line under a list item is a thematic break, not a setext heading', () => {
    const source = ['# Top', '', '- item', '---', '', 'Para', '---'].join('\n');
    const outline = scanMarkdown(source, lineStartsOf(source));
    expect(outline.headings.map((h) => [h.text, h.level, h.line, h.end])).toEqual([
      ['Top', 1, 0, 0],
      ['Para', 2, 5, 6],
    ]);
  });

  test('small sibling sections merge under their common parent while they fit', () => {
    const source = ['# Guide', '', '## Install', '', 'npm i ragline', '', '## Usage', '', 'ragline chat', '', '# Other', '', words(60)].join('\n');
    const chunks = md(source, { size: 100, overlap: 0 });
    expect(chunks[0].headingPath).toEqual(['Guide']);
    expect(chunks[0].text).toBe('# Guide\n\n## Install\n\nnpm i ragline\n\n## Usage\n\nragline chat');
    expect(chunks.slice(1).every((c) => c.headingPath[0] === 'Other')).toBe(true);
  });

  test('merging stops where the shared path would be more than one level above a merged section', () => {
    const source = ['# A', 'intro', '## A1', 'one', '### A1x', 'deep', '## A2', 'two'].join('\n');
    const chunks = md(source, { size: 2000, overlap: 0 });
    // '# A' + '## A1' merge under A; adding '### A1x' would label a depth-3 section with just [A].
    expect(chunks.map((c) => c.headingPath)).toEqual([['A'], ['A', 'A1', 'A1x'], ['A', 'A2']]);
    expect(chunks.map((c) => c.text)).toEqual(['# A\nintro\n## A1\none', '### A1x\ndeep', '## A2\ntwo']);
    // A heading with nothing under it is not a section of its own: '# A' opens A1's group, labelled [A, A1].
    const bare = md(['# A', '## A1', 'one', '### A1x', 'deep', '## A2', 'two'].join('\n'), { size: 2000, overlap: 0 });
    expect(bare.map((c) => c.headingPath)).toEqual([['A', 'A1'], ['A', 'A2']]);
    expect(bare.map((c) => c.text)).toEqual(['# A\n## A1\none\n### A1x\ndeep', '## A2\ntwo']);
  });

  test('headings with nothing under them open the chunk of the long section under them, never a chunk of their own', () => {
    const source = ['# Manual', '', '## 8.2. Using DRD', '', '### 8.2.1. Options', '', ...Array.from({ length: 6 }, (_, i) => `Option ${i}. ${words(20)}.\n`), '# Next', '', 'after'].join('\n');
    const chunks = md(source, { size: 300, overlap: 0 });
    expect(chunks[0].text.startsWith('# Manual\n\n## 8.2. Using DRD\n\n### 8.2.1. Options\n\nOption 0.')).toBe(true);
    expect(chunks[0].headingPath).toEqual(['Manual', '8.2. Using DRD', '8.2.1. Options']);
    for (const c of chunks) expect(c.text.replace(/^#+ .*$/gm, '').trim()).not.toBe('');
    for (const c of chunks) expectLocated(source, c);
    // A heading with text of its own under it is a section as before.
    const owned = md(['# Manual', '', 'About it.', '', '## Long', '', ...Array.from({ length: 6 }, (_, i) => `Part ${i}. ${words(20)}.\n`)].join('\n'), { size: 300, overlap: 0 });
    expect(owned[0].text).toBe('# Manual\n\nAbout it.');
  });

  test('a section split into several chunks keeps its heading path on every piece', () => {
    const source = ['# Big', '', ...Array.from({ length: 10 }, (_, i) => `Paragraph ${i}. ${words(20)}.\n`)].join('\n');
    const chunks = md(source, { size: 300, overlap: 0 });
    expect(chunks.length).toBeGreaterThan(2);
    for (const c of chunks) expect(c.headingPath).toEqual(['Big']);
    expect(chunks[0].text.startsWith('# Big\n\nParagraph 0.')).toBe(true);
  });
});

describe('fenced code', () => {
  const code = ['```python', '# a comment, not a heading', 'def f():', '', '    return 1', '```'].join('\n');

  test('a fence is never cut, and # lines inside it are not headings', () => {
    const source = ['# Code', '', words(25), '', code, '', words(25)].join('\n');
    const chunks = md(source, { size: 160, overlap: 40 });
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.filter((c) => c.text.includes(code))).toHaveLength(1);
    for (const c of chunks) {
      expect(c.headingPath).toEqual(['Code']);
      const fenceLines = c.text.split('\n').filter((l) => l.startsWith('```')).length;
      expect(fenceLines % 2).toBe(0);
    }
  });

  test('tilde fences and longer backtick fences hide inner ``` lines', () => {
    const tilde = ['~~~', '```', '# inside', '~~~'].join('\n');
    const backticks = ['````md', '```', '## also inside', '````'].join('\n');
    const source = ['# T', '', tilde, '', backticks, '', '## After'].join('\n');
    const chunks = md(source, { size: 40, overlap: 0 });
    // "## After" has nothing under it: it ends the chunk before it.
    expect(chunks.map((c) => c.headingPath)).toEqual([['T'], ['T']]);
    expect(chunks.map((c) => c.text)).toEqual([`# T\n\n${tilde}`, `${backticks}\n\n## After`]);
  });

  test('a last heading with nothing under it ends the chunk before it when that has room, else stays a chunk of its own', () => {
    const source = ['# Pip', '', words(12), '', '## General Options'].join('\n');
    const joined = md(source, { size: 2000, overlap: 0 });
    expect(joined.map((c) => c.text)).toEqual([source]);
    const long = ['# Pip', '', '## Usage', '', words(31), '', '## General Options'].join('\n');
    const apart = md(long, { size: 200, overlap: 0 });
    expect(apart.at(-1)!.text).toBe('## General Options'); // every line stays in a chunk
    expect(md('# Only a title', { size: 200, overlap: 0 }).map((c) => c.text)).toEqual(['# Only a title']);
  });

  test('an unclosed fence runs to the end of the document', () => {
    const source = ['# Start', '', '```', 'code', '# not a heading', '', 'more'].join('\n');
    const chunks = md(source);
    expect(chunks).toHaveLength(1);
    expect(chunks[0].headingPath).toEqual(['Start']);
    expect(chunks[0].text).toBe(source);
  });

  test('a single fence larger than size is cut at line boundaries only', () => {
    const body = Array.from({ length: 40 }, (_, i) => `line_${i} = ${i} * 2`);
    const source = ['```', ...body, '```'].join('\n');
    const chunks = md(source, { size: 120, overlap: 0 });
    expect(chunks.length).toBeGreaterThan(3);
    for (const c of chunks) {
      expect(c.text.length).toBeLessThanOrEqual(120);
      expect(c.text).toBe(claimedLines(source, c));
    }
  });
});

describe('front matter', () => {
  test('YAML front matter is skipped, not used as a heading, and line numbers still count it', () => {
    const source = ['---', 'title: Front', 'tags: [a]', '---', '', 'Body text here.'].join('\n');
    const chunks = md(source);
    expect(chunks).toEqual([{ text: 'Body text here.', headingPath: [], startLine: 6, endLine: 6, locator: 'line' }]);
  });

  test('front matter with no content after it gives no chunks', () => {
    expect(md('---\ntitle: x\n---\n\n')).toEqual([]);
  });
});

describe('oversized input', () => {
  test('one 3000-character line with no spaces becomes chunks of at most size that rebuild the line', () => {
    const line = 'x'.repeat(3000);
    for (const size of [2000, 500, 7]) {
      const chunks = md(`# H\n${line}\n`, { size, overlap: 50 });
      const pieces = chunks.filter((c) => c.startLine === 2);
      for (const c of chunks) expect(c.text.length).toBeLessThanOrEqual(size);
      expect(pieces.every((c) => c.endLine === 2)).toBe(true);
      // Without spaces there is no word boundary to overlap from, so pieces tile the line.
      expect(pieces.map((c) => c.text).join('')).toBe(line);
    }
  });

  test('a long paragraph splits at sentence ends', () => {
    const sentences = Array.from({ length: 12 }, (_, i) => `Sentence number ${i} says ${words(8, 'something')}.`);
    const chunks = chunkDocument(doc('text', sentences.join(' ')), { size: 200, overlap: 0 });
    expect(chunks.length).toBeGreaterThan(3);
    for (const c of chunks) {
      expect(c.text.length).toBeLessThanOrEqual(200);
      expect(c.text.startsWith('Sentence number')).toBe(true);
      expect(c.text.endsWith('.')).toBe(true);
    }
  });

  test('long text words split at spaces rather than inside words', () => {
    const chunks = chunkDocument(doc('text', words(400, 'alpha')), { size: 100, overlap: 0 });
    for (const c of chunks) expect(c.text).toMatch(/^alpha( alpha)*$/);
  });

  test('surrogate pairs are never split, even at the smallest size', () => {
    const source = '😀'.repeat(50);
    const chunks = chunkDocument(doc('text', source), { size: 3, overlap: 1 });
    expect(chunks.map((c) => c.text).join('')).toBe(source);
    for (const c of chunks) expect(c.text).toMatch(/^(😀)+$/u);
  });

  test('in hard-wrapped prose the overlap starts at a sentence or an item, never at a line that goes on with one', () => {
    // Release notes: items wrapped at 70 columns, their lines indented under the bullet.
    const items = Array.from({ length: 30 }, (_, i) => [
      ` * Item ${i} fixes a breakage in the option parser that`,
      '   came with the old package and did not support the "--no-"',
      '   prefix to negate a boolean option.',
    ].join('\n'));
    const chunks = chunkDocument(doc('text', items.join('\n\n')), { size: 300, overlap: 150 });
    expect(chunks.length).toBeGreaterThan(10);
    for (const c of chunks) expect(c.text).toMatch(/^ \* Item \d+ /);
  });

  test('after a whole sentence the overlap does not start at a word inside it (paragraphs on one line, as HTML pages are read)', () => {
    const paragraphs = Array.from({ length: 20 }, (_, i) => `Paragraph ${i} says one long thing about origin tracking, which halves the speed and can be one of the following four places: a heap block, a stack allocation or a client request.`);
    const chunks = chunkDocument(doc('text', paragraphs.join('\n\n')), { size: 400, overlap: 120 });
    expect(chunks.length).toBeGreaterThan(5);
    for (const c of chunks) expect(c.text).toMatch(/^Paragraph \d+ /);
  });

  test('a section of tens of thousands of short lines splits into exact, gap-free line ranges', () => {
    const lines = Array.from({ length: 30000 }, (_, i) => `row ${i}`);
    const chunks = chunkDocument(doc('text', lines.join('\n')), { size: 100, overlap: 20 });
    let nextUncovered = 1;
    for (const c of chunks) {
      expect(c.text.length).toBeLessThanOrEqual(100);
      expect(c.text).toBe(lines.slice(c.startLine - 1, c.endLine).join('\n'));
      expect(c.startLine).toBeLessThanOrEqual(nextUncovered);
      nextUncovered = c.endLine + 1;
    }
    expect(nextUncovered).toBe(30001);
  });

  test('nonsense settings fall back to safe values instead of throwing', () => {
    const source = words(50);
    for (const settings of [{ size: 0, overlap: 0 }, { size: Number.NaN, overlap: Number.NaN }, { size: 10, overlap: 500 }, { size: -5, overlap: -5 }]) {
      expect(() => chunkDocument(doc('markdown', source), settings)).not.toThrow();
    }
    expect(chunkDocument(doc('text', 'ab cd'), { size: 0, overlap: 0 }).every((c) => c.text.length <= 2)).toBe(true);
  });
});

describe('overlap', () => {
  test('consecutive pieces of one split section repeat the tail of the previous piece', () => {
    const sentences = Array.from({ length: 20 }, (_, i) => `Fact ${i} is ${words(6, 'notable')}.`);
    const chunks = chunkDocument(doc('text', sentences.join(' ')), { size: 200, overlap: 60 });
    expect(chunks.length).toBeGreaterThan(3);
    for (let i = 1; i < chunks.length; i++) {
      const head = chunks[i].text.slice(0, 20);
      expect(chunks[i - 1].text).toContain(head);
      expect(chunks[i].text.startsWith('Fact')).toBe(true);
    }
  });

  test('chunks from different sections do not overlap', () => {
    const source = ['# One', '', words(40), '', '# Two', '', words(40)].join('\n');
    const chunks = md(source, { size: 250, overlap: 100 });
    expect(chunks.map((c) => [c.startLine, c.endLine])).toEqual([
      [1, 3],
      [5, 7],
    ]);
  });
});

describe('line endings and line numbers', () => {
  const source = [
    'Preamble line.',
    '',
    '# Title',
    '',
    'First paragraph line one.',
    'First paragraph line two.',
    '',
    '',
    '## Part',
    '',
    '```js',
    'const a = 1;',
    '```',
    '',
    words(80) + '.',
    '',
    'Last line.',
    '',
  ].join('\n');

  test('every chunk text equals the source lines in its range', () => {
    for (const settings of [DEFAULT_CHUNKER, { size: 120, overlap: 0 }, { size: 60, overlap: 20 }]) {
      const chunks = md(source, settings);
      expect(chunks.length).toBeGreaterThan(0);
      for (const c of chunks) expectLocated(source, c);
    }
  });

  test('whole-line chunks match their lines exactly at the default size', () => {
    const chunks = md(source);
    expect(chunks.map((c) => [c.text, c.startLine, c.endLine])).toEqual(chunks.map((c) => [claimedLines(source, c), c.startLine, c.endLine]));
    expect(chunks[0].startLine).toBe(1);
    expect(chunks[chunks.length - 1].endLine).toBe(17);
  });

  test('CRLF input gives the same chunks and line numbers as LF, with no carriage returns in the text', () => {
    const crlf = source.replace(/\n/g, '\r\n');
    for (const settings of [DEFAULT_CHUNKER, { size: 60, overlap: 20 }]) {
      const a = md(source, settings);
      const b = md(crlf, settings);
      expect(b).toEqual(a);
      for (const c of b) expect(c.text).not.toContain('\r');
    }
  });
});

describe('document kinds', () => {
  test('empty and blank documents give zero chunks', () => {
    for (const kind of ['markdown', 'text', 'html'] as const) {
      expect(chunkDocument(doc(kind, ''))).toEqual([]);
      expect(chunkDocument(doc(kind, ' \n\t\n\r\n'))).toEqual([]);
    }
    expect(chunkDocument({ kind: 'pdf', units: [], invalidUtf8: false })).toEqual([]);
  });

  test('plain text ignores markdown syntax and splits at blank-line paragraphs', () => {
    const source = ['# not a heading', words(30), '', words(30)].join('\n');
    const chunks = chunkDocument(doc('text', source), { size: 220, overlap: 0 });
    expect(chunks.map((c) => [c.startLine, c.endLine, c.headingPath])).toEqual([
      [1, 2, []],
      [4, 4, []],
    ]);
  });

  test('HTML chunks use heading marks for paths and map output lines back to source lines', () => {
    const unitText = [`Intro ${words(10)}`, '', 'Setup', '', words(20), '', 'Usage', '', words(20)].join('\n');
    const sourceLines = [3, 9, 9, 10, 10, 20, 21, 21, 22];
    const chunks = chunkDocument(
      doc('html', unitText, {
        sourceLines,
        headings: [
          { line: 2, level: 1, text: 'Setup' },
          { line: 6, level: 2, text: 'Usage' },
        ],
      }),
      { size: 150, overlap: 0 },
    );
    expect(chunks.map((c) => [c.headingPath, c.startLine, c.endLine])).toEqual([
      [[], 3, 3],
      [['Setup'], 9, 10],
      [['Setup', 'Usage'], 21, 22],
    ]);
  });

  test('PDF pages chunk separately with the page number as both locators', () => {
    const pdf: LoadedDocument = {
      kind: 'pdf',
      invalidUtf8: false,
      units: [
        { text: 'Page one text.', locator: 'page', page: 1 },
        { text: '', locator: 'page', page: 2 },
        { text: `${words(50)}.\n\n${words(50)}.`, locator: 'page', page: 3 },
      ],
    };
    const chunks = chunkDocument(pdf, { size: 400, overlap: 0 });
    expect(chunks.map((c) => [c.locator, c.startLine, c.endLine])).toEqual([
      ['page', 1, 1],
      ['page', 3, 3],
      ['page', 3, 3],
    ]);
  });
});
