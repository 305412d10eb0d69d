// The two model interfaces the rest of ragline talks to. Everything that embeds
// text or generates text goes through these, so the offline implementations and
// any OpenAI-compatible server are interchangeable and testable.

import type { ChatMessage, TokenUsage } from '../domain/index.js';
import type { EmbeddingPrefixes, EmbedPurpose } from './embedding-prefixes.js';

export type { EmbeddingPrefixes, EmbedPurpose } from './embedding-prefixes.js';

/** Turns texts into vectors. Vectors are L2-normalised Float32Arrays of `dimensions` length. */
export interface Embedder {
  /** Stable identifier recorded in the database, e.g. `offline:hash-v2-384` or `openai:nomic-embed-text`. */
  readonly id: string;
  /** Length of every vector this embedder returns; 0 until known for a remote model (see `resolveDimensions`). */
  readonly dimensions: number;
  /** Learns the dimension from the server when it was not configured. */
  resolveDimensions?(signal?: AbortSignal): Promise<number>;
  /** Largest number of texts one request carries; `embed` splits longer lists itself. */
  readonly maxBatch: number;
  /**
   * Embeds `texts` (any number) in order; one vector per text. `purpose` says whether
   * they are search queries or documents: a model trained with task prefixes gets the
   * one for that purpose (see `prefixes`). Default: documents.
   */
  embed(texts: string[], signal?: AbortSignal, purpose?: EmbedPurpose): Promise<Float32Array[]>;
  /**
   * What is put before each text by purpose (src/providers/embedding-prefixes.ts), recorded
   * with the index; undefined for an embedder that takes no prefixes (the offline one).
   */
  readonly prefixes?: EmbeddingPrefixes;
  /** Releases threads or connections, if the embedder holds any. */
  close?(): Promise<void>;
}

/** One piece of a streamed completion. */
export type ChatChunk =
  | { type: 'token'; text: string }
  /** The model's reasoning ("thinking"): never part of the answer, never stored or sent back. */
  | { type: 'reasoning'; text: string }
  /** The `text` already given as tokens was reasoning after all (a stray `</think>`): take it back. */
  | { type: 'retract'; text: string }
  | { type: 'usage'; usage: TokenUsage }
  /** Why the model stopped (`stop`, `length`...), when the server said. */
  | { type: 'finish'; reason: string };

export interface ChatOptions {
  signal?: AbortSignal;
  /** Upper bound on generated tokens. */
  maxTokens?: number;
  temperature?: number;
  /**
   * `false` asks the server not to think (rewrite, topics, summary: short replies
   * under a small token limit). Unset: the server's default.
   */
  thinking?: boolean;
}

/** Generates text from messages, streamed. */
export interface ChatModel {
  /** Stable identifier recorded with every turn, e.g. `openai:gpt-4o-mini` or `offline:extractive-v2`. */
  readonly id: string;
  stream(messages: ChatMessage[], options?: ChatOptions): AsyncIterable<ChatChunk>;
  /**
   * Resolves once the model is loaded and answering (a local server loads a model on its
   * first request, which can take longer than a call's own time limit); starts that
   * load the first time. Never rejects for the server's errors: the call after reports them.
   */
  ready?(signal?: AbortSignal): Promise<void>;
  /** True while `ready()` is still waiting for the model to load. */
  readonly loading?: boolean;
  /** The model's context window in tokens: a setting, else what the server says; undefined when neither says. */
  contextWindow?(signal?: AbortSignal): Promise<{ tokens: number; source: string } | undefined>;
}

/** Collects a whole completion from a streaming model. */
export async function complete(
  model: ChatModel,
  messages: ChatMessage[],
  options?: ChatOptions,
): Promise<{ text: string; usage?: TokenUsage; finishReason?: string }> {
  let text = '';
  let usage: TokenUsage | undefined;
  let finishReason: string | undefined;
  for await (const chunk of model.stream(messages, options)) {
    if (chunk.type === 'token') text += chunk.text;
    else if (chunk.type === 'retract') text = text.slice(chunk.text.length);
    else if (chunk.type === 'usage') usage = chunk.usage;
    else if (chunk.type === 'finish') finishReason = chunk.reason;
  }
  return { text, usage, finishReason };
}
