// How a turn's judgment reads on a terminal: shared by `sessions judge`,
// `sessions show`, `replay` and the REPL's /good, /bad and /expect.

import type { TurnJudgment } from '../app/index.js';
import { oneLine } from '../util/sanitize.js';
import type { Output } from './output.js';

/** e.g. `relevant guides/auth.md (chunk 1); expected notes/x.md (not indexed)`, or `nothing retrieved was useful`. */
export function judgmentText(judgment: TurnJudgment, indexed: (documentPath: string) => boolean, color: Output['color']): string {
  const parts: string[] = [];
  if (judgment.noneUseful) parts.push('nothing retrieved was useful');
  for (const doc of judgment.relevant) {
    const where = doc.source === 'retrieved' && doc.chunkRank !== null ? ` (chunk ${doc.chunkRank})` : '';
    const missing = indexed(doc.documentPath) ? '' : color.yellow(' (not indexed)');
    parts.push(`${doc.source === 'retrieved' ? 'relevant' : 'expected'} ${color.cyan(oneLine(doc.documentPath, 200))}${where}${missing}`);
  }
  return parts.length ? parts.join('; ') : 'judged, no document named';
}
