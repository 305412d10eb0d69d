// One conversational turn, as a stream of events:
//   store the question (pending) -> history within the token budget (+ running
//   summary of what fell out) -> rewrite to a standalone query -> retrieve with it
//   -> answer (streamed from the model, or extractive offline, or a canned small-talk
//   reply) -> persist the whole trail in one transaction.
// Provider failures never escape as exceptions: the turn ends `failed` with the
// error stored and an `error` event, so a REPL stays alive. Aborting (the signal,
// or the consumer leaving the loop) stores the turn `interrupted` with whatever
// answer had arrived.

import type { Config } from '../config/index.js';
import type {
  AnswerKind,
  ChatMessage,
  FinishedStatus,
  RewritePolicy,
  TokenUsage,
  Topic,
  TurnModels,
  TurnTimings,
  TurnUsage,
} from '../domain/index.js';
import { complete, type ChatModel } from '../providers/types.js';
import { isAbortError } from '../providers/describe-error.js';
import type { RetrievalSettings, RetrievedChunk, Retriever } from '../retrieve/search.js';
import { termShares } from '../retrieve/term-stats.js';
import {
  extractTopicsWithModel,
  summarizeOffline,
  updateTopics,
  type ConversationTurn,
  type QueryRewriter,
  type RewriteOutcome,
  type RewriteRequest,
} from '../rewrite/index.js';
import type { Db } from '../store/db.js';
import {
  finishTurn,
  latestConversationState,
  loadHistoryTurns,
  startTurn,
  type HistoryTurn,
  type SessionInfo,
  type StoredTurn,
} from '../store/sessions.js';
import { UserError } from '../util/errors.js';
import { resolveCitations } from './citations.js';
import type { TurnEvent } from './events.js';
import { extractiveAnswer } from './extractive.js';
import { buildAnswerMessages, buildSummaryMessages } from './prompt.js';

/** Id recorded as the chat model of an offline (extractive) answer. */
export const EXTRACTIVE_MODEL_ID = 'offline:extractive-v1';
export const GREETING_REPLY = 'Hello! Ask me about your documents.';
export const THANKS_REPLY = "You're welcome.";
/** Characters per token, for budgeting history without a tokenizer. */
export const CHARS_PER_TOKEN = 4;
/** A model's topic extraction gives up after this; the local extractor's topics are used then. */
const TOPIC_TIMEOUT_MS = 8000;
const SUMMARY_MAX_TOKENS = 300;

export interface TurnContext {
  db: Db;
  /** Searches the index; only `search` and the embedder's id are used. */
  retriever: Pick<Retriever, 'search' | 'embedder'>;
  rewriter: QueryRewriter;
  /** The answer model; undefined offline (extractive answers). */
  answerModel?: ChatModel;
  /** Summarises turns that fall out of the history budget. Default: the answer model (offline summary without one). */
  summaryModel?: ChatModel;
  /** Extracts each answered exchange's topics (the rewrite model, when one is configured); local extractor without one. */
  topicModel?: ChatModel;
  config: Config;
  sessionId: string;
  /** A planned session (store's planSession) with this id: stored with the first turn's question. */
  plannedSession?: SessionInfo;
}

export interface TurnOptions {
  /** Aborting stops the turn; it is stored `interrupted` with the partial answer. */
  signal?: AbortSignal;
  /** Chunks to retrieve, instead of config.retrieval.k. */
  k?: number;
  /** Instead of config.rewrite.policy. */
  rewritePolicy?: RewritePolicy;
  /**
   * Stop after retrieval: the turn is stored `answered` with answer kind `search`
   * and no answer (the chunks are its result). It still counts as conversation
   * for the turns after it, so a follow-up is rewritten against it.
   */
  retrieveOnly?: boolean;
}

