// Tests for loading documents: kind by extension, binary sniffing, UTF-8
// decoding, titles, HTML visible text with source lines, and PDF pages from a
// small PDF written by hand in the test.

import { describe, expect, test } from 'vitest';
import { chunkDocument } from '../src/ingest/chunk.js';
import { holdsUtf8Sequence, kindOf, loadDocument, looksBinary } from '../src/ingest/load.js';
import { makePdf } from './helpers/pdf.js';

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);

describe('kindOf', () => {
  test('maps extensions to kinds, case-insensitively, and unknown ones to undefined', () => {
    const cases: Array<[string, string | undefined]> = [
      ['docs/guide.md', 'markdown'],
      ['README.MD', 'markdown'],
      ['page.mdx', 'markdown'],
      ['notes.txt', 'text'],
      ['index.rst', 'text'],
      ['manual.adoc', 'text'],
      ['manual.asciidoc', 'text'],
      ['site/index.html', 'html'],
      ['old.HTM', 'html'],
      ['paper.pdf', 'pdf'],
      ['archive.tar.gz', undefined],
      ['Makefile', undefined],
      ['dir.md/file', undefined],
      ['C:\\docs\\a.txt', 'text'],
      ['.md', undefined],
      ['notes/.md', undefined],
      ['notes\\.md', undefined],
      ['.hidden.md', 'markdown'],
      ['release.v2/Makefile', undefined],
      ['release.v2/README', 'text'],
    ];
    for (const [path, kind] of cases) expect([path, kindOf(path)]).toEqual([path, kind]);
  });
});

describe('looksBinary', () => {
  test('a NUL byte in the first 8 KB means binary; later NULs and plain text do not', () => {
    expect(looksBinary(utf8('hello world'))).toBe(false);
    expect(looksBinary(new Uint8Array(0))).toBe(false);
    expect(looksBinary(new Uint8Array([0x68, 0x00, 0x69]))).toBe(true);
    const late = new Uint8Array(9000).fill(0x61);
    late[8500] = 0;
    expect(looksBinary(late)).toBe(false);
  });

  test('PDFs are never reported as binary, even with NUL bytes', () => {
    const pdf = new Uint8Array([...utf8('%PDF-1.7\n'), 0, 1, 2]);
    expect(looksBinary(pdf)).toBe(false);
    expect(looksBinary(makePdf([['x']], 'T'))).toBe(false);
  });
});

