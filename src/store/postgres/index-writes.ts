// Writes to the shared index in Postgres: documents, their chunks and vectors,
// the index fingerprint, and the vector column (its dimension is fixed by the first
// ingest, with an HNSW index for cosine distance). Every write of an ingest goes
// through one IndexWriteTransaction, committed once: other readers see the ingest
// whole or not at all.

import type { PoolClient } from 'pg';
import type { ChunkSpan } from '../../domain/index.js';
import { UserError } from '../../util/errors.js';
import type { IndexFingerprint } from '../meta.js';
import type { PostgresStore } from './store.js';

/** A chunk to write, with its vector. */
export interface PgNewChunk extends ChunkSpan {
  heading: string;
  text: string;
  textHash: string;
  keyword: { title: string; body: string };
  vector: Float32Array;
}

/** A document of one folder as stored: what a re-ingest compares. */
export interface PgStoredDocument {
  id: number;
  path: string;
  size: number;
  mtimeMs: number;
  contentHash: string;
}

/** pgvector's text form of a vector. */
export function vectorLiteral(vector: Float32Array): string {
  return `[${Array.prototype.join.call(vector, ',')}]`;
}

/** The documents stored for `root`, by path. */
export async function storedDocuments(store: PostgresStore, root: string): Promise<Map<string, PgStoredDocument>> {
  const rows = await store.query<{ id: number; path: string; size: number; mtime_ms: number; content_hash: string }>(
    'SELECT id, path, size, mtime_ms, content_hash FROM ragline.documents WHERE root = $1',
    [root],
  );
  return new Map(rows.map((row) => [row.path, { id: row.id, path: row.path, size: row.size, mtimeMs: row.mtime_ms, contentHash: row.content_hash }]));
}

/** The index fingerprint (embedder, dimensions, chunker), if anything was ingested. */
export async function pgFingerprint(store: PostgresStore): Promise<IndexFingerprint | undefined> {
  const raw = await store.meta('index.fingerprint');
  return raw ? (JSON.parse(raw) as IndexFingerprint) : undefined;
}

/** The writes of one ingest, in one transaction on one connection. */
export class IndexWriteTransaction {
  private constructor(private readonly client: PoolClient) {}

  /**
   * Opens the ingest's transaction and checks (or records) the fingerprint: an index
   * built with another embedder or chunker is refused. The first ingest adds the
   * vector column with `fingerprint.dimensions` and its HNSW index.
   */
  static async begin(store: PostgresStore, fingerprint: IndexFingerprint | undefined): Promise<IndexWriteTransaction> {
    // Fingerprint and vector column are decided by one ingest at a time, in a short
    // transaction of their own: the ingests' own transactions then run side by side.
    // Without a fingerprint (a migration of sessions only) nothing of the index is written.
    if (fingerprint) {
      await store.transaction(async (client) => {
        await client.query(`SELECT pg_advisory_xact_lock(hashtext('ragline.fingerprint'))`);
        await checkFingerprint(client, fingerprint);
      });
    }
    const client = await store.connect();
    try {
      await client.query('BEGIN');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      client.release();
      throw error;
    }
    return new IndexWriteTransaction(client);
  }

  /** Makes every write of the ingest visible at once. */
  async commit(): Promise<void> {
    try {
      await this.client.query('COMMIT');
    } finally {
      this.client.release();
    }
  }

  /** Drops every write of the ingest. */
  async rollback(): Promise<void> {
    try {
      await this.client.query('ROLLBACK');
    } catch {
      /* the connection is gone: the server rolled back */
    } finally {
      this.client.release();
    }
  }

  /**
   * Writes one document and its chunks in place of what was stored for the same root
   * and path. The document row is locked by the upsert until the ingest commits, so two
   * ingests of one file at once write it one after the other, never twice.
   */
  async writeDocument(doc: { root: string; path: string; kind: string; title?: string; contentHash: string; size: number; mtimeMs: number }, chunks: PgNewChunk[]): Promise<number> {
    const { rows } = await this.client.query<{ id: number }>(
      `INSERT INTO ragline.documents (root, path, kind, title, content_hash, size, mtime_ms, chunk_count, ingested_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, now())
       ON CONFLICT (root, path) DO UPDATE SET kind = excluded.kind, title = excluded.title, content_hash = excluded.content_hash,
         size = excluded.size, mtime_ms = excluded.mtime_ms, chunk_count = excluded.chunk_count, ingested_at = excluded.ingested_at
       RETURNING id`,
      [doc.root, doc.path, doc.kind, doc.title ?? null, doc.contentHash, doc.size, doc.mtimeMs, chunks.length],
    );
    const id = rows[0]!.id;
    await this.client.query('DELETE FROM ragline.chunks WHERE document_id = $1', [id]);
    // In slices: one statement per 200 chunks keeps the parameter count far below the protocol's 65535.
    for (let start = 0; start < chunks.length; start += 200) {
      const slice = chunks.slice(start, start + 200);
      const values: unknown[] = [];
      const tuples = slice.map((chunk, i) => {
        values.push(id, start + i, chunk.heading, chunk.text, chunk.startLine, chunk.endLine, chunk.locator, chunk.textHash, chunk.keyword.title, chunk.keyword.body, vectorLiteral(chunk.vector));
        const at = i * 11;
        return `(${Array.from({ length: 11 }, (_, j) => `$${at + j + 1}`).join(', ')})`;
      });
      await this.client.query(
        `INSERT INTO ragline.chunks (document_id, ordinal, heading, text, start_line, end_line, locator, text_hash, keyword_title, keyword_body, embedding)
         VALUES ${tuples.join(', ')} ON CONFLICT (document_id, ordinal) DO NOTHING`,
        values,
      );
    }
    return id;
  }

