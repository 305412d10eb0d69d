// GNU Info manuals: `.info`, `.info.gz` and the parts of a split manual
// (`find.info-1.gz`) are read as documents, each node a section headed by its name,
// cited by the file's own lines; what Info keeps for itself (separators, the
// directory entry, the tag table, a split manual's table of parts, index markers) is
// not text. Small manuals written here, as makeinfo writes them.

import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { ingestFolder, listIndexedDocuments, openWorkspace, readIndexedDocument, search, type Workspace } from '../src/app/index.js';
import { infoToPlain } from '../src/ingest/info.js';
import { kindOf } from '../src/ingest/kinds.js';
import { looksBinary } from '../src/ingest/load.js';
import { tempDir } from './helpers/cli.js';

/** A small manual as makeinfo writes one: preamble, directory entry, three nodes, an index marker, the tag table. */
const TINY = [
  'This is tiny.info, produced by makeinfo version 6.8 from tiny.texi.', // 1
  '', // 2
  'This manual documents Tiny 1.0.', // 3
  'INFO-DIR-SECTION Text creation and manipulation', // 4
  'START-INFO-DIR-ENTRY', // 5
  '* tiny: (tiny).                 Trim lines.', // 6
  'END-INFO-DIR-ENTRY', // 7
  '', // 8
  '\u001f', // 9
  'File: tiny.info,  Node: Top,  Next: Invoking tiny,  Up: (dir)', // 10
  '', // 11
  'GNU Tiny', // 12
  '********', // 13
  '', // 14
  'Tiny trims trailing blanks from every line.', // 15
  '', // 16
  '* Menu:', // 17
  '', // 18
  '* Invoking tiny::     How to run it.', // 19
  '', // 20
  '\u001f', // 21
  'File: tiny.info,  Node: Invoking tiny,  Next: Exit status,  Prev: Top,  Up: Top', // 22
  '', // 23
  '1 Invoking tiny', // 24
  '***************', // 25
  '', // 26
  'Run tiny with the option --keep-tabs to leave tab characters where they are.', // 27
  '', // 28
  '\u001f', // 29
  'File: tiny.info,  Node: Exit status,  Prev: Invoking tiny,  Up: Invoking tiny', // 30
  '', // 31
  '1.1 Exit status', // 32
  '===============', // 33
  '', // 34
  '\u0000\u0008[index\u0000\u0008]', // 35
  'Tiny exits with status 3 when a line cannot be rewritten in place.', // 36
  '', // 37
  '\u001f', // 38
  'Tag Table:', // 39
  'Node: Top\u007f218', // 40
  'Node: Invoking tiny\u007f512', // 41
  '\u001f', // 42
  'End Tag Table', // 43
  '', // 44
  '\u001f', // 45
  'Local Variables:', // 46
  'coding: utf-8', // 47
  'End:', // 48
  '',
].join('\n');

