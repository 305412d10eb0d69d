// The third stage: pending files are gathered into groups of about FLUSH_CHUNKS
// chunks, and each group's vectors are computed (reused by text hash where stored)
// while the group before it is written: with the offline embedder on a worker
// thread (or a remote one) the two overlap.

import type { DocumentWriter } from '../store/documents.js';
import type { Embedder } from '../providers/types.js';
import type { IngestRun, IngestSummary, PendingFile } from './run.js';

/** How many chunks are embedded together before their files are written. */
export const FLUSH_CHUNKS = 512;

/** A group of files whose vectors are being computed. */
export interface EmbeddingGroup {
  files: PendingFile[];
  /** The text hashes of its chunks. */
  hashes: Set<string>;
  vectors: Promise<Map<string, Float32Array>>;
}

/** The files waiting for a group, and the group handed to the embedder before them. */
export interface Batches {
  pending: PendingFile[];
  pendingChunks: number;
  embedding: EmbeddingGroup | undefined;
}

export function newBatches(): Batches {
  return { pending: [], pendingChunks: 0, embedding: undefined };
}

export function addPending(batches: Batches, file: PendingFile): void {
  batches.pending.push(file);
  batches.pendingChunks += file.chunks.length;
}

/**
 * Hands the pending files to the embedder as the next group, and returns the group
 * handed over before it, whose vectors are to be written.
 */
export function nextGroup(run: IngestRun, writer: DocumentWriter, batches: Batches): EmbeddingGroup | undefined {
  const previous = batches.embedding;
  batches.embedding = undefined;
  if (batches.pending.length > 0) {
    const files = batches.pending;
    const vectors = vectorsFor(files, writer, run.embedder, run.summary, run.options.signal, previous);
    vectors.catch(() => {}); // awaited by whoever writes the group; no unhandled rejection meanwhile
    const hashes = new Set(files.flatMap((file) => file.chunks.map((chunk) => chunk.textHash)));
    batches.embedding = { files, vectors, hashes };
    batches.pending = [];
    batches.pendingChunks = 0;
  }
  return previous;
}

export const ABORTED = Symbol('aborted');

/**
 * The group's vectors, or ABORTED as soon as `signal` fires (vectors already there
 * win): Ctrl-C does not wait for a group still being embedded (a large file can
 * take seconds).
 */
export function groupVectors(group: EmbeddingGroup, signal: AbortSignal | undefined): Promise<Map<string, Float32Array> | typeof ABORTED> {
  return unlessAborted(group.vectors, signal);
}

/** `promise`'s value, or ABORTED as soon as `signal` fires (a value already there wins). */
function unlessAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T | typeof ABORTED> {
  if (!signal) return promise;
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<typeof ABORTED>((resolve) => {
    if (signal.aborted) resolve(ABORTED);
    else signal.addEventListener('abort', (onAbort = () => resolve(ABORTED)), { once: true });
  });
  return Promise.race([promise, aborted]).finally(() => onAbort && signal.removeEventListener('abort', onAbort));
}

/** Vectors for every chunk of the pending files: reused by text hash where stored, embedded otherwise. */
async function vectorsFor(
  pending: PendingFile[],
  writer: DocumentWriter,
  embedder: Embedder,
  summary: IngestSummary,
  signal?: AbortSignal,
  inFlight?: EmbeddingGroup,
): Promise<Map<string, Float32Array>> {
  const vectors = new Map<string, Float32Array>();
  const toEmbed = new Map<string, string>();
  const fromInFlight: string[] = [];
  for (const item of pending) {
    for (const chunk of item.chunks) {
      const hash = chunk.textHash;
      if (vectors.has(hash) || toEmbed.has(hash) || fromInFlight.includes(hash)) {
        summary.chunks.reused++;
        continue;
      }
      const stored = writer.storedVector(hash);
      if (stored) {
        vectors.set(hash, stored);
        summary.chunks.reused++;
      } else if (inFlight?.hashes.has(hash)) {
        // being embedded for the group before this one, not written yet
        fromInFlight.push(hash);
        summary.chunks.reused++;
      } else toEmbed.set(hash, chunk.embedText);
    }
  }
  const hashes = [...toEmbed.keys()];
  const texts = [...toEmbed.values()];
  if (texts.length > 0) {
    const embedded = await embedder.embed(texts, signal, 'document');
    embedded.forEach((vector, i) => vectors.set(hashes[i]!, vector));
    summary.chunks.embedded += texts.length;
  }
  if (fromInFlight.length > 0) {
    const earlier = await inFlight!.vectors;
    for (const hash of fromInFlight) vectors.set(hash, earlier.get(hash)!);
  }
  return vectors;
}
