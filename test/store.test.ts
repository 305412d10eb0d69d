// The database file as a user can get it wrong: something that is not SQLite at
// the --db path, a folder there, a file from a newer ragline, a write-protected
// file. Through the CLI on real files in temp dirs, in-process; as real child
// processes of the built CLI where only a process shows it: permission cases run
// it as user nobody when the suite runs as root (root may write anything), and the
// umask case sets the child's umask. Two processes on one database at once (two
// ingests, a schema changed under a reader) are in test/soak/store-contention.test.ts.

import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { SCHEMA_VERSION } from '../src/store/migrations.js';
import { BIN, FIXTURE_DOCS, ROOT, isolatedEnv, ragline, runCli, tempDir, type CliResult } from './helpers/cli.js';

const IS_ROOT = process.getuid?.() === 0;
const NOBODY = 65534;

let home: string;
const env = () => isolatedEnv(home);
const defaultDb = () => path.join(home, 'data', 'ragline', 'ragline.db');
const sha = (file: string) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');

beforeAll(() => {
  if (!fs.existsSync(path.join(ROOT, 'dist/cli/main.js'))) throw new Error('Build first: npx tsc -p .');
});
beforeEach(() => {
  home = tempDir();
});
afterEach(() => fs.rmSync(home, { recursive: true, force: true }));

/** Runs the CLI as user nobody (a process) when we are root (so file permissions apply), else as ourselves (in-process). */
function runCliUnprivileged(args: string[], input?: string): Promise<CliResult> {
  if (!IS_ROOT) return ragline(args, { env: env(), input });
  const chown = (p: string) => {
    fs.lchownSync(p, NOBODY, NOBODY);
    if (fs.lstatSync(p).isDirectory()) for (const name of fs.readdirSync(p)) chown(path.join(p, name));
  };
  chown(home);
  return runCli(args, { env: env(), uid: NOBODY, input });
}

describe('what is at the database path', () => {
  test('a device or FIFO is refused before SQLite opens it: nothing is written to it or beside it', async () => {
    const fifo = path.join(home, 'pipe.db');
    execFileSync('mkfifo', [fifo]);
    for (const file of ['/dev/null', fifo]) {
      for (const args of [['stats'], ['ingest', FIXTURE_DOCS]]) {
        const result = await ragline(['--db', file, ...args], { env: env() });
        expect(result.code, `${file} ${args[0]}`).toBe(2);
        expect(result.stderr).toContain(`error: ${file} is not a regular file (a device, FIFO or socket)`);
      }
      expect(fs.existsSync(file + '-journal') || fs.existsSync(file + '-wal')).toBe(false);
    }
  });

  test('a file that is not SQLite is refused with exit 2 and a clear error, and its bytes are unchanged', async () => {
    const file = path.join(home, 'notes.db');
    const bytes = Buffer.concat([Buffer.from('my precious notes, not a database\n'), Buffer.from([0, 1, 2, 255, 254])]);
    fs.writeFileSync(file, bytes);
    for (const args of [['ingest', FIXTURE_DOCS], ['stats'], ['search', 'webhooks']]) {
      const result = await ragline(['--db', file, ...args], { env: env() });
      expect(result.code, args[0]).toBe(2);
      expect(result.stderr).toContain(`error: ${file} is not a ragline database (not an SQLite file). It was left untouched.`);
      expect(result.stderr.trim().split('\n')).toHaveLength(2);
    }
    expect(fs.readFileSync(file).equals(bytes)).toBe(true);
    expect(fs.existsSync(file + '-wal') || fs.existsSync(file + '-shm') || fs.existsSync(file + '-journal')).toBe(false);
  });

  test('a folder at the database path is refused with exit 2', async () => {
    const dir = path.join(home, 'folder.db');
    fs.mkdirSync(dir);
    const result = await ragline(['--db', dir, 'ingest', FIXTURE_DOCS], { env: env() });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`error: ${dir} is a folder, not a database file.`);
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  test('a database whose user_version is above this build is refused with the "newer ragline" message, unchanged', async () => {
    expect((await ragline(['ingest', FIXTURE_DOCS], { env: env() })).code).toBe(0);
    const db = new Database(defaultDb());
    db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
    const before = sha(defaultDb());
    for (const args of [['stats'], ['ingest', FIXTURE_DOCS], ['search', 'webhooks']]) {
      const result = await ragline(args, { env: env() });
      expect(result.code, args[0]).toBe(2);
      expect(result.stderr).toContain(
        `This database was written by a newer ragline (schema ${SCHEMA_VERSION + 1}; this build knows up to ${SCHEMA_VERSION}).`,
      );
      expect(result.stderr).toContain('Upgrade ragline');
    }
    expect(sha(defaultDb())).toBe(before);
  });

  test('a new database file is created with mode 0600 (and its WAL side files and folder are owner-only)', async () => {
    const result = await ragline(['ingest', FIXTURE_DOCS], { env: isolatedEnv(home) });
    expect(result.code).toBe(0);
    expect(fs.statSync(defaultDb()).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.dirname(defaultDb())).mode & 0o777).toBe(0o700);
    for (const suffix of ['-wal', '-shm']) {
      if (fs.existsSync(defaultDb() + suffix)) expect(fs.statSync(defaultDb() + suffix).mode & 0o077, suffix).toBe(0);
    }
  });

  test('a write-protected database (chmod 444) gives a clear error on ingest and is left unchanged; reading still works (run as user nobody when the suite runs as root, since root writes anything)', async () => {
    expect((await ragline(['ingest', FIXTURE_DOCS], { env: env() })).code).toBe(0);
    const db = new Database(defaultDb());
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
    fs.chmodSync(defaultDb(), 0o444);
    const before = sha(defaultDb());
    const result = await runCliUnprivileged(['ingest', FIXTURE_DOCS, '--reindex']);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(`error: ${defaultDb()} is read-only: this command needs to write to it (SQLITE_READONLY).`);
    expect(result.stderr).toContain(`Make it writable (chmod u+w ${defaultDb()})`);
    expect(result.stderr).not.toContain('RAGLINE_DEBUG');
    expect(sha(defaultDb())).toBe(before);
    const stats = await runCliUnprivileged(['stats', '--json']);
    expect(stats.code, stats.stderr).toBe(0);
    expect(JSON.parse(stats.stdout).documents).toBeGreaterThan(0);
  });
});

