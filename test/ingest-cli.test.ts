// `ragline ingest` end to end through the CLI, in-process, against a real
// SQLite file in a temp dir: the product
// docs and the edge-case tree, citations checked against the source lines, HTML
// script/style never indexed, and everything the walker must skip (symlinks that
// go nowhere or in circles, unreadable and oversized files, .gitignore, hidden
// folders, .git, node_modules, --include/--exclude) skipped and counted.

import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import Database from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import { rstToPlain } from '../src/ingest/rst.js';
import { afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { FIXTURE_DOCS, ROOT, isolatedEnv, ragline, runCli, tempDir, type CliResult } from './helpers/cli.js';
import { makePdf } from './helpers/pdf.js';
import { KEY, ptyUnavailable, spawnRaglineInPty } from './helpers/pty.js';

const EDGE = path.join(ROOT, 'fixtures', 'edge');
const IS_ROOT = process.getuid?.() === 0;
const NOBODY = 65534;

let home: string;
const dbFile = () => path.join(home, 'data', 'ragline', 'ragline.db');
const env = () => isolatedEnv(home);

beforeAll(() => {
  if (!fs.existsSync(path.join(ROOT, 'dist/cli/main.js'))) throw new Error('Build first: npx tsc -p .');
});
beforeEach(() => {
  home = tempDir();
});
afterEach(() => fs.rmSync(home, { recursive: true, force: true }));

interface Summary {
  db: string;
  root: string;
  only?: string[];
  files: { added: number; changed: number; unchanged: number; removed: number; merged?: number; skipped: Record<string, number> };
  invalidUtf8: number;
  chunks: { written: number; embedded: number; reused: number; removed: number };
  bytes: number;
  seconds: number;
  embedder: string;
  interrupted: boolean;
  invalidUtf8Paths: string[];
  windows1252: number;
  windows1252Paths: string[];
  skippedPaths: Record<string, string[]>;
}

async function ingestJson(dir: string, ...flags: string[]): Promise<Summary> {
  const result = await ragline(['ingest', dir, '--json', ...flags], { env: env() });
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout) as Summary;
}

function withDb<T>(work: (db: Database.Database) => T): T {
  const db = new Database(dbFile(), { readonly: true });
  sqliteVec.load(db);
  try {
    return work(db);
  } finally {
    db.close();
  }
}

interface ChunkRow {
  root: string;
  path: string;
  kind: string;
  text: string;
  startLine: number;
  endLine: number;
}

const allChunks = () =>
  withDb(
    (db) =>
      db
        .prepare(
          'SELECT d.root, d.path, d.kind, c.text, c.start_line AS startLine, c.end_line AS endLine FROM chunks c JOIN documents d ON d.id = c.document_id ORDER BY c.id',
        )
        .all() as ChunkRow[],
  );

const documentPaths = () => withDb((db) => db.prepare('SELECT path FROM documents ORDER BY path').pluck().all() as string[]);

/** A folder of small Markdown files, one per name, each with a line naming it. */
function docsFolder(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(home, 'docs-'));
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

function chownTree(dir: string, uid: number): void {
  fs.chownSync(dir, uid, uid);
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) chownTree(full, uid);
    else fs.lchownSync(full, uid, uid);
  }
}

