// One index of several folders, through the CLI: two folders holding the same
// relative path are told apart wherever a document is shown, `stats` lists every
// folder, a folder ingested on its own is merged into the folder holding it (also
// one reached through a symlink), `doctor` names a folder gone from the disk and
// `forget` removes it, and several paths in one command are read as that many
// commands would read them, each once.

import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { openDatabase } from '../src/store/db.js';
import { keywordTotalRows } from '../src/store/documents.js';
import { folderNames } from '../src/store/document-names.js';
import { isolatedEnv, ragline, tempDir, type CliResult } from './helpers/cli.js';

let home: string;
const cli = (args: string[], input?: string): Promise<CliResult> => ragline(args, { env: isolatedEnv(home), input });

async function ok(args: string[], input?: string): Promise<string> {
  const result = await cli(args, input);
  expect(result.code, result.stderr).toBe(0);
  return result.stdout;
}

function write(file: string, text: string): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
  return file;
}

beforeEach(() => {
  home = tempDir('ragline-folders-');
});
afterEach(() => fs.rmSync(home, { recursive: true, force: true }));

test('two folders holding the same path are cited with their folder names, and search --json gives each result its root', async () => {
  const projA = path.join(home, 'projA');
  const projB = path.join(home, 'projB');
  write(path.join(projA, 'README.md'), '# Project A\n\nProject A deploys the zebra service with kubectl.\n');
  write(path.join(projA, 'only-a.md'), '# Notes\n\nThe zebra service has no other notes.\n');
  write(path.join(projB, 'README.md'), '# Project B\n\nProject B deploys the zebra service with helm charts.\n');

  await ok(['ingest', projA]);
  // One folder: nothing to tell apart, paths as they were.
  const alone = JSON.parse(await ok(['search', '--json', 'zebra service deploys']));
  expect(alone.results.map((r: { location: string }) => r.location)).toContain('README.md:1-3');

  await ok(['ingest', projB]);
  const both = JSON.parse(await ok(['search', '--json', 'zebra service deploys']));
  const byLocation = new Map(both.results.map((r: { location: string; root: string }) => [r.location, r.root]));
  expect(byLocation.get('projA/README.md:1-3')).toBe(fs.realpathSync(projA));
  expect(byLocation.get('projB/README.md:1-3')).toBe(fs.realpathSync(projB));
  // A path only one folder holds keeps its plain name.
  expect(byLocation.get('only-a.md:1-3')).toBe(fs.realpathSync(projA));

  expect(await ok(['ask', '-q', 'Which project deploys the zebra service with helm charts?'])).toContain('[1] projB/README.md:1-3');
  expect(await ok(['search', 'zebra service with kubectl'])).toMatch(/projA\/README\.md:1-3/);

  // The stored turn keeps the names, and replay finds them in the index.
  await ok(['ask', '--json', 'zebra service deploys']);
  const replay = await ok(['replay', 'last']);
  expect(replay).toMatch(/projA\/README\.md:1-3/);
  expect(replay).toMatch(/projB\/README\.md:1-3/);
  expect(replay).not.toMatch(/no longer in the index|document changed since/);
  // A judged document is named as results name it.
  const judged = await ok(['sessions', 'judge', 'last', '1', '--relevant', 'projB/README.md']);
  expect(judged).toMatch(/relevant projB\/README\.md \(chunk \d\)/);
  expect(judged).not.toContain('not indexed');
});

test("a folder's name is its last segment, or as many more as tell it from the others'", () => {
  const sep = path.sep;
  const root = (...parts: string[]) => sep + parts.join(sep);
  expect([...folderNames([root('a', 'x', 'docs'), root('b', 'x', 'docs'), root('c', 'notes')]).values()]).toEqual(['a/x/docs', 'b/x/docs', 'notes']);
  expect([...folderNames([root('proj'), root('x', 'proj')]).values()]).toEqual(['proj', 'x/proj']);
});

