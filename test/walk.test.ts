// The walker on a real folder: files come out in name order, folder by folder,
// whatever order the file system lists them in, skips are counted, and `select`
// leaves files out after seeing their size and modification time.

import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { walk } from '../src/ingest/walk.js';
import { tempDir } from './helpers/cli.js';

let root: string;

beforeEach(() => {
  root = tempDir('ragline-walk-');
  // written out of name order on purpose
  const files: Record<string, string> = {
    'b.md': '# B\n',
    'sub/kept.md': '# Kept\n',
    'a/z.md': '# Z\n',
    'a.md': '# A\n',
    'c.png': 'not a document',
    'a/y.txt': 'Y\n',
    '.hidden.md': '# Hidden\n',
    'sub/.gitignore': 'ignored.md\n',
    'sub/ignored.md': '# Ignored\n',
  };
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
    fs.writeFileSync(path.join(root, name), text);
  }
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

describe('walk', () => {
  test('lists files in name order, a folder at its own place among its siblings, and counts what it skips', () => {
    const found = walk(root, { maxFileBytes: 1_000_000 });
    expect(found.files.map((f) => f.relative)).toEqual(['a/y.txt', 'a/z.md', 'a.md', 'b.md', 'sub/kept.md']);
    expect(found.files.map((f) => f.kind)).toEqual(['text', 'markdown', 'markdown', 'markdown', 'markdown']);
    expect(found.files[0]!.absolute).toBe(path.join(root, 'a', 'y.txt'));
    expect(Object.fromEntries(found.skipped)).toEqual({ 'unsupported-type': 1, gitignored: 1 });
    expect(Object.fromEntries(found.examples)).toEqual({ 'unsupported-type': ['c.png'], gitignored: ['sub/ignored.md'] });
  });

  test('stats files from inside the root and leaves the working directory where it was, also when select throws', () => {
    const before = process.cwd();
    const seen: string[] = [];
    const found = walk(root, {
      maxFileBytes: 1_000_000,
      select: (relative, size) => {
        seen.push(`${relative}:${size}`);
        expect(process.cwd()).toBe(fs.realpathSync(root));
        return true;
      },
    });
    expect(process.cwd()).toBe(before);
    expect(seen.sort()).toEqual(['a.md:4', 'a/y.txt:2', 'a/z.md:4', 'b.md:4', 'sub/kept.md:7']);
    expect(found.files.map((f) => f.size)).toEqual([2, 4, 4, 4, 7]);
    expect(() =>
      walk(root, {
        maxFileBytes: 1_000_000,
        select: () => {
          throw new Error('stop');
        },
      }),
    ).toThrow('stop');
    expect(process.cwd()).toBe(before);
  });

  test('select sees every file with its size and truncated mtime, and leaves out those it returns false for', () => {
    const seen: [string, number, number][] = [];
    const found = walk(root, {
      maxFileBytes: 1_000_000,
      select: (relative, size, mtimeMs) => {
        seen.push([relative, size, mtimeMs]);
        return relative !== 'b.md';
      },
    });
    expect(found.files.map((f) => f.relative)).toEqual(['a/y.txt', 'a/z.md', 'a.md', 'sub/kept.md']);
    const expected = ['a/y.txt', 'a/z.md', 'a.md', 'b.md', 'sub/kept.md'].map((relative) => {
      const stat = fs.statSync(path.join(root, relative));
      return [relative, stat.size, Math.trunc(stat.mtimeMs)];
    });
    expect(seen.sort()).toEqual(expected.sort());
  });
});

describe('symlinked folders', () => {
  test('a folder reached both where it is and through a symlink is walked once, where it is, whichever comes first in name order; a link to a folder holding it is a loop', () => {
    fs.symlinkSync('sub', path.join(root, '0-sub')); // before sub in name order
    fs.symlinkSync('a', path.join(root, 'later')); // after a
    fs.symlinkSync(path.join(root, 'a'), path.join(root, 'sub', 'to-a')); // a sibling of its own folder, by absolute path
    fs.symlinkSync('..', path.join(root, 'sub', 'up'));
    const found = walk(root, { maxFileBytes: 1_000_000 });
    expect(found.files.map((f) => f.relative)).toEqual(['a/y.txt', 'a/z.md', 'a.md', 'b.md', 'sub/kept.md']);
    expect(Object.fromEntries(found.skipped)).toEqual({ 'unsupported-type': 1, gitignored: 1, 'symlink-loop': 1 });
    expect(found.examples.get('symlink-loop')).toEqual(['sub/up']);
  });

  test('a folder outside the root is walked where it is linked, at its place in name order, once however many links reach it', () => {
    const outside = tempDir('ragline-walk-outside-');
    try {
      fs.writeFileSync(path.join(outside, 'x.md'), '# X\n');
      fs.symlinkSync(outside, path.join(root, 'linked'));
      fs.symlinkSync(outside, path.join(root, 'mirror'));
      fs.symlinkSync(path.join(root, 'a'), path.join(outside, 'back-to-a')); // a folder of the root: walked there
      fs.symlinkSync(root, path.join(outside, 'home')); // the root holds the link: a loop
      const found = walk(root, { maxFileBytes: 1_000_000 });
      expect(found.files.map((f) => f.relative)).toEqual(['a/y.txt', 'a/z.md', 'a.md', 'b.md', 'linked/x.md', 'sub/kept.md']);
      expect(found.files[4]!.absolute).toBe(path.join(root, 'linked', 'x.md'));
      expect(Object.fromEntries(found.skipped)).toEqual({ 'unsupported-type': 1, gitignored: 1, 'symlink-loop': 1 });
      expect(found.examples.get('symlink-loop')).toEqual(['linked/home']);
    } finally {
      fs.rmSync(outside, { recursive: true, force: true });
    }
  });
});

describe('names that are not valid UTF-8', () => {
  /** Writes a file whose name is these bytes (in `folder`, relative to the root); false where the file system refuses such a name. */
  function writeNamed(folder: string, bytes: number[], text = '# Note\n'): boolean {
    try {
      fs.writeFileSync(Buffer.concat([Buffer.from(path.join(root, folder) + path.sep), Buffer.from(bytes)]), text);
      return true;
    } catch {
      return false; // EILSEQ on file systems that only take UTF-8 names
    }
  }
  const md = [...Buffer.from('.md')];

  test('are skipped as name-not-utf8, files and folders alike (Node lists them with U+FFFD, a name no file has); a real U+FFFD in a name is read', (context) => {
    if (!writeNamed('', [0x63, 0x61, 0x66, 0xe9, ...md])) context.skip(); // caf\xe9.md (Latin-1)
    fs.mkdirSync(Buffer.concat([Buffer.from(root + path.sep), Buffer.from([0x64, 0xe9, 0x6a, 0xe0])])); // d\xe9j\xe0/
    writeNamed('', [0x64, 0xe9, 0x6a, 0xe0, 0x2f, ...Buffer.from('inner.md')]);
    writeNamed('', [0x70, 0x69, 0x63, 0xe9, ...Buffer.from('.png')]); // not a document whatever its name
    writeNamed('', [0x2e, 0xe9, ...md]); // hidden
    // Two names that list alike: U+FFFD itself (valid UTF-8) and a cut-off four-byte sequence.
    writeNamed('sub', [0xef, 0xbf, 0xbd, ...md], '# Replacement character\n');
    writeNamed('sub', [0xf0, 0x9f, 0x98, ...md]);
    const found = walk(root, { maxFileBytes: 1_000_000 });
    expect(found.files.map((f) => f.relative)).toEqual(['a/y.txt', 'a/z.md', 'a.md', 'b.md', 'sub/kept.md', 'sub/\uFFFD.md']);
    expect(fs.readFileSync(found.files.at(-1)!.absolute, 'utf8')).toBe('# Replacement character\n');
    expect(Object.fromEntries(found.skipped)).toEqual({ 'name-not-utf8': 3, 'unsupported-type': 2, gitignored: 1 });
    expect(found.examples.get('name-not-utf8')).toEqual(['caf\uFFFD.md', 'd\uFFFDj\uFFFD', 'sub/\uFFFD.md']);
  });
});
