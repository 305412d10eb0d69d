// Opens ragline's single SQLite file: checks that it really is one, loads
// sqlite-vec, sets the pragmas a reader beside a writer needs (WAL, busy
// timeout, mmap) and brings the schema up to date.

import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';
import type * as SqliteVec from 'sqlite-vec';
import { UserError } from '../util/errors.js';
import { assertKnownSchema, createSchema, migrate } from './migrations.js';

// better-sqlite3 is CommonJS, and sqlite-vec ships a CommonJS entry too: required,
// neither is scanned for named exports nor resolved by the ES module loader, which
// no other import of a no-change re-ingest needs.
const require = createRequire(import.meta.url);
const Database = require('better-sqlite3') as typeof BetterSqlite3;
const sqliteVec = require('sqlite-vec') as typeof SqliteVec;

/**
 * better-sqlite3's compiled addon where its install puts it. Handing it over
 * spares the search its `bindings` helper does through a dozen build folders on
 * the first open (~1.5 ms); when it is elsewhere, that search still finds it.
 */
function nativeBinding(): string | undefined {
  try {
    return require.resolve('better-sqlite3/build/Release/better_sqlite3.node');
  } catch {
    return undefined;
  }
}

export type Db = BetterSqlite3.Database;

export interface OpenOptions {
  /**
   * Make a new database: create the file (and its folder) when it does not exist,
   * and give an empty one (0 bytes, or SQLite with nothing in it) ragline's schema.
   * Without it, a missing or empty file is refused and left as it is.
   */
  create?: boolean;
  /** Open read-only (no migrations are run; an old schema is refused). */
  readonly?: boolean;
}

const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');

/** Opens (or creates) the database at `file`, loaded with sqlite-vec and migrated. `:memory:` works for tests. */
export function openDatabase(file: string, options: OpenOptions = {}): Db {
  const inMemory = file === ':memory:';
  let existed = inMemory ? false : fs.existsSync(file);
  if (!inMemory) {
    if (existed) {
      if (checkIsSqlite(file) === 'empty' && !options.create) throw notADatabaseYet(file, 'an empty file');
    } else if (!options.create) {
      throw new UserError(`No database at ${file}.`, {
        hint: 'Run `ragline ingest <folder>` first, or point --db / RAGLINE_DB at an existing database.',
        exitCode: 2,
      });
    } else {
      try {
        fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
        // Create the file ourselves so it is readable by its owner only.
        fs.closeSync(fs.openSync(file, 'wx', 0o600));
      } catch (err) {
        // Another ragline process created it a moment ago: open theirs.
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw fsError(err, file, 'create');
        existed = true;
        checkIsSqlite(file);
      }
    }
  }

  // Opening a WAL-mode file creates its -wal and -shm; a file that is refused gets
  // back to how it was found (see leaveAsFound).
  const sideFilesBefore = inMemory ? undefined : sideFiles(file);
  let db: Db;
  try {
    db = new Database(file, { readonly: options.readonly ?? false, fileMustExist: !inMemory, nativeBinding: nativeBinding() });
  } catch (err) {
    if (sideFilesBefore) leaveAsFound(file, sideFilesBefore);
    throw sqliteOpenError(err, file);
  }
  try {
    sqliteVec.load(db);
    db.pragma('busy_timeout = 10000');
    // Every check that can refuse the file runs before the first write (the switch
    // to WAL rewrites the header of a rollback-journal file), all in one read
    // transaction: another process creating or changing the same file at this moment
    // is seen before or after its transaction, not in between. (quick_check connects
    // the FTS5 table, and its constructor reads the index on its own: outside one
    // transaction, schema changes committed meanwhile made it fail with `vtable
    // constructor failed: chunks_fts`, and the schema read with `database schema has
    // changed`.)
    let found: Ownership = inMemory
      ? 'empty'
      : db.transaction(() => {
          const ownership = checkOwnership(db, file);
          if (!options.readonly) quickCheckIfSmall(db, file);
          return ownership;
        })();
    // An SQLite file with nothing in it (or a 0-byte file another process made since
    // checkIsSqlite) becomes ragline's only by a command that makes a database.
    if (found === 'empty' && !inMemory && !options.create) throw notADatabaseYet(file, 'an SQLite database with nothing in it');
    // A file this user cannot write is read as it is (a command that only reads
    // works; one that writes is told so at its first write).
    const canWrite = !options.readonly && (inMemory || writable(file));
    if (canWrite && found === 'empty') found = createSchemaOnce(db, file);
    if (canWrite) {
      enableWal(db);
      db.pragma('synchronous = NORMAL');
    }
    db.pragma('foreign_keys = ON');
    // No memory-mapped I/O, but for an ingest's writes (ingest/run.ts): a chat, a search
    // or `ragline mcp` reads through SQLite's page cache (64 MB). Mapped, every page a
    // long chat ever read stayed in the process (at a million chunks 5 MB more a turn,
    // 490 MB after 60 turns) and its turns were slower (at 20k chunks 16-19 against
    // 10-12 ms p50; bench/results/million.md).
    db.pragma('mmap_size = 0');
    db.pragma('cache_size = -65536');
    migrate(db, { readonly: options.readonly ?? false });
    // ragline's mark in the header of a file recognised as its own by its tables (one
    // made before the mark that this user cannot write is read unmarked).
    if (canWrite && found === 'legacy') db.pragma(`application_id = ${APPLICATION_ID}`);
  } catch (err) {
    closeWithoutCheckpoint(db, file, inMemory);
    if (sideFilesBefore) leaveAsFound(file, sideFilesBefore);
    if (err instanceof UserError) throw err;
    throw sqliteOpenError(err, file);
  }
  if (!inMemory && !existed) {
    for (const suffix of ['-wal', '-shm']) {
      try {
        fs.chmodSync(file + suffix, 0o600);
      } catch {
        /* the side files may not exist yet */
      }
    }
  }
  return db;
}