describe('decoding', () => {
  test('UTF-8 with invalid bytes is flagged and decoded with replacement characters', async () => {
    const doc = await loadDocument('bad.txt', new Uint8Array([...utf8('\u00e9'), 0x68, 0xff, 0x69, 0xc3]));
    expect([doc.invalidUtf8, doc.windows1252]).toEqual([true, undefined]);
    expect(doc.units[0].text).toBe('\u00e9h\ufffdi\ufffd');
    const html = await loadDocument('bad.html', new Uint8Array([...utf8('<p>na\u00efve caf'), 0xe9, ...utf8('</p>')]));
    expect(html.invalidUtf8).toBe(true);
    expect(html.units[0].text).toBe('na\u00efve caf\ufffd');
  });

  test('bytes that hold no UTF-8 sequence at all are read as Windows-1252 (Latin-1 and its superset), and flagged so', async () => {
    const singleByte = (codes: number[]) => new Uint8Array(codes);
    // "Jan Pokorný — 80 €" as Windows-1252 writes it.
    const doc = await loadDocument('AUTHORS.txt', singleByte([...utf8('Jan Pokorn'), 0xfd, 0x20, 0x97, ...utf8(' 80 '), 0x80]));
    expect([doc.invalidUtf8, doc.windows1252, doc.units[0].text]).toEqual([false, true, 'Jan Pokorn\u00fd \u2014 80 \u20ac']);
    const page = await loadDocument('xslt.html', singleByte([...utf8('<p>St'), 0xe9, ...utf8('phane</p>')]));
    expect([page.invalidUtf8, page.windows1252, page.units[0].text]).toEqual([false, true, 'St\u00e9phane']);
    // Valid UTF-8 is never read so, though its bytes are Windows-1252 too.
    const utf = await loadDocument('ok.txt', utf8('caf\u00e9'));
    expect([utf.windows1252, utf.units[0].text]).toEqual([undefined, 'caf\u00e9']);
    // Sequences that only look like UTF-8 (overlong, a surrogate, past U+10FFFF, cut short) are not UTF-8 in a file.
    for (const codes of [[0xc0, 0xaf], [0xe0, 0x80, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xe2, 0x82]]) {
      expect([codes, holdsUtf8Sequence(singleByte(codes))]).toEqual([codes, false]);
    }
    for (const text of ['\u00e9', '\u20ac', '\u{1F600}']) expect(holdsUtf8Sequence(utf8(`x${text}x`))).toBe(true);
  });

  test('an HTML page that is not UTF-8 is read in the character set it declares', async () => {
    const latin1 = (text: string) => new Uint8Array([...text].map((c) => c.charCodeAt(0)));
    const declared = await loadDocument('api.html', latin1('<html><head><meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1" /></head><body><p>St\u00e9phane Bidoul maintains it.</p></body></html>'));
    expect(declared.invalidUtf8).toBe(false);
    expect(declared.units[0].text).toBe('St\u00e9phane Bidoul maintains it.');
    const short = await loadDocument('b.html', latin1('<meta charset=windows-1252><p>na\u00efve</p>'));
    expect(short.units[0].text).toBe('na\u00efve');
    // Declared or not, the bytes 0x80-0x9F are Windows-1252's ("\u2014", "\u20ac"), not control characters.
    const dash = await loadDocument('c.html', new Uint8Array([...utf8('<meta charset="iso-8859-1"><p>Pokorn'), 0xfd, 0x20, 0x97, 0x20, 0x80, ...utf8('</p>')]));
    expect(dash.units[0].text).toBe('Pokorn\u00fd \u2014 \u20ac');
    // A label no decoder knows, or UTF-8 declared over bytes that are not: read as any file is,
    // here Windows-1252 (no UTF-8 sequence in it), or with replacement characters beside UTF-8.
    for (const head of ['<meta charset="x-unknown-9">', '<meta charset="utf-8">']) {
      const doc = await loadDocument('c.html', latin1(`${head}<p>caf\u00e9</p>`));
      expect([doc.invalidUtf8, doc.windows1252, doc.units[0].text]).toEqual([false, true, 'caf\u00e9']);
      const mixed = await loadDocument('d.html', new Uint8Array([...utf8(`${head}<p>na\u00efve `), 0xe9, ...utf8('</p>')]));
      expect([mixed.invalidUtf8, mixed.units[0].text]).toEqual([true, 'na\u00efve \ufffd']);
    }
  });

  test('valid UTF-8 is not flagged and a byte-order mark is dropped', async () => {
    const doc = await loadDocument('ok.md', new Uint8Array([0xef, 0xbb, 0xbf, ...utf8('# Café ☕\n')]));
    expect(doc.invalidUtf8).toBe(false);
    expect(doc.units[0].text).toBe('# Café ☕\n');
    expect(doc.title).toBe('Café ☕');
  });

  test('files with unknown extensions load as text', async () => {
    const doc = await loadDocument('LICENSE', utf8('MIT License\n\nPermission is hereby granted.'));
    expect(doc.kind).toBe('text');
    expect(doc.title).toBe('MIT License');
  });
});

describe('markdown and text', () => {
  test('a markdown file is one line unit holding the whole text', async () => {
    const source = '---\ntitle: x\n---\n# Head\r\n\r\nBody\n';
    const doc = await loadDocument('a.md', utf8(source));
    expect(doc).toEqual({ kind: 'markdown', title: 'x', units: [{ text: source, locator: 'line' }], invalidUtf8: false });
  });

  test('markdown title comes from front matter when present, else the first H1 outside code', async () => {
    const title = async (source: string) => (await loadDocument('a.md', utf8(source))).title;
    expect(await title('---\ntitle: "Quoted: yes"\ndate: 2024\n---\n# Other\n')).toBe('Quoted: yes');
    expect(await title('+++\ntitle = "Hugo page"\n+++\n')).toBe('Hugo page');
    expect(await title('Intro\n\n```\n# not this\n```\n\n## Sub\n\n# Real Title #\n')).toBe('Real Title');
    expect(await title('Setext Title\n============\n\ntext')).toBe('Setext Title');
    expect(await title('## Only H2\n\ntext')).toBeUndefined();
    expect(await title('')).toBeUndefined();
  });

  test('a text title is a short first line without a trailing period, set apart from the body', async () => {
    const title = async (source: string) => (await loadDocument('a.txt', utf8(source))).title;
    expect(await title('Release Notes\n\nVersion 2 adds things.')).toBe('Release Notes');
    expect(await title('\n\n  Spaced Title  \r\n\r\nbody')).toBe('Spaced Title');
    expect(await title('Only line')).toBe('Only line');
    expect(await title('This is a sentence.\n\nMore.')).toBeUndefined();
    expect(await title('a line that wraps\ninto the next one')).toBeUndefined();
    expect(await title(`${'Long '.repeat(30)}\n\nbody`)).toBeUndefined();
    expect(await title('=====\n-----\n')).toBeUndefined();
    expect(await (async () => (await loadDocument('a.rst', utf8('=========\nRST Title\n=========\n\nbody'))).title)()).toBe('RST Title');
    expect(await (async () => (await loadDocument('a.adoc', utf8('= Doc Title\n\nbody'))).title)()).toBe('Doc Title');
  });

  test('a reStructuredText title: what a first-line comment or directive says the page is, else its first section title', async () => {
    const title = async (source: string) => (await loadDocument('a.rst', utf8(source))).title;
    expect(await title('.. cmake-manual-description: CTest Command-Line Reference\n\nctest(1)\n********\n\nSynopsis\n========\n')).toBe('CTest Command-Line Reference');
    expect(await title('.. _a-label:\n\nctest(1)\n********\n')).toBe('ctest(1)');
    expect(await title('.. cmake-module:: ../../Modules/CheckFunctionExists.cmake\n')).toBe('CheckFunctionExists');
    expect(await title('.. note:: something to say\n')).toBeUndefined();
    expect(await title('.. highlight:: cmake\n\nctest(1)\n********\n')).toBe('ctest(1)');
    expect(await title('.. highlight:: cmake\n')).toBeUndefined();
    expect(await title('add_test\n--------\n\nAdd a test to the project.\n')).toBe('add_test');
  });
});

