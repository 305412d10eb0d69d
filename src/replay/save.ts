// `replay --rerun --save`: keeps a rerun as a new session, so it can be replayed,
// compared or continued like any other. Decision on answers: the rerun does not
// regenerate them (it re-runs rewrites and retrievals only, and works offline), so
// each saved turn carries the ORIGINAL answer and status, copied, with the new
// standalone query and the new chunks, and its settings say so:
//   settings.rerunOf = { sessionId, turnId, ordinal }, settings.answer = 'copied'.
// A copied answer's [n] citations number the ORIGINAL turn's chunks. The answer
// prompt is not copied (it held the old chunks). Copying keeps the session usable
// as history for `chat --session <name>`; a status such as "not regenerated" would
// leave every follow-up without the exchanges it refers to.
// A turn still pending (being answered by another process, or left so by one that
// was killed) is not saved: its copy would stay unfinished for good. A rerun with no
// finished turn is not saved at all: a session is never stored without turns.
// The original session is never touched; the new one is written in one transaction
// (SessionStore.write, on either store).

import type { SessionStore, WrittenTurn } from '../chat/session-store.js';
import type { FinishedStatus, Topic } from '../domain/index.js';
import { updateTopics } from '../rewrite/index.js';
import type { SessionInfo } from '../store/sessions.js';
import type { ReplaySession, ReplayTurn } from './load.js';
import type { RerunReport } from './rerun.js';
import { UserError } from '../util/errors.js';

/** What settings.answer says on a saved rerun turn. */
export const COPIED_ANSWER = 'copied';

/** Provenance stored in a saved rerun turn's settings. */
export interface RerunOrigin {
  sessionId: string;
  turnId: number;
  ordinal: number;
}

/** The rerun origin of a stored turn's settings, if it was saved by `replay --rerun --save`. */
export function rerunOrigin(settings: Record<string, unknown> | null): RerunOrigin | undefined {
  const origin = settings?.rerunOf as RerunOrigin | undefined;
  return origin && typeof origin.sessionId === 'string' && typeof origin.ordinal === 'number' ? origin : undefined;
}

/** `<orig>-rerun-<n>` with the smallest n not taken. */
export async function rerunName(store: SessionStore, original: SessionInfo): Promise<string> {
  const base = original.name ?? original.id;
  for (let n = 1; ; n++) {
    const name = `${base}-rerun-${n}`;
    if (!(await store.find(name))) return name;
  }
}

/** A saved rerun: the new session, and the ordinals of the original's turns left out as unfinished. */
export interface SavedRerun extends SessionInfo {
  unfinished: number[];
}

/** Stores `report` (a rerun of every turn of `original`) as a new session of its finished turns; returns it. */
export async function saveRerun(store: SessionStore, original: ReplaySession, report: RerunReport, options: { name?: string } = {}): Promise<SavedRerun> {
  const finished = original.turns.filter((turn) => turn.status !== 'pending');
  const unfinished = original.turns.filter((turn) => turn.status === 'pending').map((turn) => turn.ordinal);
  if (finished.length === 0) {
    throw new UserError(`Session ${original.session.name ?? original.session.id} has no finished turn to save: ${unfinished.length === 0 ? 'it has no turns' : 'each is still being answered, or its chat was stopped before it ended'}.`, {
      hint: 'Run the rerun with --save again once an answer is stored; without --save it shows the same diff.',
      exitCode: 2,
    });
  }
  const session = await store.write(options.name ?? (await rerunName(store, original.session)), rerunTurns(finished, original.session, report));
  return { ...session, unfinished };
}

/** The turns a saved rerun holds: each finished turn's question with the rerun's query and chunks and the original's answer. */
export function rerunTurns(finished: readonly ReplayTurn[], original: SessionInfo, report: RerunReport): WrittenTurn[] {
  const byTurnId = new Map(report.turns.map((turn) => [turn.turnId, turn]));
  let topics: Topic[] = [];
  return finished.map((turn, i): WrittenTurn => {
    const rerun = byTurnId.get(turn.id);
    if (!rerun) throw new Error(`turn ${turn.ordinal} was not re-run`);
    const ordinal = i + 1; // the new session's turns are numbered from 1
    const status = turn.status as FinishedStatus;
    const answer = turn.answer ?? undefined;
    const standaloneQuery = rerun.after.standaloneQuery;
    if ((status === 'answered' || status === 'interrupted') && answer && turn.answerKind !== 'small_talk') {
      topics = updateTopics(topics, { ordinal, question: turn.question, standaloneQuery, answer });
    }
    return {
      question: turn.question,
      finish: {
        status,
        error: turn.error ?? undefined,
        standaloneQuery,
        rewriteDecision: rerun.after.decision,
        rewriteReason: rerun.after.reason,
        rewriteError: rerun.after.error,
        rewritePrompt: rerun.after.prompt,
        chunks: rerun.newChunks,
        answer,
        answerKind: turn.answerKind ?? undefined,
        models: { rewrite: rerun.after.model, ...(turn.models.chat ? { chat: turn.models.chat } : {}), embed: report.embedder },
        settings: {
          k: rerun.k,
          rewritePolicy: report.policy,
          rerunOf: { sessionId: original.id, turnId: turn.id, ordinal: turn.ordinal } satisfies RerunOrigin,
          answer: COPIED_ANSWER,
        },
        timings: { historyMs: 0, summaryMs: 0, rewriteMs: 0, retrieveMs: 0, answerMs: 0, persistMs: 0, totalMs: 0 },
        usage: rerun.after.usage ? { rewrite: rerun.after.usage } : {},
        topics,
        summary: turn.summary ?? undefined,
        summaryThrough: turn.summaryThrough ?? undefined,
      },
    };
  });
}
