// Embedder and ChatModel for any OpenAI-compatible server (OpenAI, Ollama,
// llama.cpp server, vLLM, LM Studio) through the `openai` SDK.
//
// - The SDK is imported on first use, not at start-up: it costs ~70 ms to load and
//   most commands (history, config, replay) never talk to a model.
// - One retry policy (./retry.ts); the SDK's own retries are off.
// - Everything thrown is a UserError from describeProviderError, naming the server
//   and model; cancellations satisfy isAbortError().
// - Ids are `openai:<model>` whatever the host. The embedder id is stored with the
//   vectors to detect a model change; putting host and port in it would make moving
//   Ollama from localhost to another machine (or a test server on a random port)
//   look like a different model and force a re-embed, while the model name is what
//   determines the vectors. The dimension is recorded separately and still catches
//   a same-named model of another size.

import type OpenAI from 'openai';
import { UserError } from '../util/errors.js';
import { count } from '../util/words.js';
import type { ChatMessage, TokenUsage } from '../domain/index.js';
import type { ChatChunk, ChatModel, ChatOptions, Embedder } from './types.js';
import { describeProviderError, type ProviderErrorContext, type ProviderOperation } from './describe-error.js';
import { DEFAULT_MAX_RETRIES, StreamInterruptedError, withRetry, type RetryPolicy } from './retry.js';
import { APIUserAbortError, OpenAIError } from 'openai/error';

export interface OpenAISettings {
  /** Server root including `/v1`. Default: OpenAI's API. */
  baseURL?: string;
  /** Sent as `Authorization: Bearer`. Optional for local servers (a placeholder is sent). */
  apiKey?: string;
  model: string;
  /** How long to wait for the server to start answering a request. Default 60 s. */
  timeoutMs?: number;
  /** Retries for 429, 5xx and dropped connections. Default 4. */
  maxRetries?: number;
  /** Embedding batches in flight at once. Default 2. */
  concurrency?: number;
  /**
   * Expected vector length. When unset it is learnt from the first response. Not sent
   * to the server (many OpenAI-compatible servers reject the `dimensions` parameter);
   * a server returning another length is an error.
   */
  dimensions?: number;
  /** Texts per embeddings request (config: embedding.batchSize). Default 64. */
  maxBatch?: number;
  /** Backoff tuning and test seams (injected sleep, clock, jitter). */
  retry?: Omit<RetryPolicy, 'maxRetries'>;
}

export const OPENAI_API_BASE_URL = 'https://api.openai.com/v1';
/** Sent when a local server needs no key, because the SDK refuses to run without one. */
export const PLACEHOLDER_API_KEY = 'ragline-no-key';
export const DEFAULT_TIMEOUT_MS = 60_000;
export const DEFAULT_CONCURRENCY = 2;
export const DEFAULT_MAX_BATCH = 64;

/**
 * An SDK client with ragline's defaults: explicit base URL and key (never read from the
 * SDK's own environment variables, so config resolution stays in src/config), SDK
 * retries off, our timeout. Throws a UserError when OpenAI's API is used without a key.
 */
export async function createOpenAIClient(settings: OpenAISettings): Promise<OpenAI> {
  const apiKey = resolveApiKey(settings);
  const { default: OpenAIClient } = await import('openai');
  return new OpenAIClient({
    baseURL: resolveBaseURL(settings),
    apiKey,
    maxRetries: 0,
    timeout: settings.timeoutMs ?? DEFAULT_TIMEOUT_MS,
  });
}

/** Model ids the server lists (GET /models), for `ragline doctor`. */
export async function listModels(settings: OpenAISettings, signal?: AbortSignal): Promise<string[]> {
  const provider = new Connection(settings, 'models');
  try {
    const client = await provider.client();
    const page = await withRetry(
      () => withChildSignal(signal, (requestSignal) => client.models.list({ signal: requestSignal })),
      provider.retryOptions(signal),
    );
    return page.data.map((model) => model.id);
  } catch (error) {
    throw provider.describe(error);
  }
}

