// The history stage: what a turn remembers of the conversation before it. The
// newest exchanges are carried verbatim within `history.tokenBudget` (the most
// recent one always, however long); the ones that fell out are kept as a running
// summary, recomputed only when more of them fell out since the last one; the
// tracked topics come from the previous turn.
//
// The core (`windowHistory`, `buildHistory`) works on a list of exchanges and the
// previous conversation state, wherever they come from: the chat and replay read
// them from the database (`loadHistory`), eval from its task file. What a finished
// turn adds to the state is `topicsAfter`, shared the same way.

import type { TokenUsage, Topic } from '../../domain/index.js';
import { complete, type ChatModel } from '../../providers/types.js';
import { isAbortError } from '../../providers/describe-error.js';
import { summarizeOffline, updateTopics, type ConversationTurn } from '../../rewrite/index.js';
import type { TurnStore } from './store.js';
import type { HistoryTurn, StoredTurn } from '../../store/sessions.js';
import { buildSummaryMessages } from '../prompt.js';

/** Characters per token, for budgeting history without a tokenizer. */
export const CHARS_PER_TOKEN = 4;
const SUMMARY_MAX_TOKENS = 300;

/** An earlier turn that counts as conversation (see `isExchange`), as the history keeps it. */
export type Exchange = Pick<HistoryTurn, 'ordinal' | 'question' | 'standaloneQuery' | 'answer' | 'answerKind'>;

/** What the conversation carries from one turn to the next, besides its exchanges. */
export interface ConversationState {
  /** Tracked topics, most recent first. */
  topics: Topic[];
  /** Running summary of the exchanges that fell out of the budget. */
  summary?: string;
  /** Ordinal of the last exchange the summary covers; 0 when there is none. */
  summaryThrough: number;
}

export const EMPTY_CONVERSATION: ConversationState = { topics: [], summaryThrough: 0 };

