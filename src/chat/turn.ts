// One conversational turn, as a stream of events, composed of five stages
// (src/chat/stages, over one turn state):
//   history (verbatim exchanges within the token budget + running summary of what
//   fell out + topics) -> gate and rewrite to a standalone query -> retrieve with it
//   -> answer (a canned small-talk reply, extractive offline, or streamed from the
//   model) -> record the whole trail in one transaction.
// The question is stored (pending) before the first stage. Provider failures never
// escape as exceptions: the turn ends `failed` with the error stored and an `error`
// event, so a REPL stays alive. Aborting (the signal, or the consumer leaving the
// loop) stores the turn `interrupted` with whatever answer had arrived.
// `replay --rerun` and eval run the same history, rewrite and retrieve stages.

import type { TurnEvent } from './events.js';
import { answer } from './stages/answer.js';
import { loadHistory } from './stages/history.js';
import { failureEvents, openTurn, recordEvents, recordTurn } from './stages/record.js';
import { retrieve } from './stages/retrieve.js';
import { gateAndRewrite } from './stages/rewrite.js';
import { settlesWithin, timed, turnStoreOf, WAITING_NOTICE_MS, type TurnContext, type TurnOptions } from './stages/state.js';

export type { TurnContext, TurnOptions } from './stages/state.js';

/** How long a model's load may take before the turn says it is loading. */
const LOADING_NOTICE_MS = 300;

/** Runs one turn of `context.sessionId`, yielding its events; see the module header. */
export async function* runTurn(context: TurnContext, question: string, options: TurnOptions = {}): AsyncGenerator<TurnEvent> {
  const { config } = context;
  const store = turnStoreOf(context);
  const signal = options.signal;
  const state = await openTurn(context, question, options);
  // The stages read the question less its runs of spaces and of one punctuation mark; it is stored as typed.
  const { asked } = state;
  const { timings, usage } = state;
  try {
    // Inside the try: a consumer that leaves at `start` still gets the turn stored, not left pending.
    yield { type: 'start', sessionId: context.sessionId, turnId: state.turnId, ordinal: state.ordinal, question };
    // A search as asked (no rewrite, no answer) uses no model: it neither has one summarise the
    // history nor waits for one to load, so a slow, loading or stalled model never holds it up.
    const usesModel = !(options.retrieveOnly && state.policy === 'never');
    const summaryModel = context.summaryModel ?? context.answerModel;
    const history = await timed(timings, 'historyMs', () =>
      loadHistory(store, context.sessionId, state.ordinal, { tokenBudget: config.history.tokenBudget, model: summaryModel, summarise: usesModel, signal }),
    );
    state.history = history;
    if (history.summaryUsage) usage.summary = history.summaryUsage;
    if (history.summaryComputed) timings.summaryMs = timings.historyMs;
    if (signal?.aborted) return yield* await recordEvents(context, state, 'interrupted');

    // A local server loading a model: say so, and wait for it before the rewrite's clock starts.
    for (const model of usesModel ? (context.loadingModels ?? []) : []) {
      const ready = model.ready?.(signal);
      if (!ready) continue;
      // A warm model's ready() has settled already: no timer on its turns.
      if (model.loading && !(await settlesWithin(ready, LOADING_NOTICE_MS))) {
        yield { type: 'status', text: `loading model ${model.id.replace(/^openai:/, '')} …` };
      }
      await ready;
    }
    if (signal?.aborted) return yield* await recordEvents(context, state, 'interrupted');

    const rewriting = timed(timings, 'rewriteMs', () =>
      gateAndRewrite(context.rewriter, { question: asked, history, config, policy: state.policy, signal, termShare: store.termShare() }),
    );
    // A model that is slow to answer is said to be awaited, not left as a silent pause.
    if (!(await settlesWithin(rewriting, WAITING_NOTICE_MS))) {
      yield { type: 'status', text: `waiting for ${context.rewriter.id.replace(/^openai:/, '')} to rewrite the question …` };
    }
    const rewrite = await rewriting;
    state.rewrite = rewrite;
    if (rewrite.outcome.usage) usage.rewrite = rewrite.outcome.usage;
    state.models.rewrite = rewrite.model;
    const { decision, reason } = rewrite.outcome;
    yield { type: 'rewrite', question, standaloneQuery: rewrite.standaloneQuery, decision, reason, model: rewrite.model, ms: timings.rewriteMs };
    if (signal?.aborted) return yield* await recordEvents(context, state, 'interrupted');

    if (decision !== 'small_talk') {
      const found = await timed(timings, 'retrieveMs', () => retrieve(context.retriever, asked, rewrite, state.k, config, signal));
      state.chunks = found.chunks;
      const fusedWith = found.settings.secondary;
      yield { type: 'retrieval', query: rewrite.standaloneQuery, ...(fusedWith ? { fusedWith } : {}), chunks: found.chunks, ms: timings.retrieveMs };
      if (signal?.aborted) return yield* await recordEvents(context, state, 'interrupted');
      if (options.retrieveOnly) {
        state.answerKind = 'search';
        return yield* await recordEvents(context, state, 'answered');
      }
    }
    return yield* await recordEvents(context, state, yield* answer(context, state, signal));
  } catch (error) {
    if (state.persisted) throw error;
    return yield* await failureEvents(context, state, error, signal);
  } finally {
    // The consumer left the loop early (e.g. `break` on Ctrl-C): keep what arrived.
    if (!state.persisted) await recordTurn(context, state, 'interrupted');
  }
}
