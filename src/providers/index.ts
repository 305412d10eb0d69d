// Builds the configured providers: offline unless an OpenAI-compatible server
// is configured (OPENAI_API_KEY, a base URL, or provider = openai).

import { usesRemoteChat, usesRemoteEmbeddings, type Config } from '../config/index.js';
import { OfflineEmbedder } from './offline-embedder.js';
import { OpenAIChatModel, OpenAIEmbedder, type OpenAISettings } from './openai.js';
import type { ChatModel, Embedder } from './types.js';

function settings(config: Config, model: string, timeoutMs = config.request.timeoutMs): OpenAISettings {
  return {
    baseURL: config.baseURL,
    apiKey: config.apiKey,
    model,
    timeoutMs,
    maxRetries: config.request.maxRetries,
  };
}

export function createEmbedder(config: Config): Embedder {
  if (!usesRemoteEmbeddings(config)) return new OfflineEmbedder();
  return new OpenAIEmbedder({
    ...settings(config, config.models.embedding),
    dimensions: config.embedding.dimensions,
    maxBatch: config.embedding.batchSize,
    concurrency: config.embedding.concurrency,
  });
}

/** The answer model, or undefined offline (the extractive answerer is used then). */
export function createChatModel(config: Config): ChatModel | undefined {
  if (!usesRemoteChat(config)) return undefined;
  return new OpenAIChatModel({ ...settings(config, config.models.chat), operation: 'chat' });
}

/** The rewrite model, or undefined offline (the offline rewriter is used then). */
export function createRewriteModel(config: Config): ChatModel | undefined {
  if (!usesRemoteChat(config)) return undefined;
  return new OpenAIChatModel({ ...settings(config, config.models.rewrite, config.rewrite.timeoutMs), operation: 'rewrite' });
}