/** The earlier turns this turn sees. */
export interface TurnHistory {
  /** Exchanges carried verbatim, oldest first, within the token budget. */
  verbatim: HistoryTurn[];
  /** Running summary of the exchanges that fell out of the budget. */
  summary?: string;
  /** Ordinal of the last turn the summary covers; 0 when there is none. */
  summaryThrough: number;
  /** Whether the summary was (re)computed for this turn. */
  summaryComputed: boolean;
  summaryUsage?: TokenUsage;
  /** Tracked topics as of the previous turn. */
  topics: Topic[];
}

/** Rough token count: characters / 4. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

function exchangeTokens(turn: Pick<StoredTurn, 'question' | 'answer'>): number {
  return estimateTokens(turn.question) + estimateTokens(turn.answer ?? '');
}

/** Turns that count as conversation: answered or interrupted with text, and searches; small talk and failures don't. */
export function isExchange(turn: Pick<StoredTurn, 'status' | 'answer' | 'answerKind'>): boolean {
  return (
    (turn.status === 'answered' || turn.status === 'interrupted') &&
    (!!turn.answer || (turn.answerKind === 'search' && turn.status === 'answered')) &&
    turn.answerKind !== 'small_talk'
  );
}

function toConversationTurn(turn: Pick<StoredTurn, 'question' | 'standaloneQuery' | 'answer'>): ConversationTurn {
  return { question: turn.question, standaloneQuery: turn.standaloneQuery ?? turn.question, answer: turn.answer ?? '' };
}

/** Small talk reply by what was said. */
export function smallTalkReply(question: string): string {
  return /\b(thanks?|thank you|thx|ty|cheers|merci|danke|gracias)\b/i.test(question) ? THANKS_REPLY : GREETING_REPLY;
}

/**
 * The history for a new turn: the newest exchanges within `tokenBudget` (the most
 * recent one always, however long), and a summary of the older ones. The summary is
 * read from the latest turn row and recomputed only when more turns fell out since.
 */
export async function loadHistory(
  db: Db,
  sessionId: string,
  beforeOrdinal: number,
  settings: { tokenBudget: number; model?: ChatModel; signal?: AbortSignal },
): Promise<TurnHistory> {
  // Only the columns a history needs, and the state of one row: a session of
  // thousands of turns (an agent's, through `ragline mcp`) stays cheap to continue.
  const earlier = loadHistoryTurns(db, sessionId, beforeOrdinal);
  const state = latestConversationState(db, sessionId, beforeOrdinal);
  const topics = state?.topics ?? [];
  const previousSummary = state?.summary ?? undefined;
  const previousThrough = state?.summaryThrough ?? 0;

  const exchanges = earlier.filter(isExchange);
  const verbatim: HistoryTurn[] = [];
  let spent = 0;
  for (let i = exchanges.length - 1; i >= 0; i--) {
    const cost = exchangeTokens(exchanges[i]!);
    if (verbatim.length > 0 && spent + cost > settings.tokenBudget) break;
    verbatim.unshift(exchanges[i]!);
    spent += cost;
  }
  const fallen = exchanges.slice(0, exchanges.length - verbatim.length);
  const fallenThrough = fallen.at(-1)?.ordinal ?? 0;
  if (fallenThrough === 0) {
    // Everything fits (the budget may have grown): no summary needed.
    return { verbatim, summaryThrough: 0, summaryComputed: false, topics };
  }
  if (fallenThrough <= previousThrough) {
    return { verbatim, summary: previousSummary, summaryThrough: previousThrough, summaryComputed: false, topics };
  }

  const newlyFallen = fallen.filter((turn) => turn.ordinal > previousThrough);
  if (settings.model) {
    try {
      const messages = buildSummaryMessages(
        previousSummary,
        newlyFallen.map((turn) => ({ question: turn.question, answer: turn.answer ?? '' })),
      );
      const { text, usage } = await complete(settings.model, messages, {
        signal: settings.signal,
        maxTokens: SUMMARY_MAX_TOKENS,
        temperature: 0,
      });
      if (text.trim()) {
        return { verbatim, summary: text.trim(), summaryThrough: fallenThrough, summaryComputed: true, summaryUsage: usage, topics };
      }
    } catch (error) {
      if (settings.signal?.aborted || isAbortError(error)) throw error;
      // A failed summary is not worth failing the turn for: summarise offline.
    }
  }
  const summary = summarizeOffline(fallen.map(toConversationTurn), topics);
  return { verbatim, summary: summary || undefined, summaryThrough: fallenThrough, summaryComputed: true, topics };
}

