// Property-based tests for the chunker: for arbitrary text (random UTF-16,
// lone surrogates, Markdown-shaped lines with headings, fences, front matter,
// blank lines, CRLF and very long lines) chunking never throws, respects the
// size limit, reports exact line ranges, and leaves no non-blank line uncovered.
// Fixed seed and ~300 runs per property keep it fast and repeatable.

import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { chunkDocument, type Chunk, type ChunkerSettings } from '../src/ingest/chunk.js';
import { holdsUtf8Sequence, loadDocument, type LoadedDocument } from '../src/ingest/load.js';

const RUNS = { seed: 20240611, numRuns: 300 };

/**
 * The size rule: every chunk is at most max(size, 2) UTF-16 code units. The one
 * case where `size` itself cannot be honoured is size < 2, since a surrogate pair
 * must not be split; the chunker treats such sizes as 2.
 */
function sizeLimit(settings: ChunkerSettings): number {
  return Math.max(2, Math.floor(settings.size));
}

/** Lines as the chunker numbers them: split at LF, a CR before the LF belongs to the break. */
function sourceLines(text: string): string[] {
  return text.split(/\r?\n/);
}

/** Lines a Markdown chunker skips: front matter opened by `---`/`+++` on line 1 and closed by the same (or `...`). */
function frontMatterLines(lines: string[]): number {
  const open = lines[0].replace(/^\uFEFF/, '').trimEnd();
  if (open !== '---' && open !== '+++') return 0;
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i].trimEnd();
    if (line === open || (open === '---' && line === '...')) return i + 1;
  }
  return 0;
}

function checkChunks(text: string, kind: 'markdown' | 'text', chunks: Chunk[], settings: ChunkerSettings): void {
  const lines = sourceLines(text);
  const limit = sizeLimit(settings);
  const covered = new Uint8Array(lines.length + 2);
  let previousStart = 0;
  for (const chunk of chunks) {
    // Size, non-empty, trimmed of blank lines at both ends.
    expect(chunk.text.length).toBeGreaterThan(0);
    expect(chunk.text.length).toBeLessThanOrEqual(limit);
    const textLines = chunk.text.split('\n');
    expect(textLines[0].trim()).not.toBe('');
    expect(textLines[textLines.length - 1].trim()).not.toBe('');
    expect(chunk.locator).toBe('line');
    if (kind === 'text') expect(chunk.headingPath).toEqual([]);

    // Line range inside the document, in document order.
    expect(chunk.startLine).toBeGreaterThanOrEqual(1);
    expect(chunk.endLine).toBeGreaterThanOrEqual(chunk.startLine);
    expect(chunk.endLine).toBeLessThanOrEqual(lines.length);
    expect(chunk.startLine).toBeGreaterThanOrEqual(previousStart);
    previousStart = chunk.startLine;

    // The text lies on exactly those lines: it begins inside startLine, ends inside
    // endLine, and everything between is whole source lines.
    expect(textLines.length).toBe(chunk.endLine - chunk.startLine + 1);
    const first = lines[chunk.startLine - 1];
    const last = lines[chunk.endLine - 1];
    if (textLines.length === 1) {
      expect(first.includes(chunk.text)).toBe(true);
    } else {
      expect(first.endsWith(textLines[0])).toBe(true);
      expect(last.startsWith(textLines[textLines.length - 1])).toBe(true);
      expect(textLines.slice(1, -1)).toEqual(lines.slice(chunk.startLine, chunk.endLine - 1));
    }
    for (let line = chunk.startLine; line <= chunk.endLine; line++) covered[line] = 1;
  }

  // Coverage: every non-blank line outside front matter is in some chunk.
  const skipped = kind === 'markdown' ? frontMatterLines(lines) : 0;
  for (let i = skipped; i < lines.length; i++) {
    if (lines[i].trim() !== '' && !covered[i + 1]) {
      throw new Error(`line ${i + 1} not covered: ${JSON.stringify(lines[i].slice(0, 80))}`);
    }
  }
}

function docOf(kind: 'markdown' | 'text', text: string): LoadedDocument {
  return { kind, units: [{ text, locator: 'line' }], invalidUtf8: false };
}

