// The session picker (`chat --session` with no value, `/sessions` in the REPL):
// a list of recent sessions to choose from. Ctrl-C or Escape cancels it quietly:
// the caller gets undefined and goes back to where it was.

import { listSessions } from '../app/sessions.js';
import type { Workspace } from '../app/index.js';
import type { CliIo } from './io.js';
import { oneLine } from '../util/sanitize.js';

/** Names of the errors @inquirer/prompts rejects with when a prompt is cancelled or aborted. */
const CANCELLED = new Set(['ExitPromptError', 'AbortPromptError', 'CancelPromptError']);

/**
 * The picker's entries. The prompt writes to the terminal itself, not through the
 * CLI's writer: every name and question shown is made safe here.
 */
export function sessionChoices(sessions: readonly { id: string; name?: string | null; turns: number; lastActive: string; firstQuestion?: string | null }[]): { name: string; value: string }[] {
  return sessions.map((s) => ({
    name: `${oneLine(s.name ?? s.id, 60)}  ${s.turns} turn${s.turns === 1 ? '' : 's'}, ${oneLine(s.lastActive.slice(0, 16).replace('T', ' '))}  ${oneLine(s.firstQuestion ?? '', 50)}`,
    value: s.id,
  }));
}

/** Lets the user choose one of the 30 most recent sessions; undefined when cancelled (Ctrl-C, Escape). */
export async function pickSession(workspace: Workspace, message: string, io: Pick<CliIo, 'stdin' | 'stdout'>): Promise<string | undefined> {
  const sessions = (await listSessions(workspace)).slice(0, 30);
  const { select } = await import('@inquirer/prompts'); // loaded only when a prompt is shown
  const controller = new AbortController();
  const onKeypress = (_text: string | undefined, key: { name?: string } | undefined) => {
    if (key?.name === 'escape') controller.abort();
  };
  const choice = select(
    {
      message,
      choices: sessionChoices(sessions),
    },
    { signal: controller.signal, input: io.stdin, output: io.stdout },
  );
  // The prompt's readline emits keypress events on stdin from here on.
  io.stdin.on('keypress', onKeypress);
  try {
    return await choice;
  } catch (err) {
    if (err instanceof Error && CANCELLED.has(err.name)) return undefined;
    throw err;
  } finally {
    io.stdin.off('keypress', onKeypress);
  }
}