/**
 * ragline's mark in the SQLite header (`PRAGMA application_id`, bytes 68-71):
 * "RgLn". Set on every database ragline creates, and on one it recognises as
 * its own by its tables (files made before the mark existed).
 */
export const APPLICATION_ID = 0x52674c6e;

/** The tables every ragline database has had since its first schema. */
const RAGLINE_TABLES = ['meta', 'documents', 'chunks', 'chunks_fts', 'sessions', 'turns'];

/** Why a file is ragline's: its mark, its tables (made before the mark), or nothing in it yet. */
type Ownership = 'marked' | 'legacy' | 'empty';

/**
 * Refuses, before anything is written, a file that is not ragline's: another
 * program's SQLite database (its tables are named), a database of a newer
 * ragline, or one whose schema cannot be read. Ours: it carries the mark, or it
 * has ragline's tables (made before the mark), or it is empty, nothing at all in
 * its schema (a file just created, here or by another ragline process starting
 * at the same moment; only a command that makes a database takes it).
 * Its reads belong in one transaction (see openDatabase).
 */
function checkOwnership(db: Db, file: string): Ownership {
  const applicationId = db.pragma('application_id', { simple: true }) as number;
  const userVersion = db.pragma('user_version', { simple: true }) as number;
  // Reading the schema parses every entry: a damaged first page or schema fails here.
  const entries = db.prepare('SELECT type, name FROM sqlite_master ORDER BY name').all() as Array<{ type: string; name: string }>;
  const tables = entries.filter(({ type, name }) => type === 'table' && !name.startsWith('sqlite_')).map(({ name }) => name);
  const stamped = applicationId === APPLICATION_ID;
  // Empty: nothing at all in the schema. A file with only a view in it is somebody's.
  const empty = applicationId === 0 && userVersion === 0 && entries.length === 0;
  const legacy = applicationId === 0 && userVersion > 0 && RAGLINE_TABLES.every((name) => tables.includes(name));
  if (!stamped && !empty && !legacy) {
    const others = entries.filter(({ type }) => type !== 'table').map(({ type, name }) => `${type} ${name}`);
    const found =
      tables.length > 0
        ? `${tables.length === 1 ? 'table' : 'tables'} ${listed(tables)}`
        : others.length > 0
          ? `no tables; ${listed(others)}`
          : 'no tables';
    const id = applicationId === 0 ? '' : `, application id 0x${(applicationId >>> 0).toString(16).padStart(8, '0')}`;
    throw new UserError(`${file} is another program's SQLite database (${found}${id}), not a ragline database. It was left untouched.`, {
      hint: 'Choose another path with --db or RAGLINE_DB, or move that file away.',
      exitCode: 2,
    });
  }
  assertKnownSchema(userVersion);
  return stamped ? 'marked' : empty ? 'empty' : 'legacy';
}