/** The rewrite request of a turn: the last `history.rewriteTurns` exchanges, tracked topics, summary, scope. Shared with replay. */
export function rewriteRequestFor(
  question: string,
  history: Pick<TurnHistory, 'verbatim' | 'topics' | 'summary'>,
  config: Config,
  policy: RewritePolicy,
  signal?: AbortSignal,
  /** How common a word is in the index (`termShares`), for the offline rewriter. */
  termShare?: (word: string) => number,
): RewriteRequest {
  const window = config.history.rewriteTurns > 0 ? history.verbatim.slice(-config.history.rewriteTurns) : [];
  return {
    question,
    history: window.map(toConversationTurn),
    topics: history.topics,
    summary: history.summary,
    scope: config.assistant?.scope,
    policy,
    ...(termShare ? { termShare } : {}),
    signal,
  };
}

/**
 * How a turn retrieves: a rewritten query is searched beside the question as
 * asked, fused with `retrieval.rawWeight`, so a bad rewrite cannot lose what the
 * question alone finds (measured on bench/mtrag: BENCHMARKS.md). When the rewriter
 * says how to weigh its rewrite (`outcome.weighting`, the offline rewriter on a vague
 * question), the words it added count that much and its raw weight is the default.
 * Shared with replay.
 */
export function retrievalSettingsFor(
  question: string,
  outcome: { decision: string; standaloneQuery: string; model?: string; weighting?: RewriteOutcome['weighting'] },
  k: number,
  config: Config,
): RetrievalSettings {
  const rewritten = outcome.decision === 'rewritten' && outcome.standaloneQuery !== question;
  if (!rewritten) return { k };
  const rawWeight = config.retrieval.rawWeight ?? outcome.weighting?.raw ?? defaultRawWeight(outcome.model);
  return {
    k,
    ...(rawWeight > 0 ? { secondary: { query: question, weight: rawWeight } } : {}),
    ...(outcome.weighting ? { expansion: { core: question, weight: outcome.weighting.expansion } } : {}),
  };
}

/**
 * The raw question's weight beside a rewrite when none is configured. Measured on
 * bench/mtrag (BENCHMARKS.md): the offline rewriter's query expansion needs the
 * question as asked beside it at full weight; a model's rewrite is better trusted
 * more (0.3 beat 1 and 0.5 on both domains).
 */
export function defaultRawWeight(rewriterId: string | undefined): number {
  return rewriterId === undefined || rewriterId.startsWith('offline:') ? 1 : 0.3;
}