export class OpenAIEmbedder implements Embedder {
  readonly id: string;
  readonly maxBatch: number;
  readonly #connection: Connection;
  readonly #concurrency: number;
  #dimensions: number;

  constructor(settings: OpenAISettings, client?: OpenAI | Promise<OpenAI>) {
    this.#connection = new Connection(settings, 'embed', client);
    this.id = `openai:${settings.model}`;
    this.maxBatch = positive(settings.maxBatch, DEFAULT_MAX_BATCH);
    this.#concurrency = positive(settings.concurrency, DEFAULT_CONCURRENCY);
    this.#dimensions = settings.dimensions ?? 0;
  }

  /** Vector length: the configured one, or 0 until the first response (see `resolveDimensions`). */
  get dimensions(): number {
    return this.#dimensions;
  }

  /** The vector length, embedding one short probe text if it is not known yet. */
  async resolveDimensions(signal?: AbortSignal): Promise<number> {
    if (this.#dimensions === 0) await this.embed(['dimension probe'], signal);
    return this.#dimensions;
  }

  /** Embeds in batches of `maxBatch`, `concurrency` batches at a time; vectors in input order, unit length. */
  async embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    if (texts.length === 0) return [];
    const batches: string[][] = [];
    for (let start = 0; start < texts.length; start += this.maxBatch) {
      batches.push(texts.slice(start, start + this.maxBatch));
    }

    // One failed batch stops the others instead of letting them run on against a broken server.
    const call = followSignal(signal);
    const results: Float32Array[][] = new Array(batches.length);
    let next = 0;
    const worker = async () => {
      while (next < batches.length && !call.signal.aborted) {
        const index = next++;
        results[index] = await this.#embedBatch(batches[index]!, call.signal);
      }
    };
    const outcomes = await Promise.allSettled(
      Array.from({ length: Math.min(this.#concurrency, batches.length) }, async () => {
        try {
          await worker();
        } catch (error) {
          call.abort();
          throw error;
        }
      }),
    );
    call.release();

    const failures = outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason] : []));
    if (signal?.aborted) throw this.#connection.describe(new APIUserAbortError());
    if (failures.length > 0) {
      // Prefer the failure that started it over the siblings we cancelled because of it.
      const cause = failures.find((failure) => !(failure instanceof APIUserAbortError)) ?? failures[0];
      throw this.#connection.describe(cause);
    }
    return results.flat();
  }

  async #embedBatch(batch: string[], signal: AbortSignal): Promise<Float32Array[]> {
    const client = await this.#connection.client();
    const { model } = this.#connection.settings;
    const response = await withRetry(
      () =>
        withChildSignal(signal, (requestSignal) =>
          client.embeddings.create({ model, input: batch, encoding_format: 'float' }, { signal: requestSignal }),
        ),
      this.#connection.retryOptions(signal),
    );
    if (response.data.length !== batch.length) {
      throw new UserError(
        `The server at ${this.#connection.baseURL} returned ${count(response.data.length, 'embedding')} for ${count(batch.length, 'text')} (model "${model}").`,
        { hint: 'The server may not support batched embedding input; try a smaller RAGLINE_EMBED_BATCH.' },
      );
    }
    const ordered = [...response.data].sort((a, b) => a.index - b.index);
    return ordered.map((item) => {
      this.#checkDimensions(item.embedding.length);
      return normalise(item.embedding);
    });
  }

  #checkDimensions(length: number): void {
    if (this.#dimensions === 0) this.#dimensions = length;
    if (length !== this.#dimensions) {
      const { model } = this.#connection.settings;
      throw new UserError(
        `Model "${model}" at ${this.#connection.baseURL} returned ${length}-dimensional vectors, but ${this.#dimensions} were expected.`,
        { hint: 'Check RAGLINE_EMBED_MODEL and RAGLINE_EMBED_DIMENSIONS with `ragline config show`.' },
      );
    }
  }
}

export class OpenAIChatModel implements ChatModel {
  readonly id: string;
  readonly #connection: Connection;