/** The first five names, and how many more. */
function listed(names: string[]): string {
  return `${names.slice(0, 5).join(', ')}${names.length > 5 ? ` and ${names.length - 5} more` : ''}`;
}

/** A file with nothing in it at the path of a command that does not make a database. */
function notADatabaseYet(file: string, what: string): UserError {
  return new UserError(`${file} is ${what}, not a ragline database. It was left untouched.`, {
    hint: `Only \`ragline ingest\` makes a new database: run \`ragline ingest <folder> --db ${file}\` to build one there, or point --db / RAGLINE_DB at an existing ragline database.`,
    exitCode: 2,
  });
}

/**
 * Gives an empty database ragline's mark and its whole schema in one write
 * transaction, its first: another process sees it empty or complete, and the
 * header carries the mark whenever the file has content (see checkIsSqlite: a
 * -journal beside an unmarked header is refused). A process that found the
 * file empty waits here for the write lock (the busy timeout) while another
 * creates it, then finds it complete and leaves it as it is.
 */
function createSchemaOnce(db: Db, file: string): Ownership {
  return db
    .transaction((): Ownership => {
      const ownership = checkOwnership(db, file);
      if (ownership !== 'empty') return ownership;
      db.pragma(`application_id = ${APPLICATION_ID}`);
      createSchema(db);
      return 'marked';
    })
    .immediate();
}

/**
 * Files up to this size (with their WAL) get `PRAGMA quick_check` before a
 * command may write to them. Measured: 7 ms for a 4 MB database, 1.5-2.5 s for
 * 100k chunks (278 MB), more than a whole no-change re-ingest, so larger files
 * rely on SQLite refusing a write that meets a damaged page (it rolls back).
 */
const QUICK_CHECK_MAX_BYTES = 8 * 1024 * 1024;

/** Damage past the schema, found before the first write where that is cheap. */
function quickCheckIfSmall(db: Db, file: string): void {
  const size = (suffix: string) => {
    try {
      return fs.statSync(file + suffix).size;
    } catch {
      return 0;
    }
  };
  if (size('') + size('-wal') > QUICK_CHECK_MAX_BYTES) return;
  const result = db.pragma('quick_check(1)', { simple: true });
  if (result !== 'ok') {
    throw sqliteOpenError(Object.assign(new Error(`quick_check: ${String(result)}`), { code: 'SQLITE_CORRUPT' }), file);
  }
}

/**
 * Closes a connection to a file that is refused without writing to it. The last
 * connection to a WAL database to close copies the WAL into the file and deletes
 * the WAL (a checkpoint): another program's database with pending WAL frames was
 * rewritten that way. A read-only connection held meanwhile makes this one not
 * the last, and it does not checkpoint when it closes in its turn.
 */
function closeWithoutCheckpoint(db: Db, file: string, inMemory: boolean): void {
  let reader: Db | undefined;
  try {
    if (!inMemory && !db.readonly) {
      reader = new Database(file, { readonly: true, fileMustExist: true, nativeBinding: nativeBinding() });
      reader.pragma('schema_version', { simple: true }); // a read: the reader now holds its lock
    }
  } catch {
    reader?.close();
    reader = undefined;
  }
  db.close();
  reader?.close();
}

/**
 * Removes a database file that holds nothing worth keeping, once every connection to
 * it is closed: only when no -wal or -shm is left beside it (SQLite removes them when
 * the last connection closes), so no other process has it open. Returns whether it
 * was removed.
 */
export function removeUnusedDatabase(file: string): boolean {
  const side = sideFiles(file);
  if (side.wal || side.shm) return false;
  try {
    fs.rmSync(file);
    return true;
  } catch {
    return false;
  }
}