describe("files that are not ragline's, or that it refuses, are never written", () => {
  const COMMANDS = [['stats'], ['ingest', FIXTURE_DOCS], ['search', 'webhooks'], ['sessions', 'list']];
  const sideFiles = (file: string) => ['-wal', '-shm', '-journal'].filter((suffix) => fs.existsSync(file + suffix));

  test("another program's SQLite file is refused with what was found in it, and its bytes are unchanged", async () => {
    const file = path.join(home, 'other.sqlite');
    const other = new Database(file);
    other.exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes (body) VALUES ('keep me');");
    other.close();
    const before = sha(file);
    for (const args of COMMANDS) {
      const result = await ragline(['--db', file, ...args], { env: env() });
      expect(result.code, `${args[0]}: ${result.stderr}`).toBe(2);
      expect(result.stderr).toContain(`error: ${file} is another program's SQLite database (table notes), not a ragline database. It was left untouched.`);
    }
    expect(sha(file)).toBe(before);
    expect(sideFiles(file)).toEqual([]);
  });

  test("another program's WAL-mode file with frames still in its -wal is refused without a checkpoint: the file and its -wal are unchanged", async () => {
    const source = path.join(home, 'src', 'live.sqlite');
    fs.mkdirSync(path.dirname(source));
    const live = new Database(source);
    live.pragma('journal_mode = WAL');
    live.pragma('wal_autocheckpoint = 0');
    live.exec('CREATE TABLE notes (body TEXT)');
    live.pragma('wal_checkpoint(TRUNCATE)');
    live.exec("INSERT INTO notes VALUES ('only in the WAL')");
    // A copy taken while the program has it open: the last write is only in the -wal.
    const file = path.join(home, 'other.sqlite');
    fs.copyFileSync(source, file);
    fs.copyFileSync(source + '-wal', file + '-wal');
    live.close();
    const before = [sha(file), sha(file + '-wal')];
    for (const args of COMMANDS) {
      const result = await ragline(['--db', file, ...args], { env: env() });
      expect(result.code, `${args[0]}: ${result.stderr}`).toBe(2);
      expect(result.stderr).toContain('(table notes), not a ragline database. It was left untouched.');
      expect([sha(file), sha(file + '-wal')], args[0]).toEqual(before);
    }
  });

  test("another program's rollback-journal file with an unfinished transaction (a hot journal) is refused before SQLite rolls it back: both files unchanged", async () => {
    const source = path.join(home, 'src', 'busy.sqlite');
    fs.mkdirSync(path.dirname(source));
    const busy = new Database(source);
    busy.pragma('journal_mode = DELETE');
    busy.exec("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('committed')");
    busy.pragma('cache_size = 1'); // the transaction spills its pages into the file
    busy.exec('BEGIN');
    const insert = busy.prepare('INSERT INTO notes VALUES (?)');
    for (let i = 0; i < 2000; i++) insert.run('x'.repeat(200));
    // A copy taken mid-transaction, as a crash leaves it: the file changed, the journal holds the old pages.
    const file = path.join(home, 'other.sqlite');
    fs.copyFileSync(source, file);
    fs.copyFileSync(source + '-journal', file + '-journal');
    busy.exec('ROLLBACK');
    busy.close();
    const before = [sha(file), sha(file + '-journal')];
    for (const args of COMMANDS) {
      const result = await ragline(['--db', file, ...args], { env: env() });
      expect(result.code, `${args[0]}: ${result.stderr}`).toBe(2);
      expect(result.stderr).toContain('has an unfinished transaction of another program beside it (other.sqlite-journal). It was left untouched.');
      expect([sha(file), sha(file + '-journal')], args[0]).toEqual(before);
    }
  });

  test("a SQLite file holding only a view is another program's: every command, ingest too, refuses it and leaves its bytes as they were", async () => {
    const file = path.join(home, 'view.db');
    const other = new Database(file);
    other.exec('CREATE VIEW v AS SELECT 1');
    other.close();
    const before = sha(file);
    for (const args of [...COMMANDS, ['doctor']]) {
      const result = await ragline(['--db', file, ...args], { env: env() });
      expect(result.code, `${args[0]}: ${result.stderr}`).toBe(args[0] === 'doctor' ? 1 : 2);
      expect(`${result.stdout}${result.stderr}`).toContain(`${file} is another program's SQLite database (no tables; view v), not a ragline database. It was left untouched.`);
    }
    expect(sha(file)).toBe(before);
    expect(sideFiles(file)).toEqual([]);
  });

  test('an empty file, or a SQLite file with nothing in it, is refused by the commands that do not make a database, unchanged; ingest builds one in it', async () => {
    const emptyFile = path.join(home, 'empty.db');
    fs.writeFileSync(emptyFile, '');
    const emptySqlite = path.join(home, 'blank.db');
    new Database(emptySqlite).exec('VACUUM'); // a header and no schema
    for (const [file, what] of [[emptyFile, 'an empty file'], [emptySqlite, 'an SQLite database with nothing in it']] as const) {
      const before = sha(file);
      for (const args of [['stats'], ['search', 'webhooks'], ['sessions', 'list'], ['doctor']]) {
        const result = await ragline(['--db', file, ...args], { env: env() });
        expect(result.code, `${args[0]}: ${result.stderr}`).toBe(args[0] === 'doctor' ? 1 : 2);
        expect(`${result.stdout}${result.stderr}`).toContain(`${file} is ${what}, not a ragline database. It was left untouched.`);
        expect(`${result.stdout}${result.stderr}`).toContain(`run \`ragline ingest <folder> --db ${file}\` to build one there`);
        expect(sha(file), args[0]).toBe(before);
        expect(sideFiles(file), args[0]).toEqual([]);
      }
      const ingest = await ragline(['--db', file, 'ingest', FIXTURE_DOCS], { env: env() });
      expect(ingest.code, ingest.stderr).toBe(0);
      const stats = await ragline(['--db', file, 'stats', '--json'], { env: env() });
      expect(JSON.parse(stats.stdout).documents).toBe(16);
    }
  });

  test('a foreign file with its own meta table (and an application id) is refused, not half-migrated or switched to WAL', async () => {
    const file = path.join(home, 'app.db');
    const other = new Database(file);
    other.exec("PRAGMA application_id = 1234; CREATE TABLE meta (k TEXT, v TEXT); CREATE TABLE things (id INTEGER);");
    other.close();
    const before = sha(file);
    for (const args of COMMANDS) {
      const result = await ragline(['--db', file, ...args], { env: env() });
      expect(result.code, `${args[0]}: ${result.stderr}`).toBe(2);
      expect(result.stderr).toContain('(tables meta, things, application id 0x000004d2), not a ragline database. It was left untouched.');
    }
    expect(sha(file)).toBe(before);
    expect(sideFiles(file)).toEqual([]);
  });

  test('a database made by ragline carries its application id; one made before the mark is recognised by its tables and marked', async () => {
    expect((await ragline(['ingest', FIXTURE_DOCS], { env: env() })).code).toBe(0);
    const read = () => {
      const db = new Database(defaultDb(), { readonly: true });
      try {
        return db.pragma('application_id', { simple: true });
      } finally {
        db.close();
      }
    };
    expect(read()).toBe(0x52674c6e);
    const db = new Database(defaultDb());
    db.pragma('application_id = 0');
    db.close();
    const again = await ragline(['ingest', FIXTURE_DOCS], { env: env() });
    expect(again.code, again.stderr).toBe(0);
    expect(read()).toBe(0x52674c6e);
  });

  test('a newer-schema database in rollback-journal mode is refused before the switch to WAL: bytes unchanged', async () => {
    expect((await ragline(['ingest', FIXTURE_DOCS], { env: env() })).code).toBe(0);
    const db = new Database(defaultDb());
    db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    db.pragma('journal_mode = DELETE');
    db.close();
    const header = fs.readFileSync(defaultDb()).subarray(18, 20);
    expect([...header]).toEqual([1, 1]); // rollback journal
    const before = sha(defaultDb());
    for (const args of COMMANDS) {
      const result = await ragline(args, { env: env() });
      expect(result.code, args[0]).toBe(2);
      expect(result.stderr).toContain(`written by a newer ragline (schema ${SCHEMA_VERSION + 1}`);
    }
    expect(sha(defaultDb())).toBe(before);
    expect(sideFiles(defaultDb())).toEqual([]);
  });

  test('a database whose schema page is corrupted is refused as corrupted before any write: bytes unchanged', async () => {
    expect((await ragline(['ingest', FIXTURE_DOCS], { env: env() })).code).toBe(0);
    const db = new Database(defaultDb());
    db.pragma('journal_mode = DELETE');
    db.close();
    const bytes = fs.readFileSync(defaultDb());
    bytes.fill(0xa5, 100 + 8, 4096); // page 1 past the header: sqlite_master's cells
    fs.writeFileSync(defaultDb(), bytes);
    const before = sha(defaultDb());
    for (const args of COMMANDS) {
      const result = await ragline(args, { env: env() });
      expect(result.code, `${args[0]}: ${result.stderr}`).toBe(2);
      expect(result.stderr).toContain(`error: ${defaultDb()} is corrupted or not a ragline database. It was left untouched.`);
    }
    expect(sha(defaultDb())).toBe(before);
    expect(sideFiles(defaultDb())).toEqual([]);
  });

  test('a small database damaged past its first pages is refused by ingest and search before any write: bytes unchanged', async () => {
    expect((await ragline(['ingest', FIXTURE_DOCS], { env: env() })).code).toBe(0);
    const db = new Database(defaultDb());
    db.pragma('journal_mode = DELETE');
    const pageSize = db.pragma('page_size', { simple: true }) as number;
    // a leaf page of the chunks table, well past the schema
    const page = db.prepare("SELECT max(pageno) FROM dbstat WHERE name = 'chunks' AND pagetype = 'leaf'").pluck().get() as number;
    db.close();
    const bytes = fs.readFileSync(defaultDb());
    bytes.fill(0xa5, (page - 1) * pageSize, page * pageSize);
    fs.writeFileSync(defaultDb(), bytes);
    const before = sha(defaultDb());
    for (const args of [['ingest', FIXTURE_DOCS, '--checksum'], ['search', 'webhooks'], ['sessions', 'list']]) {
      const result = await ragline(args, { env: env() });
      expect(result.code, `${args[0]}: ${result.stderr}`).toBe(2);
      expect(result.stderr).toContain(`error: ${defaultDb()} is corrupted or not a ragline database. It was left untouched.`);
    }
    expect(sha(defaultDb())).toBe(before);
    expect(sideFiles(defaultDb())).toEqual([]);
  });
});