/** Runs one turn of `context.sessionId`, yielding its events; see the module header. */
export async function* runTurn(context: TurnContext, question: string, options: TurnOptions = {}): AsyncGenerator<TurnEvent> {
  const { db, config, rewriter, retriever, answerModel } = context;
  const signal = options.signal;
  const k = options.k ?? config.retrieval.k;
  const policy = options.rewritePolicy ?? config.rewrite.policy;
  // resolveConfig leaves `assistant` out entirely when no scope is set.
  const scope = config.assistant?.scope;
  const started = performance.now();

  const timings: TurnTimings = { historyMs: 0, summaryMs: 0, rewriteMs: 0, retrieveMs: 0, answerMs: 0, persistMs: 0, totalMs: 0 };
  const persistStarted = performance.now();
  const turn = startTurn(db, context.sessionId, question, { create: context.plannedSession });
  timings.persistMs = performance.now() - persistStarted;
  yield { type: 'start', sessionId: context.sessionId, turnId: turn.id, ordinal: turn.ordinal, question };

  const usage: TurnUsage = {};
  const models: TurnModels = { embed: retriever.embedder.id };
  let standaloneQuery: string | undefined;
  let outcome: RewriteOutcome | undefined;
  let chunks: RetrievedChunk[] = [];
  let prompt: ChatMessage[] | undefined;
  let answer = '';
  let answerKind: AnswerKind | null = null;
  let topics: Topic[] = [];
  let summary: string | undefined;
  let summaryThrough = 0;
  let persisted = false;
  let modelTopics: string[] | undefined;

  const finish = (status: FinishedStatus, error?: string) => {
    persisted = true; // set first: a failing write is not attempted twice
    const persistStart = performance.now();
    timings.totalMs = persistStart - started;
    // What counts as conversation when history is read back (isExchange) updates the topics now.
    const nextTopics =
      isExchange({ status, answer, answerKind }) && standaloneQuery !== undefined
        ? updateTopics(
            topics,
            // An extractive answer is quoted document text, not a reply: its terms
            // ("ID", command lists) are noise as topics, so only the question counts.
            { ordinal: turn.ordinal, question, standaloneQuery, answer: answerKind === 'llm' ? answer : '' },
            modelTopics,
          )
        : topics;
    const stored = finishTurn(db, turn.id, {
      status,
      error,
      standaloneQuery,
      rewriteDecision: outcome?.decision,
      rewriteReason: outcome?.reason,
      rewriteError: outcome?.error,
      rewritePrompt: outcome?.prompt,
      chunks,
      prompt,
      answer: answerKind !== 'search' && (answer !== '' || status === 'answered') ? answer : undefined,
      answerKind: answerKind ?? undefined,
      models,
      settings: { k, rewritePolicy: policy, scope: scope ?? null, history: config.history },
      timings: { ...timings, persistMs: timings.persistMs + (performance.now() - persistStart) },
      usage,
      topics: nextTopics,
      summary,
      summaryThrough: summary ? summaryThrough : undefined,
    });
    return stored;
  };

  const done = (status: FinishedStatus, error?: { message: string; hint?: string }): TurnEvent[] => {
    const stored = finish(status, error?.message);
    const events: TurnEvent[] = [];
    if (error) events.push({ type: 'error', message: error.message, hint: error.hint, status: 'failed' });
    events.push({
      type: 'done',
      turnId: turn.id,
      ordinal: turn.ordinal,
      status,
      answer,
      answerKind,
      citations: answerKind === 'small_talk' ? [] : resolveCitations(answer, chunks),
      usage,
      timings: stored,
      models,
    });
    return events;
  };

  try {
    // (1) History and the running summary.
    let stage = performance.now();
    const history = await loadHistory(db, context.sessionId, turn.ordinal, {
      tokenBudget: config.history.tokenBudget,
      model: context.summaryModel ?? answerModel,
      signal,
    });
    topics = history.topics;
    summary = history.summary;
    summaryThrough = history.summaryThrough;
    if (history.summaryUsage) usage.summary = history.summaryUsage;
    timings.historyMs = performance.now() - stage;
    if (history.summaryComputed) timings.summaryMs = timings.historyMs;
    if (signal?.aborted) return yield* done('interrupted');

    // (2)+(3) Rewrite to a standalone query.
    stage = performance.now();
    try {
      outcome = await rewriter.rewrite(rewriteRequestFor(question, history, config, policy, signal, termShares(db)));
    } catch (error) {
      if (signal?.aborted || isAbortError(error)) return yield* done('interrupted');
      // The rewriter is meant to fall back by itself; if it threw anyway, search with the question.
      outcome = {
        standaloneQuery: question,
        decision: 'fallback',
        reason: 'the rewriter failed; searching with the question as asked',
        error: error instanceof Error ? error.message : String(error),
      };
    }
    standaloneQuery = outcome.standaloneQuery.trim() || question;
    if (outcome.usage) usage.rewrite = outcome.usage;
    models.rewrite = outcome.model ?? rewriter.id;
    timings.rewriteMs = performance.now() - stage;
    yield {
      type: 'rewrite',
      question,
      standaloneQuery,
      decision: outcome.decision,
      reason: outcome.reason,
      model: models.rewrite,
      ms: timings.rewriteMs,
    };
    if (signal?.aborted) return yield* done('interrupted');

    // (4) Small talk: no retrieval, no model.
    if (outcome.decision === 'small_talk') {
      answerKind = 'small_talk';
      answer = smallTalkReply(question);
      yield { type: 'token', text: answer };
      return yield* done('answered');
    }

    stage = performance.now();
    const retrievalSettings = retrievalSettingsFor(question, outcome, k, config);
    const secondary = retrievalSettings.secondary;
    chunks = await retriever.search(standaloneQuery, retrievalSettings, signal);
    timings.retrieveMs = performance.now() - stage;
    yield { type: 'retrieval', query: standaloneQuery, ...(secondary ? { fusedWith: secondary } : {}), chunks, ms: timings.retrieveMs };
    if (signal?.aborted) return yield* done('interrupted');
    if (options.retrieveOnly) {
      answerKind = 'search';
      return yield* done('answered');
    }

    // (5) Answer.
    stage = performance.now();
    if (!answerModel) {
      answerKind = 'extractive';
      models.chat = EXTRACTIVE_MODEL_ID;
      answer = extractiveAnswer(standaloneQuery, chunks, question).text;
      timings.answerMs = performance.now() - stage;
      yield { type: 'token', text: answer };
      return yield* done('answered');
    }

    answerKind = 'llm';
    models.chat = answerModel.id;
    // Searches have no answer to show the model; their questions live on in the rewrite.
    const answered = history.verbatim.filter((t) => t.answerKind !== 'search');
    const answerWindow = config.history.answerTurns > 0 ? answered.slice(-config.history.answerTurns) : [];
    prompt = buildAnswerMessages({
      question,
      standaloneQuery,
      chunks,
      history: answerWindow.map((t) => ({ question: t.question, answer: t.answer ?? '' })),
      summary,
      scope,
    });
    try {
      for await (const chunk of answerModel.stream(prompt, { signal })) {
        if (chunk.type === 'usage') {
          usage.answer = chunk.usage;
          continue;
        }
        answer += chunk.text;
        yield { type: 'token', text: chunk.text };
      }
    } finally {
      timings.answerMs = performance.now() - stage;
    }
    if (signal?.aborted) return yield* done('interrupted');
    if (context.topicModel) {
      // Before the turn is stored: its topics are stored with it.
      const extracted = await extractTopicsWithModel(context.topicModel, { question, answer }, { timeoutMs: TOPIC_TIMEOUT_MS, signal });
      if (extracted) {
        modelTopics = extracted.terms;
        if (extracted.usage) usage.topics = extracted.usage;
      }
    }
    return yield* done('answered');
  } catch (error) {
    if (persisted) throw error;
    if (signal?.aborted || isAbortError(error)) return yield* done('interrupted');
    return yield* done('failed', describe(error));
  } finally {
    // The consumer left the loop early (e.g. `break` on Ctrl-C): keep what arrived.
    if (!persisted) finish('interrupted');
  }
}

function describe(error: unknown): { message: string; hint?: string } {
  if (error instanceof UserError) return { message: error.message, hint: error.hint };
  const message = error instanceof Error ? error.message : String(error);
  return { message: `Unexpected error: ${message}`, hint: 'Set RAGLINE_DEBUG=1 to see the full error.' };
}