  /** Stored vectors of chunks whose embedded text has one of `hashes`: an unchanged chunk is not embedded again. */
  async vectorsByTextHash(hashes: string[]): Promise<Map<string, Float32Array>> {
    if (hashes.length === 0) return new Map();
    const { rows } = await this.client.query<{ text_hash: string; embedding: string }>(
      `SELECT DISTINCT ON (text_hash) text_hash, embedding::text AS embedding FROM ragline.chunks
       WHERE text_hash = ANY($1) AND embedding IS NOT NULL`,
      [hashes],
    );
    return new Map(rows.map((row) => [row.text_hash, Float32Array.from(JSON.parse(row.embedding) as number[])]));
  }

  /** Records a document's new modification time (its bytes are unchanged). */
  async touch(id: number, size: number, mtimeMs: number): Promise<void> {
    await this.client.query('UPDATE ragline.documents SET size = $2, mtime_ms = $3 WHERE id = $1', [id, size, mtimeMs]);
  }

  /** Removes documents (their chunks go with them); returns the chunks removed. */
  async removeDocuments(ids: number[]): Promise<number> {
    if (ids.length === 0) return 0;
    const { rows } = await this.client.query<{ n: number }>('SELECT count(*)::int AS n FROM ragline.chunks WHERE document_id = ANY($1)', [ids]);
    await this.client.query('DELETE FROM ragline.documents WHERE id = ANY($1)', [ids]);
    return rows[0]!.n;
  }

  /** Another statement of the transaction (a migration's session rows). */
  async query<R extends object = Record<string, unknown>>(sql: string, values: unknown[]): Promise<R[]> {
    return (await this.client.query(sql, values)).rows as R[];
  }

  /** Sets a value of ragline.meta. */
  async setMeta(key: string, value: string): Promise<void> {
    await this.client.query('INSERT INTO ragline.meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value', [key, value]);
  }
}

async function checkFingerprint(client: PoolClient, fingerprint: IndexFingerprint): Promise<void> {
  const { rows } = await client.query<{ key: string; value: string }>(`SELECT key, value FROM ragline.meta WHERE key IN ('index.fingerprint', 'vector_dimensions')`);
  const meta = new Map(rows.map((row) => [row.key, row.value]));
  const raw = meta.get('index.fingerprint');
  const stored = raw ? (JSON.parse(raw) as IndexFingerprint) : undefined;
  const { rows: counted } = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM (SELECT 1 FROM ragline.chunks LIMIT 1) AS any_chunk');
  if (stored && counted[0]!.n > 0) {
    if (stored.embedder !== fingerprint.embedder || stored.dimensions !== fingerprint.dimensions) {
      throw new UserError(`This index was built with the embedder ${stored.embedder} (${stored.dimensions} dimensions), but ${fingerprint.embedder} is configured.`, {
        hint: `Use the embedder it was built with, or ingest into another database.`,
        exitCode: 2,
      });
    }
    if (stored.chunker.size !== fingerprint.chunker.size || stored.chunker.overlap !== fingerprint.chunker.overlap) {
      throw new UserError(
        `This index was chunked with size ${stored.chunker.size} and overlap ${stored.chunker.overlap}, but ${fingerprint.chunker.size} and ${fingerprint.chunker.overlap} are configured.`,
        { hint: 'Use the chunk settings it was built with, or ingest into another database.', exitCode: 2 },
      );
    }
  }
  const dimensions = meta.get('vector_dimensions');
  if (dimensions === undefined) {
    const n = fingerprint.dimensions;
    if (!Number.isInteger(n) || n <= 0 || n > 16000) throw new Error(`invalid embedding dimension ${n}`);
    await client.query('CREATE EXTENSION IF NOT EXISTS vector');
    await client.query(`ALTER TABLE ragline.chunks ADD COLUMN embedding vector(${n})`);
    // HNSW builds on up to 2000 dimensions; past that the search scans exactly.
    if (n <= 2000) await client.query('CREATE INDEX chunks_embedding ON ragline.chunks USING hnsw (embedding vector_cosine_ops)');
    await client.query(`INSERT INTO ragline.meta (key, value) VALUES ('vector_dimensions', $1)`, [String(n)]);
  } else if (Number(dimensions) !== fingerprint.dimensions) {
    throw new UserError(`This index holds vectors of ${dimensions} dimensions, but ${fingerprint.embedder} makes ${fingerprint.dimensions}.`, {
      hint: 'Use the embedder it was built with, or ingest into another database.',
      exitCode: 2,
    });
  }
  await client.query(`INSERT INTO ragline.meta (key, value) VALUES ('index.fingerprint', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value`, [JSON.stringify(fingerprint)]);
}