describe('messages that say what to do', () => {
  test('a database in a read-only folder (no -shm yet): every command says the folder is read-only and how to fix it; nothing is changed', async () => {
    const folder = path.join(home, 'ro');
    const file = path.join(folder, 'r.db');
    expect((await ragline(['--db', file, 'ingest', FIXTURE_DOCS], { env: env() })).code).toBe(0);
    expect(fs.existsSync(file + '-shm')).toBe(false); // the last connection removed its side files
    fs.chmodSync(folder, 0o555);
    const before = sha(file);
    try {
      for (const args of [['stats'], ['search', 'webhooks'], ['ingest', FIXTURE_DOCS]]) {
        const result = await runCliUnprivileged(['--db', file, ...args]);
        expect(result.code, `${args[0]}: ${result.stderr}`).toBe(1);
        expect(result.stderr).toContain(`error: The folder ${folder} is read-only, and SQLite needs to create r.db-wal and -shm beside the database, even to read it.`);
        expect(result.stderr).toContain(`Make the folder writable (chmod u+w ${folder})`);
        expect(result.stderr).not.toContain('attempt to write a readonly database');
      }
    } finally {
      fs.chmodSync(folder, 0o755);
    }
    expect(sha(file)).toBe(before);
  });

  test('a database where no file can be made (a path through a file, or /proc): refused before any work, exit 2, with the fix', async () => {
    const plain = path.join(home, 'plain.txt');
    fs.writeFileSync(plain, 'a file, not a folder');
    for (const file of [path.join(plain, 'r.db'), ...(fs.existsSync('/proc/self') ? ['/proc/ragline-test.db'] : [])]) {
      const result = await ragline(['--db', file, 'ingest', FIXTURE_DOCS], { env: env() });
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toMatch(new RegExp(`^error: Cannot (?:create|open) the database at ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: `));
      expect(result.stderr).toContain('Choose a writable location with --db or RAGLINE_DB.');
    }
    expect(fs.readFileSync(plain, 'utf8')).toBe('a file, not a folder');
  });

  test('a database its user cannot read: a read-only command says it cannot read it (not "Cannot write")', async () => {
    const file = path.join(home, 'locked', 'r.db');
    expect((await ragline(['--db', file, 'ingest', FIXTURE_DOCS], { env: env() })).code).toBe(0);
    fs.chmodSync(file, 0o000);
    const result = await runCliUnprivileged(['--db', file, 'stats']);
    fs.chmodSync(file, 0o600);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`error: Cannot read the database at ${file}: permission denied.`);
    expect(result.stderr).not.toContain('Cannot write');
  });

  test('a write-protected database in rollback-journal mode: read-only commands read it, chat says it is read-only; nothing is changed', async () => {
    const file = path.join(home, 'rb', 'r.db');
    expect((await ragline(['--db', file, 'ingest', FIXTURE_DOCS], { env: env() })).code).toBe(0);
    const db = new Database(file);
    db.pragma('journal_mode = DELETE');
    db.close();
    fs.chmodSync(file, 0o444);
    const before = sha(file);
    const stats = await runCliUnprivileged(['--db', file, 'stats', '--json']);
    expect(stats.code, stats.stderr).toBe(0);
    expect(JSON.parse(stats.stdout).documents).toBe(16);
    const search = await runCliUnprivileged(['--db', file, 'search', 'webhooks']);
    expect(search.code, search.stderr).toBe(0);
    const chat = await runCliUnprivileged(['--db', file, 'chat', '--json'], 'how do webhooks work?\n');
    expect(chat.code).toBe(1);
    expect(chat.stderr).toContain('error: The database is read-only for this user, so this command could not write to it; nothing was changed.');
    expect(sha(file)).toBe(before);
    expect([...fs.readFileSync(file).subarray(18, 20)]).toEqual([1, 1]);
  });

  test('a write-protected database made before the mark (no application id) is read as it is, in WAL and rollback-journal mode', async () => {
    const file = path.join(home, 'old', 'o.db');
    expect((await ragline(['--db', file, 'ingest', FIXTURE_DOCS], { env: env() })).code).toBe(0);
    for (const mode of ['WAL', 'DELETE']) {
      fs.chmodSync(file, 0o600);
      const db = new Database(file);
      db.pragma('application_id = 0');
      db.pragma(`journal_mode = ${mode}`);
      db.close();
      fs.chmodSync(file, 0o444);
      const before = sha(file);
      const stats = await runCliUnprivileged(['--db', file, 'stats', '--json']);
      expect(stats.code, `${mode}: ${stats.stderr}`).toBe(0);
      expect(JSON.parse(stats.stdout).documents).toBe(16);
      const search = await runCliUnprivileged(['--db', file, 'search', 'webhooks']);
      expect(search.code, `${mode}: ${search.stderr}`).toBe(0);
      expect(sha(file)).toBe(before);
    }
  });

  test('doctor on a corrupted WAL-mode database reports it and leaves it untouched, with no -wal or -shm beside it', async () => {
    const file = path.join(home, 'c.db');
    expect((await ragline(['--db', file, 'ingest', FIXTURE_DOCS], { env: env() })).code).toBe(0);
    expect(fs.existsSync(file + '-wal')).toBe(false);
    const bytes = fs.readFileSync(file);
    expect(bytes[18]).toBe(2); // WAL mode
    bytes.fill(0xa5, 108, 4096); // the schema's cells on page 1
    fs.writeFileSync(file, bytes);
    const before = sha(file);
    for (const args of [['doctor'], ['stats'], ['ingest', FIXTURE_DOCS]]) {
      const result = await ragline(['--db', file, ...args], { env: env() });
      expect(`${result.stdout}${result.stderr}`, args[0]).toContain('is corrupted or not a ragline database. It was left untouched.');
      expect(sha(file)).toBe(before);
      expect(['-wal', '-shm'].filter((suffix) => fs.existsSync(file + suffix)), args[0]).toEqual([]);
    }
  });

  test('sessions export -o writes a file only its owner can read, whatever the umask', async () => {
    const db = path.join(home, 'e.db');
    expect((await ragline(['--db', db, 'ingest', FIXTURE_DOCS], { env: env() })).code).toBe(0);
    expect((await ragline(['--db', db, 'chat'], { env: env(), input: 'how do webhooks work?\n/exit\n' })).code).toBe(0);
    const out = path.join(home, 'export.md');
    const result = await new Promise<number | null>((resolve) => {
      const child = spawn('/bin/sh', ['-c', `umask 000; exec "${process.execPath}" "${BIN}" --db "${db}" sessions export last -o "${out}"`], {
        env: env(),
        cwd: ROOT,
        stdio: 'ignore',
      });
      child.on('close', resolve);
    });
    expect(result).toBe(0);
    expect(fs.statSync(out).mode & 0o777).toBe(0o600);
    expect(fs.readFileSync(out, 'utf8')).toContain('how do webhooks work?');
  });

  test.skipIf(!IS_ROOT)('sessions export -o to a device (a /dev/null made with mknod) writes to it and leaves its mode alone', async () => {
    const db = path.join(home, 'e.db');
    expect((await ragline(['--db', db, 'ingest', FIXTURE_DOCS], { env: env() })).code).toBe(0);
    expect((await ragline(['--db', db, 'chat'], { env: env(), input: 'how do webhooks work?\n/exit\n' })).code).toBe(0);
    const device = path.join(home, 'null');
    execFileSync('mknod', ['-m', '666', device, 'c', '1', '3']);
    const result = await ragline(['--db', db, 'sessions', 'export', 'last', '-o', device], { env: env() });
    expect(result.code, result.stderr).toBe(0);
    expect(fs.statSync(device).mode & 0o777).toBe(0o666);
  });
});
