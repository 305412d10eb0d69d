// The Postgres schema (`ragline`), as an ordered list of migrations like the
// SQLite store's (../migrations.ts): each runs in one transaction with the bump of
// ragline.meta's schema_version, under an advisory lock, so two processes opening
// one new database at once apply each migration once. A migration that has shipped
// is never edited: add a new one.
//
// The vector column's dimension is fixed by the first ingest (vectors.ts), as the
// SQLite store creates its vec0 table then; the keyword index is pg_textsearch's
// BM25 where the extension can be created, else full-text search (keywordMethod).

import type { PoolClient } from 'pg';
import { UserError } from '../../util/errors.js';

type Migration = { name: string; up: (client: PoolClient) => Promise<void> };

/** The schema every table lives in. */
export const SCHEMA = 'ragline';

export const PG_MIGRATIONS: Migration[] = [
  {
    name: 'documents, chunks, keyword text, sessions and turns (with their owner)',
    async up(client) {
      await client.query(`
        CREATE TABLE ragline.documents (
          id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
          root         text NOT NULL,
          path         text NOT NULL,
          kind         text NOT NULL,
          title        text,
          content_hash text NOT NULL,
          size         bigint NOT NULL,
          mtime_ms     double precision NOT NULL,
          chunk_count  integer NOT NULL,
          ingested_at  timestamptz NOT NULL DEFAULT now(),
          UNIQUE (root, path)
        );

        -- An identity is never reused, so a stored turn that cites a chunk re-ingested since can tell it is gone.
        CREATE TABLE ragline.chunks (
          id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
          document_id bigint NOT NULL REFERENCES ragline.documents(id) ON DELETE CASCADE,
          ordinal     integer NOT NULL,
          heading     text NOT NULL DEFAULT '',
          text        text NOT NULL,
          start_line  integer NOT NULL,
          end_line    integer NOT NULL,
          locator     text NOT NULL DEFAULT 'line',
          text_hash   text NOT NULL,
          -- What the keyword index reads: the title line (document title and heading
          -- path) and the body, with C++ and the like spelled as words.
          keyword_title text NOT NULL DEFAULT '',
          keyword_body  text NOT NULL DEFAULT '',
          -- One chunk per place in a document: a second ingest writing the same
          -- document at the same moment cannot add its chunks twice.
          UNIQUE (document_id, ordinal)
        );
        CREATE INDEX chunks_text_hash ON ragline.chunks (text_hash);

        CREATE TABLE ragline.sessions (
          id                text PRIMARY KEY,
          owner             text NOT NULL,
          name              text,
          created_at        timestamptz NOT NULL DEFAULT now(),
          updated_at        timestamptz NOT NULL DEFAULT now(),
          parent_session_id text REFERENCES ragline.sessions(id) ON DELETE SET NULL,
          parent_turn       integer,
          UNIQUE (owner, name)
        );
        CREATE INDEX sessions_owner ON ragline.sessions (owner, updated_at);

        CREATE TABLE ragline.turns (
          id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
          session_id       text NOT NULL REFERENCES ragline.sessions(id) ON DELETE CASCADE,
          ordinal          integer NOT NULL,
          created_at       timestamptz NOT NULL DEFAULT now(),
          finished_at      timestamptz,
          status           text NOT NULL,
          error            text,
          question         text NOT NULL,
          standalone_query text,
          rewrite_decision text,
          rewrite_reason   text,
          rewrite_error    text,
          answer           text,
          answer_kind      text,
          rewrite_model    text,
          chat_model       text,
          embed_model      text,
          prompt_json      jsonb,
          rewrite_prompt_json jsonb,
          settings_json    jsonb,
          timings_json     jsonb,
          usage_json       jsonb,
          topics_json      jsonb,
          summary          text,
          summary_through  integer,
          judged_at        timestamptz,
          judged_none      boolean NOT NULL DEFAULT false,
          UNIQUE (session_id, ordinal)
        );

        CREATE TABLE ragline.turn_chunks (
          turn_id         bigint NOT NULL REFERENCES ragline.turns(id) ON DELETE CASCADE,
          rank            integer NOT NULL,
          chunk_id        bigint NOT NULL,
          document_path   text NOT NULL,
          start_line      integer NOT NULL,
          end_line        integer NOT NULL,
          locator         text NOT NULL,
          heading         text NOT NULL,
          text_hash       text NOT NULL,
          score           double precision NOT NULL,
          vector_rank     integer,
          vector_distance double precision,
          keyword_rank    integer,
          bm25            double precision,
          PRIMARY KEY (turn_id, rank)
        );
      `);
      await createKeywordIndex(client);
    },
  },
  {
    name: 'judgments: the documents relevant to a turn',
    async up(client) {
      // As the SQLite store's turn_relevant; `id` keeps the order documents were judged in.
      await client.query(`
        CREATE TABLE ragline.turn_relevant (
          id            bigint GENERATED ALWAYS AS IDENTITY,
          turn_id       bigint NOT NULL REFERENCES ragline.turns(id) ON DELETE CASCADE,
          document_path text NOT NULL,
          source        text NOT NULL,
          chunk_rank    integer,
          PRIMARY KEY (turn_id, document_path)
        );
        CREATE INDEX turns_judged ON ragline.turns (session_id) WHERE judged_at IS NOT NULL;
      `);
      // json, not jsonb: a turn's JSON is given back as it was written (jsonb orders an
      // object's keys its own way), so --json and exports print what SQLite prints.
      for (const column of ['prompt_json', 'rewrite_prompt_json', 'settings_json', 'timings_json', 'usage_json', 'topics_json']) {
        await client.query(`ALTER TABLE ragline.turns ALTER COLUMN ${column} TYPE json USING ${column}::json`);
      }
    },
  },
];

