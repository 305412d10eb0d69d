// ragline's own rewrite of a judged turn, made the way the chat makes it: the
// earlier turns are replayed through the same rewriter (their standalone
// queries) and the same topic tracker (with the recorded answers), then the
// question is rewritten with the chat's rewrite window. Earlier turns are
// memoised per conversation prefix, so a conversation costs one rewrite per turn.

import type { Config } from '../config/index.js';
import type { RewritePolicy, Topic } from '../domain/index.js';
import { updateTopics, type ConversationTurn, type QueryRewriter, type RewriteOutcome } from '../rewrite/index.js';
import type { EvalTask } from './run.js';

interface State {
  turns: ConversationTurn[];
  topics: Topic[];
}

export class ConversationRewriter {
  private readonly states = new Map<string, Promise<State>>();

  constructor(
    private readonly rewriter: QueryRewriter,
    private readonly config: Config,
    private readonly policy: RewritePolicy,
    /** false: the rewriter sees no tracked topics (to measure what they add). */
    private readonly useTopics = true,
    /** How common a word is in the index, as the chat gives it (`termShares`). */
    private readonly termShare?: (word: string) => number,
  ) {}

  /** The rewrite outcome of the task's question, as the chat would produce it. */
  async rewrite(task: EvalTask): Promise<RewriteOutcome> {
    const state = await this.stateAfter(task.history);
    return this.rewriteWith(task.question, state);
  }

  private rewriteWith(question: string, state: State): Promise<RewriteOutcome> {
    const window = this.config.history.rewriteTurns;
    return this.rewriter.rewrite({
      question,
      history: window > 0 ? state.turns.slice(-window) : [],
      topics: this.useTopics ? state.topics : [],
      scope: this.config.assistant?.scope,
      policy: this.policy,
      ...(this.termShare ? { termShare: this.termShare } : {}),
    });
  }

  /** Conversation state after the given earlier turns. */
  private stateAfter(history: EvalTask['history']): Promise<State> {
    const key = JSON.stringify(history.map((h) => h.user));
    let state = this.states.get(key);
    if (!state) {
      state = (async () => {
        if (history.length === 0) return { turns: [], topics: [] };
        const before = await this.stateAfter(history.slice(0, -1));
        const last = history.at(-1)!;
        const outcome = await this.rewriteWith(last.user, before);
        const turn = { question: last.user, standaloneQuery: outcome.standaloneQuery, answer: last.assistant };
        const topics =
          outcome.decision === 'small_talk' ? before.topics : updateTopics(before.topics, { ordinal: history.length, ...turn });
        return { turns: [...before.turns, turn], topics };
      })();
      this.states.set(key, state);
    }
    return state;
  }
}
