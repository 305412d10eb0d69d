// A rebuild (`--reindex`) drops the whole index: every folder it held is read again,
// the one given with its globs and each other one with the files it held, and a
// rebuild interrupted before the others is finished by the next one.

import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { ingestFolder, openWorkspace } from '../src/index.js';
import { getMeta } from '../src/store/meta.js';
import { ragline, tempDir } from './helpers/cli.js';

function write(file: string, text: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}

/** Three folders: a, b (ingested with --include '**\/*.md', so x.txt is left out) and c. */
function folders(): { dir: string; a: string; b: string; c: string } {
  const dir = tempDir('ragline-rebuild-');
  const [a, b, c] = ['a', 'b', 'c'].map((name) => path.join(dir, name)) as [string, string, string];
  write(path.join(a, 'a.md'), '# Apples\n\nApples grow on trees.\n');
  write(path.join(b, 'b.md'), '# Bees\n\nBees make honey.\n');
  write(path.join(b, 'sub', 'hive.md'), '# Hives\n\nA hive holds a colony.\n');
  write(path.join(b, 'x.txt'), 'left out by the glob\n');
  write(path.join(c, 'c.md'), '# Cedars\n\nCedars are conifers.\n');
  return { dir, a, b, c };
}

function documents(db: string): string[] {
  const workspace = openWorkspace({ db });
  try {
    const rows = workspace.db.prepare('SELECT root, path FROM documents ORDER BY root, path').all() as { root: string; path: string }[];
    return rows.map((row) => `${path.basename(row.root)}/${row.path}`);
  } finally {
    void workspace.close();
  }
}

describe('ingest --reindex', () => {
  test('rebuilds every folder the index held, each with the files it held; a folder gone is said and dropped', async () => {
    const { dir, a, b, c } = folders();
    const db = path.join(dir, 'x.db');
    const env = { HOME: dir, RAGLINE_PROVIDER: 'offline', NO_COLOR: '1' };
    for (const args of [['ingest', a], ['ingest', b, '--include', '**/*.md'], ['ingest', c]]) {
      expect((await ragline(['--db', db, ...args], { env })).code).toBe(0);
    }
    expect(documents(db)).toEqual(['a/a.md', 'b/b.md', 'b/sub/hive.md', 'c/c.md']);
    fs.rmSync(c, { recursive: true });
    const rebuilt = await ragline(['--db', db, 'ingest', a, '--reindex'], { env });
    expect(rebuilt.code).toBe(0);
    expect(rebuilt.stdout).toContain(`Also rebuilt ${fs.realpathSync(b)}: 2 of 2 documents, 2 chunks written`);
    expect(rebuilt.stderr).toContain(`${c} is gone: its document was dropped from the index.`);
    // b keeps what its glob chose: x.txt is still left out.
    expect(documents(db)).toEqual(['a/a.md', 'b/b.md', 'b/sub/hive.md']);
    const search = await ragline(['--db', db, 'search', 'honey', '--json'], { env });
    expect(JSON.parse(search.stdout).results[0]).toMatchObject({ documentPath: 'b.md' });
  });

  test('a rebuild interrupted before the other folders leaves them for the next rebuild', async () => {
    const { dir, a, b } = folders();
    const db = path.join(dir, 'x.db');
    let workspace = openWorkspace({ db });
    try {
      await ingestFolder(workspace, a);
      await ingestFolder(workspace, b, { include: ['**/*.md'] });
      const controller = new AbortController();
      // Stopped once the given folder is read: b is still to be rebuilt.
      const stopped = await ingestFolder(workspace, a, {
        reindex: true,
        signal: controller.signal,
        onProgress: (p) => {
          if (p.filesTotal > 0 && p.filesDone === p.filesTotal) controller.abort();
        },
      });
      expect(stopped.interrupted).toBe(true);
      expect(stopped.others).toEqual([{ root: fs.realpathSync(b), state: 'pending', documents: 2 }]);
      expect(JSON.parse(getMeta(workspace.db, 'ingest.rebuild')!)).toEqual({ [fs.realpathSync(b)]: ['b.md', 'sub/hive.md'] });
    } finally {
      await workspace.close();
    }
    expect(documents(db)).toEqual(['a/a.md']);
    workspace = openWorkspace({ db });
    try {
      const finished = await ingestFolder(workspace, a, { reindex: true });
      expect(finished.interrupted).toBe(false);
      expect(finished.others).toMatchObject([{ root: fs.realpathSync(b), state: 'rebuilt', documents: 2 }]);
      expect(getMeta(workspace.db, 'ingest.rebuild')).toBeUndefined();
    } finally {
      await workspace.close();
    }
    expect(documents(db)).toEqual(['a/a.md', 'b/b.md', 'b/sub/hive.md']);
  });

  test('a folder inside the one rebuilt is part of it, not rebuilt a second time', async () => {
    const { dir, b } = folders();
    const db = path.join(dir, 'x.db');
    const workspace = openWorkspace({ db });
    try {
      await ingestFolder(workspace, path.join(b, 'sub'));
      const summary = await ingestFolder(workspace, b, { reindex: true, include: ['**/*.md'] });
      expect(summary.others).toEqual([]);
    } finally {
      await workspace.close();
    }
    expect(documents(db)).toEqual(['b/b.md', 'b/sub/hive.md']);
  });
});
