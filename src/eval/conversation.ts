// ragline's own rewrite of a judged turn, made the way the chat makes it: the
// earlier turns are played through the chat's own history stage (verbatim
// exchanges within history.tokenBudget, the running summary of what fell out,
// with the chat's summary model, or offline as the chat makes it without one) and
// gate-and-rewrite stage (their standalone queries), the topics updated after each
// as the chat records them (with the recorded answers, and the chat's topic model
// when it has one), then the question is rewritten the same way.
// Rewrites are memoised per conversation prefix, so a conversation costs one
// rewrite per turn.

import { buildHistory, EMPTY_CONVERSATION, isExchange, topicsAfter, type ConversationState, type Exchange } from '../chat/stages/history.js';
import { TOPIC_TIMEOUT_MS } from '../chat/stages/answer.js';
import { gateAndRewrite, type TurnRewrite } from '../chat/stages/rewrite.js';
import type { Config } from '../config/index.js';
import type { AnswerKind, RewritePolicy } from '../domain/index.js';
import type { ChatModel } from '../providers/types.js';
import { extractTopicsWithModel, type QueryRewriter, type RewriteOutcome } from '../rewrite/index.js';
import type { EvalTask } from './run.js';

/** The conversation before a turn: its exchanges and the state the previous turn left. */
interface Before {
  exchanges: Exchange[];
  state: ConversationState;
}

/** A turn of the conversation played: what it started from, and its rewrite. */
interface Played {
  before: Before;
  rewrite: TurnRewrite;
  /** The rewrite's history, as the chat would have read it. */
  history: Pick<ConversationState, 'topics' | 'summary' | 'summaryThrough'>;
}

export interface ConversationOptions {
  /** false: the rewriter sees no tracked topics (to measure what they add). */
  useTopics?: boolean;
  /** How common a word is in the index, as the chat gives it (`termShares`). */
  termShare?: (word: string) => number;
  /** Summarises the turns that fall out of the budget, as the chat's answer model does; offline without one. */
  summaryModel?: ChatModel;
  /** Extracts each exchange's topics, as the chat's topic model does; the local extractor without one. */
  topicModel?: ChatModel;
}

export class ConversationRewriter {
  private readonly played = new Map<string, Promise<Played>>();

  constructor(
    private readonly rewriter: QueryRewriter,
    private readonly config: Config,
    private readonly policy: RewritePolicy,
    private readonly options: ConversationOptions = {},
  ) {}

  /** The rewrite outcome of the task's question, as the chat would produce it. */
  async rewrite(task: EvalTask): Promise<RewriteOutcome> {
    return (await this.play(task.history, task.question)).rewrite.outcome;
  }

  /** The turn `question` after the earlier turns `history`, played once per distinct conversation prefix. */
  private play(history: EvalTask['history'], question: string): Promise<Played> {
    const key = JSON.stringify([history, question]);
    let played = this.played.get(key);
    if (!played) {
      played = (async () => {
        const before = await this.before(history);
        const { useTopics = true, termShare, summaryModel } = this.options;
        const built = await buildHistory(before.exchanges, before.state, { tokenBudget: this.config.history.tokenBudget, model: summaryModel });
        const rewrite = await gateAndRewrite(this.rewriter, {
          question,
          history: useTopics ? built : { ...built, topics: [] },
          config: this.config,
          policy: this.policy,
          termShare,
        });
        return { before, rewrite, history: built };
      })();
      this.played.set(key, played);
    }
    return played;
  }

  /** The conversation after the earlier turns `history`, each recorded as the chat records an answered turn. */
  private async before(history: EvalTask['history']): Promise<Before> {
    if (history.length === 0) return { exchanges: [], state: EMPTY_CONVERSATION };
    const last = history.at(-1)!;
    const { before, rewrite, history: seen } = await this.play(history.slice(0, -1), last.user);
    // The recorded answer stands for the model's; a turn with none counts as a search, as in a session.
    const answerKind: AnswerKind = rewrite.outcome.decision === 'small_talk' ? 'small_talk' : last.assistant ? 'llm' : 'search';
    const turn = { ordinal: history.length, question: last.user, standaloneQuery: rewrite.standaloneQuery, answer: last.assistant, answerKind, status: 'answered' as const };
    return {
      exchanges: isExchange(turn) ? [...before.exchanges, turn] : before.exchanges,
      state: { topics: topicsAfter(seen.topics, turn, await this.modelTopics(turn)), summary: seen.summary, summaryThrough: seen.summary ? seen.summaryThrough : 0 },
    };
  }

  /** The topic model's terms for an answered exchange, as the chat extracts them; none without a model. */
  private async modelTopics(turn: { question: string; answer: string; answerKind: AnswerKind }): Promise<string[] | undefined> {
    const model = this.options.topicModel;
    if (!model || turn.answerKind !== 'llm') return undefined;
    return (await extractTopicsWithModel(model, { question: turn.question, answer: turn.answer }, { timeoutMs: TOPIC_TIMEOUT_MS }))?.terms;
  }
}
