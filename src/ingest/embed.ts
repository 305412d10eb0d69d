// The third stage: pending files are gathered into groups of about FLUSH_CHUNKS
// chunks, and each group's vectors are computed (reused by text hash where stored)
// while the group before it is written: with the offline embedder on a worker
// thread (or a remote one) the two overlap.

import type { DocumentWriter } from '../store/documents.js';
import { isInputTooLarge } from '../providers/server-errors.js';
import { UserError } from '../util/errors.js';
import { assertVectorLength, getFingerprint } from '../store/meta.js';
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
    const vectors = vectorsFor(run, files, writer, previous);
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
async function vectorsFor(run: IngestRun, pending: PendingFile[], writer: DocumentWriter, inFlight?: EmbeddingGroup): Promise<Map<string, Float32Array>> {
  const { db, summary } = run;
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
    const embedded = await embedWithinLimit(run, texts);
    // An index of another length would refuse them only when they are written, as "Dimension mismatch".
    if (embedded.length > 0) assertVectorLength(getFingerprint(db), embedded[0]!.length);
    embedded.forEach((vector, i) => vectors.set(hashes[i]!, vector));
    summary.chunks.embedded += texts.length;
  }
  if (fromInFlight.length > 0) {
    const earlier = await inFlight!.vectors;
    for (const hash of fromInFlight) vectors.set(hash, earlier.get(hash)!);
  }
  return vectors;
}

/** The shortest a text is cut to for an embedding server that refuses it as too large: below it the refusal stands. */
export const TRUNCATE_FLOOR_CHARS = 256;

/**
 * Embeds `texts` as documents. A server that refuses an input as too large (llama-server
 * takes no embedding input longer than its physical batch, 512 tokens unless started with
 * -b/-ub: https://github.com/ggml-org/llama.cpp/pull/7389) is asked again with the longest
 * texts cut to half the longest one's length, halving again down to TRUNCATE_FLOOR_CHARS;
 * the length that was taken is kept for the rest of the run, and the texts cut are counted
 * in the summary. The chunks themselves are stored whole.
 */
async function embedWithinLimit(run: IngestRun, texts: string[]): Promise<Float32Array[]> {
  const { embedder, options } = run;
  while (true) {
    const limit = run.embedMaxChars;
    const sent = limit === undefined ? texts : texts.map((text) => cut(text, limit));
    try {
      const vectors = await embedder.embed(sent, options.signal, 'document');
      if (limit !== undefined) countTruncated(run.summary, texts.filter((text) => text.length > limit).length, limit);
      return vectors;
    } catch (error) {
      if (!isInputTooLarge(error instanceof UserError ? error.cause : error)) throw error;
      const next = Math.floor(Math.max(...sent.map((text) => text.length)) / 2);
      if (next < TRUNCATE_FLOOR_CHARS) throw error;
      run.embedMaxChars = next;
    }
  }
}

function countTruncated(summary: IngestSummary, chunks: number, toChars: number): void {
  if (chunks === 0) return;
  const truncated = (summary.truncated ??= { chunks: 0, toChars });
  truncated.chunks += chunks;
  truncated.toChars = Math.min(truncated.toChars, toChars);
}

/** The first `limit` UTF-16 units of `text`, never ending in half a surrogate pair. */
function cut(text: string, limit: number): string {
  if (text.length <= limit) return text;
  const end = /[\uD800-\uDBFF]/.test(text[limit - 1]!) ? limit - 1 : limit;
  return text.slice(0, end);
}