describe('ingest of the product docs', () => {
  test('every supported file becomes a document and stats --json reports the same counts as the tables', async () => {
    const summary = await ingestJson(FIXTURE_DOCS);
    const onDisk = fs.readdirSync(FIXTURE_DOCS, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).length;
    expect(summary.files.added).toBe(onDisk);
    expect(summary.files.skipped).toEqual({});

    const stats = JSON.parse((await ragline(['stats', '--json'], { env: env() })).stdout);
    const tables = withDb((db) => ({
      documents: db.prepare('SELECT count(*) FROM documents').pluck().get(),
      chunks: db.prepare('SELECT count(*) FROM chunks').pluck().get(),
      fts: db.prepare('SELECT count(*) FROM chunks_fts').pluck().get(),
      vectors: db.prepare('SELECT count(*) FROM vec_chunks').pluck().get(),
    }));
    expect(stats.documents).toBe(onDisk);
    expect(stats.chunks).toBe(summary.chunks.written);
    expect(tables).toEqual({ documents: onDisk, chunks: summary.chunks.written, fts: summary.chunks.written, vectors: summary.chunks.written });
    expect(stats.embedder).toBe(summary.embedder);
    expect(stats.lastIngest.root).toBe(FIXTURE_DOCS);
  });

  test('--json prints one summary object with files, chunks, bytes, embedder and interrupted', async () => {
    const summary = await ingestJson(FIXTURE_DOCS);
    expect(Object.keys(summary).sort()).toEqual(
      ['bytes', 'chunks', 'db', 'embedder', 'files', 'interrupted', 'invalidUtf8', 'invalidUtf8Paths', 'root', 'seconds', 'skippedPaths', 'windows1252', 'windows1252Paths'].sort(),
    );
    expect(summary).toMatchObject({
      db: dbFile(),
      root: FIXTURE_DOCS,
      files: { changed: 0, unchanged: 0, removed: 0 },
      invalidUtf8: 0,
      invalidUtf8Paths: [],
      windows1252: 0,
      windows1252Paths: [],
      interrupted: false,
      embedder: expect.stringMatching(/^offline:/),
    });
    expect(summary.chunks.written).toBeGreaterThan(summary.files.added);
    expect(summary.chunks.embedded + summary.chunks.reused).toBe(summary.chunks.written);
    expect(summary.bytes).toBe(
      fs
        .readdirSync(FIXTURE_DOCS, { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile())
        .reduce((sum, e) => sum + fs.statSync(path.join(e.parentPath, e.name)).size, 0),
    );
  });

  test('every chunk cites start and end lines whose source text contains the chunk (HTML: its first and last lines)', async () => {
    await ingestJson(FIXTURE_DOCS);
    const chunks = allChunks();
    expect(chunks.length).toBeGreaterThan(20);
    for (const chunk of chunks) {
      const source = fs.readFileSync(path.join(chunk.root, chunk.path), 'utf8');
      // reStructuredText is indexed as it reads (directives and roles as they show), line for line.
      const lines = (chunk.path.endsWith('.rst') ? rstToPlain(source) : source).split(/\r?\n/);
      expect(chunk.startLine, chunk.path).toBeGreaterThanOrEqual(1);
      expect(chunk.endLine, chunk.path).toBeLessThanOrEqual(lines.length);
      expect(chunk.startLine, chunk.path).toBeLessThanOrEqual(chunk.endLine);
      const cited = lines.slice(chunk.startLine - 1, chunk.endLine).join('\n');
      if (chunk.kind === 'html') {
        const visible = chunk.text.split('\n').map((l) => l.trim()).filter(Boolean);
        // the longest markup-free piece of the first and last visible lines (table cells render as ' | ')
        for (const line of [visible[0]!, visible.at(-1)!]) {
          const pieces = line.split(/[&<|]/).map((piece) => piece.trim());
          const prefix = pieces.reduce((a, b) => (b.length > a.length ? b : a)).slice(0, 20);
          expect(cited, `${chunk.path}:${chunk.startLine}-${chunk.endLine} should contain "${prefix}"`).toContain(prefix);
        }
      } else {
        expect(cited, `${chunk.path}:${chunk.startLine}-${chunk.endLine}`).toContain(chunk.text);
      }
    }
  });

  test('HTML script and style contents never reach a chunk or the full-text index', async () => {
    await ingestJson(FIXTURE_DOCS);
    const html = allChunks().filter((c) => c.kind === 'html');
    expect(html.length).toBeGreaterThan(0);
    for (const canary of ['script-canary-7f3a', 'style-canary-91bc', '__ORBIT_SCRIPT_CANARY__']) {
      for (const chunk of allChunks()) expect(chunk.text).not.toContain(canary);
      const ftsHits = withDb((db) => db.prepare('SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?').pluck().get(`"${canary}"`));
      expect(ftsHits, canary).toBe(0);
    }
  });
});

describe('ingest of the edge-case tree', () => {
  test('empty and front-matter-only files are skipped as empty, binary .txt as binary, image.png as unsupported', async () => {
    const summary = await ingestJson(EDGE);
    expect(summary.files.skipped).toEqual({ empty: 2, binary: 1, 'unsupported-type': 1 });
    expect(documentPaths()).toEqual(['README.txt', 'hostile.md', 'invalid-utf8.txt', 'long-line.md']);
    // Which files they were, for --json and --verbose; the same when they are passed over unread.
    const paths = { binary: ['binary.txt'], empty: ['empty.md', 'front-matter-only.md'], 'unsupported-type': ['image.png'] };
    expect(summary.skippedPaths).toEqual(paths);
    expect((await ingestJson(EDGE)).skippedPaths).toEqual(paths);
    const verbose = await ragline(['ingest', EDGE, '--verbose'], { env: env() });
    expect(verbose.stdout.split('\n').slice(1, 5)).toEqual(['  binary: binary.txt', '  empty: empty.md', '  empty: front-matter-only.md', '  unsupported-type: image.png']);
  });

  test('--verbose and --json name every skipped file, however many', async () => {
    const images = Array.from({ length: 12 }, (_, i) => `img-${String(i).padStart(2, '0')}.png`);
    const dir = docsFolder({ 'keys.md': '# Keys\n\nRotate a key.\n', ...Object.fromEntries(images.map((name) => [name, 'x'])) });
    const verbose = await ragline(['ingest', dir, '--verbose'], { env: env() });
    expect(verbose.code).toBe(0);
    expect(verbose.stdout.split('\n').filter((line) => line.startsWith('  unsupported-type: '))).toEqual(images.map((name) => `  unsupported-type: ${name}`));
    const summary = await ingestJson(dir, '--reindex');
    expect(summary.files.skipped).toEqual({ 'unsupported-type': 12 });
    expect(summary.skippedPaths).toEqual({ 'unsupported-type': images });
  });

  test('bytes that are not UTF-8 in a file with no UTF-8 in it are read as Windows-1252, counted, and the text on both sides kept', async () => {
    const summary = await ingestJson(EDGE);
    expect(summary).toMatchObject({ invalidUtf8: 0, windows1252: 1, windows1252Paths: ['invalid-utf8.txt'] });
    const text = allChunks()
      .filter((c) => c.path === 'invalid-utf8.txt')
      .map((c) => c.text)
      .join('\n');
    expect(text).toContain('before-marker \u00ff\u00fe after-marker');
  });

  test('--verbose names the files read as Windows-1252 and those decoded with replacements, as it names skipped ones; --json gives them as windows1252Paths and invalidUtf8Paths', async () => {
    const dir = docsFolder({ 'fine.md': '# Fine\n\nValid text.\n' });
    for (let i = 0; i < 7; i++) fs.writeFileSync(path.join(dir, `latin-${i}.txt`), Buffer.from('caf\xe9 au lait\n', 'latin1')); // é as one byte
    // UTF-8 with one stray byte: its other characters are UTF-8's.
    fs.writeFileSync(path.join(dir, 'mixed.txt'), Buffer.concat([Buffer.from('na\u00efve caf\u00e9 '), Buffer.from([0xe9]), Buffer.from('\n')]));
    const verbose = await ragline(['ingest', dir, '--verbose'], { env: env() });
    expect(verbose.code, verbose.stderr).toBe(0);
    expect(verbose.stdout).toContain(', 1 not valid UTF-8 (decoded with replacements), 7 read as Windows-1252;');
    expect(verbose.stdout.split('\n')).toContain('  not valid UTF-8, decoded with replacements: mixed.txt');
    const latin = Array.from({ length: 7 }, (_, i) => `latin-${i}.txt`);
    expect(verbose.stdout.split('\n').filter((line) => line.includes('Windows-1252 (Latin-1)'))).toEqual(latin.map((name) => `  not UTF-8, read as Windows-1252 (Latin-1): ${name}`));
    const summary = await ingestJson(dir, '--reindex');
    expect(summary).toMatchObject({ invalidUtf8: 1, invalidUtf8Paths: ['mixed.txt'], windows1252: 7, windows1252Paths: latin });
    const texts = allChunks().map((c) => c.text);
    expect(texts).toContain('caf\u00e9 au lait');
    expect(texts).toContain('na\u00efve caf\u00e9 \ufffd');
  });

  test('a 3000-character line is split into several chunks near the size limit and no text is lost', async () => {
    await ingestJson(EDGE, '--chunk-size', '1000', '--chunk-overlap', '100');
    const chunks = allChunks().filter((c) => c.path === 'long-line.md');
    expect(chunks.length).toBeGreaterThan(3);
    for (const chunk of chunks) expect(chunk.text.length).toBeLessThanOrEqual(1500);
    const joined = chunks.map((c) => c.text).join('');
    expect(joined).toContain('after-the-code-block');
    const longLine = fs.readFileSync(path.join(EDGE, 'long-line.md'), 'utf8').split('\n').find((l) => l.length >= 3000)!;
    for (let i = 0; i < longLine.length; i += 500) expect(joined).toContain(longLine.slice(i, i + 40));
  });
});

describe('ingest of PDFs', () => {
  test('a PDF is read from disk page by page and its chunks are cited by page; one without text is skipped as empty', async () => {
    const dir = docsFolder({ 'notes.md': '# Notes\n\nSee the manual.\n' });
    fs.writeFileSync(path.join(dir, 'manual.pdf'), makePdf([['Install the relay agent first.'], ['Page two covers webhook retries.']], 'Relay Manual'));
    fs.writeFileSync(path.join(dir, 'scan.pdf'), makePdf([[], []], 'Scanned'));
    const summary = await ingestJson(dir);
    expect(summary.files).toMatchObject({ added: 2, skipped: { empty: 1 } });
    expect(withDb((db) => db.prepare("SELECT kind, title FROM documents WHERE path = 'manual.pdf'").get())).toEqual({ kind: 'pdf', title: 'Relay Manual' });
    const search = await ragline(['search', 'webhook retries', '--json'], { env: env() });
    expect(search.code).toBe(0);
    const top = (JSON.parse(search.stdout) as { results: { location: string; text: string }[] }).results[0]!;
    expect(top).toMatchObject({ location: 'manual.pdf:p.2', text: 'Page two covers webhook retries.' });
  });
});

describe('ingest output', () => {
  test('the summary line is plain when piped and styled when colour is forced', async () => {
    const dir = docsFolder({ 'a.md': '# A\n\nSome text to index.\n' });
    const piped = await ragline(['ingest', dir], { env: env() });
    expect(piped.stdout).toMatch(/^Ingested 1 added, /);
    const forced = await ragline(['ingest', dir], { env: isolatedEnv(home, { NO_COLOR: undefined, FORCE_COLOR: '1' }) });
    expect(forced.stdout).toMatch(/^\u001b\[1mIngested\u001b\[22m 0 added, /);
  });
  test('a count of one is singular: 1 chunk written, and stats shows 1 session (1 turn)', async () => {
    const dir = docsFolder({ 'a.md': '# A\n\nSome text to index.\n' });
    const ingested = await ragline(['ingest', dir], { env: env() });
    expect(ingested.stdout).toMatch(/; 1 chunk written \(1 embedded, 0 reused\);/);
    expect((await ragline(['ask', 'what text is there to index?'], { env: env() })).code).toBe(0);
    const stats = await ragline(['stats'], { env: env() });
    expect(stats.stdout).toMatch(/^sessions +1 \(1 turn\)$/m);
  });

  test('a folder with nothing to index says so, whether it is empty or every file was filtered out', async () => {
    const empty = docsFolder({});
    const none = await ragline(['ingest', empty], { env: env() });
    expect(none.code).toBe(0);
    // Into a database that did not exist: none is left behind, and that is said too.
    const notMade = `No database was created at ${dbFile()}: there was nothing to keep.`;
    expect(none.stderr.trim()).toBe(`No files found in ${empty}: nothing was indexed.\n${notMade}`);
    expect(fs.existsSync(dbFile())).toBe(false);
    const dir = docsFolder({ 'a.md': '# A\n\nSome text to index.\n', 'b.md': '# B\n\nMore text.\n' });
    const filtered = await ragline(['ingest', dir, '--include', '*.rst'], { env: env() });
    expect(filtered.stderr.trim()).toBe(`All 2 files in ${dir} were left out by --include/--exclude: nothing was indexed.\n${notMade}`);
    const indexed = await ragline(['ingest', dir], { env: env() });
    expect(indexed.stderr).toBe('');
    // Into a database that holds something, an empty folder changes nothing and the database stays.
    const again = await ragline(['ingest', empty], { env: env() });
    expect(again.stderr.trim()).toBe(`No files found in ${empty}: nothing was indexed.`);
    expect(fs.existsSync(dbFile())).toBe(true);
  });

  test('a folder whose every file is skipped, for whatever reasons, says so with the count of each and leaves no new database', async () => {
    const dir = docsFolder({ 'empty.md': '', 'image.png': 'x' });
    fs.writeFileSync(path.join(dir, 'data.txt'), Buffer.from([0x00, 0x01, 0x02]));
    const db = path.join(home, 'skipped.db');
    const result = await ragline(['--db', db, 'ingest', dir], { env: env() });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr.trim().split('\n')).toEqual([
      `Every file in ${dir} was skipped (1 binary, 1 empty, 1 unsupported-type): nothing was indexed. --verbose names them.`,
      `No database was created at ${db}: there was nothing to keep.`,
    ]);
    expect(fs.readdirSync(home).filter((name) => name.startsWith('skipped.db'))).toEqual([]);
  });

  test('a folder with no file of a type ragline reads says so, naming the types it reads and those it holds, and leaves the database as an empty folder does', async () => {
    const dir = docsFolder({ 'a.texi': 'x', 'b.texi': 'x', 'c.png': 'x', Makefile: 'all:\n', 'sub/d.texi': 'x' });
    fs.writeFileSync(path.join(dir, 'bc.texi.gz'), zlib.gzipSync('bc\n'));
    fs.writeFileSync(path.join(dir, '.hidden.md'), '# Hidden\n'); // never looked at, so not counted
    const result = await ragline(['--db', path.join(home, 'types.db'), 'ingest', dir], { env: env() });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/skipped 6 unsupported-type; 0 chunks written/);
    expect(result.stderr.trim().split('\n')).toEqual([
      `No file of a type ragline reads in ${dir}: nothing was indexed.`,
      expect.stringContaining('It holds 6 files of other types'),
      `No database was created at ${path.join(home, 'types.db')}: there was nothing to keep.`,
    ]);
    expect(result.stderr.trim().split('\n').slice(0, 2)).toEqual([
      `No file of a type ragline reads in ${dir}: nothing was indexed.`,
      'It holds 6 files of other types (3 .texi, 1 .png, 1 .texi.gz, 1 without an extension); ragline reads Markdown (.md, .mdx), text (.txt, .rst, .adoc, .asciidoc, .info; README, NEWS, ChangeLog and the like), HTML (.html, .htm) or PDF (.pdf), each also gzipped (.rst.gz).',
    ]);
    // A subfolder of an ingested folder: only its own files.
    fs.writeFileSync(path.join(dir, 'readme.md'), '# Read me\n\nSome text.\n');
    expect((await ragline(['--db', path.join(home, 'types.db'), 'ingest', dir], { env: env() })).code).toBe(0);
    const sub = await ragline(['--db', path.join(home, 'types.db'), 'ingest', path.join(dir, 'sub')], { env: env() });
    expect(sub.stderr).toContain('It holds 1 file of other types (1 .texi);');
    // The database is left as an empty folder leaves it: not made.
    const empty = await ragline(['--db', path.join(home, 'empty.db'), 'ingest', docsFolder({})], { env: env() });
    expect(empty.code).toBe(0);
    const unread = await ragline(['--db', path.join(home, 'unread.db'), 'ingest', docsFolder({ 'x.texi': 'x' })], { env: env() });
    expect(unread.code).toBe(0);
    expect(fs.existsSync(path.join(home, 'unread.db'))).toBe(false);
    expect(fs.existsSync(path.join(home, 'empty.db'))).toBe(false);
  });
});

describe('ingest arguments that are not a folder', () => {
  test('a missing path exits 2 with a one-line error and a hint', async () => {
    const result = await ragline(['ingest', path.join(home, 'no-such-folder')], { env: env() });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    const lines = result.stderr.trim().split('\n');
    expect(lines[0]).toMatch(/^error: No such file or folder: .*no-such-folder$/);
    expect(lines.length).toBeLessThanOrEqual(2);
    expect(fs.existsSync(dbFile())).toBe(false);
  });

  test('one file is added or updated as a document of its folder, and the folder\'s other documents stay', async () => {
    const dir = docsFolder({ 'a.md': '# A\n\nalpha text\n', 'b.md': '# B\n\nbravo text\n', 'x.md': '# X\n\nxray text\n' });
    expect((await ingestJson(dir)).files.added).toBe(3);
    fs.writeFileSync(path.join(dir, 'b.md'), '# B\n\nbravo text, changed\n');
    fs.writeFileSync(path.join(dir, 'c.md'), '# C\n\ncharlie text\n');
    fs.writeFileSync(path.join(dir, '[x].md'), '# Bracketed\n\na name that is not a glob\n');
    const added = await ingestJson(path.join(dir, 'c.md'));
    expect(added.files).toMatchObject({ added: 1, changed: 0, removed: 0 });
    // The folder's other files were not asked about: not counted as left out by a filter.
    expect(added.files.skipped).toEqual({});
    expect(added.root).toBe(fs.realpathSync(dir));
    const changed = await ingestJson(path.join(dir, 'b.md'));
    expect(changed.files).toMatchObject({ added: 0, changed: 1, removed: 0 });
    expect(changed.only).toEqual(['b.md']);
    // `stats` names the file the last ingest read, not its folder.
    const stats = await ragline(['stats'], { env: env() });
    expect(stats.stdout).toContain(`from ${path.join(fs.realpathSync(dir), 'b.md')} (`);
    expect((await ingestJson(path.join(dir, '[x].md'))).files).toMatchObject({ added: 1, changed: 0, unchanged: 0, removed: 0 });
    const paths = withDb((db) => db.prepare('SELECT path FROM documents ORDER BY path').pluck().all());
    expect(paths).toEqual(['[x].md', 'a.md', 'b.md', 'c.md', 'x.md']);
    // The folder again: nothing left to do.
    expect((await ingestJson(dir)).files).toMatchObject({ added: 0, changed: 0, unchanged: 5, removed: 0 });
  });

  test('a file in a subfolder of an ingested folder stays its document, and a named file no longer indexed loses its document', async () => {
    const dir = docsFolder({ 'a.md': '# A\n\nalpha secret\n', 'sub/c.md': '# C\n\ncharlie text\n', 'b.md': '# B\n\nbravo text\n' });
    expect((await ingestJson(dir)).files.added).toBe(3);
    fs.writeFileSync(path.join(dir, 'sub', 'c.md'), '# C\n\ncharlie text, changed\n');
    const sub = await ingestJson(path.join(dir, 'sub', 'c.md'));
    expect(sub.files).toMatchObject({ added: 0, changed: 1, removed: 0 });
    expect(sub.root).toBe(fs.realpathSync(dir));
    fs.writeFileSync(path.join(dir, 'a.md'), '');
    const emptied = await ingestJson(path.join(dir, 'a.md'));
    expect(emptied.files).toMatchObject({ removed: 1, skipped: { empty: 1 } });
    const rows = withDb((db) => db.prepare('SELECT root, path FROM documents ORDER BY path').all());
    expect(rows).toEqual([
      { root: fs.realpathSync(dir), path: 'b.md' },
      { root: fs.realpathSync(dir), path: 'sub/c.md' },
    ]);
  });

  test('a folder inside an ingested folder is updated there, not copied; one ingested on its own before is merged into the folder that holds it', async () => {
    const dir = docsFolder({ 'a.md': '# A\n\nalpha\n', 'sub/b.md': '# B\n\nbravo\n', 'sub/c.txt': 'charlie\n' });
    const rows = () => withDb((db) => db.prepare('SELECT root, path FROM documents ORDER BY root, path').all());
    const real = fs.realpathSync(dir);
    // The subfolder first, on its own; then the folder: one document per file.
    expect((await ingestJson(path.join(dir, 'sub'))).files.added).toBe(2);
    const whole = await ingestJson(dir);
    expect(whole.files).toMatchObject({ added: 3, removed: 0, merged: 2 });
    expect(rows()).toEqual([
      { root: real, path: 'a.md' },
      { root: real, path: 'sub/b.md' },
      { root: real, path: 'sub/c.txt' },
    ]);
    // The subfolder again: its files are the folder's documents; a new one is added there,
    // one gone is removed, the folder's others stay; globs are read from the subfolder.
    fs.writeFileSync(path.join(dir, 'sub', 'd.md'), '# D\n\ndelta\n');
    fs.rmSync(path.join(dir, 'sub', 'b.md'));
    const sub = await ingestJson(path.join(dir, 'sub'), '--exclude', '*.txt');
    expect(sub.root).toBe(real);
    expect(sub.only).toEqual(['sub/']);
    expect(sub.files).toMatchObject({ added: 1, removed: 2, skipped: { excluded: 1 } });
    expect(rows()).toEqual([
      { root: real, path: 'a.md' },
      { root: real, path: 'sub/d.md' },
    ]);
    const reindex = await ragline(['ingest', path.join(dir, 'sub'), '--reindex'], { env: env() });
    expect(reindex.code).toBe(2);
    expect(reindex.stderr).toContain(`is part of ${real}, already ingested`);
  });

  test('a subfolder ingested on its own, or one its folder never reads (hidden), stays its own; a subfolder\'s globs read its name as written', async () => {
    const dir = docsFolder({ 'a.md': '# A\n\nalpha\n', 'sub/b.md': '# B\n\nbravo\n', 'sub/c.md': '# C\n\ncharlie\n', '.notes/n.md': '# N\n\nnotes\n', 'a(b)/m.md': '# M\n\nmike\n', 'a(b)/t.txt': 'tango\n' });
    const real = fs.realpathSync(dir);
    const rows = () => withDb((db) => db.prepare('SELECT root, path FROM documents ORDER BY root, path').all());
    await ingestJson(path.join(dir, 'sub'));
    await ingestJson(path.join(dir, '.notes'));
    await ingestJson(dir, '--exclude', 'sub/**');
    fs.rmSync(path.join(dir, 'sub', 'c.md'));
    fs.writeFileSync(path.join(dir, '.notes', 'o.md'), '# O\n\noscar\n');
    expect((await ingestJson(path.join(dir, 'sub'))).files).toMatchObject({ removed: 1 });
    expect((await ingestJson(path.join(dir, '.notes'))).files).toMatchObject({ added: 1, unchanged: 1 });
    const inGlob = await ingestJson(path.join(dir, 'a(b)'), '--include', './*.md');
    expect(inGlob.files).toMatchObject({ unchanged: 1, removed: 1, skipped: { excluded: 1 } });
    expect(rows()).toEqual([
      { root: real, path: 'a(b)/m.md' },
      { root: real, path: 'a.md' },
      { root: path.join(real, '.notes'), path: 'n.md' },
      { root: path.join(real, '.notes'), path: 'o.md' },
      { root: path.join(real, 'sub'), path: 'b.md' },
    ]);
  });

  test('a symlinked folder inside an ingested folder is updated where it is linked; a link to a subfolder reaches that subfolder', async () => {
    const base = tempDir();
    try {
      const dir = path.join(base, 'docs');
      fs.mkdirSync(path.join(dir, 'sub'), { recursive: true });
      fs.mkdirSync(path.join(base, 'ext'));
      fs.writeFileSync(path.join(dir, 'a.md'), '# A\n\nalpha\n');
      fs.writeFileSync(path.join(base, 'ext', 'x.md'), '# X\n\nxray\n');
      fs.symlinkSync('../ext', path.join(dir, 'linked'));
      await ingestJson(dir);
      fs.writeFileSync(path.join(base, 'ext', 'y.md'), '# Y\n\nyankee\n');
      expect((await ingestJson(path.join(dir, 'linked'))).files).toMatchObject({ added: 1, unchanged: 1 });
      fs.writeFileSync(path.join(dir, 'sub', 's.md'), '# S\n\nsierra\n');
      fs.symlinkSync(path.join(dir, 'sub'), path.join(base, 'shortcut'));
      expect((await ingestJson(path.join(base, 'shortcut'))).only).toEqual(['sub/']);
      const real = fs.realpathSync(dir);
      expect(withDb((db) => db.prepare('SELECT root, path FROM documents ORDER BY root, path').all())).toEqual(
        ['a.md', 'linked/x.md', 'linked/y.md', 'sub/s.md'].map((p) => ({ root: real, path: p })),
      );
    } finally {
      fs.rmSync(base, { recursive: true, force: true });
    }
  });

  test('a file with --reindex, or a hidden one, exits 2 and changes nothing', async () => {
    const dir = docsFolder({ 'a.md': '# A\n\nalpha\n', 'b.md': '# B\n\nbravo\n', '.h.md': '# H\n\nhidden\n' });
    await ingestJson(dir);
    const reindex = await ragline(['ingest', path.join(dir, 'a.md'), '--reindex'], { env: env() });
    expect(reindex.code).toBe(2);
    expect(reindex.stderr).toContain('--reindex rebuilds the whole index, of every folder; a single file was given.');
    const hidden = await ragline(['ingest', path.join(dir, '.h.md')], { env: env() });
    expect(hidden.code).toBe(2);
    expect(hidden.stderr).toContain('is a hidden file, which an ingest of');
    expect(withDb((db) => db.prepare('SELECT path FROM documents ORDER BY path').pluck().all())).toEqual(['a.md', 'b.md']);
  });

  test('a file with --include or --exclude exits 2, saying what the globs would do, and writes nothing', async () => {
    const result = await ragline(['ingest', path.join(FIXTURE_DOCS, 'faq.md'), '--include', '*.md'], { env: env() });
    expect(result.code).toBe(2);
    const lines = result.stderr.trim().split('\n');
    expect(lines[0]).toBe('error: --include and --exclude choose among the files of a folder; a single file was given.');
    expect(lines[1]).toContain('--include "faq.md"` (the folder\'s files the globs leave out are then removed from the index)');
    expect(fs.existsSync(dbFile())).toBe(false);
  });

  test('a file of a kind no ingest reads exits 2, naming the kinds read, and writes nothing', async () => {
    const dir = docsFolder({ Makefile: 'all:\n', 'schema.json': '{}\n', README: 'Plain text without an extension.\n' });
    for (const name of ['Makefile', 'schema.json']) {
      const result = await ragline(['ingest', path.join(dir, name)], { env: env() });
      expect(result).toMatchObject({ code: 2, stdout: '' });
      expect(result.stderr).toContain(
        `${name} is not a kind of file ragline reads: Markdown (.md, .mdx), text (.txt, .rst, .adoc, .asciidoc, .info; README, NEWS, ChangeLog and the like), HTML (.html, .htm) or PDF (.pdf), each also gzipped (.md.gz, NEWS.gz), told by its name.`,
      );
      expect(result.stderr).toContain(`(e.g. ${name}.txt)`);
    }
    expect(fs.existsSync(dbFile())).toBe(false);
    // A binary file holds nothing to read under any name: no advice to copy it to a .txt name.
    fs.writeFileSync(path.join(dir, 'tool'), Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x01, 0x00, 0x00]));
    const binary = await ragline(['ingest', path.join(dir, 'tool')], { env: env() });
    expect(binary).toMatchObject({ code: 2, stdout: '' });
    expect(binary.stderr).toContain('It is a binary file (a program, an image, an archive), not text: it holds nothing to read under any name.');
    expect(binary.stderr).not.toContain('.txt)');
    expect(fs.existsSync(dbFile())).toBe(false);
    // A README is read by its name.
    const readme = await ragline(['ingest', path.join(dir, 'README')], { env: env() });
    expect(readme.code, readme.stderr).toBe(0);
    expect(readme.stdout).toMatch(/1 added/);
  });

  test('a gzipped file of a kind no ingest reads is to be decompressed, not renamed: the hint says zcat (tar for an archive)', async () => {
    const dir = docsFolder({});
    fs.writeFileSync(path.join(dir, 'bc.texi.gz'), zlib.gzipSync('bc\n'));
    fs.writeFileSync(path.join(dir, 'site.tar.gz'), zlib.gzipSync('tar'));
    const info = await ragline(['ingest', path.join(dir, 'bc.texi.gz')], { env: env() });
    expect(info).toMatchObject({ code: 2, stdout: '' });
    expect(info.stderr.trim().split('\n')[1]).toBe(`It is compressed with gzip: decompress it to a text file in a folder of documents and ingest that, e.g. zcat ${path.join(dir, 'bc.texi.gz')} > bc.texi.txt`);
    const tar = await ragline(['ingest', path.join(dir, 'site.tar.gz')], { env: env() });
    expect(tar.stderr).toContain(`It is a compressed tar archive: unpack it (tar -xzf ${path.join(dir, 'site.tar.gz')}) and ingest the folder it holds.`);
    expect(fs.existsSync(dbFile())).toBe(false);
  });
});