function sideFiles(file: string): { wal: boolean; shm: boolean } {
  return { wal: fs.existsSync(file + '-wal'), shm: fs.existsSync(file + '-shm') };
}

/**
 * Removes the -wal and -shm that opening a refused file created: only when both
 * are new and the -wal is empty (nothing was written to it), so no other
 * connection can have been using them.
 */
function leaveAsFound(file: string, before: { wal: boolean; shm: boolean }): void {
  if (before.wal || before.shm) return;
  try {
    const wal = fs.statSync(file + '-wal', { throwIfNoEntry: false });
    if (wal && wal.size > 0) return;
    fs.rmSync(file + '-wal', { force: true });
    fs.rmSync(file + '-shm', { force: true });
  } catch {
    /* what cannot be removed stays; the file itself was not written */
  }
}

/** Refuses what is not an SQLite file; 'empty' for a 0-byte file (a new database to SQLite). */
function checkIsSqlite(file: string): 'sqlite' | 'empty' {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch (err) {
    throw fsError(err, file, 'read');
  }
  if (stat.isDirectory()) {
    throw new UserError(`${file} is a folder, not a database file.`, {
      hint: 'Point --db or RAGLINE_DB at a file path, e.g. --db ./ragline.db.',
      exitCode: 2,
    });
  }
  // A device, FIFO or socket reports size 0 too: SQLite would write a database over a
  // disk partition (and leave a -journal beside /dev/null). Only a regular file is ours.
  if (!stat.isFile()) {
    throw new UserError(`${file} is not a regular file (a device, FIFO or socket): ragline keeps its database in a file of its own. It was left untouched.`, {
      hint: 'Point --db or RAGLINE_DB at a file path, e.g. --db ./ragline.db.',
      exitCode: 2,
    });
  }
  if (stat.size === 0) return 'empty'; // a fresh database to SQLite
  const header = Buffer.alloc(100);
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, 'r');
    fs.readSync(fd, header, 0, 100, 0);
  } catch (err) {
    throw fsError(err, file, 'read');
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
  if (!header.subarray(0, 16).equals(SQLITE_HEADER)) {
    throw new UserError(`${file} is not a ragline database (not an SQLite file). It was left untouched.`, {
      hint: 'Choose another path with --db or RAGLINE_DB, or move that file away.',
      exitCode: 2,
    });
  }
  // A rollback journal beside a file without ragline's mark: SQLite would roll that
  // transaction back (rewriting the file, deleting the journal) at the first read,
  // before the file could be recognised or refused. ragline keeps its own files in
  // WAL mode, so the journal is another program's unfinished work.
  if (header.readUInt32BE(68) !== APPLICATION_ID && hasHotJournalCandidate(file)) {
    throw new UserError(`${file} has an unfinished transaction of another program beside it (${path.basename(file)}-journal). It was left untouched.`, {
      hint: 'Let the program that wrote it finish, or open it once with that program (or `sqlite3`) to roll the transaction back; then choose a ragline database with --db.',
      exitCode: 2,
    });
  }
  return 'sqlite';
}

/** A non-empty -journal beside the file: what SQLite may treat as a hot journal. */
function hasHotJournalCandidate(file: string): boolean {
  try {
    return fs.statSync(`${file}-journal`).size > 0;
  } catch {
    return false;
  }
}

function fsError(err: unknown, file: string, action: 'create' | 'read'): UserError {
  const code = (err as NodeJS.ErrnoException).code;
  if (action === 'read' && (code === 'EACCES' || code === 'EPERM')) {
    return new UserError(`Cannot read the database at ${file}: permission denied.`, {
      hint: `Check the permissions of the file and its folders (ls -l ${file}), or run ragline as the user who owns it.`,
      cause: err,
    });
  }
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') {
    return new UserError(`Cannot create the database at ${file}: ${code === 'EROFS' ? 'the file system is read-only' : 'permission denied'}.`, {
      hint: 'Choose a writable location with --db or RAGLINE_DB.',
      cause: err,
    });
  }
  if (code === 'ENOTDIR' || (action === 'create' && code === 'ENOENT')) {
    // e.g. --db /proc/x.db: the folder exists but takes no new files, or a part of the path is a file.
    const message =
      code === 'ENOTDIR'
        ? `Cannot open the database at ${file}: a part of the path is a file, not a folder.`
        : `Cannot create the database at ${file}: the folder does not take new files.`;
    return new UserError(message, {
      hint: 'Choose a writable location with --db or RAGLINE_DB.',
      exitCode: 2,
      cause: err,
    });
  }
  if (code === 'ENOSPC') {
    return new UserError(`The disk holding ${file} is full.`, { hint: 'Free some space and run the command again.', cause: err });
  }
  return new UserError(`Cannot open ${file}: ${(err as Error).message}`, { cause: err });
}