describe('HTML', () => {
  const html = [
    '<!doctype html>', // 1
    '<html>', // 2
    '<head>', // 3
    '  <title>Guide &amp; Reference</title>', // 4
    '  <style>p { color: red }</style>', // 5
    '  <script>var hidden = "<p>not text</p>";</script>', // 6
    '  <meta name="x" content="also hidden">', // 7
    '</head>', // 8
    '<body>', // 9
    '  <!-- a comment that must not appear -->', // 10
    '  <h1>Getting started</h1>', // 11
    '  <p>Install the', // 12
    '     <b>tool</b> first.</p>', // 13
    '  <script>', // 14
    '    document.write("script text");', // 15
    '  </script>', // 16
    '  <pre>', // 17
    'npm install', // 18
    '', // 19
    '    --global</pre>', // 20
    '  <h2>Usage</h2>', // 21
    '  <ul><li>One</li><li>Two &lt;3</li></ul>', // 22
    '  <table><tr><td>key</td><td>value</td></tr></table>', // 23
    '</body>', // 24
    '</html>', // 25
  ].join('\n');

  test('visible text drops the head (its title is the document\'s title), scripts, styles and comments', async () => {
    const doc = await loadDocument('page.html', utf8(html));
    const text = doc.units[0].text;
    expect(doc.kind).toBe('html');
    expect(doc.title).toBe('Guide & Reference');
    expect(text).toBe(
      [
        'Getting started',
        '',
        'Install the tool first.',
        '',
        'npm install',
        '',
        '    --global',
        '',
        'Usage',
        '',
        'One',
        'Two <3',
        '',
        'key | value',
      ].join('\n'),
    );
    for (const hidden of ['color', 'hidden', 'comment', 'script text', 'not text']) expect(text).not.toContain(hidden);
  });

  test('each output line maps to the source line its text starts on', async () => {
    const doc = await loadDocument('page.html', utf8(html));
    const unit = doc.units[0];
    const outputLines = unit.text.split('\n');
    expect(unit.sourceLines).toHaveLength(outputLines.length);
    const sourceLines = html.split('\n');
    outputLines.forEach((line, i) => {
      const firstWord = line.trim().split(/\s+/)[0].replace('&', '&amp;').replace('<', '&lt;');
      if (firstWord !== '') expect([line, sourceLines[unit.sourceLines![i] - 1]]).toEqual([line, expect.stringContaining(firstWord)]);
    });
    expect(unit.sourceLines![outputLines.indexOf('Install the tool first.')]).toBe(12);
    expect(unit.sourceLines![outputLines.indexOf('    --global')]).toBe(20);
    expect(unit.headings).toEqual([
      { line: 0, level: 1, text: 'Getting started' },
      { line: 8, level: 2, text: 'Usage' },
    ]);
  });

  test('a heading\'s "¶" permalink (Sphinx, MkDocs) is not part of its name', async () => {
    const page = '<h1>Guide<a class="headerlink" href="#guide">¶</a></h1>\n<p>Intro.</p>\n<h2>Install <a class="headerlink" href="#install">¶</a></h2>\n<p>Run it.</p>\n<h2>¶ marks</h2>\n';
    const doc = await loadDocument('page.html', utf8(page));
    expect(doc.units[0].headings!.map((h) => h.text)).toEqual(['Guide', 'Install', '¶ marks']);
    expect(doc.title).toBe('Guide');
  });

  test('chunks of an HTML page cite lines of the .html file and carry h1-h6 paths', async () => {
    const doc = await loadDocument('page.html', utf8(html));
    const chunks = chunkDocument(doc, { size: 60, overlap: 0 });
    const usage = chunks.find((c) => c.text.startsWith('Usage'));
    expect(usage).toMatchObject({ headingPath: ['Getting started', 'Usage'], startLine: 21, locator: 'line' });
    const install = chunks.find((c) => c.text.includes('Install the tool'));
    expect(install?.headingPath).toEqual(['Getting started']);
    expect(install!.startLine).toBeLessThanOrEqual(12);
    for (const c of chunks) expect(c.endLine).toBeLessThanOrEqual(25);
  });

  test('without a <title> the first h1 is the title; a page with no text gives an empty unit', async () => {
    const doc = await loadDocument('a.htm', utf8('<body><h2>Sub</h2><h1>Main  <i>Title</i></h1></body>'));
    expect(doc.title).toBe('Main Title');
    const empty = await loadDocument('b.html', utf8('<html><head><title></title></head><body><script>x</script></body></html>'));
    expect(empty.title).toBeUndefined();
    expect(empty.units).toEqual([{ text: '', locator: 'line', sourceLines: [] }]);
    expect(chunkDocument(empty)).toEqual([]);
  });

  test('CRLF HTML maps to the same source lines as LF HTML', async () => {
    const lf = await loadDocument('page.html', utf8(html));
    const crlf = await loadDocument('page.html', utf8(html.replace(/\n/g, '\r\n')));
    expect(crlf.units).toEqual(lf.units);
  });
});

