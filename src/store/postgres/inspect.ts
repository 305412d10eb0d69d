// What a Postgres database holds, read for `stats` and `doctor`: counts, folders,
// the fingerprint, the last ingest, the keyword method and the size of the schema.

import type { StoredFolder } from '../documents.js';
import type { IndexFingerprint, LastIngest } from '../meta.js';
import type { KeywordMethod } from './migrations.js';
import type { PostgresStore } from './store.js';

export interface PgInventory {
  schemaVersion: number;
  sizeBytes: number;
  documents: number;
  chunks: number;
  folders: StoredFolder[];
  fingerprint?: IndexFingerprint;
  sessions: number;
  turns: number;
  lastIngest?: Pick<LastIngest, 'root' | 'only' | 'finishedAt' | 'seconds'>;
  keywordMethod: KeywordMethod;
  /** The extensions in use and their versions. */
  extensions: Record<string, string>;
  serverVersion: string;
}

export async function pgInventory(store: PostgresStore): Promise<PgInventory> {
  // One snapshot: counts and folders agree with each other while an ingest commits.
  return store.transaction(
    async (client) => {
      const one = async <R>(sql: string): Promise<R> => (await client.query(sql)).rows[0] as R;
      const counts = await one<{ documents: number; chunks: number; sessions: number; turns: number; size: number }>(`
        SELECT (SELECT count(*) FROM ragline.documents)::int AS documents, (SELECT count(*) FROM ragline.chunks)::int AS chunks,
               (SELECT count(*) FROM ragline.sessions)::int AS sessions, (SELECT count(*) FROM ragline.turns)::int AS turns,
               (SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                 WHERE n.nspname = 'ragline' AND c.relkind IN ('r', 'm'))::bigint AS size`);
      const folders = (
        await client.query<StoredFolder>(`
          SELECT d.root, count(DISTINCT d.id)::int AS documents, coalesce(sum(d.chunk_count), 0)::int AS chunks
          FROM ragline.documents d GROUP BY d.root ORDER BY d.root`)
      ).rows;
      const meta = new Map((await client.query<{ key: string; value: string }>('SELECT key, value FROM ragline.meta')).rows.map((row) => [row.key, row.value]));
      const extensions = Object.fromEntries(
        (await client.query<{ extname: string; extversion: string }>(`SELECT extname, extversion FROM pg_extension WHERE extname IN ('vector', 'pg_textsearch')`)).rows.map((row) => [row.extname, row.extversion]),
      );
      const server = await one<{ server_version: string }>('SHOW server_version');
      const fingerprint = meta.get('index.fingerprint');
      const last = meta.get('last_ingest');
      return {
        schemaVersion: Number(meta.get('schema_version') ?? 0),
        sizeBytes: Number(counts.size),
        documents: counts.documents,
        chunks: counts.chunks,
        folders,
        fingerprint: fingerprint ? (JSON.parse(fingerprint) as IndexFingerprint) : undefined,
        sessions: counts.sessions,
        turns: counts.turns,
        lastIngest: last ? JSON.parse(last) : undefined,
        keywordMethod: meta.get('keyword_method') === 'bm25' ? 'bm25' : 'fts',
        extensions,
        serverVersion: server.server_version,
      };
    },
    { isolation: 'repeatable read' },
  );
}

/**
 * The chunk count, and how many chunks hold each word (lower-cased), counted up to
 * `atMost(count)` + 1: a keyword search that stops there, on the keyword index in use.
 */
export async function chunksHoldingInPostgres(
  store: PostgresStore,
  words: readonly string[],
  atMost: (chunks: number) => number,
): Promise<{ total: number; counts: Map<string, number> }> {
  const method = await store.keywordMethod();
  return store.transaction(
    async (client) => {
      const total = (await client.query<{ n: number }>('SELECT count(*)::int AS n FROM ragline.chunks')).rows[0]!.n;
      const limit = atMost(total) + 1;
      const counts = new Map<string, number>();
      for (const word of words) {
        // A word Postgres' English configuration drops (its own stopwords) is not counted: the caller reads it as common.
        if ((await client.query<{ empty: boolean }>(`SELECT numnode(plainto_tsquery('english', $1)) = 0 AS empty`, [word])).rows[0]!.empty) continue;
        const sql =
          method === 'bm25'
            ? `SELECT count(*)::int AS n FROM (SELECT keyword_text <@> to_bm25query($1, 'ragline.chunks_bm25') AS score FROM ragline.chunks
                 ORDER BY keyword_text <@> to_bm25query($1, 'ragline.chunks_bm25') LIMIT $2) AS best WHERE score < 0`
            : `SELECT count(*)::int AS n FROM (SELECT 1 FROM ragline.chunks WHERE keyword_vector @@ phraseto_tsquery('english', $1) LIMIT $2) AS held`;
        counts.set(word.toLowerCase(), (await client.query<{ n: number }>(sql, [word, limit])).rows[0]!.n);
      }
      return { total, counts };
    },
    { isolation: 'repeatable read' },
  );
}
