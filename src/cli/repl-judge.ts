// The REPL's judgments of the last turn: `/good [N...]` (retrieved chunks N were
// relevant; no number: the chunks the answer cited), `/bad` (nothing retrieved was
// useful) and `/expect <document>` (a document that should have been found).
// Recorded by src/app (judgeLastTurn) for `eval --from-sessions` and
// `replay --rerun`; this file prints what was recorded or why nothing was.

import { indexedPaths, judgeLastTurn as recordJudgment } from '../app/sessions.js';
import type { QuickJudgment, Workspace } from '../app/index.js';
import { judgmentText } from './judgment-view.js';
import type { Output } from './output.js';

/** Runs /good, /bad or /expect on the last turn of `sessionId` and says what came of it. */
export async function judgeLastTurn(workspace: Workspace, command: QuickJudgment, arg: string, sessionId: string, output: Output, cwd: string): Promise<void> {
  const result = await recordJudgment(workspace, sessionId, command, arg, cwd);
  if ('error' in result) {
    output.err(result.error);
    return;
  }
  const { color } = output;
  output.out(`${color.dim(`turn ${result.ordinal} judged:`)} ${judgmentText(result.judgment, await indexedPaths(workspace), color)}`);
  for (const note of result.notes) output.out(color.dim(`(${note})`));
}