describe('several paths in one command', () => {
  const rows = () => withDb((db) => db.prepare('SELECT root, path FROM documents ORDER BY root, path').all());

  test('two folders are both indexed, in the order given, with a summary line each and a total', async () => {
    const first = docsFolder({ 'a.md': '# A\n\nalpha\n', 'sub/b.md': '# B\n\nbravo\n' });
    const second = docsFolder({ 'c.md': '# C\n\ncharlie\n', 'd.png': 'x' });
    const result = await ragline(['ingest', first, second], { env: env() });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout.split('\n')).toEqual([
      expect.stringMatching(new RegExp(`^Ingested ${first}: 2 added, 0 changed, 0 unchanged, 0 removed, skipped none; 2 chunks written \\(2 embedded, 0 reused\\); [\\d.]+s$`)),
      expect.stringMatching(new RegExp(`^Ingested ${second}: 1 added, 0 changed, 0 unchanged, 0 removed, skipped 1 unsupported-type; 1 chunk written \\(1 embedded, 0 reused\\); [\\d.]+s$`)),
      expect.stringMatching(/^Total for 2 paths: 3 added, 0 changed, 0 unchanged, 0 removed, skipped 1 unsupported-type; 3 chunks written \(3 embedded, 0 reused\); [\d.]+s$/),
      '',
    ]);
    // Written in the order given.
    expect(withDb((db) => db.prepare('SELECT root, path FROM documents ORDER BY id').all())).toEqual([
      { root: fs.realpathSync(first), path: 'a.md' },
      { root: fs.realpathSync(first), path: 'sub/b.md' },
      { root: fs.realpathSync(second), path: 'c.md' },
    ]);
    // The last ingest is the second path's.
    expect(JSON.parse((await ragline(['stats', '--json'], { env: env() })).stdout).lastIngest.root).toBe(fs.realpathSync(second));
    // Again: nothing to do for either.
    const again = await ragline(['ingest', first, second], { env: env() });
    expect(again.stdout).toMatch(/^Total for 2 paths: 0 added, 0 changed, 3 unchanged, 0 removed,/m);
  });

  test('a folder\'s contents given by a shell glob (docs/*): its files of kinds ragline does not read are skipped, named and counted as unsupported-type, the rest ingested', async () => {
    const dir = docsFolder({ Makefile: 'all:\n', 'conf.py': 'project = "x"\n', 'index.rst': 'Index\n=====\n\nindia\n', 'guide/a.md': '# A\n\nalpha\n' });
    const given = ['Makefile', 'conf.py', 'guide', 'index.rst'].map((name) => path.join(dir, name)); // as the shell sorts docs/*
    const [makefile, conf, guide, index] = given as [string, string, string, string];
    const result = await ragline(['ingest', ...given], { env: env() });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout.split('\n')).toEqual([
      `${makefile} is not a kind of file ragline reads: skipped (unsupported-type).`,
      `${conf} is not a kind of file ragline reads: skipped (unsupported-type).`,
      expect.stringMatching(new RegExp(`^Ingested ${guide}: 1 added, `)),
      expect.stringMatching(new RegExp(`^Ingested ${index}: 1 added, `)),
      expect.stringMatching(/^Total for 2 paths: 2 added, 0 changed, 0 unchanged, 0 removed, skipped 2 unsupported-type; /),
      '',
    ]);
    expect(rows()).toEqual([
      { root: fs.realpathSync(dir), path: 'index.rst' },
      { root: fs.realpathSync(path.join(dir, 'guide')), path: 'a.md' },
    ]);
    const json = await ragline(['ingest', ...given, '--json'], { env: env() });
    expect(json.code, json.stderr).toBe(0);
    const document = JSON.parse(json.stdout);
    expect(Object.keys(document)).toEqual(['db', 'paths', 'covered', 'skipped', 'notIngested', 'total']);
    expect(document.skipped).toEqual([
      { path: makefile, reason: 'unsupported-type' },
      { path: conf, reason: 'unsupported-type' },
    ]);
    expect(document.paths.map((entry: { path: string }) => entry.path)).toEqual([guide, index]);
    expect(document.total).toMatchObject({ paths: 2, files: { unchanged: 2, skipped: { 'unsupported-type': 2 } } });
    // Only such files: refused, as one is alone.
    const none = await ragline(['ingest', makefile, conf], { env: env() });
    expect(none).toMatchObject({ code: 2, stdout: '' });
    expect(none.stderr).toContain(`error: ${makefile} is not a kind of file ragline reads: `);
  });

  test('a file among several paths with --reindex or globs is refused, naming it: not "a single file was given"', async () => {
    const dir = docsFolder({ 'a.md': '# A\n\nalpha\n', 'sub/b.md': '# B\n\nbravo\n' });
    const file = path.join(dir, 'a.md');
    const reindex = await ragline(['ingest', path.join(dir, 'sub'), file, '--reindex'], { env: env() });
    expect(reindex).toMatchObject({ code: 2, stdout: '' });
    expect(reindex.stderr.split('\n')).toEqual([
      `error: --reindex rebuilds the whole index, of every folder; ${file} is a file.`,
      'Give only folders with --reindex (`ragline ingest <folder> --reindex`), then ingest the files without it.',
      '',
    ]);
    const globs = await ragline(['ingest', path.join(dir, 'sub'), file, '--exclude', 'drafts/'], { env: env() });
    expect(globs).toMatchObject({ code: 2, stdout: '' });
    expect(globs.stderr).toContain(`error: --include and --exclude choose among the files of a folder; ${file} is a file.\n`);
    expect(globs.stderr).toContain('or the file in a command of its own, without them.');
    expect(fs.existsSync(dbFile())).toBe(false);
  });

  test('a mistyped path, second or later, is refused before anything is written: no database is created, an existing one is left as it was', async () => {
    const first = docsFolder({ 'a.md': '# A\n\nalpha\n' });
    const second = docsFolder({ 'b.md': '# B\n\nbravo\n' });
    const typo = path.join(home, 'no-such-folder');
    const refused = await ragline(['ingest', first, typo], { env: env() });
    expect(refused).toMatchObject({ code: 2, stdout: '' });
    expect(refused.stderr.split('\n')).toEqual([
      `error: No such file or folder: ${typo}`,
      'Nothing was ingested: give each path as a folder of documents or one file, e.g. `ragline ingest ./docs ./notes/faq.md`.',
      '',
    ]);
    expect(fs.existsSync(dbFile())).toBe(false);
    // With a database: every missing path named, the database byte for byte as it was.
    expect((await ragline(['ingest', first], { env: env() })).code).toBe(0);
    fs.writeFileSync(path.join(first, 'new.md'), '# New\n\nnot to be read\n');
    const before = fs.readFileSync(dbFile());
    const later = await ragline(['ingest', first, second, typo, `${second}x`, '--json'], { env: env() });
    expect(later).toMatchObject({ code: 2, stdout: '' });
    expect(later.stderr).toContain(`error: No such file or folder: ${typo}, ${second}x\n`);
    expect(fs.readFileSync(dbFile()).equals(before)).toBe(true);
    expect(documentPaths()).toEqual(['a.md']);
  });

  test('--json prints, for one path, the object it always has; for two, one document with each path\'s object, the paths covered and not ingested, and the total', async () => {
    const first = docsFolder({ 'a.md': '# A\n\nalpha\n' });
    const second = docsFolder({ 'b.md': '# B\n\nbravo\n', 'c.md': '# C\n\ncharlie\n' });
    const one = await ingestJson(first);
    expect(Object.keys(one).sort()).toEqual(['bytes', 'chunks', 'db', 'embedder', 'files', 'interrupted', 'invalidUtf8', 'invalidUtf8Paths', 'root', 'seconds', 'skippedPaths', 'windows1252', 'windows1252Paths']);
    expect(one).toMatchObject({ db: dbFile(), root: fs.realpathSync(first), files: { added: 1, unchanged: 0 } });
    const result = await ragline(['ingest', first, second, '--json'], { env: env() });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe('');
    const both = JSON.parse(result.stdout) as { db: string; paths: (Summary & { path: string })[]; covered: unknown[]; skipped: unknown[]; notIngested: string[]; total: Record<string, unknown> };
    expect(Object.keys(both)).toEqual(['db', 'paths', 'covered', 'skipped', 'notIngested', 'total']);
    expect(both).toMatchObject({ db: dbFile(), covered: [], skipped: [], notIngested: [] });
    expect(both.paths.map((entry) => Object.keys(entry).sort())).toEqual([0, 1].map(() => ['path', ...Object.keys(one)].sort()));
    expect(both.paths).toMatchObject([
      { path: first, db: dbFile(), root: fs.realpathSync(first), files: { added: 0, unchanged: 1 } },
      { path: second, db: dbFile(), root: fs.realpathSync(second), files: { added: 2, unchanged: 0 } },
    ]);
    expect(both.total).toEqual({
      paths: 2,
      files: { added: 2, changed: 0, unchanged: 1, removed: 0, merged: 0, skipped: {} },
      chunks: { written: 2, embedded: 2, reused: 0, removed: 0 },
      invalidUtf8: 0,
      windows1252: 0,
      bytes: both.paths[0]!.bytes + both.paths[1]!.bytes,
      seconds: expect.any(Number),
      interrupted: false,
    });
  });

  test('--json, a failure after the first of several paths: the document has that path, the paths not ingested and a total that was not interrupted', async () => {
    const first = docsFolder({ 'x.rst': 'X\n=\n\nxray\n' });
    const second = docsFolder({ 'a.md': '# A\n\nalpha\n' });
    expect((await ragline(['ingest', second], { env: env() })).code).toBe(0);
    // The globs leave out the second folder's only document and add none: refused (exit 2).
    const result = await ragline(['ingest', first, second, '--include', '*.rst', '--json'], { env: env() });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--include/--exclude leave out the only document stored for');
    expect(JSON.parse(result.stdout)).toMatchObject({ paths: [{ path: first, files: { added: 1 } }], notIngested: [second], total: { paths: 1, interrupted: false } });
  });

  test('the same folder given twice (again with a trailing slash, or through a symlink) is ingested once, and a folder inside another given is read as part of it', async () => {
    const dir = docsFolder({ 'a.md': '# A\n\nalpha\n', 'sub/b.md': '# B\n\nbravo\n' });
    const link = path.join(home, 'link');
    fs.symlinkSync(dir, link);
    const result = await ragline(['ingest', path.join(dir, 'sub'), dir, dir, `${dir}/`, link, '--json'], { env: env() });
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout) as { paths: (Summary & { path: string })[]; covered: unknown[]; total: { paths: number } };
    expect(summary.paths).toHaveLength(1);
    expect(summary.paths[0]).toMatchObject({ path: dir, files: { added: 2, changed: 0, unchanged: 0, removed: 0 } });
    expect(summary.total.paths).toBe(1);
    expect(summary.covered).toEqual([
      { path: path.join(dir, 'sub'), by: dir, reason: 'inside' },
      { path: dir, by: dir, reason: 'same' },
      { path: `${dir}/`, by: dir, reason: 'same' },
      { path: link, by: dir, reason: 'same' },
    ]);
    expect(rows()).toEqual([
      { root: fs.realpathSync(dir), path: 'a.md' },
      { root: fs.realpathSync(dir), path: 'sub/b.md' },
    ]);
    // Without --json the paths read once are said, before the summaries.
    const text = await ragline(['ingest', dir, dir, link, path.join(dir, 'sub')], { env: env() });
    expect(text.stdout.split('\n').slice(0, 4)).toEqual([
      `${dir} was given again: ingested once.`,
      `${link} is the same as ${dir}: ingested once.`,
      `${path.join(dir, 'sub')} is inside ${dir}: ingested as part of it.`,
      expect.stringMatching(new RegExp(`^Ingested ${dir}: 0 added, 0 changed, 2 unchanged,`)),
    ]);
  });
});