export const PG_SCHEMA_VERSION = PG_MIGRATIONS.length;

/** How keyword search runs on this database, recorded when the schema is made. */
export type KeywordMethod = 'bm25' | 'fts';

/**
 * pg_textsearch's BM25 index over the keyword text where the extension can be
 * created (installed, and this role may), else a full-text index whose matches are
 * ranked with ts_rank_cd. The choice is kept in ragline.meta.
 */
async function createKeywordIndex(client: PoolClient): Promise<void> {
  await client.query('SAVEPOINT keyword_index');
  let method: KeywordMethod = 'fts';
  try {
    await client.query('CREATE EXTENSION IF NOT EXISTS pg_textsearch');
    await client.query(`ALTER TABLE ragline.chunks ADD COLUMN keyword_text text GENERATED ALWAYS AS (keyword_title || ' ' || keyword_title || ' ' || keyword_body) STORED`);
    await client.query(`CREATE INDEX chunks_bm25 ON ragline.chunks USING bm25 (keyword_text) WITH (text_config = 'english')`);
    await client.query('RELEASE SAVEPOINT keyword_index');
    method = 'bm25';
  } catch {
    await client.query('ROLLBACK TO SAVEPOINT keyword_index');
    await client.query(`
      ALTER TABLE ragline.chunks ADD COLUMN keyword_vector tsvector GENERATED ALWAYS AS
        (setweight(to_tsvector('english', keyword_title), 'A') || setweight(to_tsvector('english', keyword_body), 'D')) STORED;
      CREATE INDEX chunks_keyword_vector ON ragline.chunks USING gin (keyword_vector);
    `);
  }
  await client.query(`INSERT INTO ragline.meta (key, value) VALUES ('keyword_method', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value`, [method]);
}

/**
 * Brings the schema up to PG_SCHEMA_VERSION: the schema and its meta table first,
 * then each migration in its own transaction. Refuses a schema written by a newer ragline.
 */
export async function migratePostgres(client: PoolClient): Promise<void> {
  // Up to date: nothing is written or locked, so a role that may only read and chat needs no CREATE.
  const exists = await client.query<{ found: boolean }>(`SELECT to_regclass('ragline.meta') IS NOT NULL AS found`);
  if (exists.rows[0]!.found) {
    const current = await client.query<{ value: string }>(`SELECT value FROM ragline.meta WHERE key = 'schema_version'`);
    if (Number(current.rows[0]?.value ?? -1) === PG_SCHEMA_VERSION) return;
  }
  await client.query('BEGIN');
  try {
    // One process at a time past this point, until its transaction ends.
    await client.query(`SELECT pg_advisory_xact_lock(hashtext('ragline.migrate'))`);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ragline`);
    await client.query(`CREATE TABLE IF NOT EXISTS ragline.meta (key text PRIMARY KEY, value text NOT NULL)`);
    await client.query(`INSERT INTO ragline.meta (key, value) VALUES ('schema_version', '0') ON CONFLICT (key) DO NOTHING`);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  }
  for (;;) {
    await client.query('BEGIN');
    try {
      await client.query(`SELECT pg_advisory_xact_lock(hashtext('ragline.migrate'))`);
      const { rows } = await client.query<{ value: string }>(`SELECT value FROM ragline.meta WHERE key = 'schema_version'`);
      const version = Number(rows[0]?.value ?? 0);
      if (version > PG_SCHEMA_VERSION) {
        throw new UserError(`This database's ragline schema was written by a newer ragline (schema ${version}; this build knows up to ${PG_SCHEMA_VERSION}).`, {
          hint: 'Upgrade ragline (npm install -g ragline@latest), or use another --db.',
          exitCode: 2,
        });
      }
      if (version === PG_SCHEMA_VERSION) {
        await client.query('COMMIT');
        return;
      }
      await PG_MIGRATIONS[version]!.up(client);
      await client.query(`UPDATE ragline.meta SET value = $1 WHERE key = 'schema_version'`, [String(version + 1)]);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK');
      throw error;
    }
  }
}