function writable(target: string): boolean {
  try {
    fs.accessSync(target, fs.constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** Whether the disk holding `file` has (next to) no room left. */
export function diskFull(file: string): boolean {
  try {
    const stats = fs.statfsSync(path.dirname(path.resolve(file)));
    return stats.bavail * stats.bsize < 64 * 1024;
  } catch {
    return false;
  }
}

/** Turns SQLite's open-time failures into sentences a person can act on. */
export function sqliteOpenError(err: unknown, file: string): UserError {
  const code = (err as { code?: string }).code ?? '';
  const message = (err as Error).message ?? String(err);
  if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT' || /not a database|malformed/i.test(message)) {
    return new UserError(`${file} is corrupted or not a ragline database. It was left untouched.`, {
      hint: 'Move it away and run `ragline ingest <folder>` to build a new one, or choose another --db.',
      exitCode: 2,
      cause: err,
    });
  }
  if (code.startsWith('SQLITE_READONLY') || code.startsWith('SQLITE_CANTOPEN') || code.startsWith('SQLITE_PERM')) {
    const folder = path.dirname(path.resolve(file));
    if (code === 'SQLITE_READONLY_DIRECTORY' || (!writable(folder) && !fs.existsSync(file + '-shm'))) {
      return new UserError(
        `The folder ${folder} is read-only, and SQLite needs to create ${path.basename(file)}-wal and -shm beside the database, even to read it.`,
        {
          hint: `Make the folder writable (chmod u+w ${folder}), or copy the database to a writable folder and point --db at the copy.`,
          cause: err,
        },
      );
    }
    if (!writable(file)) {
      return new UserError(`${file} is read-only: this command needs to write to it (${code}).`, {
        hint: `Make it writable (chmod u+w ${file}), or copy it somewhere writable and point --db at the copy; commands that only read (stats, search, sessions) work as it is.`,
        cause: err,
      });
    }
    return new UserError(`Cannot open ${file} for writing (${code}).`, {
      hint: 'Check the file and folder permissions, or choose another location with --db.',
      cause: err,
    });
  }
  if (code.startsWith('SQLITE_IOERR') && (code.startsWith('SQLITE_IOERR_SHM') || diskFull(file))) {
    return new UserError(`The disk holding ${file} may be full: SQLite could not make room for its ${path.basename(file)}-shm file (${code}).`, {
      hint: 'Free some space on that disk (df -h shows it), then run the command again.',
      cause: err,
    });
  }
  if (code.startsWith('SQLITE_FULL')) {
    return new UserError(`The disk holding ${file} is full.`, { hint: 'Free some space and run the command again.', cause: err });
  }
  if (code === 'SQLITE_BUSY') {
    return new UserError(`${file} is locked by another ragline process.`, {
      hint: 'Wait for the other command to finish and try again.',
      cause: err,
    });
  }
  return new UserError(`Cannot use the database at ${file}: ${message}`, { cause: err });
}

/**
 * `journal_mode = WAL`, retried for up to `timeoutMs`: when two processes open the
 * same new file at once, the switch from the default journal can answer
 * SQLITE_BUSY at once, without waiting on the busy timeout.
 */
function enableWal(db: Db, timeoutMs = 10_000): void {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      db.pragma('journal_mode = WAL');
      return;
    } catch (err) {
      if ((err as { code?: string }).code !== 'SQLITE_BUSY' || Date.now() > deadline) throw err;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10); // a synchronous 10 ms pause
    }
  }
}
