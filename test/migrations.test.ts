// A database written by an older ragline is brought up to the current schema
// when opened, with its documents, chunks, indexes, sessions and turns intact.
// fixtures/db/schema-v1.db was made by the shipped migration 1
// (bench/reliability/make-schema-v1.mjs); whatever migrations have been added
// since, opening a copy must end at SCHEMA_VERSION.

import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { openDatabase } from '../src/store/db.js';
import { MIGRATIONS, OutdatedSchemaError, SCHEMA_VERSION } from '../src/store/migrations.js';
import { UserError } from '../src/util/errors.js';
import { ROOT, isolatedEnv, ragline, tempDir } from './helpers/cli.js';

const FIXTURE = path.join(ROOT, 'fixtures', 'db', 'schema-v1.db');

let dir: string;
let copy: string;

/** Everything the fixture holds that a migration must not lose. */
function snapshot(db: Database.Database) {
  return {
    documents: db.prepare('SELECT id, root, path, kind, title, content_hash, size, mtime_ms, chunk_count FROM documents ORDER BY id').all(),
    chunks: db.prepare('SELECT id, document_id, ordinal, heading, text, start_line, end_line, locator, text_hash FROM chunks ORDER BY id').all() as { id: number }[],
    ftsRowids: db.prepare('SELECT rowid FROM chunks_fts ORDER BY rowid').pluck().all(),
    vectors: db.prepare('SELECT rowid, embedding FROM vec_chunks ORDER BY rowid').all(),
    meta: db.prepare('SELECT key, value FROM meta ORDER BY key').all(),
    sessions: db.prepare('SELECT * FROM sessions ORDER BY id').all(),
    turns: db.prepare('SELECT id, session_id, ordinal, status, question, standalone_query, rewrite_decision, answer, answer_kind FROM turns ORDER BY id').all(),
    turnChunks: db.prepare('SELECT * FROM turn_chunks ORDER BY turn_id, rank').all(),
  };
}

beforeAll(() => {
  const raw = new Database(FIXTURE, { readonly: true });
  const version = raw.pragma('user_version', { simple: true });
  raw.close();
  if (version !== 1) throw new Error(`${FIXTURE} should be at schema 1, is at ${version}; regenerate it with bench/reliability/make-schema-v1.mjs`);
});
beforeEach(() => {
  dir = tempDir('ragline-migrate-');
  copy = path.join(dir, 'old.db');
  fs.copyFileSync(FIXTURE, copy);
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('migrating the schema-v1 fixture', () => {
  test('opening a copy brings it to the latest SCHEMA_VERSION with every row intact', async () => {
    const { load } = await import('sqlite-vec');
    const before = new Database(copy, { readonly: true });
    load(before);
    const expected = snapshot(before);
    before.close();
    expect(expected.chunks).toHaveLength(4);
    expect(expected.turns).toHaveLength(2);

    const db = openDatabase(copy);
    try {
      expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
      expect(SCHEMA_VERSION).toBe(MIGRATIONS.length);
      expect(snapshot(db)).toEqual(expected);
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      expect(db.pragma('foreign_key_check')).toEqual([]);
      // the FTS index still answers for the old rows
      const hits = db.prepare("SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH 'rotate'").pluck().all();
      expect(hits).toEqual([expected.chunks[0]!.id]);
    } finally {
      db.close();
    }
    // opening again is a no-op at the latest version
    const again = openDatabase(copy);
    expect(again.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    again.close();
  });

  test('the migrated copy gains the columns of later migrations (turns.summary_through, turns.rewrite_error at schema 2)', () => {
    const db = openDatabase(copy);
    try {
      const columns = (db.prepare("SELECT name FROM pragma_table_info('turns')").pluck().all() as string[]).sort();
      if (SCHEMA_VERSION >= 2) expect(columns).toEqual(expect.arrayContaining(['summary_through', 'rewrite_error']));
      // old rows read the new columns as NULL
      const row = db.prepare('SELECT summary_through, rewrite_error FROM turns WHERE ordinal = 1').get();
      expect(row).toEqual({ summary_through: null, rewrite_error: null });
    } finally {
      db.close();
    }
  });

  test('a read-only open of the old file is refused with the upgrade message and changes nothing', () => {
    const bytes = fs.readFileSync(copy);
    expect(() => openDatabase(copy, { readonly: true })).toThrow(`needs an upgrade (schema 1 -> ${SCHEMA_VERSION})`);
    expect(fs.readFileSync(copy).equals(bytes)).toBe(true);
  });

  test('the refusal is an OutdatedSchemaError (code SCHEMA_OUTDATED, both versions), told apart without reading its message', () => {
    let error: unknown;
    try {
      openDatabase(copy, { readonly: true }).close();
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(OutdatedSchemaError);
    expect(error).toBeInstanceOf(UserError);
    expect(error).toMatchObject({ code: 'SCHEMA_OUTDATED', schemaVersion: 1, expectedSchemaVersion: SCHEMA_VERSION });
    // A current database opened read-only, and a missing one, are other errors (or none).
    const current = path.join(tempDir('current-'), 'x.db');
    openDatabase(current, { create: true }).close();
    expect(() => openDatabase(current, { readonly: true }).close()).not.toThrow();
    let missing: unknown;
    try {
      openDatabase(path.join(path.dirname(current), 'missing.db'), { readonly: true });
    } catch (caught) {
      missing = caught;
    }
    expect(missing).toBeInstanceOf(UserError);
    expect(missing).not.toBeInstanceOf(OutdatedSchemaError);
  });

  test('the CLI migrates it on first use: stats reports the latest schema; search asks for a reindex, since its vectors are of an earlier offline embedder', async () => {
    if (!fs.existsSync(path.join(ROOT, 'dist/cli/main.js'))) throw new Error('Build first: npx tsc -p .');
    const env = isolatedEnv(dir);
    const stats = await ragline(['--db', copy, 'stats', '--json'], { env });
    expect(stats.code, stats.stderr).toBe(0);
    expect(JSON.parse(stats.stdout)).toMatchObject({ schemaVersion: SCHEMA_VERSION, documents: 3, chunks: 4, sessions: 1, turns: 2 });
    const search = await ragline(['--db', copy, 'search', '--json', 'rotate an API key'], { env });
    expect(search.code, search.stderr).toBe(2);
    expect(search.stderr).toContain('This index was built by an earlier version of the offline embedder (offline:hash-v1-384)');
    expect(search.stderr).toContain('ragline ingest <folder> --reindex');
  });
});