  /**
   * `operation` only changes how errors read ("answer stream" or "query rewrite stream"):
   * give the model used for rewriting `'rewrite'`.
   */
  constructor(settings: OpenAISettings & { operation?: 'chat' | 'rewrite' }, client?: OpenAI | Promise<OpenAI>) {
    this.#connection = new Connection(settings, settings.operation ?? 'chat', client);
    this.id = `openai:${settings.model}`;
  }

  /**
   * Streams tokens, then one usage chunk if the server reported usage. Retries (per the
   * retry policy) only until the first token has arrived; after that a dropped stream is
   * an error, never a silently shortened answer.
   */
  async *stream(messages: ChatMessage[], options: ChatOptions = {}): AsyncGenerator<ChatChunk> {
    const { signal } = options;
    const call = followSignal(signal);
    const state: StreamState = { finished: false };
    let opened: OpenedStream | undefined;
    try {
      const client = await this.#connection.client();
      opened = await withRetry(
        () => this.#open(client, messages, { ...options, signal: call.signal }),
        this.#connection.retryOptions(signal),
      );
      for (const chunk of opened.buffered) yield* tokensOf(chunk, state);
      while (true) {
        if (signal?.aborted) throw new APIUserAbortError();
        const next = await nextChunk(opened.iterator, signal);
        if (next.done) break;
        yield* tokensOf(next.value, state);
      }
      // The SDK ends a stream quietly when its request is aborted; make that visible.
      if (signal?.aborted) throw new APIUserAbortError();
      if (!state.finished) throw new StreamInterruptedError();
      if (state.usage) yield { type: 'usage', usage: state.usage };
    } catch (error) {
      throw this.#connection.describe(error);
    } finally {
      // Closes the HTTP response if the caller stopped early or something failed.
      await opened?.iterator.return?.(undefined).catch(() => {});
      call.release();
    }
  }

  /** Starts the request and reads up to the first token, so failures until then can be retried. */
  async #open(client: OpenAI, messages: ChatMessage[], options: ChatOptions): Promise<OpenedStream> {
    const stream = await client.chat.completions.create(
      {
        model: this.#connection.settings.model,
        messages,
        stream: true,
        stream_options: { include_usage: true },
        ...(options.maxTokens === undefined ? {} : { max_tokens: options.maxTokens }),
        ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
      },
      { signal: options.signal },
    );
    const iterator = stream[Symbol.asyncIterator]();
    const buffered: ChatCompletionChunk[] = [];
    try {
      while (true) {
        const next = await nextChunk(iterator, options.signal);
        if (next.done) {
          if (options.signal?.aborted) throw new APIUserAbortError();
          if (!buffered.some(isFinal)) throw new StreamInterruptedError();
          break;
        }
        buffered.push(next.value);
        if (next.value.choices.some((choice) => choice.delta?.content)) break;
      }
    } catch (error) {
      await iterator.return?.(undefined).catch(() => {});
      throw error;
    }
    return { iterator, buffered };
  }
}

type ChatCompletionChunk = OpenAI.Chat.Completions.ChatCompletionChunk;

interface OpenedStream {
  iterator: AsyncIterator<ChatCompletionChunk>;
  /** Chunks read while opening: up to and including the first one with text. */
  buffered: ChatCompletionChunk[];
}

interface StreamState {
  finished: boolean;
  usage?: TokenUsage;
}

function* tokensOf(chunk: ChatCompletionChunk, state: StreamState): Generator<ChatChunk> {
  if (chunk.usage) {
    state.usage = { promptTokens: chunk.usage.prompt_tokens, completionTokens: chunk.usage.completion_tokens };
  }
  const choice = chunk.choices.find((candidate) => candidate.index === 0) ?? chunk.choices[0];
  if (!choice) return;
  if (choice.delta?.content) yield { type: 'token', text: choice.delta.content };
  if (choice.finish_reason) state.finished = true;
}

function isFinal(chunk: ChatCompletionChunk): boolean {
  return chunk.choices.some((choice) => choice.finish_reason);
}

