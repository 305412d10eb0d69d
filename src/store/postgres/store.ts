// A ragline index and its sessions in Postgres (`--db postgres://...`): one pool
// of connections, the schema brought up to date before the first query, and the
// owner of the sessions this process makes (the `ragline.user` setting of the
// connection, else the Postgres role). Every call is asynchronous, as the pg client
// is; the SQLite store (../db.ts) stays the reference implementation.

import { createRequire } from 'node:module';
import type pg from 'pg';
import { UserError } from '../../util/errors.js';
import { migratePostgres, type KeywordMethod } from './migrations.js';

/** Whether `db` names a Postgres database rather than an SQLite file. */
export function isPostgresUrl(db: string): boolean {
  return /^postgres(ql)?:\/\//i.test(db.trim());
}

/** The URL with its password left out, for messages. */
export function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'postgres://…';
  }
}

// pg is CommonJS: required when a store is made, so a command on an SQLite file never loads it.
const require = createRequire(import.meta.url);

/** int8 (ids, counts) as numbers: ids stay far below 2^53. */
function typesOf(client: typeof pg): pg.CustomTypesConfig {
  return {
    getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
      if (oid === 20) return (value: string) => Number(value);
      return client.types.getTypeParser(oid, format as 'text');
    }) as pg.CustomTypesConfig['getTypeParser'],
  };
}

export class PostgresStore {
  readonly pool: pg.Pool;
  /** The `user` setting: whose sessions these are, in place of the Postgres role. */
  private readonly user?: string;
  private migrated?: Promise<void>;

  constructor(
    /** The connection URL as given. */
    readonly url: string,
    options: { max?: number; user?: string } = {},
  ) {
    const client = require('pg') as typeof pg;
    this.pool = new client.Pool({ connectionString: url, max: options.max ?? 4, types: typesOf(client) });
    // An idle connection the server closes must not crash the process.
    this.pool.on('error', () => {});
    this.user = options.user?.trim() || undefined;
  }

  /** The schema, migrated once per store before the first query. */
  ready(): Promise<void> {
    this.migrated ??= this.withClient((client) => migratePostgres(client)).catch((error) => {
      this.migrated = undefined;
      throw error;
    });
    return this.migrated;
  }

  /** A connection of the pool, the schema ready; the caller releases it. */
  async connect(): Promise<pg.PoolClient> {
    await this.ready();
    try {
      return await this.pool.connect();
    } catch (error) {
      throw connectError(error, this.url);
    }
  }

  /** Runs `work` on one connection of the pool (after the schema is ready, unless it is the migration). */
  async withClient<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw connectError(error, this.url);
    }
    try {
      return await work(client);
    } finally {
      client.release();
    }
  }

  /** Runs `work` in one transaction on one connection: committed if it returns, rolled back if it throws. */
  async transaction<T>(work: (client: pg.PoolClient) => Promise<T>, options: { isolation?: 'repeatable read' } = {}): Promise<T> {
    await this.ready();
    return this.withClient(async (client) => {
      await client.query(options.isolation ? `BEGIN ISOLATION LEVEL ${options.isolation.toUpperCase()}` : 'BEGIN');
      try {
        const result = await work(client);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {});
        throw error;
      }
    });
  }

  /** One query on the pool, after the schema is ready. */
  async query<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, values?: unknown[]): Promise<R[]> {
    await this.ready();
    try {
      return (await this.pool.query<R>(sql, values)).rows;
    } catch (error) {
      throw connectError(error, this.url);
    }
  }

  /** A value of ragline.meta. */
  async meta(key: string): Promise<string | undefined> {
    const rows = await this.query<{ value: string }>('SELECT value FROM ragline.meta WHERE key = $1', [key]);
    return rows[0]?.value;
  }

  /** BM25 (pg_textsearch) or full-text search (ts_rank_cd). */
  async keywordMethod(): Promise<KeywordMethod> {
    return (await this.meta('keyword_method')) === 'bm25' ? 'bm25' : 'fts';
  }

  /**
   * Whose sessions this process sees: the `user` setting (RAGLINE_USER), else the
   * `ragline.user` parameter of its connections, else the Postgres role.
   */
  async owner(): Promise<string> {
    if (this.user) return this.user;
    const rows = await this.query<{ owner: string }>(`SELECT coalesce(nullif(current_setting('ragline.user', true), ''), current_user) AS owner`);
    return rows[0]!.owner;
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

/** Connection failures in words: the server named without its password. */
export function connectError(error: unknown, url: string): unknown {
  const code = (error as { code?: string }).code;
  const where = redactedUrl(url);
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'ETIMEDOUT' || code === 'EHOSTUNREACH') {
    return new UserError(`Cannot reach the Postgres server at ${where} (${code}).`, {
      hint: 'Check that the server is running and the host and port in --db / RAGLINE_DB are right.',
      cause: error,
    });
  }
  if (code === '28P01' || code === '28000') {
    return new UserError(`Postgres refused the login at ${where}: ${(error as Error).message}.`, { hint: 'Check the user and password in the URL (or PGPASSWORD).', cause: error });
  }
  if (code === '3D000') {
    return new UserError(`No such database at ${where}: ${(error as Error).message}.`, { hint: 'Create it first (createdb), or name an existing one in the URL.', cause: error });
  }
  if (code === '42501') {
    return new UserError(`Postgres refused: ${(error as Error).message}.`, {
      hint: 'The role needs CREATE on the database (for the ragline schema) the first time, then USAGE and read/write on schema ragline; see docs/postgres.md.',
      cause: error,
    });
  }
  return error;
}
