// Retrieval metrics for the benchmark and replay: recall, MRR and nDCG at a cutoff,
// on a ranked list of document ids against the set of relevant ids. Binary relevance
// unless graded gains are given. Pure functions, no I/O.

/** Graded gains per relevant id; ids absent from the map count as gain 0. */
export type Gains = ReadonlyMap<string, number> | Readonly<Record<string, number>>;

function gainOf(gains: Gains | undefined, id: string, relevant: ReadonlySet<string>): number {
  if (!gains) return relevant.has(id) ? 1 : 0;
  const g = gains instanceof Map ? gains.get(id) : (gains as Record<string, number>)[id];
  return typeof g === 'number' && g > 0 ? g : 0;
}

/** Distinct ids in rank order: a document counted once, at its best rank. */
function topDistinct(ranked: readonly string[], k: number): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const id of ranked) {
    if (out.length >= k) break;
    if (seen.has(id)) continue;
    seen.add(id);
    out.push(id);
  }
  return out;
}

/** Share of the relevant ids found in the top `k`. 0 when nothing is relevant. */
export function recallAtK(ranked: readonly string[], relevant: Iterable<string>, k: number): number {
  const rel = new Set(relevant);
  if (rel.size === 0) return 0;
  let hits = 0;
  for (const id of topDistinct(ranked, k)) if (rel.has(id)) hits++;
  return hits / rel.size;
}

/** Reciprocal rank of the first relevant id within the top `k`, else 0. */
export function mrrAtK(ranked: readonly string[], relevant: Iterable<string>, k: number): number {
  const rel = new Set(relevant);
  const top = topDistinct(ranked, k);
  for (let i = 0; i < top.length; i++) if (rel.has(top[i])) return 1 / (i + 1);
  return 0;
}

/**
 * Normalised discounted cumulative gain at `k` (gain / log2(rank + 1)), against the ideal
 * ordering of the relevant ids. Binary gains unless `gains` is given.
 */
export function ndcgAtK(
  ranked: readonly string[],
  relevant: Iterable<string>,
  k: number,
  gains?: Gains,
): number {
  const rel = new Set(relevant);
  const top = topDistinct(ranked, k);
  let dcg = 0;
  for (let i = 0; i < top.length; i++) dcg += gainOf(gains, top[i], rel) / Math.log2(i + 2);
  const ideal = gains
    ? (gains instanceof Map ? [...gains.values()] : Object.values(gains)).filter((g) => g > 0)
    : [...rel].map(() => 1);
  ideal.sort((a, b) => b - a);
  let idcg = 0;
  for (let i = 0; i < Math.min(k, ideal.length); i++) idcg += ideal[i] / Math.log2(i + 2);
  return idcg === 0 ? 0 : dcg / idcg;
}

/** Arithmetic mean; 0 for an empty list. */
export function mean(values: readonly number[]): number {
  if (values.length === 0) return 0;
  let sum = 0;
  for (const v of values) sum += v;
  return sum / values.length;
}

/** The four numbers the lab and replay report for one query. */
export interface QueryMetrics {
  recall5: number;
  recall10: number;
  mrr10: number;
  ndcg10: number;
}

/** R@5, R@10, MRR@10 and nDCG@10 for one ranked list. */
export function scoreQuery(ranked: readonly string[], relevant: Iterable<string>, gains?: Gains): QueryMetrics {
  const rel = [...relevant];
  return {
    recall5: recallAtK(ranked, rel, 5),
    recall10: recallAtK(ranked, rel, 10),
    mrr10: mrrAtK(ranked, rel, 10),
    ndcg10: ndcgAtK(ranked, rel, 10, gains),
  };
}

/** Averages per-query metrics field by field. */
export function meanMetrics(perQuery: readonly QueryMetrics[]): QueryMetrics {
  return {
    recall5: mean(perQuery.map((m) => m.recall5)),
    recall10: mean(perQuery.map((m) => m.recall10)),
    mrr10: mean(perQuery.map((m) => m.mrr10)),
    ndcg10: mean(perQuery.map((m) => m.ndcg10)),
  };
}