/**
 * Reads one chunk. A dropped connection surfaces from undici as a bare `TypeError:
 * terminated`; it becomes a StreamInterruptedError so it can be retried and described.
 */
async function nextChunk(
  iterator: AsyncIterator<ChatCompletionChunk>,
  signal: AbortSignal | undefined,
): Promise<IteratorResult<ChatCompletionChunk>> {
  try {
    return await iterator.next();
  } catch (error) {
    if (signal?.aborted) throw new APIUserAbortError();
    if (error instanceof OpenAIError || error instanceof SyntaxError) throw error;
    throw new StreamInterruptedError(undefined, { cause: error });
  }
}

/** What the embedder and chat model share: settings, the lazily created client, retries, errors. */
class Connection {
  readonly baseURL: string;
  #client: Promise<OpenAI> | undefined;

  constructor(
    readonly settings: OpenAISettings,
    readonly operation: ProviderOperation,
    client?: OpenAI | Promise<OpenAI>,
  ) {
    this.baseURL = resolveBaseURL(settings);
    if (client) this.#client = Promise.resolve(client);
  }

  client(): Promise<OpenAI> {
    this.#client ??= createOpenAIClient(this.settings);
    return this.#client;
  }

  retryOptions(signal: AbortSignal | undefined) {
    return { ...this.settings.retry, maxRetries: this.settings.maxRetries ?? DEFAULT_MAX_RETRIES, signal };
  }

  describe(error: unknown): UserError {
    const context: ProviderErrorContext = {
      baseURL: this.baseURL,
      model: this.settings.model,
      operation: this.operation,
      apiKey: this.settings.apiKey,
      timeoutMs: this.settings.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    };
    return describeProviderError(error, context);
  }
}

/**
 * A signal that follows `parent` until released. The SDK adds an abort listener to the
 * signal of every request and never removes it, so handing it the caller's long-lived
 * signal (one per REPL session, say) would pile up listeners and make Node print
 * MaxListenersExceededWarning after ten requests. Calls and requests get a child instead.
 */
function followSignal(parent: AbortSignal | undefined) {
  const controller = new AbortController();
  const forward = () => controller.abort(parent?.reason);
  if (parent?.aborted) forward();
  else parent?.addEventListener('abort', forward, { once: true });
  return {
    signal: controller.signal,
    abort: () => controller.abort(),
    release: () => parent?.removeEventListener('abort', forward),
  };
}

async function withChildSignal<T>(parent: AbortSignal | undefined, request: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const child = followSignal(parent);
  try {
    return await request(child.signal);
  } finally {
    child.release();
  }
}

function resolveBaseURL(settings: OpenAISettings): string {
  return settings.baseURL?.trim() || OPENAI_API_BASE_URL;
}

function resolveApiKey(settings: OpenAISettings): string {
  if (settings.apiKey) return settings.apiKey;
  const baseURL = resolveBaseURL(settings);
  if (baseURL.replace(/\/+$/, '') === OPENAI_API_BASE_URL) {
    throw new UserError(`No API key is set for ${OPENAI_API_BASE_URL}.`, {
      hint: 'Set OPENAI_API_KEY (or RAGLINE_API_KEY), or point RAGLINE_BASE_URL at a local server such as Ollama (http://localhost:11434/v1).',
    });
  }
  return PLACEHOLDER_API_KEY;
}

function positive(value: number | undefined, fallback: number): number {
  return value !== undefined && Number.isInteger(value) && value > 0 ? value : fallback;
}

/** Unit-length copy of `vector`; an all-zero vector stays zero rather than becoming NaN. */
function normalise(vector: ArrayLike<number>): Float32Array {
  let sumOfSquares = 0;
  for (let i = 0; i < vector.length; i++) sumOfSquares += vector[i]! * vector[i]!;
  const norm = Math.sqrt(sumOfSquares);
  const result = new Float32Array(vector.length);
  for (let i = 0; i < vector.length; i++) result[i] = norm === 0 ? 0 : vector[i]! / norm;
  return result;
}
