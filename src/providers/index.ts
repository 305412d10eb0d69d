// Builds the configured providers: offline unless an OpenAI-compatible server
// is configured (OPENAI_API_KEY, a base URL, or provider = openai). Only the
// configured implementation is imported: an offline run never loads the OpenAI
// client code, and a remote one never the offline embedder. The exception is the
// threaded offline embedder, a small module that loads its embedder only in its
// worker: it comes with this one, as a separate import() would cost ingest a
// round of file reads of its own.

import { embeddingServer, usesRemoteChat, usesRemoteEmbeddings, type Config } from '../config/index.js';
import { resolvePrefixes } from './embedding-prefixes.js';
import { ThreadedOfflineEmbedder } from './offline-threaded.js';
import type { OpenAISettings } from './openai.js';
import type { ChatModel, Embedder, EmbeddingPrefixes } from './types.js';

/** What the OpenAI-compatible provider is built with for `model`: connection, timeouts and retry tuning from `config`. */
export function openAISettings(config: Config, model: string, timeoutMs = config.request.timeoutMs): OpenAISettings {
  return {
    baseURL: config.baseURL,
    apiKey: config.apiKey,
    model,
    timeoutMs,
    idleMs: config.request.idleMs,
    totalMs: config.request.totalMs,
    loadTimeoutMs: config.request.loadTimeoutMs,
    maxRetries: config.request.maxRetries,
    retry: { baseDelayMs: config.request.retryBaseMs },
  };
}

/** `bulk`: many texts are coming (ingest); the offline embedder then runs on a worker thread. */
export async function createEmbedder(config: Config, options: { bulk?: boolean } = {}): Promise<Embedder> {
  if (!usesRemoteEmbeddings(config)) {
    if (options.bulk) return new ThreadedOfflineEmbedder();
    return new (await import('./offline-embedder.js')).OfflineEmbedder();
  }
  const { OpenAIEmbedder } = await import('./openai.js');
  return new OpenAIEmbedder(embedderSettings(config));
}

/**
 * What the embedder is built with: its own server and key when set (embedding.baseURL,
 * embedding.apiKey: llama.cpp and vLLM serve one model per process, so chat and
 * embeddings often live at two addresses), and the prefixes for its model.
 */
export function embedderSettings(config: Config): OpenAISettings & { prefixes: EmbeddingPrefixes } {
  const model = config.models.embedding;
  return {
    ...openAISettings(config, model),
    ...embeddingServer(config),
    prefixes: resolvePrefixes(model, config.embedding),
    dimensions: config.embedding.dimensions,
    maxBatch: config.embedding.batchSize,
    concurrency: config.embedding.concurrency,
  };
}

/** The answer model, or undefined offline (the extractive answerer is used then). */
export async function createChatModel(config: Config): Promise<ChatModel | undefined> {
  if (!usesRemoteChat(config)) return undefined;
  const { OpenAIChatModel } = await import('./openai.js');
  return new OpenAIChatModel({ ...openAISettings(config, config.models.chat), contextTokens: config.answer?.contextTokens, operation: 'chat' });
}

/** The rewrite model, or undefined offline (the offline rewriter is used then). */
export async function createRewriteModel(config: Config): Promise<ChatModel | undefined> {
  if (!usesRemoteChat(config)) return undefined;
  const { OpenAIChatModel } = await import('./openai.js');
  // The rewrite's own deadline (rewrite.timeoutMs) is kept by the rewriter; the request limits are the usual ones.
  return new OpenAIChatModel({ ...openAISettings(config, config.models.rewrite), operation: 'rewrite' });
}
