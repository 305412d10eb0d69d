// Pure comparison of two ranked retrievals of the same turn, and of two rewrites.
// Chunks are compared by identity (document name + text hash; a stored chunk whose
// document has another name now is compared under that one), never by chunk id,
// which changes on re-ingestion.

import type { ChunkLocation, RewriteDecision } from '../domain/index.js';
import { chunkKey } from './index-state.js';

/** What a chunk needs for comparison and display. */
export interface ComparableChunk extends ChunkLocation {
  textHash: string;
  /** The name the chunk's document has now, when it is not `documentPath` (a stored chunk: see index-state.ts). */
  indexedAs?: string;
  rank: number;
  score: number;
  heading: string;
}

export interface RankMove<C> {
  chunk: C;
  oldRank: number;
  newRank: number;
}

export interface RetrievalDiff<Old, New> {
  /** In the new top k, not in the old. */
  entered: New[];
  /** In the old top k, not in the new. */
  left: Old[];
  /** In both, at a different rank (the new chunk, with both ranks). */
  moved: RankMove<New>[];
  /** How many chunks are in both. */
  shared: number;
  /** |old ∩ new| / k; null when neither side retrieved anything (e.g. small talk twice). */
  overlap: number | null;
  /** Whether the ranked list differs at all (entered, left or moved). */
  changed: boolean;
}

/** Compares an old and a new ranked list for a turn that asked for `k` chunks. */
export function diffRetrieval<Old extends ComparableChunk, New extends ComparableChunk>(
  oldChunks: Old[],
  newChunks: New[],
  k: number,
): RetrievalDiff<Old, New> {
  const oldByKey = firstByKey(oldChunks);
  const newByKey = firstByKey(newChunks);
  const entered = newChunks.filter((chunk, i) => !oldByKey.has(chunkKey(chunk)) && isFirst(newChunks, chunk, i));
  const left = oldChunks.filter((chunk, i) => !newByKey.has(chunkKey(chunk)) && isFirst(oldChunks, chunk, i));
  const moved: RankMove<New>[] = [];
  let shared = 0;
  for (const [key, chunk] of newByKey) {
    const before = oldByKey.get(key);
    if (!before) continue;
    shared++;
    if (before.rank !== chunk.rank) moved.push({ chunk, oldRank: before.rank, newRank: chunk.rank });
  }
  const overlap = oldChunks.length === 0 && newChunks.length === 0 ? null : shared / Math.max(1, k, oldByKey.size, newByKey.size);
  return { entered, left, moved, shared, overlap, changed: entered.length > 0 || left.length > 0 || moved.length > 0 };
}

function firstByKey<C extends ComparableChunk>(chunks: C[]): Map<string, C> {
  const map = new Map<string, C>();
  for (const chunk of chunks) if (!map.has(chunkKey(chunk))) map.set(chunkKey(chunk), chunk);
  return map;
}

function isFirst<C extends ComparableChunk>(chunks: C[], chunk: C, index: number): boolean {
  const key = chunkKey(chunk);
  return chunks.findIndex((other) => chunkKey(other) === key) === index;
}

/** A rewrite as stored or re-run. */
export interface RewriteSide {
  standaloneQuery: string;
  decision: RewriteDecision;
  reason: string;
}

/** A rewrite changed when what gets searched changed, or the decision did (e.g. skipped -> small talk). */
export function rewriteChanged(before: RewriteSide | null, after: RewriteSide): boolean {
  if (!before) return true;
  return before.standaloneQuery.trim() !== after.standaloneQuery.trim() || before.decision !== after.decision;
}
