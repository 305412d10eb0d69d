// Follow-up detection and history -> standalone query, with a model or without one.
// The chat pipeline talks to this module only.

import type { ChatModel } from '../providers/types.js';
import { LlmRewriter, type LlmRewriterOptions } from './llm.js';
import { OfflineRewriter } from './offline.js';
import type { QueryRewriter } from './types.js';

export type { ConversationTurn, QueryRewriter, RewriteOutcome, RewriteRequest } from './types.js';
export { classifyQuestion, followUpSignal, isSmallTalk, type GateOptions, type GateResult, type QuestionKind } from './gate.js';
export { activeTopic, extractTerms, isGenericTerm, rankTopics, rankTopicsForDisplay, specificity, topicsLine, updateTopics, MAX_TOPICS } from './topics.js';
export { summarizeOffline } from './summary.js';
export { ownWords } from './reference.js';
export { extractTopicsWithModel, parseTopicReply, buildTopicMessages } from './topics-llm.js';
export { OfflineRewriter, OFFLINE_REWRITER_ID, DEFAULT_VAGUE, contentWords, isVague, type OfflineRewriterOptions, type VagueOptions } from './offline.js';
export { CONTEXT_MODEL, FEATURES as CONTEXT_FEATURES, rankContext, readLastQuestion, topicFeatures, type ContextModel } from './context.js';
export { LlmRewriter, buildRewritePrompt, sanitizeRewrite, type LlmRewriterOptions } from './llm.js';

/**
 * The LLM rewriter for `model` (falling back to the offline rewriter when the model's
 * rewrite fails or is refused), or the offline rewriter when there is no model.
 */
export function createRewriter(model: ChatModel | undefined, options: LlmRewriterOptions = {}): QueryRewriter {
  return model ? new LlmRewriter(model, { fallback: new OfflineRewriter(), ...options }) : new OfflineRewriter();
}
