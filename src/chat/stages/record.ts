// The record stage: the question is stored first (a pending turn), and the whole
// trail (rewrite, chunks, prompt, answer, models, settings, timings, usage, the
// topics and summary the next turn starts from) in one transaction at the end,
// whatever the turn ended as. The `done` event carries what was stored.

import type { FinishedStatus, TurnTimings } from '../../domain/index.js';
import { isAbortError } from '../../providers/describe-error.js';
import { sqliteRuntimeError } from '../../util/sqlite-errors.js';
import { UserError } from '../../util/errors.js';
import { plainQuestion } from '../../util/words.js';
import { resolveCitations } from '../citations.js';
import type { TurnEvent } from '../events.js';
import { topicsAfter } from './history.js';
import { turnStoreOf, type TurnContext, type TurnOptions, type TurnState } from './state.js';

/** Stores the question as a pending turn: the state the stages fill in. */
export async function openTurn(context: TurnContext, question: string, options: TurnOptions): Promise<TurnState> {
  const started = performance.now();
  const turn = await turnStoreOf(context).startTurn(context.sessionId, question, context.plannedSession);
  const timings: TurnTimings = { historyMs: 0, summaryMs: 0, rewriteMs: 0, retrieveMs: 0, answerMs: 0, persistMs: performance.now() - started, totalMs: 0 };
  return {
    turnId: turn.id,
    ordinal: turn.ordinal,
    question,
    asked: plainQuestion(question),
    k: options.k ?? context.config.retrieval.k,
    policy: options.rewritePolicy ?? context.config.rewrite.policy,
    started,
    timings,
    usage: {},
    models: { embed: context.retriever.embedder.id },
    chunks: [],
    answer: '',
    answerKind: null,
    persisted: false,
  };
}

/** Stores the finished turn; returns its timings as stored. */
export async function recordTurn(context: TurnContext, state: TurnState, status: FinishedStatus, error?: string): Promise<TurnTimings> {
  state.persisted = true; // set first: a failing write is not attempted twice
  const { config } = context;
  const { answer, answerKind, history, rewrite, timings } = state;
  const persistStart = performance.now();
  timings.totalMs = persistStart - state.started;
  const summary = history?.summary;
  return turnStoreOf(context).finishTurn(state.turnId, {
    status,
    error,
    standaloneQuery: rewrite?.standaloneQuery,
    rewriteDecision: rewrite?.outcome.decision,
    rewriteReason: rewrite?.outcome.reason,
    rewriteError: rewrite?.outcome.error,
    rewritePrompt: rewrite?.outcome.prompt,
    chunks: state.chunks,
    prompt: state.prompt,
    answer: answerKind !== 'search' && (answer !== '' || status === 'answered') ? answer : undefined,
    answerKind: answerKind ?? undefined,
    models: state.models,
    settings: { k: state.k, rewritePolicy: state.policy, scope: config.assistant?.scope ?? null, history: config.history },
    timings: { ...timings, persistMs: timings.persistMs + (performance.now() - persistStart) },
    usage: state.usage,
    // What counts as conversation when history is read back (isExchange) updates the topics now.
    // A turn that ended before its history was read leaves the topics as they were.
    topics:
      history &&
      topicsAfter(
        history.topics,
        { ordinal: state.ordinal, question: state.question, status, answerKind, standaloneQuery: rewrite?.standaloneQuery, answer },
        state.modelTopics,
      ),
    summary,
    summaryThrough: summary ? history?.summaryThrough : undefined,
  });
}

/** Records the turn and returns its last events: `error` when it failed, then `done`. */
export async function recordEvents(context: TurnContext, state: TurnState, status: FinishedStatus, error?: { message: string; hint?: string }): Promise<TurnEvent[]> {
  const stored = await recordTurn(context, state, status, error?.message);
  const events: TurnEvent[] = [];
  if (error) events.push({ type: 'error', message: error.message, hint: error.hint, status: 'failed' });
  events.push({
    type: 'done',
    turnId: state.turnId,
    ordinal: state.ordinal,
    status,
    answer: state.answer,
    answerKind: state.answerKind,
    citations: state.answerKind === 'small_talk' ? [] : resolveCitations(state.answer, state.chunks),
    usage: state.usage,
    timings: stored,
    models: state.models,
  });
  return events;
}

/** The last events of a turn that threw: `interrupted` when it was aborted, else `failed` with the error described. */
export function failureEvents(context: TurnContext, state: TurnState, error: unknown, signal?: AbortSignal): Promise<TurnEvent[]> {
  if (signal?.aborted || isAbortError(error)) return recordEvents(context, state, 'interrupted');
  return recordEvents(context, state, 'failed', describe(error));
}

function describe(error: unknown): { message: string; hint?: string } {
  if (error instanceof UserError) return { message: error.message, hint: error.hint };
  const known = sqliteRuntimeError(error);
  if (known) return { message: known.message, hint: known.hint };
  const message = error instanceof Error ? error.message : String(error);
  return { message: `Unexpected error: ${message}`, hint: 'Set RAGLINE_DEBUG=1 to see the full error.' };
}