describe('GNU Info manuals', () => {
  let folder: string;
  let workspace: Workspace;
  beforeEach(() => {
    folder = tempDir('ragline-info-');
    workspace = openWorkspace({ db: path.join(tempDir('ragline-info-db-'), 'r.db') });
  });
  afterEach(async () => {
    await workspace.close();
    fs.rmSync(folder, { recursive: true, force: true });
  });

  test('are documents of their own name: .info, .info.gz and the parts of a split manual', () => {
    for (const name of ['tiny.info', 'coreutils.info.gz', 'find.info-1.gz', 'find.info-12', 'docs/SED.INFO']) expect([name, kindOf(name)]).toEqual([name, 'text']);
    for (const name of ['dir', 'tiny.info-x', 'tiny.information', 'tiny.info-.gz']) expect([name, kindOf(name)]).toEqual([name, undefined]);
  });

  test("each node is a section headed by its name, at its title's level; what Info keeps for itself is not text", () => {
    const page = infoToPlain(TINY);
    const lines = page.text.split('\n');
    expect(lines).toHaveLength(TINY.split('\n').length); // line for line: citations are the file's lines
    expect(page.title).toBe('GNU Tiny');
    expect(page.headings).toEqual([
      { line: 9, level: 1, text: 'Top' },
      { line: 21, level: 1, text: 'Invoking tiny' },
      { line: 29, level: 2, text: 'Exit status' },
    ]);
    expect(lines[21]).toBe('Invoking tiny');
    expect(lines[35]).toBe('Tiny exits with status 3 when a line cannot be rewritten in place.');
    expect(page.text).toContain('This manual documents Tiny 1.0.');
    for (const gone of ['\u001f', '\u0000', 'produced by makeinfo', 'INFO-DIR-SECTION', 'START-INFO-DIR-ENTRY', '* tiny: (tiny)', 'Tag Table', 'Node: Top', 'File: tiny.info', 'Local Variables', 'coding: utf-8']) {
      expect(page.text, gone).not.toContain(gone);
    }
    // An Info index marker is text, not the NUL of a binary file.
    expect(looksBinary(new TextEncoder().encode(TINY))).toBe(false);
    expect(looksBinary(new TextEncoder().encode('text\u0000more'))).toBe(true);
  });

  test('are ingested, found, and cited by file and line under their node, gzipped too', async () => {
    fs.writeFileSync(path.join(folder, 'tiny.info'), TINY);
    fs.writeFileSync(path.join(folder, 'tiny-gz.info.gz'), zlib.gzipSync(TINY.replaceAll('tiny.info', 'tiny-gz.info')));
    const summary = await ingestFolder(workspace, folder);
    expect(summary.files).toMatchObject({ added: 2, skipped: {} });
    expect(listIndexedDocuments(workspace).map((doc) => [doc.path, doc.kind, doc.title])).toEqual([
      ['tiny-gz.info.gz', 'text', 'GNU Tiny'],
      ['tiny.info', 'text', 'GNU Tiny'],
    ]);
    const found = await search(workspace, 'which exit status when a line cannot be rewritten');
    // The two hold the same text: the one found first is shown, with its node's heading path.
    const hit = found.results[0]!;
    expect(hit.heading).toBe('Invoking tiny > Exit status');
    expect(hit.documentPath).toMatch(/^tiny(-gz)?\.info(\.gz)?$/);
    const [from, to] = hit.location.replace(`${hit.documentPath}:`, '').split('-').map(Number);
    expect(from).toBeLessThanOrEqual(36);
    expect(to).toBeGreaterThanOrEqual(36);
    expect(readIndexedDocument(workspace, 'tiny.info', { from: 22, to: 22 })?.text).toBe('Invoking tiny');
    expect(readIndexedDocument(workspace, 'tiny-gz.info.gz', { from: 36, to: 36 })?.text).toBe('Tiny exits with status 3 when a line cannot be rewritten in place.');
  });

  test("a split manual's parts are read as documents; its main file holds only its preamble and table of parts", () => {
    const main = ['This is split.info, produced by makeinfo version 6.8 from split.texi.', '', 'Split manual.', '', '\u001f', 'Indirect:', 'split.info-1: 120', '\u001f', 'Tag Table:', '(Indirect)', 'Node: Top\u007f120', '\u001f', 'End Tag Table', ''].join('\n');
    const part = ['This is split.info, produced by makeinfo version 6.8 from split.texi.', '', '\u001f', 'File: split.info,  Node: Patterns,  Next: Actions,  Up: Top', '', '2 Patterns', '**********', '', 'A pattern selects lines.', ''].join('\n');
    expect(infoToPlain(main).text.trim()).toBe('Split manual.');
    const read = infoToPlain(part);
    expect(read.headings).toEqual([{ line: 3, level: 1, text: 'Patterns' }]);
    expect(read.title).toBe('split');
    expect(read.text).toContain('A pattern selects lines.');
  });
});
