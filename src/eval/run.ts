// `ragline eval`: retrieval quality over judged multi-turn conversations,
// against the current database, for several query variants of each turn (the
// raw question, the reference rewrite, ragline's own rewrite).

import path from 'node:path';
import type { Db } from '../store/db.js';
import { DocumentNaming } from '../store/document-names.js';
import type { RetrievedChunk } from '../retrieve/search.js';
import { UserError } from '../util/errors.js';
import { meanMetrics, scoreQuery, type QueryMetrics } from './metrics.js';
import { scoreAddedTerms, summariseAddedTerms, type AddedTermScore, type AddedTermSummary } from './added-terms.js';

/** One judged turn; extra fields in the file are ignored. */
export interface EvalTask {
  id: string;
  group: string;
  question: string;
  /** Earlier turns, oldest first. */
  history: { user: string; assistant: string }[];
  reference_rewrite?: string | null;
  /** Relevant documents: paths relative to the ingested folder, or file names without extension. */
  relevant: string[];
}

export function parseTasks(text: string, file: string): EvalTask[] {
  const tasks: EvalTask[] = [];
  text.split('\n').forEach((line, i) => {
    if (!line.trim()) return;
    let raw: Record<string, unknown>;
    try {
      raw = JSON.parse(line) as Record<string, unknown>;
    } catch (err) {
      throw new UserError(`${file}:${i + 1} is not valid JSON: ${(err as Error).message}`, { exitCode: 2 });
    }
    const where = `${file}:${i + 1}`;
    if (typeof raw.question !== 'string' || !raw.question.trim()) throw new UserError(`${where} has no "question".`, { exitCode: 2 });
    if (!Array.isArray(raw.relevant) || raw.relevant.some((r) => typeof r !== 'string')) {
      throw new UserError(`${where} needs "relevant": a list of document names.`, { exitCode: 2 });
    }
    const history = Array.isArray(raw.history) ? raw.history : [];
    tasks.push({
      id: typeof raw.id === 'string' ? raw.id : `line-${i + 1}`,
      group: typeof raw.group === 'string' ? raw.group : 'all',
      question: raw.question,
      history: history.map((h) => ({ user: String((h as Record<string, unknown>).user ?? ''), assistant: String((h as Record<string, unknown>).assistant ?? '') })),
      reference_rewrite: typeof raw.reference_rewrite === 'string' ? raw.reference_rewrite : null,
      relevant: raw.relevant as string[],
    });
  });
  if (tasks.length === 0) throw new UserError(`${file} holds no tasks.`, { hint: 'One JSON object per line; see the README for the format.', exitCode: 2 });
  return tasks;
}

/**
 * Maps the names used in `relevant` to the names results give documents (their path,
 * with the folder's name before it when folders share the path); a path or file name
 * that fits more than one document is the first in ingest order.
 */
export class DocumentNames {
  private readonly byName = new Map<string, string>();
  /** On an SQLite file, or on the names another store read (Postgres). */
  constructor(source: Db | DocumentNaming) {
    for (const doc of (source instanceof DocumentNaming ? source : new DocumentNaming(source)).all()) {
      this.byName.set(doc.name, doc.name);
      if (!this.byName.has(doc.path)) this.byName.set(doc.path, doc.name);
      const base = path.posix.basename(doc.path);
      const stem = base.includes('.') ? base.slice(0, base.lastIndexOf('.')) : base;
      if (!this.byName.has(stem)) this.byName.set(stem, doc.name);
    }
  }
  resolve(name: string): string | undefined {
    return this.byName.get(name);
  }
}

/** What a variant searches for on one task. */
export interface VariantQuery {
  query: string;
  /** The rewrite gate's decision, for rewrite variants. */
  decision?: string;
  /** A second query fused in with its weight (the raw question beside a rewrite). */
  secondary?: { query: string; weight: number };
  /** The question within the query and the weight of the words the rewrite added (RetrievalSettings.expansion). */
  expansion?: { core: string; weight: number };
}

/** The query a variant sends for a task, or null when it has none (e.g. no reference rewrite). */
export type QueryFor = (task: EvalTask) => Promise<string | VariantQuery | null>;

export interface EvalVariant {
  name: string;
  /** The query this variant sends for a task, or null when it has none (e.g. no reference rewrite). */
  query: QueryFor;
  /** The variant rewrites the question: its queries are scored against the reference rewrite's added terms. */
  rewrites?: boolean;
}

export interface MetricsRow extends QueryMetrics {
  n: number;
}

