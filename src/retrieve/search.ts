// Hybrid retrieval: the same query goes to the vector index (sqlite-vec) and to
// the keyword index (FTS5 bm25); the two ranked lists are fused, and each result
// keeps its score parts so the chat, `search` and replay can show why it was found.
// Each side is a search behind its interface (interfaces.ts): SQLite answers (vec0.ts,
// fts5.ts) until the database's in-memory copies, which the retriever is given or
// makes (memory/accelerators.ts), are loaded; both give the same answers.

import type { Statement } from 'better-sqlite3';
import { DEFAULT_SEARCH_PATHS, type SearchPaths } from '../config/index.js';
import type { ChunkLocation } from '../domain/index.js';
import type { Db } from '../store/db.js';
import { DocumentNaming } from '../store/document-names.js';
import { assertKeywordTextCurrent, assertSameEmbedder, assertVectorLength, getFingerprint } from '../store/meta.js';
import type { Embedder } from '../providers/types.js';
import { indexedTokens, SEARCHABLE_TEXT_VERSION } from '../text/symbols.js';
import { stem } from '../text/stem.js';
import { isStopword } from '../text/stopwords.js';
import { Copies } from './copies.js';
import { buildFtsPhraseQuery, buildFtsQuery } from './fts-query.js';
import { fuse, type FusedHit, type FuseOptions, type RankedHit } from './fuse.js';
import { Fts5Search } from './fts5.js';
import type { KeywordSearch, VectorCandidate } from './interfaces.js';
import { SearchAccelerators } from './memory/accelerators.js';
import { Vec0Search } from './vec0.js';
import { addPhraseScores, boostTitleMatches, DEFAULT_PHRASE_WEIGHT, DEFAULT_TITLE_WEIGHT } from './rescore.js';

/** Where a chunk comes from: enough to show it and cite it as `path:lines`. */
export interface ChunkSource extends ChunkLocation {
  chunkId: number;
  /** The folder the document was ingested from (absolute). */
  root: string;
  title: string | null;
  /** Heading path joined with ' > '. */
  heading: string;
  text: string;
  textHash: string;
}

/** One retrieved chunk with where it comes from and why it ranked where it did. */
export interface RetrievedChunk extends ChunkSource {
  /** 1-based rank after fusion. */
  rank: number;
  /** Fused score, higher is better. */
  score: number;
  vectorRank?: number;
  vectorDistance?: number;
  keywordRank?: number;
  /** Keyword score: FTS5 bm25 of the terms plus phraseWeight x bm25 of the word pairs (lower is better). */
  bm25?: number;
}

export interface RetrievalSettings {
  /** Results to return. */
  k: number;
  /** Candidates taken from each side before fusion. Default max(100, 4k). */
  candidates?: number;
  /** At most this many chunks of one document in the results; 0 = no limit. */
  maxPerDocument?: number;
  /**
   * A second query whose results are fused in with this weight, e.g. the raw
   * question beside its rewrite, so that a bad rewrite cannot lose what the
   * question alone would have found.
   */
  secondary?: { query: string; weight: number };
  /**
   * The query is `core` (the question as asked) plus words a rewrite added; those
   * words count `weight` times as much as the core's: keyword score = bm25(core) +
   * weight x bm25(added words), query vector = normalise(v(core) + weight x v(added
   * words)). Without it every word of the query counts the same.
   */
  expansion?: { core: string; weight: number };
  /** bm25() weights of the FTS columns title (with heading path) and body. */
  columnWeights?: [number, number];
  /** Weight of the bm25 of the query's adjacent word pairs as phrases, added to the terms' bm25; 0 = terms only. */
  phraseWeight?: number;
  /** Fused-score bonus for candidates whose title and heading path contain all query terms; 0 = none. */
  titleWeight?: number;
  fusion?: FuseOptions;
}

/** Measured on bench/mtrag (bench/lab/RESULTS.md). */
export const DEFAULT_COLUMN_WEIGHTS: [number, number] = [4, 1];

export interface RetrieverOptions {
  /**
   * The in-memory copies of `db`'s indexes (made once per database and shared by its
   * retrievers); the caller closes them. Without it the retriever makes its own, and
   * `close()` closes them.
   */
  accelerators?: SearchAccelerators;
}

