// Hybrid retrieval on Postgres: pgvector's HNSW index for the nearest chunks by
// cosine distance, and pg_textsearch's BM25 (or full-text search ranked with
// ts_rank_cd where it is not installed) for the keyword side. The queries are
// planned, fused and ranked by the same code as on SQLite (search.ts:
// searchPlans, rankResults); only the two searches and the chunk reads differ,
// and they run in one repeatable-read transaction, so an ingest committing
// meanwhile is seen entirely or not at all.

import type { PoolClient } from 'pg';
import type { Embedder } from '../providers/types.js';
import { folderNames } from '../store/document-names.js';
import { vectorLiteral } from '../store/postgres/index-writes.js';
import type { KeywordMethod } from '../store/postgres/migrations.js';
import type { PostgresStore } from '../store/postgres/store.js';
import { UserError } from '../util/errors.js';
import type { RankedHit } from './fuse.js';
import type { VectorCandidate } from './interfaces.js';
import { embedQuery, rankResults, searchPlans, type ChunkSource, type RetrievalSettings, type RetrievedChunk } from './search.js';

/** HNSW candidates visited per search at least (pgvector's hnsw.ef_search; its default, 40, caps how many rows come back). */
const MIN_EF_SEARCH = 100;

/** The quoted tokens of an FTS5 MATCH expression as buildFtsQuery and buildFtsPhraseQuery write them. */
export function matchTokens(match: string): string[] {
  return [...match.matchAll(/"((?:[^"]|"")*)"/g)].map((m) => m[1]!.replace(/""/g, '"'));
}

export class PostgresRetriever {
  constructor(
    private readonly store: PostgresStore,
    readonly embedder: Embedder,
  ) {}

  /** Checks that the index was built with this embedder (a UserError otherwise). */
  async check(): Promise<void> {
    const raw = await this.store.meta('index.fingerprint');
    if (!raw) return;
    const stored = JSON.parse(raw) as { embedder: string; dimensions: number };
    if (stored.embedder !== this.embedder.id || (this.embedder.dimensions > 0 && stored.dimensions !== this.embedder.dimensions)) {
      throw new UserError(`This index was built with the embedder ${stored.embedder} (${stored.dimensions} dimensions), but ${this.embedder.id} is configured.`, {
        hint: 'Use the embedder it was built with (RAGLINE_EMBED_PROVIDER / RAGLINE_EMBED_MODEL).',
        exitCode: 2,
      });
    }
  }

  close(): void {}

  /** Embeds `query` (and the secondary query, if any) and retrieves, as Retriever.search does. */
  async search(query: string, settings: RetrievalSettings, signal?: AbortSignal): Promise<RetrievedChunk[]> {
    const embedded = await embedQuery(this.embedder, query, settings, signal);
    return this.searchWithVector(query, embedded.vector, embedded.settings, embedded.secondaryVector);
  }

  /** Retrieves with query vectors already computed. */
  async searchWithVector(query: string, vector: Float32Array, settings: RetrievalSettings, secondaryVector?: Float32Array): Promise<RetrievedChunk[]> {
    const plan = searchPlans(query, settings, secondaryVector);
    const method = await this.store.keywordMethod();
    const dimensions = await this.store.meta('vector_dimensions');
    return this.store.transaction(
      async (client) => {
        await client.query(`SELECT set_config('hnsw.ef_search', $1, true)`, [String(Math.max(MIN_EF_SEARCH, plan.candidates))]).catch(() => undefined);
        const vectors = plan.secondary ? [vector, secondaryVector!] : [vector];
        const vectorLists: VectorCandidate[][] = [];
        for (const v of vectors) vectorLists.push(dimensions ? await nearestChunks(client, v, plan.candidates) : []);
        const keywordResults = new Map<string, RankedHit<number>[]>();
        for (const keywordPlan of plan.plans) {
          for (const { key, job } of keywordPlan.jobs) {
            if (!keywordResults.has(key)) keywordResults.set(key, await keywordSearch(client, method, job.match, job.limit));
          }
        }
        const ids = new Set<number>();
        for (const list of vectorLists) for (const hit of list) ids.add(hit.id);
        for (const list of keywordResults.values()) for (const hit of list) ids.add(hit.id);
        const rows = await chunkRows(client, [...ids]);
        return rankResults(query, settings, plan, keywordResults, vectorLists, {
          titles: (wanted) => new Map(wanted.map((id) => [id, rows.get(id)?.titleLine ?? ''])),
          rows: (wanted) => wanted.flatMap((id) => rows.get(id)?.source ?? []),
        });
      },
      { isolation: 'repeatable read' },
    );
  }
}

