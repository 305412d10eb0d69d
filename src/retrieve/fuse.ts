// Fuses the vector (KNN) and keyword (FTS5 bm25) result lists into one ranking.
// Pure: it takes each side's ranked hits and returns the fused order with every score
// part kept, so the chat turn can show why a chunk was retrieved and replay can diff it.

/** One hit from one side. `rank` is 1-based; `score` is the side's raw score (vector distance, lower is better; bm25 as FTS5 returns it, lower is better). */
export interface RankedHit<Id = string> {
  id: Id;
  rank: number;
  score: number;
}

/** One fused result with the parts it came from. */
export interface FusedHit<Id = string> {
  id: Id;
  /** Fused score; higher is better. */
  score: number;
  /** 1-based position in the fused order. */
  rank: number;
  vector?: { rank: number; distance: number };
  keyword?: { rank: number; bm25: number };
}

/** Fusion settings. Defaults are the values measured best on the benchmark (bench/lab/RESULTS.md). */
export interface FuseOptions {
  /** `rrf`: weighted reciprocal rank fusion. `score` (default, measured best): weighted sum of min-max normalised scores. */
  method?: 'rrf' | 'score';
  /** RRF constant k in weight / (k + rank). Default 60 (used only by `rrf`). */
  k?: number;
  /** Weight of the vector side. Default 0.5 (the offline embedder is weaker than bm25). */
  vectorWeight?: number;
  /** Weight of the keyword side. Default 1. */
  keywordWeight?: number;
  /** Keep at most this many fused hits. Default: all. */
  limit?: number;
  /**
   * `score` method: the keyword score that normalises to 0. Default: the list's worst,
   * right for a list cut at some depth. A list that holds every chunk that matched
   * (the retriever: fewer than the results asked for) passes 0, the bm25 of a chunk
   * matching nothing: else its last hit, a real match, would count for nothing
   * ("randomUUID" matching two chunks).
   */
  keywordFloor?: number;
}

export const DEFAULT_FUSE_OPTIONS: Required<Omit<FuseOptions, 'limit' | 'keywordFloor'>> = {
  method: 'score',
  k: 60,
  vectorWeight: 0.5,
  keywordWeight: 1,
};

/** Min-max normalises "lower is better" scores to [0, 1] with 1 for the best; `floor`, when given, is the score that gives 0. */
function normaliseLowerBetter<Id>(hits: readonly RankedHit<Id>[], floor?: number): Map<Id, number> {
  const out = new Map<Id, number>();
  if (hits.length === 0) return out;
  let min = Infinity;
  let max = -Infinity;
  for (const h of hits) {
    if (h.score < min) min = h.score;
    if (h.score > max) max = h.score;
  }
  if (floor !== undefined && floor > max) max = floor;
  const span = max - min;
  for (const h of hits) out.set(h.id, span > 0 ? (max - h.score) / span : 1);
  return out;
}

/**
 * Fuses two ranked lists. Ties on the fused score are broken by the better single-side
 * rank, then by the keyword rank, so the output order is deterministic.
 */
export function fuse<Id>(
  vectorHits: readonly RankedHit<Id>[],
  keywordHits: readonly RankedHit<Id>[],
  options: FuseOptions = {},
): FusedHit<Id>[] {
  const { method, k, vectorWeight, keywordWeight } = { ...DEFAULT_FUSE_OPTIONS, ...options };
  const byId = new Map<Id, FusedHit<Id>>();
  const entry = (id: Id): FusedHit<Id> => {
    let e = byId.get(id);
    if (!e) {
      e = { id, score: 0, rank: 0 };
      byId.set(id, e);
    }
    return e;
  };

  if (method === 'rrf') {
    for (const h of vectorHits) {
      const e = entry(h.id);
      if (e.vector) continue; // a duplicate id counts once, at its best rank
      e.vector = { rank: h.rank, distance: h.score };
      e.score += vectorWeight / (k + h.rank);
    }
    for (const h of keywordHits) {
      const e = entry(h.id);
      if (e.keyword) continue;
      e.keyword = { rank: h.rank, bm25: h.score };
      e.score += keywordWeight / (k + h.rank);
    }
  } else {
    const vNorm = normaliseLowerBetter(vectorHits);
    const kNorm = normaliseLowerBetter(keywordHits, options.keywordFloor);
    for (const h of vectorHits) {
      const e = entry(h.id);
      if (e.vector) continue;
      e.vector = { rank: h.rank, distance: h.score };
      e.score += vectorWeight * (vNorm.get(h.id) ?? 0);
    }
    for (const h of keywordHits) {
      const e = entry(h.id);
      if (e.keyword) continue;
      e.keyword = { rank: h.rank, bm25: h.score };
      e.score += keywordWeight * (kNorm.get(h.id) ?? 0);
    }
  }

  const bestRank = (e: FusedHit<Id>) => Math.min(e.vector?.rank ?? 1e9, e.keyword?.rank ?? 1e9);
  const fused = [...byId.values()].sort(
    (a, b) =>
      b.score - a.score ||
      bestRank(a) - bestRank(b) ||
      (a.keyword?.rank ?? 1e9) - (b.keyword?.rank ?? 1e9),
  );
  const limited = options.limit !== undefined ? fused.slice(0, options.limit) : fused;
  limited.forEach((e, i) => (e.rank = i + 1));
  return limited;
}
