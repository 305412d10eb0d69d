// The vocabulary every layer shares: turns, topics, rewrite decisions and policy,
// chunk locations, chat messages and token usage. Types only; imports nothing
// from the rest of the app, so the store, the providers and the chat can all use it.

export type { ChunkLocation, ChunkSpan, Locator } from './chunk.js';
export type { ChatMessage, ChatRole } from './message.js';
export type { RewriteDecision, RewritePolicy } from './rewrite.js';
export type { Topic, TopicSource } from './topic.js';
export type { AnswerKind, FinishedStatus, TurnModels, TurnStatus, TurnTimings, TurnUsage } from './turn.js';
export type { TokenUsage } from './usage.js';
