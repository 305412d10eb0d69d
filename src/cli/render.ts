// How retrieved chunks, rewrites and citations look in the terminal. Shared by
// `search`, `chat`, `ask` and `replay`, so all four show chunks the same way.
// Every piece of document text passes through sanitizeForTerminal.

import type { ChalkInstance } from 'chalk';
import { formatLocation } from '../retrieve/search.js';
import { oneLine } from '../util/sanitize.js';

export interface ChunkLine {
  rank: number;
  score: number;
  documentPath: string;
  startLine: number;
  endLine: number;
  locator: string;
  heading: string;
  text?: string;
  vectorRank?: number | null;
  keywordRank?: number | null;
}

/** `  1  0.0325  docs/auth.md:12-40  Authentication > API keys  "Create a key with…"` */
export function chunkLine(chunk: ChunkLine, color: ChalkInstance, width = 100): string {
  const location = oneLine(formatLocation(chunk), 80);
  const heading = chunk.heading ? oneLine(chunk.heading, 50) : '';
  const parts = `${chunk.vectorRank ? `v${chunk.vectorRank}` : 'v-'} ${chunk.keywordRank ? `k${chunk.keywordRank}` : 'k-'}`;
  const head = `${String(chunk.rank).padStart(3)}  ${chunk.score.toFixed(4)}  ${location}`;
  const room = Math.max(48, width - head.length - heading.length - parts.length - 8);
  const snippet = chunk.text ? oneLine(chunk.text.replace(/^#+\s.*$/m, ''), room) : '';
  return [
    `${String(chunk.rank).padStart(3)}  ${color.dim(chunk.score.toFixed(4))}  ${color.cyan(location)}`,
    heading ? color.bold(heading) : '',
    color.dim(parts),
    snippet ? color.dim(`“${snippet}”`) : '',
  ]
    .filter(Boolean)
    .join('  ');
}
