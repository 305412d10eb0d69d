// One-shot hybrid retrieval, outside any session.

import { MAX_K, wholeNumberIn } from '../config/index.js';
import { formatLocation, type RetrievedChunk } from '../retrieve/search.js';
import { runningIngest, type IngestLock } from '../store/meta.js';
import { checkAskable } from './limits.js';
import type { Workspace } from './workspace.js';

export interface SearchResult {
  query: string;
  k: number;
  /** Time the search took, embedding included. */
  ms: number;
  /** Best first, each with its `path:lines` location. */
  results: (RetrievedChunk & { location: string })[];
  /** When nothing matched and another process is ingesting into the database (its index may be mid-rebuild). */
  ingestRunning?: IngestLock;
}

/** The `k` chunks (default: the retrieval.k setting) that best match `query`. */
export async function search(workspace: Workspace, query: string, options: { k?: number; signal?: AbortSignal } = {}): Promise<SearchResult> {
  // Checked as the CLI and the MCP server check them: an empty query found the first chunks, k = 0 nothing.
  checkAskable(query, 'query', 'Example: search(workspace, "rotate an API key").');
  if (options.k !== undefined) wholeNumberIn(String(options.k), 'k', 1, MAX_K);
  const retriever = await workspace.searchIndex();
  const k = options.k ?? workspace.config.retrieval.k;
  const started = performance.now();
  const results = await retriever.search(query, { k }, options.signal);
  const ms = performance.now() - started;
  const ingestRunning = results.length === 0 && !workspace.postgres ? runningIngest(workspace.db) : undefined;
  return { query, k, ms, results: results.map((r) => ({ ...r, location: formatLocation(r) })), ...(ingestRunning ? { ingestRunning } : {}) };
}
