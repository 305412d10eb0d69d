// The schema, as an ordered list of migrations. Each runs in one transaction
// together with its `PRAGMA user_version` bump (a new database gets them all in
// one), so a database is always at exactly one version. A migration that has
// shipped is never edited: add a new one.

import type Database from 'better-sqlite3';
import { UserError } from '../util/errors.js';

type Migration = { name: string; up: (db: Database.Database) => void };

export const MIGRATIONS: Migration[] = [
  {
    name: 'documents, chunks, full-text index, sessions and turns',
    up(db) {
      db.exec(`
        CREATE TABLE meta (
          key   TEXT PRIMARY KEY,
          value TEXT NOT NULL
        );

        CREATE TABLE documents (
          id           INTEGER PRIMARY KEY AUTOINCREMENT,
          root         TEXT NOT NULL,            -- absolute folder it was ingested from
          path         TEXT NOT NULL,            -- relative to root, '/'-separated
          kind         TEXT NOT NULL,            -- markdown | text | html | pdf
          title        TEXT,
          content_hash TEXT NOT NULL,            -- sha256 of the file bytes
          size         INTEGER NOT NULL,
          mtime_ms     INTEGER NOT NULL,
          chunk_count  INTEGER NOT NULL,
          ingested_at  TEXT NOT NULL,
          UNIQUE (root, path)
        );

        -- AUTOINCREMENT: a chunk id is never reused, so a stored turn that cites
        -- a chunk which was later re-ingested can tell that it is gone.
        CREATE TABLE chunks (
          id          INTEGER PRIMARY KEY AUTOINCREMENT,
          document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
          ordinal     INTEGER NOT NULL,
          heading     TEXT NOT NULL DEFAULT '', -- heading path joined with ' > '
          text        TEXT NOT NULL,
          start_line  INTEGER NOT NULL,
          end_line    INTEGER NOT NULL,
          locator     TEXT NOT NULL DEFAULT 'line', -- line | page
          text_hash   TEXT NOT NULL               -- hash of what was embedded
        );
        CREATE INDEX chunks_document ON chunks(document_id, ordinal);
        CREATE INDEX chunks_text_hash ON chunks(text_hash);

        -- Contentless: the text lives in chunks; rowid = chunks.id. title holds the
        -- document title and the chunk's heading path (bm25 weight 4), body the text.
        CREATE VIRTUAL TABLE chunks_fts USING fts5(
          title, body,
          content = '', contentless_delete = 1,
          tokenize = 'porter unicode61 remove_diacritics 2'
        );

        CREATE TABLE sessions (
          id                TEXT PRIMARY KEY,
          name              TEXT UNIQUE,
          created_at        TEXT NOT NULL,
          updated_at        TEXT NOT NULL,
          parent_session_id TEXT REFERENCES sessions(id) ON DELETE SET NULL,
          parent_turn       INTEGER
        );

        CREATE TABLE turns (
          id               INTEGER PRIMARY KEY AUTOINCREMENT,
          session_id       TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
          ordinal          INTEGER NOT NULL,
          created_at       TEXT NOT NULL,
          finished_at      TEXT,
          status           TEXT NOT NULL,      -- pending | answered | interrupted | failed
          error            TEXT,
          question         TEXT NOT NULL,
          standalone_query TEXT,
          rewrite_decision TEXT,               -- rewritten | skipped | fallback | small_talk
          rewrite_reason   TEXT,
          answer           TEXT,
          answer_kind      TEXT,               -- llm | extractive | small_talk | search
          rewrite_model    TEXT,
          chat_model       TEXT,
          embed_model      TEXT,
          prompt_json      TEXT,               -- the messages sent for the answer
          rewrite_prompt_json TEXT,            -- the messages sent for the rewrite, if any
          settings_json    TEXT,               -- k, rewrite policy, scope at the time
          timings_json     TEXT,
          usage_json       TEXT,
          topics_json      TEXT,               -- tracked topics after this turn
          summary          TEXT,               -- running summary of turns out of the budget, after this turn
          UNIQUE (session_id, ordinal)
        );
        CREATE INDEX turns_created ON turns(created_at);

        -- Retrieved chunks as they were when the turn ran; copied, not referenced,
        -- so the trail survives re-ingestion.
        CREATE TABLE turn_chunks (
          turn_id         INTEGER NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
          rank            INTEGER NOT NULL,
          chunk_id        INTEGER NOT NULL,
          document_path   TEXT NOT NULL,
          start_line      INTEGER NOT NULL,
          end_line        INTEGER NOT NULL,
          locator         TEXT NOT NULL,
          heading         TEXT NOT NULL,
          text_hash       TEXT NOT NULL,
          score           REAL NOT NULL,
          vector_rank     INTEGER,
          vector_distance REAL,
          keyword_rank    INTEGER,
          bm25            REAL,
          PRIMARY KEY (turn_id, rank)
        );
      `);
    },
  },
  {
    name: 'turns: how far the running summary reaches, and the error a rewrite recovered from',
    up(db) {
      db.exec(`
        -- Ordinal of the last turn the running summary covers, so it is recomputed
        -- only when more turns fall out of the history budget.
        ALTER TABLE turns ADD COLUMN summary_through INTEGER;
        -- The error behind a 'fallback' rewrite decision (the turn itself went on).
        ALTER TABLE turns ADD COLUMN rewrite_error TEXT;
      `);
    },
  },
  {
    name: 'documents: an index that answers the re-ingest listing on its own',
    up(db) {
      // listDocuments reads path, id, size and mtime_ms of one root: with them all
      // in the index no table row is visited (13k documents: 4.2 -> 2.5 ms warm).
      db.exec('CREATE INDEX documents_listing ON documents (root, path, size, mtime_ms)');
    },
  },
  {
    name: 'skipped_files: files skipped for their content, so an unchanged one is not read again',
    up(db) {
      db.exec(`
        -- A file that was read and skipped (binary, unparseable, no text), with the size
        -- and modification time it had: a re-ingest passes over it while both match.
        CREATE TABLE skipped_files (
          root     TEXT NOT NULL,
          path     TEXT NOT NULL,
          size     INTEGER NOT NULL,
          mtime_ms REAL NOT NULL,
          reason   TEXT NOT NULL,
          PRIMARY KEY (root, path)
        ) WITHOUT ROWID;
      `);
    },
  },
  {
    name: 'turn judgments: which documents were relevant to a turn, and whether nothing retrieved was',
    up(db) {
      db.exec(`
        -- When the turn was judged (NULL: never), and whether nothing it retrieved was
        -- useful (/bad, --none). Columns of turns, so a fork copies them with the turn.
        ALTER TABLE turns ADD COLUMN judged_at TEXT;
        ALTER TABLE turns ADD COLUMN judged_none INTEGER NOT NULL DEFAULT 0;

        -- Documents judged relevant to a turn's question: picked from its retrieved
        -- chunks (/good) or named as what should have been found (/expect, --relevant).
        -- document_path is documents.path when it resolved, else the name as given
        -- (eval reports it as not indexed).
        CREATE TABLE turn_relevant (
          turn_id       INTEGER NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
          document_path TEXT NOT NULL,
          source        TEXT NOT NULL,      -- retrieved | expected
          chunk_rank    INTEGER,            -- the retrieved chunk it was picked from
          PRIMARY KEY (turn_id, document_path)
        );
      `);
    },
  },
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/** Refuses a database written by a newer ragline (a read: called before anything is written). */
export function assertKnownSchema(userVersion: number): void {
  if (userVersion > SCHEMA_VERSION) {
    throw new UserError(
      `This database was written by a newer ragline (schema ${userVersion}; this build knows up to ${SCHEMA_VERSION}).`,
      { hint: 'Upgrade ragline (npm install -g ragline@latest), or use another --db.', exitCode: 2 },
    );
  }
}

/**
 * A database with an older schema opened read-only: it cannot be migrated. Told
 * apart by its class (and `code`), not by its message: `doctor` reports it as a
 * warning, since any command that writes upgrades it.
 */
export class OutdatedSchemaError extends UserError {
  readonly code = 'SCHEMA_OUTDATED';
  constructor(
    readonly schemaVersion: number,
    readonly expectedSchemaVersion: number = SCHEMA_VERSION,
  ) {
    super(`This database needs an upgrade (schema ${schemaVersion} -> ${expectedSchemaVersion}) and was opened read-only.`, {
      hint: 'Run any ragline command on it without read-only access once to upgrade it.',
    });
    this.name = 'OutdatedSchemaError';
  }
}

/**
 * The whole schema of a new, empty database, in the caller's write transaction:
 * every migration in order, then the version. Another connection sees the file
 * empty or complete, never between two migrations.
 */
export function createSchema(db: Database.Database): void {
  for (const migration of MIGRATIONS) migration.up(db);
  db.pragma(`user_version = ${SCHEMA_VERSION}`);
}

/** Brings `db` up to SCHEMA_VERSION; refuses a database from a newer ragline. */
export function migrate(db: Database.Database, options: { readonly: boolean }): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  assertKnownSchema(current);
  if (current === SCHEMA_VERSION) return;
  if (options.readonly) {
    throw new OutdatedSchemaError(current);
  }
  // The version is read again under the write lock: another process opening the
  // same file at the same moment may have applied a migration in between.
  const step = db.transaction((): boolean => {
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version >= SCHEMA_VERSION) return false;
    MIGRATIONS[version]!.up(db);
    db.pragma(`user_version = ${version + 1}`);
    return true;
  });
  while (step.immediate()) {
    /* one migration per transaction */
  }
}
