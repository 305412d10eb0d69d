// Eval tasks from a person's own judged turns: the question, the session's earlier
// exchanges as history (the turns the chat's history counts), and the judged
// documents as relevant. Used by `eval --from-sessions` and written by
// `sessions export --format tasks` in the tasks.jsonl format `eval` reads.

import { isExchange } from '../chat/stages/history.js';
import type { SessionStore } from '../chat/session-store.js';
import type { SessionInfo } from '../store/sessions.js';
import { UserError } from '../util/errors.js';
import type { EvalTask } from './run.js';

/** An eval task with where it came from (extra fields: `eval` ignores them). */
export interface SessionTask extends EvalTask {
  /** Session id. */
  session: string;
  /** Turn ordinal in that session. */
  turn: number;
  /** What the turn searched for when it ran (its standalone query). */
  searched_as: string | null;
}

export interface SessionTasks {
  tasks: SessionTask[];
  /** Per session: judged turns and the tasks made of them. */
  sessions: { id: string; name: string | null; judged: number; tasks: number }[];
  /** Judged turns that name no relevant document (only "nothing retrieved was useful"): they cannot be scored. */
  unscored: { session: string; turn: number }[];
  /** Turns skipped because the same question, history and judgment came first from another session (a fork's copies). */
  duplicates: number;
}

/** How a session is named in task ids and groups. */
export function sessionLabel(session: SessionInfo): string {
  return session.name ?? session.id;
}

/** The tasks of the judged turns of `sessions`, in session order, then turn order. */
export async function tasksFromSessions(store: SessionStore, sessions: SessionInfo[]): Promise<SessionTasks> {
  const result: SessionTasks = { tasks: [], sessions: [], unscored: [], duplicates: 0 };
  const seen = new Set<string>();
  for (const session of sessions) {
    const turns = await store.turns(session.id);
    const judgments = await store.judgments(session.id);
    let made = 0;
    for (const turn of turns) {
      const judgment = judgments.get(turn.id);
      if (!judgment) continue;
      const relevant = judgment.relevant.map((doc) => doc.documentPath);
      if (relevant.length === 0) {
        result.unscored.push({ session: session.id, turn: turn.ordinal });
        continue;
      }
      const history = turns.filter((earlier) => earlier.ordinal < turn.ordinal && isExchange(earlier)).map((earlier) => ({ user: earlier.question, assistant: earlier.answer ?? '' }));
      const key = JSON.stringify([turn.question, history, [...relevant].sort()]);
      if (seen.has(key)) {
        result.duplicates++;
        continue;
      }
      seen.add(key);
      const label = sessionLabel(session);
      result.tasks.push({
        id: `${label}::${turn.ordinal}`,
        group: label,
        session: session.id,
        turn: turn.ordinal,
        question: turn.question,
        history,
        reference_rewrite: null,
        relevant,
        searched_as: turn.standaloneQuery,
      });
      made++;
    }
    result.sessions.push({ id: session.id, name: session.name, judged: judgments.size, tasks: made });
  }
  return result;
}

/**
 * Like tasksFromSessions, but a session without a judged turn that names a
 * document, or no task at all, is a UserError (exit 2) saying how to judge turns.
 */
export async function requireSessionTasks(store: SessionStore, sessions: SessionInfo[], options: { named: boolean }): Promise<SessionTasks> {
  const how = 'Judge turns in the chat with /good, /bad and /expect <document>, or with: ragline sessions judge <session> <turn> --relevant <document>';
  if (sessions.length === 0) throw new UserError('No session has judged turns yet.', { hint: how, exitCode: 2 });
  const found = await tasksFromSessions(store, sessions);
  if (options.named) {
    for (const entry of found.sessions) {
      if (entry.judged === 0) throw new UserError(`Session ${entry.name ?? entry.id} has no judged turns.`, { hint: how, exitCode: 2 });
    }
  }
  if (found.tasks.length === 0) {
    throw new UserError(
      found.unscored.length > 0
        ? `The judged turns name no relevant document (only "nothing retrieved was useful"), so there is nothing to score.`
        : 'No session has judged turns yet.',
      { hint: found.unscored.length > 0 ? 'Name what should have been found with /expect <document> or --relevant <document>.' : how, exitCode: 2 },
    );
  }
  return found;
}