// --- generators -------------------------------------------------------------

const settingsArb: fc.Arbitrary<ChunkerSettings> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ size: fc.integer({ min: 2, max: 300 }), overlap: fc.integer({ min: 0, max: 150 }) }) },
  { weight: 1, arbitrary: fc.record({ size: fc.integer({ min: -3, max: 4 }), overlap: fc.integer({ min: -3, max: 500 }) }) },
  { weight: 1, arbitrary: fc.constant({ size: 2000, overlap: 200 }) },
);

/** Any UTF-16 code unit, lone surrogates included. */
const codeUnit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c));

const word = fc.oneof(
  fc.stringMatching(/^[a-z]{1,10}$/),
  fc.constantFrom('Hello.', 'world!', 'why?', '"quoted."', 'e.g.', '3.14', '。', '😀', 'x\u00a0y', '\t'),
  fc.string({ unit: 'grapheme', maxLength: 4 }),
);
const prose = fc.array(word, { minLength: 0, maxLength: 30 }).map((ws) => ws.join(' '));

const markdownLine: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: prose },
  { weight: 3, arbitrary: fc.constantFrom('', '', '  ', '\t', '\u3000') },
  { weight: 2, arbitrary: fc.tuple(fc.integer({ min: 1, max: 7 }), prose).map(([n, t]) => `${'#'.repeat(n)} ${t}`) },
  { weight: 1, arbitrary: fc.constantFrom('#', '##', '#no-space', '   ### indented', '    # code', '# closing ##') },
  { weight: 2, arbitrary: fc.constantFrom('```', '```js', '~~~', '````', '  ```', '``` a`b', '~~~~ md') },
  { weight: 1, arbitrary: fc.constantFrom('===', '---', '-', '***', '- - -', '...', '+++', '- item', '> quote', '1. one') },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom('x', ' ', '.', 'ab. '), fc.integer({ min: 1, max: 700 })).map(([c, n]) => c.repeat(n)) },
  { weight: 1, arbitrary: fc.string({ unit: codeUnit, maxLength: 40 }) },
);

/** Markdown-shaped documents with a mix of LF, CRLF and the odd lone CR. */
const markdownDoc: fc.Arbitrary<string> = fc
  .tuple(
    fc.boolean(),
    fc.array(fc.tuple(markdownLine, fc.constantFrom('\n', '\n', '\n', '\r\n', '\r')), { maxLength: 60 }),
    fc.boolean(),
  )
  .map(([frontMatter, lines, trailingNewline]) => {
    const body = lines.map(([line, sep]) => line + sep).join('');
    const text = (frontMatter ? '---\ntitle: Generated\n---\n' : '') + body;
    return trailingNewline ? text : text.replace(/\r?\n$/, '');
  });

const anyString = fc.oneof(fc.string({ maxLength: 300 }), fc.string({ unit: 'binary', maxLength: 300 }), fc.string({ unit: codeUnit, maxLength: 300 }));

// --- properties ---------------------------------------------------------------