describe('PDF', () => {
  test('a two-page PDF gives one page unit per page with its text and the metadata title', async () => {
    const bytes = makePdf([['Hello from page one.', 'Second line of page one.'], ['Page two says goodbye.']], 'Tiny Test PDF');
    const doc = await loadDocument('tiny.pdf', bytes);
    expect(doc.kind).toBe('pdf');
    expect(doc.title).toBe('Tiny Test PDF');
    expect(doc.invalidUtf8).toBe(false);
    expect(doc.units.map((u) => [u.locator, u.page])).toEqual([
      ['page', 1],
      ['page', 2],
    ]);
    expect(doc.units[0].text).toBe('Hello from page one.\nSecond line of page one.');
    expect(doc.units[1].text).toBe('Page two says goodbye.');
    const chunks = chunkDocument(doc);
    expect(chunks.map((c) => [c.locator, c.startLine, c.endLine])).toEqual([
      ['page', 1, 1],
      ['page', 2, 2],
    ]);
    // The caller's buffer is left intact (pdfjs may detach what it is given).
    expect(bytes.byteLength).toBeGreaterThan(0);
  });

  test('a Node Buffer, as readFileSync returns it, is read the same (pdfjs refuses Buffers given directly)', async () => {
    const bytes = makePdf([['Hello from page one.'], ['Page two says goodbye.']], 'Tiny Test PDF');
    const fromBuffer = await loadDocument('tiny.pdf', Buffer.from(bytes));
    expect(fromBuffer).toEqual(await loadDocument('tiny.pdf', bytes));
    expect(fromBuffer.units.map((u) => u.text)).toEqual(['Hello from page one.', 'Page two says goodbye.']);
  });

  test('bytes that are not a parseable PDF make loadDocument throw', async () => {
    await expect(loadDocument('broken.pdf', utf8('%PDF-1.4\nthis is not a pdf'))).rejects.toThrow(/cannot parse PDF/);
    await expect(loadDocument('empty.pdf', new Uint8Array(0))).rejects.toThrow(/cannot parse PDF/);
  });
});

describe('HTML comments in Markdown', () => {
  test('are not indexed, line for line; inside code fences and code spans they stay', async () => {
    const source = [
      '# fs.readFile(path)', // 1
      '<!-- YAML',
      'added: v0.1.29',
      'changes:',
      '  - version: v7.0.0',
      '-->', // 6
      'Reads the file. <!-- a note --> Asynchronously.',
      'Write `<!-- like this -->` in HTML.',
      '```html',
      '<!-- kept -->',
      '```',
    ].join('\n');
    const doc = await loadDocument('fs.md', utf8(source));
    const text = doc.units[0]!.text;
    expect(text.split('\n')).toEqual([
      '# fs.readFile(path)',
      '',
      '',
      '',
      '',
      '',
      'Reads the file.  Asynchronously.',
      'Write `<!-- like this -->` in HTML.',
      '```html',
      '<!-- kept -->',
      '```',
    ]);
    const chunks = chunkDocument(doc);
    expect(chunks.map((chunk) => chunk.text).join('\n')).not.toContain('YAML');
    expect(chunks[0]!.startLine).toBe(1);
  });
});
