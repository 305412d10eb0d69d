// Section titles of reStructuredText files become heading marks: the chunker splits
// there and keeps heading paths, and citations keep the file's lines (AsciiDoc's:
// asciidoc.test.ts).

import { describe, expect, test } from 'vitest';
import { chunkDocument, plainHeading } from '../src/ingest/chunk.js';
import { loadDocument } from '../src/ingest/load.js';
import { rstHeadings } from '../src/ingest/text-headings.js';

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);
const titles = (headings: { level: number; text: string }[]) => headings.map((h) => `${h.level} ${h.text}`);

describe('reStructuredText', () => {
  const rst = [
    '=============', // 0
    ' Orbit guide', // 1: an overlined title may be indented
    '=============', // 2
    '',
    'Intro text.',
    '',
    'Install', // 6
    '=======',
    '',
    'Linux', // 9
    '-----',
    '',
    'Use the package.',
    'Not a title', // 13: the last line of a paragraph
    '-----------',
    '',
    '    Indented', // 16: a quote or literal block
    '    --------',
    '',
    '=====  =====', // 19: a simple table
    'A      B',
    '=====  =====',
    '',
    '----------', // 23: a transition
    '',
    'Usage', // 25
    '=====',
    '',
    'Run it.',
  ].join('\n');

  test('titles with their underline (and overline), levels in the order the styles first appear', () => {
    const headings = rstHeadings(rst);
    expect(titles(headings)).toEqual(['1 Orbit guide', '2 Install', '3 Linux', '2 Usage']);
    expect(headings.map((h) => [h.line, h.end])).toEqual([
      [0, 2],
      [6, 7],
      [9, 10],
      [25, 26],
    ]);
  });

  test('a title of two or three characters with an underline as long as itself is a title', async () => {
    expect(titles(rstHeadings('if\n--\n\nConditionally execute a group of commands.\n'))).toEqual(['1 if']);
    expect(titles(rstHeadings('CXX\n---\n\nThe C++ compiler.\n\nIOS\n===\n'))).toEqual(['1 CXX', '2 IOS']);
    expect(rstHeadings('Text before.\nok\n--\n')).toEqual([]); // the last line of a paragraph
    expect(rstHeadings('\nabc\n--\n')).toEqual([]); // an underline shorter than the title
    expect((await loadDocument('command/if.rst', utf8('if\n--\n\nConditionally execute a group of commands.\n\nSynopsis\n^^^^^^^^\n\nText.\n'))).title).toBe('if');
  });

  test('an .rst file is chunked at its sections with heading paths, citing its own lines', async () => {
    const doc = await loadDocument('docs/guide.rst', utf8(rst.replace(/\n/g, '\r\n')));
    expect(doc.title).toBe('Orbit guide');
    const chunks = chunkDocument(doc, { size: 60, overlap: 0 });
    const usage = chunks.find((c) => c.text.startsWith('Usage'))!;
    expect(usage).toMatchObject({ headingPath: ['Orbit guide', 'Usage'], startLine: 26, endLine: 29 });
    // "Install" has nothing under it but "Linux": it opens Linux's chunk rather than being one.
    const linux = chunks.find((c) => c.text.includes('Linux'))!;
    expect(linux.headingPath).toEqual(['Orbit guide', 'Install', 'Linux']);
    expect(linux.text).toMatch(/^Install\r?\n=======\r?\n\r?\nLinux/);
    expect(chunks.filter((c) => c.text.trim() === 'Install\r\n=======')).toEqual([]);
    // A plain .txt file with the same text has no heading marks.
    expect((await loadDocument('docs/guide.txt', utf8(rst))).units[0]!.headings).toBeUndefined();
  });
});

describe('hostile input', () => {
  test('very long lines are never taken for titles or rewritten, and take linear time', () => {
    expect(rstHeadings(`${'x'.repeat(300_000)}\n${'='.repeat(300_000)}`)).toEqual([]);
    const stars = `**a ${'**a '.repeat(100_000)}`;
    expect(plainHeading(stars)).toBe(stars);
  });
});
