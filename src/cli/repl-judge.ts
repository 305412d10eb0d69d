// The REPL's judgments of the last turn: `/good [N...]` (retrieved chunks N were
// relevant; no number: the chunks the answer cited), `/bad` (nothing retrieved was
// useful) and `/expect <document>` (a document that should have been found).
// They are stored with the turn (src/store/judgments) for `eval --from-sessions`
// and `replay --rerun`.

import { parseCitations } from '../chat/citations.js';
import type { Db } from '../store/db.js';
import { judgeTurn, resolveDocumentName, type RelevantInput } from '../store/judgments.js';
import { loadTurnChunks, loadTurns } from '../store/sessions.js';
import { oneLine } from '../util/sanitize.js';
import { indexedPaths, judgmentText } from './judgment-view.js';
import type { Output } from './output.js';

export type JudgeCommand = 'good' | 'bad' | 'expect';

/** Runs /good, /bad or /expect on the last turn of `sessionId`; prints what was recorded or why nothing was. */
export function judgeLastTurn(command: JudgeCommand, arg: string, sessionId: string, db: Db, output: Output, cwd = process.cwd()): void {
  const turn = loadTurns(db, sessionId).at(-1);
  if (!turn) {
    output.err('Nothing to judge yet: ask a question first.');
    return;
  }
  const chunks = loadTurnChunks(db, turn.id);
  let change: Parameters<typeof judgeTurn>[2];
  const notes: string[] = [];
  if (command === 'good') {
    if (chunks.length === 0) {
      output.err(`Turn ${turn.ordinal} retrieved no chunks. Name a document that should have been found with /expect <document>.`);
      return;
    }
    let numbers: number[];
    if (arg === '') {
      numbers = parseCitations(turn.answer ?? '').filter((n) => n <= chunks.length);
      if (numbers.length === 0) {
        output.err(`The answer to turn ${turn.ordinal} cites no chunk: give their numbers, e.g. /good 1 3.`);
        return;
      }
    } else {
      numbers = arg.split(/[\s,]+/).filter(Boolean).map(Number);
      if (numbers.some((n) => !Number.isInteger(n) || n < 1 || n > chunks.length)) {
        output.err(`Give chunk numbers from 1 to ${chunks.length}, e.g. /good 1 3.`);
        return;
      }
    }
    const add: RelevantInput[] = [];
    for (const n of [...new Set(numbers)].sort((a, b) => a - b)) {
      const chunk = chunks[n - 1]!;
      if (!add.some((doc) => doc.documentPath === chunk.documentPath)) add.push({ documentPath: chunk.documentPath, source: 'retrieved', chunkRank: chunk.rank });
    }
    change = { add, noneUseful: false };
  } else if (command === 'bad') {
    if (arg !== '') {
      output.err('Usage: /bad (then /expect <document> to name what should have been found)');
      return;
    }
    change = { noneUseful: true };
    notes.push('name what should have been found with /expect <document>');
  } else {
    if (arg === '') {
      output.err('Usage: /expect <document> (a path as ingested, a file path, or a file name, with or without its extension)');
      return;
    }
    const resolved = resolveDocumentName(db, arg, cwd);
    if (!resolved.indexed) notes.push(`${oneLine(resolved.documentPath, 100)} is not in the index: kept; eval reports it as not indexed`);
    change = { add: [{ documentPath: resolved.documentPath, source: 'expected' }] };
  }
  const judgment = judgeTurn(db, turn.id, change);
  const { color } = output;
  output.out(`${color.dim(`turn ${turn.ordinal} judged:`)} ${judgmentText(judgment, indexedPaths(db), color)}`);
  for (const note of notes) output.out(color.dim(`(${note})`));
}