describe('what the walker skips', () => {
  test('a broken symlink and symlink loops are skipped and counted, and ingest does not hang', async () => {
    const dir = docsFolder({ 'real.md': '# Real\n\nreal content here\n', 'sub/inner.md': '# Inner\n\ninner content\n' });
    fs.symlinkSync(path.join(dir, 'gone.md'), path.join(dir, 'broken.md'));
    fs.symlinkSync('self.md', path.join(dir, 'self.md')); // ELOOP
    fs.symlinkSync('..', path.join(dir, 'sub', 'up')); // directory cycle
    const summary = await ingestJson(dir);
    expect(summary.files.skipped['broken-symlink']).toBe(1);
    expect(summary.files.skipped['symlink-loop']).toBe(2);
    expect(documentPaths()).toEqual(['real.md', 'sub/inner.md']);
    // Ingesting one file of the folder says nothing of the links beside it.
    const one = await ragline(['ingest', path.join(dir, 'real.md'), '--json'], { env: env() });
    expect(one.code, one.stderr).toBe(0);
    expect(JSON.parse(one.stdout).files.skipped).toEqual({});
  });

  test('an unreadable file (chmod 000) is skipped and counted (run as user nobody when the suite runs as root, since root reads anything)', async () => {
    const dir = docsFolder({ 'ok.md': '# OK\n\nreadable\n', 'secret.md': '# Secret\n\nunreadable-canary\n' });
    fs.chmodSync(path.join(dir, 'secret.md'), 0o000);
    let result: CliResult;
    if (IS_ROOT) {
      chownTree(home, NOBODY);
      result = await runCli(['ingest', dir, '--json'], { env: env(), uid: NOBODY });
    } else result = await ragline(['ingest', dir, '--json'], { env: env() });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const summary = JSON.parse(result.stdout) as Summary;
    expect(summary.files.skipped).toEqual({ unreadable: 1 });
    expect(summary.files.added).toBe(1);
    expect(documentPaths()).toEqual(['ok.md']);
  });

  test('a file over --max-file-size is skipped as too-large and counted', async () => {
    const dir = docsFolder({ 'small.md': '# Small\n\nsmall file\n', 'big.md': '# Big\n\n' + 'big words here. '.repeat(200) });
    const summary = await ingestJson(dir, '--max-file-size', '1000');
    expect(summary.files.skipped).toEqual({ 'too-large': 1 });
    expect(documentPaths()).toEqual(['small.md']);
  });

  test('.gitignore rules are honoured at the root and in subfolders', async () => {
    const dir = docsFolder({
      '.gitignore': 'drafts/\n*.tmp.md\n',
      'keep.md': '# Keep\n\nkept\n',
      'notes.tmp.md': '# Tmp\n\nignored by pattern\n',
      'drafts/wip.md': '# WIP\n\nignored folder\n',
      'sub/.gitignore': 'private.md\n',
      'sub/private.md': '# Private\n\nignored in sub\n',
      'sub/public.md': '# Public\n\nkept in sub\n',
    });
    const summary = await ingestJson(dir);
    expect(documentPaths()).toEqual(['keep.md', 'sub/public.md']);
    expect(summary.files.skipped.gitignored).toBe(2); // the two files; an ignored folder is not entered
  });

  test('hidden folders, hidden files, .git and node_modules are skipped', async () => {
    const dir = docsFolder({
      'visible.md': '# Visible\n\nseen\n',
      '.hidden/secret.md': '# Hidden\n\nnot seen\n',
      '.git/HEAD.md': '# Git\n\nnot seen\n',
      'node_modules/pkg/README.md': '# Pkg\n\nnot seen\n',
      'deep/node_modules/x.md': '# X\n\nnot seen\n',
      '.dotfile.md': '# Dot\n\nnot seen\n',
    });
    await ingestJson(dir);
    expect(documentPaths()).toEqual(['visible.md']);
  });

  test('--include keeps only matching files and --exclude drops matching ones, both counted as excluded', async () => {
    const dir = docsFolder({
      'a.md': '# A\n\nalpha\n',
      'b.txt': 'Bravo\n\nbravo text\n',
      'guides/c.md': '# C\n\ncharlie\n',
      'guides/drafts/d.md': '# D\n\ndelta\n',
    });
    const included = await ingestJson(dir, '--include', '**/*.md');
    expect(documentPaths()).toEqual(['a.md', 'guides/c.md', 'guides/drafts/d.md']);
    expect(included.files.skipped).toEqual({ excluded: 1 });

    fs.rmSync(path.join(home, 'data'), { recursive: true });
    const excluded = await ingestJson(dir, '--exclude', 'guides/drafts/**', '*.txt');
    expect(documentPaths()).toEqual(['a.md', 'guides/c.md']);
    expect(excluded.files.skipped).toEqual({ excluded: 2 });
  });

  test('a glob is read as .gitignore reads it: without a "/" at any depth, with a leading "/" or "./" at the top only', async () => {
    const dir = docsFolder({
      'a.rst': 'A\n=\n\nalpha\n',
      'b.md': '# B\n\nbravo\n',
      'guides/c.rst': 'C\n=\n\ncharlie\n',
      'guides/drafts/d.md': '# D\n\ndelta\n',
      'notes/drafts/e.md': '# E\n\necho\n',
    });
    fs.rmSync(path.join(home, 'data'), { recursive: true, force: true });
    await ingestJson(dir, '--include', '*.rst');
    expect(documentPaths()).toEqual(['a.rst', 'guides/c.rst']);
    await ingestJson(dir, '--include', './*.rst', '/*.md');
    expect(documentPaths()).toEqual(['a.rst', 'b.md']);
    await ingestJson(dir, '--exclude', 'drafts/');
    expect(documentPaths()).toEqual(['a.rst', 'b.md', 'guides/c.rst']);
    // A subfolder's globs are read from it the same way.
    const sub = await ingestJson(path.join(dir, 'guides'), '--include', '*.md');
    expect(sub.only).toEqual(['guides/']);
    expect(documentPaths()).toEqual(['a.rst', 'b.md', 'guides/drafts/d.md']);
  });
});