export class Retriever {
  /** The in-memory copies that answer in place of SQLite once loaded (see memory/). */
  readonly accelerators: SearchAccelerators;
  private readonly ownsAccelerators: boolean;
  /** The reference searches: sqlite-vec's KNN and FTS5's bm25. */
  private readonly vec0: Vec0Search;
  private readonly fts5: Fts5Search;
  private readonly chunkStatement: Statement<unknown[]>;
  private readonly titleStatement: Statement<unknown[]>;
  private readonly documentNames: DocumentNaming;
  /** The vector length the index records, as last read (undefined: not read yet, or no index). */
  private indexDimensions: number | undefined;

  /** `paths`: which path each side searches by (the `search.*` settings); default auto. */
  constructor(
    private readonly db: Db,
    readonly embedder: Embedder,
    readonly paths: SearchPaths = DEFAULT_SEARCH_PATHS,
    options: RetrieverOptions = {},
  ) {
    assertSameEmbedder(db, embedder);
    assertKeywordTextCurrent(db, SEARCHABLE_TEXT_VERSION);
    this.ownsAccelerators = !options.accelerators;
    this.accelerators = options.accelerators ?? new SearchAccelerators(db);
    this.vec0 = new Vec0Search(db);
    this.fts5 = new Fts5Search(db);
    this.chunkStatement = db.prepare(`
      SELECT c.id AS chunkId, d.root AS root, d.path AS documentPath, d.title AS title, c.heading AS heading, c.text AS text,
             c.start_line AS startLine, c.end_line AS endLine, c.locator AS locator, c.text_hash AS textHash
      FROM chunks c JOIN documents d ON d.id = c.document_id
      WHERE c.id IN (SELECT value FROM json_each(?))`);
    this.titleStatement = db.prepare(`
      SELECT c.id AS id, coalesce(d.title, '') || ' ' || c.heading AS title
      FROM chunks c JOIN documents d ON d.id = c.document_id
      WHERE c.id IN (SELECT value FROM json_each(?))`);
    this.documentNames = new DocumentNaming(db);
  }

  /** Closes the in-memory copies if this retriever made them (stops their threads). */
  close(): void {
    if (this.ownsAccelerators) this.accelerators.close();
  }

  /** Embeds `query` (and the secondary query, if any) and retrieves. */
  async search(query: string, settings: RetrievalSettings, signal?: AbortSignal): Promise<RetrievedChunk[]> {
    const embedded = await embedQuery(this.embedder, query, settings, signal);
    return this.searchWithVector(query, embedded.vector, embedded.settings, embedded.secondaryVector);
  }

  /**
   * Retrieves with already computed query vectors. All reads happen in one read
   * transaction, so an ingest committing in another process between them cannot
   * drop results.
   */
  searchWithVector(query: string, vector: Float32Array, settings: RetrievalSettings, secondaryVector?: Float32Array): RetrievedChunk[] {
    // The recorded length is read again only when the vector's differs (a read costs ~0.1 ms).
    if (vector.length !== this.indexDimensions) {
      const fingerprint = getFingerprint(this.db);
      assertVectorLength(fingerprint, vector.length);
      this.indexDimensions = fingerprint?.dimensions;
    }
    return this.db.inTransaction
      ? this.read(query, vector, settings, secondaryVector)
      : this.db.transaction(() => this.read(query, vector, settings, secondaryVector))();
  }

  private read(query: string, vector: Float32Array, settings: RetrievalSettings, secondaryVector?: Float32Array): RetrievedChunk[] {
    const plan = searchPlans(query, settings, secondaryVector);
    const { candidates, secondary, plans } = plan;

    // Each query's vector scan runs on the helper thread while its keyword queries run
    // here (memory/vector-index.ts); a scan is always joined, even if the keyword side
    // throws, before anything else may search.
    const vectors = secondary ? [vector, secondaryVector!] : [vector];
    const keywordResults = new Map<string, RankedHit<number>[]>();
    const vectorLists: VectorCandidate[][] = [];
    const keywords = this.accelerators.keywordSearch(this.paths, this.fts5);
    plans.forEach((keywordPlan, i) => {
      const finishVectors = this.beginVectors(vectors[i]!, candidates);
      try {
        runKeywordJobs(keywordPlan.jobs, keywordResults, keywords);
      } finally {
        vectorLists.push(finishVectors());
      }
    });
    return rankResults(query, settings, plan, keywordResults, vectorLists, {
      titles: (ids) => new Map((this.titleStatement.all(JSON.stringify(ids)) as { id: number; title: string }[]).map((row) => [row.id, row.title])),
      rows: (ids) => {
        const found = this.chunkStatement.all(JSON.stringify(ids)) as ChunkSource[];
        // Each document by the name it is shown by (its folder's name before a path another folder holds too).
        const names = this.documentNames.namesOf(found.map((row) => ({ root: row.root, path: row.documentPath })));
        return found.map((row, i) => ({ ...row, documentPath: names[i]! }));
      },
    });
  }

