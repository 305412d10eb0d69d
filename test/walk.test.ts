// The walker on a real folder: files come out in name order, folder by folder,
// whatever order the file system lists them in, skips are counted, and `select`
// leaves files out after seeing their size and modification time.

import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
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
    expect(Object.fromEntries(found.skippedPaths)).toEqual({ 'unsupported-type': ['c.png'], gitignored: ['sub/ignored.md'] });
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
    expect(found.skippedPaths.get('symlink-loop')).toEqual(['sub/up']);
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
      expect(found.skippedPaths.get('symlink-loop')).toEqual(['linked/home']);
    } finally {
      fs.rmSync(outside, { recursive: true, force: true });
    }
  });

  test('a "!" glob narrows the list it is in, as in .gitignore', () => {
    const files = (globs: { include?: string[]; exclude?: string[] }) => walk(root, { ...globs, maxFileBytes: 1_000_000 }).files.map((f) => f.relative);
    // The Markdown outside a/ (given to picomatch as one list, "!a/" had let every other file through, a/y.txt's siblings too).
    expect(files({ include: ['*.md', '!a/'] })).toEqual(['a.md', 'b.md', 'sub/kept.md']);
    expect(files({ include: ['!*.md'] })).toEqual(['a/y.txt']);
    // a/ left out, but for a/z.md.
    expect(files({ exclude: ['a/', '!a/z.md'] })).toEqual(['a/z.md', 'a.md', 'b.md', 'sub/kept.md']);
    // A "!" glob alone excludes nothing, as a lone "!" line in .gitignore ignores nothing.
    expect(files({ exclude: ['!a/'] })).toEqual(files({}));
  });

  test('a folder the globs leave out whole where it is is walked where a link to it is; a file left out at both places is counted once, where it is', () => {
    fs.symlinkSync('a', path.join(root, 'link')); // a/y.txt, a/z.md
    const run = (globs: { include?: string[]; exclude?: string[] }) => {
      const told: [string, boolean][] = [];
      const found = walk(root, { ...globs, maxFileBytes: 1_000_000, excluded: (relative, again) => told.push([relative, again]) });
      return { files: found.files.map((f) => f.relative), skipped: Object.fromEntries(found.skipped), skippedPaths: Object.fromEntries(found.skippedPaths), told };
    };
    // Only the link's place is asked for: its files are read there, and a/ is not said to be left out.
    const included = run({ include: ['link/'] });
    expect(included.files).toEqual(['link/y.txt', 'link/z.md']);
    expect(included.skipped).toEqual({ excluded: 4, gitignored: 1 });
    expect(included.skippedPaths.excluded).toEqual(['a.md', 'b.md', 'c.png', 'sub/kept.md']);
    expect(run({ exclude: ['a/'] }).files).toEqual(['a.md', 'b.md', 'link/y.txt', 'link/z.md', 'sub/kept.md']);
    // Some of its files let through where it is: walked there, the link left to it.
    const partly = run({ exclude: ['a/z.md'] });
    expect(partly.files).toEqual(['a/y.txt', 'a.md', 'b.md', 'sub/kept.md']);
    expect(partly.skippedPaths.excluded).toEqual(['a/z.md']);
    // Left out at both places: counted once, where it is; the globs' listener is told of both (in no particular order).
    const none = run({ include: ['*.rst'] });
    expect(none.files).toEqual([]);
    expect(none.skipped).toEqual({ excluded: 6, gitignored: 1 });
    expect(none.skippedPaths.excluded).toEqual(['a/y.txt', 'a/z.md', 'a.md', 'b.md', 'c.png', 'sub/kept.md']);
    expect(none.told.filter(([relative]) => /^(a|link)\//.test(relative)).sort()).toEqual([
      ['a/y.txt', false],
      ['a/z.md', false],
      ['link/y.txt', true],
      ['link/z.md', true],
    ]);
  });

  test('a folder .gitignore leaves out where it is (its files, or the folder) is walked where a link to it is', () => {
    fs.symlinkSync('a', path.join(root, 'link'));
    fs.writeFileSync(path.join(root, '.gitignore'), 'a/*\n');
    const files = walk(root, { maxFileBytes: 1_000_000 });
    expect(files.files.map((f) => f.relative)).toEqual(['a.md', 'b.md', 'link/y.txt', 'link/z.md', 'sub/kept.md']);
    expect(Object.fromEntries(files.skipped)).toEqual({ 'unsupported-type': 1, gitignored: 1 });
    fs.writeFileSync(path.join(root, '.gitignore'), 'a/\n');
    expect(walk(root, { maxFileBytes: 1_000_000 }).files.map((f) => f.relative)).toEqual(['a.md', 'b.md', 'link/y.txt', 'link/z.md', 'sub/kept.md']);
    // Left out at the link's place too: counted once, where it is.
    fs.writeFileSync(path.join(root, '.gitignore'), 'y.txt\nz.md\n');
    const both = walk(root, { maxFileBytes: 1_000_000 });
    expect(both.files.map((f) => f.relative)).toEqual(['a.md', 'b.md', 'sub/kept.md']);
    expect(Object.fromEntries(both.skipped)).toEqual({ 'unsupported-type': 1, gitignored: 3 });
    expect(both.skippedPaths.get('gitignored')).toEqual(['sub/ignored.md', 'a/y.txt', 'a/z.md']);
  });

  test('a folder outside the root is walked at the first link whose place the globs let its files through', () => {
    const outside = tempDir('ragline-walk-outside-');
    try {
      fs.writeFileSync(path.join(outside, 'x.md'), '# X\n');
      fs.symlinkSync(outside, path.join(root, 'linked'));
      fs.symlinkSync(outside, path.join(root, 'mirror'));
      const found = walk(root, { maxFileBytes: 1_000_000, exclude: ['linked/'] });
      expect(found.files.map((f) => f.relative)).toEqual(['a/y.txt', 'a/z.md', 'a.md', 'b.md', 'mirror/x.md', 'sub/kept.md']);
      expect(Object.fromEntries(found.skipped)).toEqual({ 'unsupported-type': 1, gitignored: 1 });
    } finally {
      fs.rmSync(outside, { recursive: true, force: true });
    }
  });

  test('a symlink in a folder looked at from several places is followed once: folders of links, two to each next one, are listed once per link, not once per path', () => {
    const outside = tempDir('ragline-walk-chain-');
    const opened = vi.spyOn(fs, 'opendirSync');
    try {
      // root -> 0 (twice) -> 1 (twice) -> ... -> 11: 2^12 paths to the last one.
      for (let level = 0; level < 12; level++) {
        fs.mkdirSync(path.join(outside, String(level)));
        fs.writeFileSync(path.join(outside, String(level), 'x.md'), '# X\n');
      }
      for (let level = 0; level < 11; level++) {
        for (const name of ['p', 'q']) fs.symlinkSync(path.join(outside, String(level + 1)), path.join(outside, String(level), name));
      }
      for (const name of ['p', 'q']) fs.symlinkSync(path.join(outside, '0'), path.join(root, name));
      const found = walk(root, { maxFileBytes: 1_000_000, include: ['*.rst'] });
      expect(found.files).toEqual([]);
      expect(found.skipped.get('excluded')).toBe(6 + 12); // each x.md once
      expect(opened.mock.calls.length).toBe(3 + 2 * 12); // the root's folders, and each of the 12 from its two links (2^13 - 2 without)
    } finally {
      opened.mockRestore();
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
    expect(found.skippedPaths.get('name-not-utf8')).toEqual(['caf\uFFFD.md', 'd\uFFFDj\uFFFD', 'sub/\uFFFD.md']);
  });
});