describe('chunkDocument properties', () => {
  test('arbitrary strings as markdown or text: never throws, within size, exact lines, full coverage', () => {
    fc.assert(
      fc.property(anyString, fc.constantFrom('markdown' as const, 'text' as const), settingsArb, (text, kind, settings) => {
        checkChunks(text, kind, chunkDocument(docOf(kind, text), settings), settings);
      }),
      RUNS,
    );
  });

  test('markdown-shaped documents: never throws, within size, exact lines, full coverage', () => {
    fc.assert(
      fc.property(markdownDoc, settingsArb, (text, settings) => {
        checkChunks(text, 'markdown', chunkDocument(docOf('markdown', text), settings), settings);
      }),
      RUNS,
    );
  });

  test('markdown-shaped documents chunked as plain text: same guarantees, no heading paths', () => {
    fc.assert(
      fc.property(markdownDoc, settingsArb, (text, settings) => {
        checkChunks(text, 'text', chunkDocument(docOf('text', text), settings), settings);
      }),
      RUNS,
    );
  });

  test('CRLF and LF versions of a document give identical chunks', () => {
    fc.assert(
      fc.property(markdownDoc, settingsArb, (text, settings) => {
        const lf = text.replace(/\r/g, '');
        const crlf = lf.replace(/\n/g, '\r\n');
        expect(chunkDocument(docOf('markdown', crlf), settings)).toEqual(chunkDocument(docOf('markdown', lf), settings));
      }),
      RUNS,
    );
  });

  test('fenced code blocks that fit within size are never cut', () => {
    const fence = fc
      .array(fc.oneof(prose, fc.constant(''), fc.constant('# not a heading')), { minLength: 1, maxLength: 6 })
      .map((body) => ['```', ...body, '```'].join('\n'));
    fc.assert(
      fc.property(fc.array(fc.oneof(prose, fence, fc.constant('## Heading')), { maxLength: 20 }), fc.integer({ min: 20, max: 400 }), (blocks, size) => {
        const text = blocks.join('\n\n');
        const chunks = chunkDocument(docOf('markdown', text), { size, overlap: 30 });
        for (const block of blocks) {
          if (!block.startsWith('```') || block.length > size) continue;
          expect(chunks.some((c) => c.text.includes(block))).toBe(true);
        }
        for (const c of chunks) {
          // No chunk starts inside a fence that was kept whole.
          const opens = c.text.split('\n').filter((l) => l === '```').length;
          if (!blocks.some((b) => b.startsWith('```') && b.length > size)) expect(opens % 2).toBe(0);
        }
      }),
      RUNS,
    );
  });
});

describe('loadDocument + chunkDocument properties', () => {
  const htmlish = fc
    .array(
      fc.oneof(
        prose,
        fc.constantFrom('<p>', '</p>', '<h1>', '</h1>', '<h2>', '</h2>', '<pre>', '</pre>', '<br>', '<script>', '</script>', '<style>', '</style>'),
        fc.constantFrom('<!-- c -->', '<head>', '</head>', '<title>', '</title>', '<td>', '<tr>', '&amp;', '&#10;', '<', '>', '\n', '\r\n', '\n\n'),
      ),
      { maxLength: 60 },
    )
    .map((parts) => parts.join(''));

  test('HTML of any shape loads and chunks with source lines inside the file', async () => {
    await fc.assert(
      fc.asyncProperty(htmlish, settingsArb, async (html, settings) => {
        const doc = await loadDocument('page.html', new TextEncoder().encode(html));
        const unit = doc.units[0];
        const outputLines = unit.text.split('\n');
        const htmlLineCount = html.split('\n').length;
        expect(unit.sourceLines).toHaveLength(unit.text === '' ? 0 : outputLines.length);
        let previous = 1;
        for (const line of unit.sourceLines ?? []) {
          expect(line).toBeGreaterThanOrEqual(previous);
          expect(line).toBeLessThanOrEqual(htmlLineCount);
          previous = line;
        }
        for (const chunk of chunkDocument(doc, settings)) {
          expect(chunk.text.length).toBeLessThanOrEqual(sizeLimit(settings));
          expect(chunk.startLine).toBeGreaterThanOrEqual(1);
          expect(chunk.endLine).toBeGreaterThanOrEqual(chunk.startLine);
          expect(chunk.endLine).toBeLessThanOrEqual(htmlLineCount);
          expect(unit.text).toContain(chunk.text);
        }
      }),
      { ...RUNS, numRuns: 200 },
    );
  });

  test('arbitrary bytes load as markdown without throwing and flag invalid UTF-8 exactly when decoding fails', async () => {
    const strict = new TextDecoder('utf-8', { fatal: true });
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 200 }), async (bytes) => {
        let valid = true;
        try {
          strict.decode(bytes);
        } catch {
          valid = false;
        }
        const doc = await loadDocument('notes.md', bytes);
        // Not UTF-8: read as Windows-1252 when no UTF-8 sequence is in it, else with replacements.
        expect([doc.invalidUtf8, doc.windows1252 === true]).toEqual(valid ? [false, false] : holdsUtf8Sequence(bytes) ? [true, false] : [false, true]);
        expect(() => chunkDocument(doc)).not.toThrow();
      }),
      { ...RUNS, numRuns: 200 },
    );
  });
});