  /** The `n` nearest chunks to `vector`, nearest first, as a search's vector side finds them (exact). */
  nearest(vector: Float32Array, n: number): VectorCandidate[] {
    return this.beginVectors(vector, n)();
  }

  /** Starts the vector side of one query: on the in-memory copy when it answers, else vec0. */
  private beginVectors(vector: Float32Array, n: number): () => VectorCandidate[] {
    if (n <= 0) return () => [];
    return this.accelerators.vectorSearch(this.paths, this.vec0).begin(vector, n);
  }
}

/**
 * The query's vector (with an expansion: the core's and the added words', weighted)
 * and the secondary query's, in one call to the embedder; the settings keep the
 * secondary query and the expansion only where they apply.
 */
export async function embedQuery(
  embedder: Embedder,
  query: string,
  settings: RetrievalSettings,
  signal?: AbortSignal,
): Promise<{ vector: Float32Array; settings: RetrievalSettings; secondaryVector?: Float32Array }> {
  const secondary = settings.secondary && settings.secondary.query !== query ? settings.secondary : undefined;
  const added = settings.expansion ? addedWords(query, settings.expansion.core) : [];
  const expansion = settings.expansion && added.length > 0 ? settings.expansion : undefined;
  const texts = expansion ? [expansion.core, added.join(' ')] : [query];
  if (secondary) texts.push(secondary.query);
  const vectors = await embedder.embed(texts, signal, 'query');
  const vector = expansion ? weightedSum(vectors[0]!, vectors[1]!, expansion.weight) : vectors[0]!;
  return { vector, settings: { ...settings, secondary, expansion }, secondaryVector: secondary ? vectors.at(-1) : undefined };
}

/** What one search asks of each side: candidates per side, the secondary query if it has a vector, and each query's keyword plan. */
export interface SearchPlan {
  candidates: number;
  secondary?: { query: string; weight: number };
  plans: KeywordPlan[];
}

/** The keyword queries and candidate counts of one search (the query, and the secondary one when it has a vector). */
export function searchPlans(query: string, settings: RetrievalSettings, secondaryVector?: Float32Array): SearchPlan {
  const candidates = settings.candidates ?? Math.max(100, settings.k * 4);
  const secondary = settings.secondary && secondaryVector ? settings.secondary : undefined;
  const plans = [keywordPlan(query, candidates, settings, settings.expansion)];
  if (secondary) plans.push(keywordPlan(secondary.query, candidates, settings));
  return { candidates, secondary, plans };
}

/** What ranking the fused candidates reads of the chunks: their title lines, and their rows with their documents as shown. */
export interface ChunkLookup {
  titles(ids: number[]): Map<number, string>;
  rows(ids: number[]): ChunkSource[];
}

/**
 * The results of one search from what each side found: fused, title matches boosted,
 * the secondary query's list combined in, and read from `lookup` a window at a time
 * (k, or every candidate with a per-document limit) while copies of a section left
 * out keep the results short of k. Any store's searches end here.
 */
export function rankResults(
  query: string,
  settings: RetrievalSettings,
  { candidates, secondary, plans }: SearchPlan,
  keywordResults: Map<string, RankedHit<number>[]>,
  vectorLists: VectorCandidate[][],
  lookup: ChunkLookup,
): RetrievedChunk[] {
  let fused = fusedFor(plans[0]!.hits(keywordResults), vectorLists[0]!, candidates, settings, settings.expansion?.core ?? query, lookup);
  if (secondary) {
    const second = fusedFor(plans[1]!.hits(keywordResults), vectorLists[1]!, candidates, settings, secondary.query, lookup);
    fused = combine(fused, second, secondary.weight);
  }
  const window = settings.maxPerDocument ? candidates : settings.k;
  const perDocument = new Map<string, number>();
  const copies = new Copies();
  const results: RetrievedChunk[] = [];
  for (let start = 0; start < fused.length && results.length < settings.k; start += window) {
    const top = fused.slice(start, start + window);
    const rows = new Map(lookup.rows(top.map((hit) => hit.id)).map((row) => [row.chunkId, row]));
    for (const hit of top) {
      const row = rows.get(hit.id);
      if (!row) continue; // removed by a concurrent ingest between the two reads
      if (settings.maxPerDocument && (perDocument.get(row.documentPath) ?? 0) >= settings.maxPerDocument) continue;
      if (copies.copyOrKeep(row)) continue;
      if (settings.maxPerDocument) perDocument.set(row.documentPath, (perDocument.get(row.documentPath) ?? 0) + 1);
      results.push({
        ...row,
        rank: results.length + 1,
        score: hit.score,
        vectorRank: hit.vector?.rank,
        vectorDistance: hit.vector?.distance,
        keywordRank: hit.keyword?.rank,
        bm25: hit.keyword?.bm25,
      });
      if (results.length >= settings.k) break;
    }
  }
  return results;
}