test('stats lists every folder the index holds with its documents and chunks, not only the last one ingested', async () => {
  const docs = path.join(home, 'docs');
  const notes = path.join(home, 'notes');
  write(path.join(docs, 'a.md'), '# A\n\nalpha\n');
  write(path.join(docs, 'b.md'), '# B\n\nbravo\n');
  write(path.join(notes, 'c.md'), '# C\n\ncharlie\n');
  await ok(['ingest', docs]);
  await ok(['ingest', notes]);

  const stats = JSON.parse(await ok(['stats', '--json']));
  expect(stats.folders).toEqual([
    { root: fs.realpathSync(docs), documents: 2, chunks: 2 },
    { root: fs.realpathSync(notes), documents: 1, chunks: 1 },
  ]);
  const shown = await ok(['stats']);
  expect(shown).toContain(`folders      ${fs.realpathSync(docs)} (2 documents, 2 chunks)`);
  expect(shown).toContain(`             ${fs.realpathSync(notes)} (1 document, 1 chunk)`);
});

test('a folder ingested on its own, then the folder holding it and a symlink to it, is merged into that folder under its real path: one document, one result', async () => {
  const parent = path.join(home, 'sl');
  const real = path.join(parent, 'zreal');
  write(path.join(real, 'a.md'), '# Alpha\n\nThe frobnicator rotates keys every day.\n');
  fs.symlinkSync('zreal', path.join(parent, 'alias')); // before zreal in name order
  await ok(['ingest', real]);

  const summary = JSON.parse(await ok(['ingest', parent, '--json']));
  expect(summary.files).toMatchObject({ added: 1, merged: 1, skipped: {} });
  const stats = JSON.parse(await ok(['stats', '--json']));
  expect(stats.folders).toEqual([{ root: fs.realpathSync(parent), documents: 1, chunks: 1 }]);
  const search = JSON.parse(await ok(['search', '--json', 'frobnicator rotates keys']));
  expect(search.results.map((r: { location: string }) => r.location)).toEqual(['zreal/a.md:1-3']);

  // Named through the link, it is the folder it points to.
  const viaLink = JSON.parse(await ok(['ingest', path.join(parent, 'alias'), '--json']));
  expect(viaLink).toMatchObject({ root: fs.realpathSync(parent), only: ['zreal/', 'alias/'], files: { added: 0, unchanged: 1 } });
  expect(JSON.parse(await ok(['stats', '--json'])).documents).toBe(1);
});

