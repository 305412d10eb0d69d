// Finds the `[n]` markers an answer uses to cite its numbered context documents:
// `[1]`, `[1, 3]`, `[1][2]`, `[2-4]`. Markdown links (`[1](url)`) and footnote
// definitions are not citations.

import type { ChunkLocation } from '../domain/index.js';
import { formatLocation } from '../retrieve/search.js';
import type { Citation } from './events.js';

const MARKER = /\[(\s*\d+(?:\s*[-–]\s*\d+)?(?:\s*[,;]\s*\d+(?:\s*[-–]\s*\d+)?)*\s*)\](?!\()/g;
/** A range wider than this is not read as a citation range (e.g. `[1-2000]`). */
const MAX_RANGE = 20;

/** Cited numbers, each once, in order of first appearance. */
export function parseCitations(answer: string): number[] {
  const seen = new Set<number>();
  for (const match of answer.matchAll(MARKER)) {
    for (const part of match[1]!.split(/[,;]/)) {
      const [from, to] = part.split(/[-–]/).map((value) => Number(value.trim()));
      if (to === undefined) {
        if (from! > 0) seen.add(from!);
      } else if (from! > 0 && to >= from! && to - from! <= MAX_RANGE) {
        for (let n = from!; n <= to; n++) seen.add(n);
      }
    }
  }
  return [...seen];
}

/** The cited numbers that name one of `chunks` (numbered from 1), resolved to chunk id and location. */
export function resolveCitations(
  answer: string,
  chunks: readonly (ChunkLocation & { chunkId: number })[],
): Citation[] {
  return parseCitations(answer)
    .filter((n) => n <= chunks.length)
    .map((n) => {
      const chunk = chunks[n - 1]!;
      return { n, chunkId: chunk.chunkId, location: formatLocation(chunk) };
    });
}