/** Fuses one query's two sides and adds its title coverage (of `titleQuery`: the words as asked). */
function fusedFor(
  keywordHits: RankedHit<number>[],
  vectorList: VectorCandidate[],
  candidates: number,
  settings: RetrievalSettings,
  titleQuery: string,
  lookup: ChunkLookup,
): FusedHit<number>[] {
  const vectorHits = vectorList.map((hit, i) => ({ id: hit.id, rank: i + 1, score: hit.distance }));
  // Fewer keyword matches than results asked for ("randomUUID" in two chunks): the list
  // holds every match, and its last is still one, not worth 0. Measured on MTRAG: with
  // the floor for any list shorter than the candidates, FiQA R@5 fell 0.171 -> 0.169.
  const fewMatches = keywordHits.length < settings.k;
  const fused = fuse(vectorHits, keywordHits, fewMatches ? { ...settings.fusion, keywordFloor: 0 } : settings.fusion);
  const titleWeight = settings.titleWeight ?? DEFAULT_TITLE_WEIGHT;
  if (titleWeight === 0 || fused.length === 0) return fused;
  const titles = lookup.titles(fused.slice(0, candidates).map((hit) => hit.id));
  // Title coverage is of the words as asked: a rewrite's added words are context, not the subject.
  return boostTitleMatches(fused, titleQuery, (id) => titles.get(id) ?? '', titleWeight, candidates);
}

/**
 * The bm25 queries of one query's keyword side, and how their results combine:
 * - plain: bm25 of the terms plus (with weight `phraseWeight`) bm25 of the adjacent
 *   word pairs as phrases; the terms list goes three times deeper than `n`, so that
 *   most chunks a phrase finds have their own terms score;
 * - with an expansion: bm25(core) + weight x bm25(added words), which scores one
 *   weighted query since bm25 is a sum over the query's terms. Each list goes three
 *   times deeper than n; a chunk missing from one list counts nothing from it (looking
 *   its score up exactly costs a full FTS5 pass per list, 25-30 ms at 100k chunks, and
 *   measured no better on MTRAG: FiQA 0.144 vs 0.145).
 */
export function keywordPlan(query: string, n: number, settings: RetrievalSettings, expansion?: RetrievalSettings['expansion']): KeywordPlan {
  const weights = settings.columnWeights ?? DEFAULT_COLUMN_WEIGHTS;
  const added = expansion ? addedWords(query, expansion.core) : [];
  if (expansion && added.length > 0) {
    const core = job(buildFtsQuery(expansion.core), n * 3, weights);
    const more = job(buildFtsQuery(added.join(' ')), n * 3, weights);
    return {
      jobs: [core, more].filter((j): j is KeywordJob => j !== undefined),
      hits: (results) => weightedKeywordHits(lookup(results, core), lookup(results, more), expansion.weight, n),
    };
  }
  const phraseWeight = settings.phraseWeight ?? DEFAULT_PHRASE_WEIGHT;
  const phrases = phraseWeight > 0 ? job(buildFtsPhraseQuery(query), n, weights) : undefined;
  const terms = job(buildFtsQuery(query), phrases ? n * 3 : n, weights);
  return {
    jobs: [terms, phrases].filter((j): j is KeywordJob => j !== undefined),
    hits: (results) => {
      const termHits = lookup(results, terms);
      return phrases ? addPhraseScores(termHits, lookup(results, phrases), phraseWeight, n) : termHits;
    },
  };
}

/** One bm25 query: the best `limit` chunks for `match`. */
interface Bm25Job {
  match: string;
  limit: number;
  weights: [number, number];
}