export interface VariantReport {
  name: string;
  /** For rewrite variants: how many turns got each decision (rewritten, skipped, fallback, small_talk). */
  decisions?: Record<string, number>;
  overall: MetricsRow;
  groups: Record<string, MetricsRow>;
  /** Turns whose reference rewrite differs from the question (after whitespace and case normalisation). */
  rewriteDiffers: MetricsRow;
  /** For rewrite variants, on the turns with a reference rewrite: the words it adds to the question against the reference's. */
  addedTerms?: AddedTermSummary;
}

export interface TaskResult {
  id: string;
  group: string;
  variant: string;
  query: string;
  decision?: string;
  /** Document paths at the rank of their best chunk (null where a chunk repeats a document). */
  ranked: (string | null)[];
  metrics: QueryMetrics;
  /** Added-term recall and precision against the reference rewrite (rewrite variants, turns with a reference). */
  addedTerms?: AddedTermScore;
}

export interface EvalReport {
  tasks: number;
  variants: VariantReport[];
  /** Relevant documents named by a task but not in the database. */
  missing: { task: string; document: string }[];
  results: TaskResult[];
}

export function normalise(text: string): string {
  return text.replace(/\s+/g, ' ').trim().toLowerCase();
}

export interface EvalOptions {
  tasks: EvalTask[];
  names: DocumentNames;
  variants: EvalVariant[];
  /** Retrieves the top chunks for a query (10 are scored). */
  retrieve: (query: VariantQuery) => Promise<RetrievedChunk[]>;
  onProgress?: (done: number, total: number) => void;
}

export async function runEval(options: EvalOptions): Promise<EvalReport> {
  const { tasks, names, variants } = options;
  const missing: EvalReport['missing'] = [];
  const relevantPaths = new Map<string, string[]>();
  for (const task of tasks) {
    const paths: string[] = [];
    for (const name of task.relevant) {
      const resolved = names.resolve(name);
      if (resolved) paths.push(resolved);
      else {
        missing.push({ task: task.id, document: name });
        paths.push(`missing:${name}`); // still counts in the denominator: it cannot be found
      }
    }
    relevantPaths.set(task.id, paths);
  }

  const results: TaskResult[] = [];
  const total = tasks.length * variants.length;
  let done = 0;
  for (const variant of variants) {
    for (const task of tasks) {
      const answer = await variant.query(task);
      done++;
      options.onProgress?.(done, total);
      if (answer === null) continue;
      const asked: VariantQuery = typeof answer === 'string' ? { query: answer } : answer;
      const { query, decision } = asked;
      const chunks = await options.retrieve(asked);
      const ranked = documentRanks(chunks.slice(0, 10));
      results.push({
        id: task.id,
        group: task.group,
        variant: variant.name,
        query,
        decision,
        ranked,
        metrics: scoreQuery(ranked.map((p) => p ?? ''), relevantPaths.get(task.id)!),
        ...(variant.rewrites && task.reference_rewrite ? { addedTerms: scoreAddedTerms(task.question, query, task.reference_rewrite) } : {}),
      });
    }
  }

  const differs = new Set(tasks.filter((t) => t.reference_rewrite && normalise(t.reference_rewrite) !== normalise(t.question)).map((t) => t.id));
  const row = (items: TaskResult[]): MetricsRow => ({ n: items.length, ...meanMetrics(items.map((r) => r.metrics)) });
  const reports = variants.map((variant) => {
    const mine = results.filter((r) => r.variant === variant.name);
    const groups: Record<string, MetricsRow> = {};
    for (const group of [...new Set(tasks.map((t) => t.group))].sort()) groups[group] = row(mine.filter((r) => r.group === group));
    const decisions: Record<string, number> = {};
    for (const r of mine) if (r.decision) decisions[r.decision] = (decisions[r.decision] ?? 0) + 1;
    return {
      name: variant.name,
      ...(Object.keys(decisions).length ? { decisions } : {}),
      overall: row(mine),
      groups,
      rewriteDiffers: row(mine.filter((r) => differs.has(r.id))),
      ...(variant.rewrites ? { addedTerms: summariseAddedTerms(mine.flatMap((r) => (r.addedTerms ? [r.addedTerms] : []))) } : {}),
    };
  });
  return { tasks: tasks.length, variants: reports, missing, results };
}

/** A document counts as found at the rank of its best chunk; later chunks of it count as nothing. */
export function documentRanks(chunks: { documentPath: string }[]): (string | null)[] {
  const seen = new Set<string>();
  return chunks.map((chunk) => {
    if (seen.has(chunk.documentPath)) return null;
    seen.add(chunk.documentPath);
    return chunk.documentPath;
  });
}
