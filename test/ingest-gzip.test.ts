// Documentation as Debian ships it: `user_guide.rst.gz`. A gzip-compressed
// document of a kind ragline reads is read decompressed (no larger than
// ingest.maxFileBytes once decompressed), cited by its own name with the lines of
// its text; one that is not gzip is skipped as unparseable, and an archive
// (.tar.gz) or a compressed file of another kind is no document.

import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { ingestFolder, openWorkspace, readIndexedDocument, search, type Workspace } from '../src/app/index.js';
import { kindOf } from '../src/ingest/kinds.js';
import { tempDir } from './helpers/cli.js';

describe('gzip-compressed documents', () => {
  let folder: string;
  let workspace: Workspace;
  beforeEach(() => {
    folder = tempDir('ragline-gz-');
    const write = (name: string, bytes: Buffer | string) => fs.writeFileSync(path.join(folder, name), bytes);
    write('user_guide.rst.gz', zlib.gzipSync('User Guide\n==========\n\nConstraints files\n-----------------\n\nConstraints files are requirements files that only control which version is installed.\n'));
    write('notes.md.gz', zlib.gzipSync('# Notes\n\nThe cache lives in a folder of its own.\n'));
    write('bomb.md.gz', zlib.gzipSync(`# Bomb\n\n${'zero '.repeat(400_000)}\n`)); // 2 MB decompressed from a few KB
    write('broken.md.gz', 'not gzip at all');
    write('archive.tar.gz', zlib.gzipSync('a tarball'));
    write('conf.py.gz', zlib.gzipSync('print(1)'));
    workspace = openWorkspace({ db: path.join(tempDir('ragline-gz-db-'), 'r.db'), settings: { 'ingest.maxFileBytes': 1024 * 1024 } });
  });
  afterEach(async () => {
    await workspace.close();
    fs.rmSync(folder, { recursive: true, force: true });
  });

  test('are read decompressed and cited by their own name, with the lines of their text', async () => {
    const summary = await ingestFolder(workspace, folder);
    expect(summary.files.added).toBe(2);
    expect(summary.files.skipped).toEqual({ 'too-large': 1, 'parse-error': 1, 'unsupported-type': 2 });
    expect(summary.skippedPaths).toMatchObject({ 'too-large': ['bomb.md.gz'], 'parse-error': ['broken.md.gz'] });
    const found = await search(workspace, 'which version do constraints files control');
    expect(found.results[0]).toMatchObject({ documentPath: 'user_guide.rst.gz', location: 'user_guide.rst.gz:1-7', heading: 'User Guide > Constraints files' });
    expect(readIndexedDocument(workspace, 'notes.md.gz')?.text).toContain('The cache lives in a folder of its own.');
  });

  test('are of the kind of their name without .gz', () => {
    expect(kindOf('user_guide.rst.gz')).toBe('text');
    expect(kindOf('a/b/index.HTML.GZ')).toBe('html');
    expect(kindOf('archive.tar.gz')).toBeUndefined();
    expect(kindOf('.gz')).toBeUndefined();
    expect(kindOf('x.gz')).toBeUndefined();
  });

  test("a project's plain-text files named by custom are read as text, gzipped too, and a README for one platform; a licence or a script is not", async () => {
    for (const name of ['README', 'docs/Readme', 'INSTALL', 'NEWS.gz', 'ChangeLog', 'changelog.Debian.gz', 'README.Debian', 'README.source', 'FAQ', 'TODO', 'README.emacs', 'README.win32', 'AUTHORS', 'THANKS', 'FEATURES.gz']) expect([name, kindOf(name)]).toEqual([name, 'text']);
    for (const name of ['copyright', 'COPYING', 'LICENSE', 'Makefile', 'README.sh', 'README.py', 'README.php', 'README.java', 'README.exe', 'README.png', 'README.docx', 'README.SH', 'README.tsx', 'README.sql', 'README.mp4', 'README.deb', 'NEWS.old.gz', 'my-readme', 'READMEx', 'install', 'todo', 'usage']) expect([name, kindOf(name)]).toEqual([name, undefined]);
    const debian = tempDir('ragline-doc-');
    fs.writeFileSync(path.join(debian, 'README'), 'GNU bc\n======\n\nbc is an arbitrary precision calculator language.\n');
    fs.writeFileSync(path.join(debian, 'NEWS.gz'), zlib.gzipSync('Version 1.07\n\nThe -s flag now processes exactly the POSIX bc language.\n'));
    fs.writeFileSync(path.join(debian, 'copyright'), 'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n');
    const summary = await ingestFolder(workspace, debian);
    expect(summary.files.added).toBe(2);
    expect(summary.files.skipped).toEqual({ 'unsupported-type': 1 });
    expect((await search(workspace, 'POSIX bc language flag')).results[0]).toMatchObject({ documentPath: 'NEWS.gz', title: 'Version 1.07' });
    expect((await search(workspace, 'arbitrary precision calculator')).results[0]).toMatchObject({ documentPath: 'README', title: 'GNU bc' });
    fs.rmSync(debian, { recursive: true, force: true });
  });
});