/** A bm25 query of a search, keyed so that a search runs each distinct one once. */
interface KeywordJob {
  key: string;
  job: Bm25Job;
}

export interface KeywordPlan {
  jobs: KeywordJob[];
  hits(results: Map<string, RankedHit<number>[]>): RankedHit<number>[];
}

/**
 * Runs the bm25 queries of `jobs` that `results` lacks (a rewritten turn's raw
 * question often repeats one) on `keywords`.
 */
export function runKeywordJobs(jobs: KeywordJob[], results: Map<string, RankedHit<number>[]>, keywords: KeywordSearch): void {
  for (const j of jobs) {
    if (!results.has(j.key)) results.set(j.key, keywords.search(j.job.match, j.job.weights, j.job.limit));
  }
}

function job(match: string | null, limit: number, weights: [number, number]): KeywordJob | undefined {
  if (!match || limit <= 0) return undefined;
  return { key: `${weights.join(',')}|${limit}|${match}`, job: { match, limit, weights } };
}

function lookup(results: Map<string, RankedHit<number>[]>, j: KeywordJob | undefined): RankedHit<number>[] {
  return j ? (results.get(j.key) ?? []) : [];
}

/** Candidates of core + weight x added bm25 (see keywordPlan), best `n`. */
function weightedKeywordHits(coreHits: RankedHit<number>[], addedHits: RankedHit<number>[], weight: number, n: number): RankedHit<number>[] {
  const parts = new Map<number, { core?: number; added?: number }>();
  for (const hit of coreHits) parts.set(hit.id, { core: hit.score });
  for (const hit of addedHits) parts.set(hit.id, { ...parts.get(hit.id), added: hit.score });
  return [...parts]
    .map(([id, part]) => ({ id, score: (part.core ?? 0) + weight * (part.added ?? 0) }))
    .sort((a, b) => a.score - b.score || a.id - b.id)
    .slice(0, n)
    .map((hit, i) => ({ ...hit, rank: i + 1 }));
}

/** `docs/auth.md:12-40`, or `manual.pdf:p.3` for a page. */
export function formatLocation(chunk: ChunkLocation): string {
  if (chunk.locator === 'page') {
    return chunk.startLine === chunk.endLine ? `${chunk.documentPath}:p.${chunk.startLine}` : `${chunk.documentPath}:p.${chunk.startLine}-${chunk.endLine}`;
  }
  return chunk.startLine === chunk.endLine ? `${chunk.documentPath}:${chunk.startLine}` : `${chunk.documentPath}:${chunk.startLine}-${chunk.endLine}`;
}

/** Content words of `query` that `core` lacks (compared by stem), in order, once each. */
export function addedWords(query: string, core: string): string[] {
  const present = new Set(indexedTokens(core, { identifiers: true }).map((word) => stem(word)));
  const added: string[] = [];
  for (const word of indexedTokens(query, { identifiers: true })) {
    const key = stem(word);
    if (present.has(key) || isStopword(word)) continue;
    present.add(key);
    added.push(word);
  }
  return added;
}

/** normalise(a + weight x b). */
function weightedSum(a: Float32Array, b: Float32Array, weight: number): Float32Array {
  const out = new Float32Array(a.length);
  let norm = 0;
  for (let i = 0; i < a.length; i++) {
    out[i] = a[i]! + weight * (b[i] ?? 0);
    norm += out[i]! * out[i]!;
  }
  norm = Math.sqrt(norm) || 1;
  for (let i = 0; i < out.length; i++) out[i] = out[i]! / norm;
  return out;
}

/** Adds the secondary list's fused scores, times `weight`, to the primary's; score parts come from the primary where it has them. */
function combine(primary: FusedHit<number>[], secondary: FusedHit<number>[], weight: number): FusedHit<number>[] {
  const byId = new Map(primary.map((hit) => [hit.id, { ...hit }]));
  for (const hit of secondary) {
    const existing = byId.get(hit.id);
    if (existing) {
      existing.score += weight * hit.score;
      existing.vector ??= hit.vector;
      existing.keyword ??= hit.keyword;
    } else byId.set(hit.id, { ...hit, score: weight * hit.score });
  }
  const merged = [...byId.values()].sort((a, b) => b.score - a.score || a.id - b.id);
  merged.forEach((hit, i) => (hit.rank = i + 1));
  return merged;
}