/** The earlier turns this turn sees. */
export interface TurnHistory {
  /** Exchanges carried verbatim, oldest first, within the token budget. */
  verbatim: Exchange[];
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

/** The history before its summary is brought up to date. */
export interface HistoryWindow {
  verbatim: Exchange[];
  topics: Topic[];
  /** The previous summary, when it still covers every exchange that fell out. */
  summary?: string;
  summaryThrough: number;
  /** More exchanges fell out than the previous summary covers: it is to be recomputed through `through`. */
  due?: { fallen: Exchange[]; newlyFallen: Exchange[]; through: number };
}

export interface HistorySettings {
  tokenBudget: number;
  /** Summarises what fell out; without one (or when it fails) the offline summary is used. */
  model?: ChatModel;
  /**
   * False: the summary is not brought up to date, even when it is due (a turn that uses no
   * model); the previous one is carried, and the next turn that does brings it up to date.
   */
  summarise?: boolean;
  signal?: AbortSignal;
}

/** Rough token count: characters / 4. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

function exchangeTokens(turn: Pick<Exchange, 'question' | 'answer'>): number {
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

/** An exchange as the rewriter sees it. */
export function toConversationTurn(turn: Pick<Exchange, 'question' | 'standaloneQuery' | 'answer'> & Partial<Pick<Exchange, 'answerKind'>>): ConversationTurn {
  return {
    question: turn.question,
    standaloneQuery: turn.standaloneQuery ?? turn.question,
    answer: turn.answer ?? '',
    ...(turn.answerKind === 'extractive' ? { quoted: true } : {}),
  };
}

/**
 * The newest `exchanges` (oldest first) within `tokenBudget`, the most recent one
 * always; and whether the summary of the older ones must be recomputed: only when
 * an exchange the previous summary does not cover fell out. Pure.
 */
export function windowHistory(exchanges: readonly Exchange[], previous: ConversationState, tokenBudget: number): HistoryWindow {
  const verbatim: Exchange[] = [];
  let spent = 0;
  for (let i = exchanges.length - 1; i >= 0; i--) {
    const cost = exchangeTokens(exchanges[i]!);
    if (verbatim.length > 0 && spent + cost > tokenBudget) break;
    verbatim.unshift(exchanges[i]!);
    spent += cost;
  }
  const topics = previous.topics;
  const fallen = exchanges.slice(0, exchanges.length - verbatim.length);
  const through = fallen.at(-1)?.ordinal ?? 0;
  // Everything fits (the budget may have grown): no summary needed.
  if (through === 0) return { verbatim, topics, summaryThrough: 0 };
  if (through <= previous.summaryThrough) return { verbatim, topics, summary: previous.summary, summaryThrough: previous.summaryThrough };
  const newlyFallen = fallen.filter((turn) => turn.ordinal > previous.summaryThrough);
  return { verbatim, topics, summary: previous.summary, summaryThrough: previous.summaryThrough, due: { fallen, newlyFallen, through } };
}

/**
 * The history of a new turn from the exchanges before it and the state the
 * previous turn left: `windowHistory`, then the summary brought up to date when it
 * is due (by `settings.model` from the previous summary and the newly fallen
 * exchanges, or offline from every fallen exchange and the topics).
 */
export async function buildHistory(exchanges: readonly Exchange[], previous: ConversationState, settings: HistorySettings): Promise<TurnHistory> {
  const window = windowHistory(exchanges, previous, settings.tokenBudget);
  const { verbatim, topics, due } = window;
  if (!due || settings.summarise === false) return { verbatim, topics, summary: window.summary, summaryThrough: window.summaryThrough, summaryComputed: false };
  if (settings.model) {
    try {
      const messages = buildSummaryMessages(
        previous.summary,
        due.newlyFallen.map((turn) => ({ question: turn.question, answer: turn.answer ?? '' })),
      );
      const { text, usage } = await complete(settings.model, messages, { signal: settings.signal, maxTokens: SUMMARY_MAX_TOKENS, temperature: 0, thinking: false });
      if (text.trim()) return { verbatim, topics, summary: text.trim(), summaryThrough: due.through, summaryComputed: true, summaryUsage: usage };
    } catch (error) {
      if (settings.signal?.aborted || isAbortError(error)) throw error;
      // A failed summary is not worth failing the turn for: summarise offline.
    }
  }
  const summary = summarizeOffline(due.fallen.map(toConversationTurn), topics);
  return { verbatim, topics, summary: summary || undefined, summaryThrough: due.through, summaryComputed: true };
}

/**
 * The history of turn `beforeOrdinal` of a stored session: its earlier exchanges
 * and the topics and summary stored on the latest turn before it, through
 * `buildHistory`. Reads only the columns a history needs and the state of one row:
 * a session of thousands of turns (an agent's, through `ragline mcp`) stays cheap to continue.
 */
export async function loadHistory(store: TurnStore, sessionId: string, beforeOrdinal: number, settings: HistorySettings): Promise<TurnHistory> {
  // One read (transaction) for the exchanges and the state: read one at a time on a
  // chat's long-lived SQLite connection, each took a snapshot of its own, and while
  // another process changed the schema many times in a row one failed with `database
  // schema has changed` (SQLite prepares a statement again only so often outside one).
  const { turns, state } = await store.history(sessionId, beforeOrdinal);
  const exchanges = turns.filter(isExchange);
  const previous: ConversationState = {
    topics: state?.topics ?? [],
    summary: state?.summary ?? undefined,
    summaryThrough: state?.summaryThrough ?? 0,
  };
  return buildHistory(exchanges, previous, settings);
}

/**
 * The tracked topics after a finished turn: updated with it when it counts as
 * conversation (`isExchange`) and got as far as a standalone query. An extractive
 * answer is quoted document text, not a reply: its terms ("ID", command lists) are
 * noise as topics, so only a model's answer counts beside the question.
 */
export function topicsAfter(
  topics: Topic[],
  turn: Pick<StoredTurn, 'ordinal' | 'question' | 'status' | 'answerKind'> & { standaloneQuery?: string; answer: string },
  modelTopics?: string[],
): Topic[] {
  if (!isExchange(turn) || turn.standaloneQuery === undefined) return topics;
  const answer = turn.answerKind === 'llm' ? turn.answer : '';
  return updateTopics(topics, { ordinal: turn.ordinal, question: turn.question, standaloneQuery: turn.standaloneQuery, answer }, modelTopics);
}