describe('globs that would empty a folder', () => {
  /** A folder of `count` Markdown files, `n0.md`... (those from `sub` on in sub/), ingested. */
  async function ingested(count: number, sub = count): Promise<string> {
    const files: Record<string, string> = {};
    for (let i = 0; i < count; i++) files[`${i >= sub ? 'sub/' : ''}n${i}.md`] = `# Note ${i}\n\nText of note ${i}.\n`;
    const dir = docsFolder(files);
    expect((await ingestJson(dir)).files.added).toBe(count);
    return dir;
  }

  test('a mistyped --include that leaves out every stored document and adds none exits 2 naming how many and --yes, and removes nothing', async () => {
    const dir = await ingested(12);
    for (const json of [[], ['--json']]) {
      const refused = await ragline(['ingest', dir, '--include', '*.mdd', ...json], { env: env() });
      expect(refused.code).toBe(2);
      expect(refused.stdout).toBe('');
      expect(refused.stderr.split('\n')).toEqual([
        `error: --include/--exclude leave out all 12 documents stored for ${dir} and add none: this ingest would remove those 12 from the index. Nothing was written.`,
        'Check the globs (read as in .gitignore; left out: n0.md, n1.md, n10.md, ...), or add --yes to remove them.',
        '',
      ]);
      expect(documentPaths()).toHaveLength(12);
    }
    const removed = await ingestJson(dir, '--include', '*.mdd', '--yes');
    expect(removed.files.removed).toBe(12);
    expect(documentPaths()).toEqual([]);
  });

  test('a rebuild (--reindex) with a mistyped --include is refused before the index is cleared, and --yes goes on', async () => {
    const dir = await ingested(12);
    const other = docsFolder({ 'keep.md': '# Keep\n\nAnother folder.\n' });
    expect((await ingestJson(other)).files.added).toBe(1);
    const bytesBefore = fs.readFileSync(dbFile());
    const refused = await ragline(['ingest', dir, '--reindex', '--include', '*.mdd'], { env: env() });
    expect(refused.code).toBe(2);
    expect(fs.readFileSync(dbFile()).equals(bytesBefore)).toBe(true); // nothing written, not even a pending rebuild
    expect(refused.stderr).toContain(`leave out all 12 documents stored for ${dir} and add none`);
    expect(documentPaths()).toHaveLength(13);
    const doctor = await ragline(['doctor'], { env: env() });
    expect(doctor.stdout).not.toMatch(/rebuild/);
    const removed = await ragline(['ingest', dir, '--reindex', '--include', '*.mdd', '--yes'], { env: env() });
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stderr).toContain('nothing was indexed'); // said, as for any run that finds no file
    expect(documentPaths()).toEqual(['keep.md']);
  });

  test('globs that leave out more than half of the documents and more than 10 are refused; fewer, or a run that adds a file, go on', async () => {
    // 30 documents, 24 of them in sub/.
    const dir = await ingested(30, 6);
    const most = await ragline(['ingest', dir, '--include', '/*.md'], { env: env() });
    expect(most.code).toBe(2);
    expect(most.stderr).toContain(`leave out 24 of the 30 documents stored for ${dir} and add none: this ingest would remove those 24 from the index.`);
    expect(documentPaths()).toHaveLength(30);
    // 11 of 30: not more than half.
    const some = await ingestJson(dir, '--exclude', 'sub/n1*.md', 'sub/n2[0-2].md');
    expect(some.files.removed).toBe(13);
    // 17 left: leaving out 11 of them (more than half, more than 10) while adding one goes on.
    fs.writeFileSync(path.join(dir, 'new.md'), '# New\n\nA new note.\n');
    const adding = await ingestJson(dir, '--include', '/*.md');
    expect(adding.files).toMatchObject({ added: 1, removed: 11 });
    expect(documentPaths()).toHaveLength(7);
  });

  test('documents whose files are gone are removed without asking, every one of them', async () => {
    const dir = await ingested(12);
    for (const name of fs.readdirSync(dir)) fs.rmSync(path.join(dir, name));
    const result = await ragline(['ingest', dir, '--json'], { env: env() });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).files.removed).toBe(12);
    expect(documentPaths()).toEqual([]);
  });

  test.skipIf(ptyUnavailable() !== undefined)('on a terminal the removal is asked: no (or Ctrl-C) keeps every document, yes removes them', async () => {
    const dir = await ingested(12);
    for (const [answer, code] of [['n', 0], [KEY.ctrlC, 130]] as const) {
      const pty = spawnRaglineInPty(['ingest', dir, '--include', '*.mdd'], { env: env(), cols: 300 });
      try {
        await pty.expect(`leave out all 12 documents stored for ${dir} and add none. Remove them from the index?`);
        pty.type(answer === 'n' ? `n${KEY.enter}` : answer);
        await pty.expect('Nothing was ingested or removed.');
        expect((await pty.exited).code).toBe(code);
      } finally {
        pty.kill();
      }
      expect(documentPaths()).toHaveLength(12);
    }
    const pty = spawnRaglineInPty(['ingest', dir, '--include', '*.mdd'], { env: env(), cols: 300 });
    try {
      await pty.expect('Remove them from the index?');
      pty.type(`y${KEY.enter}`);
      await pty.expect('12 removed');
      expect((await pty.exited).code).toBe(0);
    } finally {
      pty.kill();
    }
    expect(documentPaths()).toEqual([]);
  }, 30_000);
});

describe('a name that is not valid UTF-8', () => {
  test('is skipped and counted as name-not-utf8, not as unreadable; the other files are indexed', async (context) => {
    const dir = docsFolder({ 'ok.md': '# Ok\n\nA plain name.\n' });
    try {
      fs.writeFileSync(Buffer.concat([Buffer.from(dir + path.sep), Buffer.from([0x63, 0x61, 0x66, 0xe9]), Buffer.from('.md')]), '# Cafe\n\nLatin-1 name.\n');
    } catch {
      context.skip(); // a file system that only takes UTF-8 names
    }
    const summary = await ingestJson(dir, '--verbose');
    expect(summary.files).toMatchObject({ added: 1, skipped: { 'name-not-utf8': 1 } });
    const verbose = await ragline(['ingest', dir, '--verbose'], { env: env() });
    expect(verbose.stdout).toContain('  name-not-utf8: caf\uFFFD.md');
  });
});