/** The `n` nearest chunks to `vector` by cosine distance (HNSW: approximate past its ef_search). */
async function nearestChunks(client: PoolClient, vector: Float32Array, n: number): Promise<VectorCandidate[]> {
  const { rows } = await client.query<{ id: number; distance: number }>(
    `SELECT id, embedding <=> $1 AS distance FROM ragline.chunks WHERE embedding IS NOT NULL ORDER BY embedding <=> $1, id LIMIT $2`,
    [vectorLiteral(vector), n],
  );
  return rows;
}

/**
 * The best `limit` chunks for an FTS5 MATCH expression (buildFtsQuery's quoted
 * tokens): by pg_textsearch's BM25 over the tokens, or by ts_rank_cd over their
 * OR (the title line weighs 4 times the body). Lower scores are better, as bm25()'s.
 * A phrase query (tokens of two words) has no BM25 counterpart: it finds nothing there.
 */
async function keywordSearch(client: PoolClient, method: KeywordMethod, match: string, limit: number): Promise<RankedHit<number>[]> {
  const tokens = matchTokens(match).filter((token) => /[\p{L}\p{N}]/u.test(token));
  if (tokens.length === 0 || limit <= 0) return [];
  let rows: { id: number; score: number }[];
  if (method === 'bm25') {
    if (tokens.every((token) => token.includes(' '))) return [];
    ({ rows } = await client.query<{ id: number; score: number }>(
      `SELECT id, score FROM (
         SELECT id, keyword_text <@> to_bm25query($1, 'ragline.chunks_bm25') AS score FROM ragline.chunks
         ORDER BY keyword_text <@> to_bm25query($1, 'ragline.chunks_bm25') LIMIT $2) AS best
       WHERE score < 0 ORDER BY score, id`,
      [tokens.join(' '), limit],
    ));
  } else {
    const query = tokens.map((_, i) => `phraseto_tsquery('english', $${i + 2})`).join(' || ');
    ({ rows } = await client.query<{ id: number; score: number }>(
      `SELECT id, -ts_rank_cd('{0.25, 0.25, 0.25, 1.0}', keyword_vector, q) AS score
       FROM ragline.chunks, (SELECT ${query} AS q) AS query
       WHERE keyword_vector @@ q ORDER BY score, id LIMIT $1`,
      [limit, ...tokens],
    ));
  }
  return rows.map((row, i) => ({ id: row.id, rank: i + 1, score: row.score }));
}

/** The chunks with these ids, each with its title line and its document as shown. */
async function chunkRows(client: PoolClient, ids: number[]): Promise<Map<number, { titleLine: string; source: ChunkSource }>> {
  if (ids.length === 0) return new Map();
  const { rows } = await client.query<{
    chunk_id: number;
    root: string;
    document_path: string;
    title: string | null;
    heading: string;
    text: string;
    start_line: number;
    end_line: number;
    locator: 'line' | 'page';
    text_hash: string;
    shared: boolean;
  }>(
    `SELECT c.id AS chunk_id, d.root, d.path AS document_path, d.title, c.heading, c.text, c.start_line, c.end_line, c.locator, c.text_hash,
            EXISTS (SELECT 1 FROM ragline.documents o WHERE o.path = d.path AND o.root <> d.root) AS shared
     FROM ragline.chunks c JOIN ragline.documents d ON d.id = c.document_id WHERE c.id = ANY($1)`,
    [ids],
  );
  // A path two folders hold is shown under its folder's name, as on SQLite (DocumentNaming).
  const sharedRoots = rows.some((row) => row.shared)
    ? folderNames((await client.query<{ root: string }>('SELECT DISTINCT root FROM ragline.documents ORDER BY root')).rows.map((row) => row.root))
    : new Map<string, string>();
  return new Map(
    rows.map((row) => {
      const folder = row.shared ? sharedRoots.get(row.root) : undefined;
      const documentPath = folder ? `${folder.replace(/\/$/, '')}/${row.document_path}` : row.document_path;
      const source: ChunkSource = {
        chunkId: row.chunk_id,
        root: row.root,
        documentPath,
        title: row.title,
        heading: row.heading,
        text: row.text,
        startLine: row.start_line,
        endLine: row.end_line,
        locator: row.locator,
        textHash: row.text_hash,
      };
      return [row.chunk_id, { titleLine: `${row.title ?? ''} ${row.heading}`, source }];
    }),
  );
}