test('a symlinked folder whose target the globs or .gitignore leave out is read where the link is, through the folder holding it and through the link itself', async () => {
  const parent = path.join(home, 'sl');
  write(path.join(parent, 'real', 'a.md'), '# Alpha\n\nThe frobnicator rotates keys every day.\n');
  fs.symlinkSync('real', path.join(parent, 'alias')); // before real in name order
  const documents = () => {
    const db = openDatabase(path.join(home, 'data', 'ragline', 'ragline.db'), { readonly: true });
    try {
      return db.prepare('SELECT path FROM documents ORDER BY path').pluck().all();
    } finally {
      db.close();
    }
  };

  for (const globs of [['--include', 'alias/'], ['--exclude', 'real/']]) {
    const run = await cli(['ingest', parent, ...globs, '--verbose']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toBe('');
    expect(run.stdout).toMatch(/^Ingested \d added, 0 changed, 0 unchanged, \d removed, skipped none;/);
    expect(documents()).toEqual(['alias/a.md']);
    await ok(['ingest', parent, '--yes']); // where it is again
    expect(documents()).toEqual(['real/a.md']);
  }
  // Left out at both places: said once, under the real folder.
  const none = await cli(['ingest', parent, '--include', '*.txt', '--yes', '--verbose']);
  expect(none.stdout).toMatch(/^Ingested 0 added, 0 changed, 0 unchanged, 1 removed, skipped 1 excluded;.*\n {2}excluded: real\/a\.md\n$/);

  // .gitignore leaves out the real folder's files: ingested through the folder or through the link, they are alias/a.md.
  write(path.join(parent, '.gitignore'), 'real/*\n');
  expect(JSON.parse(await ok(['ingest', parent, '--json'])).files).toMatchObject({ added: 1, skipped: {} });
  expect(documents()).toEqual(['alias/a.md']);
  fs.writeFileSync(path.join(parent, 'real', 'a.md'), '# Alpha\n\nThe frobnicator rotates keys every hour.\n');
  const viaLink = JSON.parse(await ok(['ingest', path.join(parent, 'alias'), '--include', '*.md', '--json']));
  expect(viaLink).toMatchObject({ only: ['real/', 'alias/'], files: { added: 0, changed: 1, removed: 0, skipped: {} } });
  expect(documents()).toEqual(['alias/a.md']);
  // The whole folder gitignored, and the real folder let through again.
  write(path.join(parent, '.gitignore'), 'real/\n');
  expect(JSON.parse(await ok(['ingest', path.join(parent, 'alias'), '--json'])).files).toMatchObject({ unchanged: 1 });
  fs.rmSync(path.join(parent, '.gitignore'));
  expect(JSON.parse(await ok(['ingest', path.join(parent, 'alias'), '--json'])).files).toMatchObject({ added: 1, removed: 1 });
  expect(documents()).toEqual(['real/a.md']);
});

test('a folder of files ragline does not read, reached where it is and through a symlink, is said to hold each of them once', async () => {
  const parent = path.join(home, 'pictures');
  write(path.join(parent, 'real', 'c.png'), 'not a document');
  fs.symlinkSync('real', path.join(parent, 'alias'));
  const run = await cli(['ingest', parent]);
  expect(run.code, run.stderr).toBe(0);
  expect(run.stdout).toContain('skipped 1 unsupported-type;');
  expect(run.stderr).toContain('It holds 1 file of other types (1 .png);');
});

test('doctor warns of a folder gone from the disk, naming it and what to do; forget removes it from the index after asking', async () => {
  const docs = path.join(home, 'docs');
  const notes = path.join(home, 'notes');
  write(path.join(docs, 'a.md'), '# A\n\nalpha\n');
  write(path.join(docs, 'b.md'), '# B\n\nbravo\n');
  write(path.join(notes, 'c.md'), '# C\n\ncharlie moved along\n');
  await ok(['ingest', docs]);
  await ok(['ingest', notes]);
  await ok(['ask', 'charlie?']);
  const notesRoot = fs.realpathSync(notes);
  const moved = path.join(home, 'notes-moved');
  fs.renameSync(notes, moved);

  const doctor = await cli(['doctor']);
  expect(doctor.code, doctor.stderr).toBe(0);
  expect(doctor.stdout).toMatch(new RegExp(`warn  folders .*no longer on disk: ${notesRoot} \\(1 document\\)`));
  expect(doctor.stdout).toContain(`ragline ingest <new folder>`);
  expect(doctor.stdout).toContain(`ragline forget ${notesRoot}`);
  expect(JSON.parse(await ok(['doctor', '--json'])).checks).toContainEqual(expect.objectContaining({ id: 'folders', status: 'warn' }));

  await ok(['ingest', moved]);
  // Piped, with nothing to confirm on: refused, nothing removed.
  const unconfirmed = await cli(['forget', notesRoot]);
  expect(unconfirmed.code).toBe(2);
  expect(unconfirmed.stderr).toContain('there is no terminal to confirm on');
  expect(unconfirmed.stderr).toContain(`ragline forget ${notesRoot} --yes`);
  expect(JSON.parse(await ok(['stats', '--json'])).folders).toHaveLength(3);

  expect(JSON.parse(await ok(['forget', notesRoot, '--yes', '--json']))).toEqual({ root: notesRoot, documents: 1, chunks: 1 });
  const stats = JSON.parse(await ok(['stats', '--json']));
  expect(stats.folders.map((folder: { root: string }) => folder.root)).toEqual([fs.realpathSync(docs), fs.realpathSync(moved)]);
  expect(stats).toMatchObject({ documents: 3, chunks: 3, sessions: 1 });
  const after = await ok(['doctor']);
  expect(after).not.toMatch(/^warn  folders/m);
  expect(after).toContain('all good');
  // The keyword index no longer counts the removed rows in the totals bm25 weighs by.
  const db = openDatabase(path.join(home, 'data', 'ragline', 'ragline.db'), { readonly: true });
  try {
    expect(keywordTotalRows(db)).toBe(3);
  } finally {
    db.close();
  }

  const unknown = await cli(['forget', notesRoot, '--yes']);
  expect(unknown.code).toBe(2);
  expect(unknown.stderr).toContain(`${notesRoot} is not a folder of the index.`);
});

test('replay says a document it quoted has changed, though a copy of its old text is indexed in another folder', async () => {
  const old = '# Project\n\nLicensed under the MIT licence.\n';
  write(path.join(home, 'A', 'README.md'), old);
  write(path.join(home, 'B', 'vendor', 'README.md'), old);
  await ok(['ingest', path.join(home, 'A')]);
  await ok(['ingest', path.join(home, 'B')]);
  await ok(['ask', 'what licence is the project under?']);
  write(path.join(home, 'A', 'README.md'), '# Project\n\nLicensed under the Apache licence, version 2.0.\n');
  await ok(['ingest', path.join(home, 'A')]);
  const replay = await ok(['replay', 'last']);
  expect(replay).toMatch(/README\.md:1-3 .*\(document changed since\)/);
  expect(replay).not.toContain('now vendor/README.md');
});

test('several paths in one command: a subfolder given with its folder is read as part of it (one ingested on its own before is merged), a hidden one stays its own, and a file is a document of the folder a path before it ingested', async () => {
  const docs = path.join(home, 'docs');
  write(path.join(docs, 'a.md'), '# A\n\nalpha\n');
  write(path.join(docs, 'sub', 'b.md'), '# B\n\nbravo\n');
  write(path.join(docs, '.notes', 'n.md'), '# N\n\nnovember\n');
  const real = fs.realpathSync(docs);
  await ok(['ingest', path.join(docs, 'sub')]);

  const summary = JSON.parse(await ok(['ingest', path.join(docs, 'sub'), docs, path.join(docs, '.notes'), '--json']));
  expect(summary.covered).toEqual([{ path: path.join(docs, 'sub'), by: docs, reason: 'inside' }]);
  expect(summary.paths.map((entry: { path: string; root: string }) => [entry.path, entry.root])).toEqual([
    [docs, real],
    [path.join(docs, '.notes'), path.join(real, '.notes')],
  ]);
  expect(summary.paths[0].files).toMatchObject({ added: 2, merged: 1 });
  expect(JSON.parse(await ok(['stats', '--json'])).folders).toEqual([
    { root: real, documents: 2, chunks: 2 },
    { root: path.join(real, '.notes'), documents: 1, chunks: 1 },
  ]);

  // Two files of a folder not yet ingested: the second is a document of the folder the first made, as in two commands.
  const notes = path.join(home, 'notes');
  write(path.join(notes, 'c.md'), '# C\n\ncharlie\n');
  write(path.join(notes, 'deep', 'f.md'), '# F\n\nfoxtrot\n');
  write(path.join(notes, 'unnamed.md'), '# U\n\nnot named, not read\n');
  const files = JSON.parse(await ok(['ingest', path.join(notes, 'c.md'), path.join(notes, 'deep', 'f.md'), '--json']));
  expect(files.paths.map((entry: { root: string; only: string[] }) => [entry.root, entry.only])).toEqual([
    [fs.realpathSync(notes), ['c.md']],
    [fs.realpathSync(notes), ['deep/f.md']],
  ]);
  expect(JSON.parse(await ok(['stats', '--json'])).folders).toContainEqual({ root: fs.realpathSync(notes), documents: 2, chunks: 2 });
});
