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
import type { ChatChunk, ChatModel, ChatOptions, Embedder, EmbeddingPrefixes, EmbedPurpose } from './types.js';
import { NO_PREFIXES } from './embedding-prefixes.js';
import { describeProviderError, type ProviderErrorContext, type ProviderOperation } from './describe-error.js';
import { DEFAULT_MAX_RETRIES, StreamInterruptedError, withRetry, type RetryPolicy } from './retry.js';
import { APIError, APIUserAbortError, OpenAIError } from 'openai/error';
import { noThinkingRequest, ThinkSplitter, thinksByDefault, type Piece } from './reasoning.js';
import { isOpenAIHost, modelInfo, type ModelInfo } from './server-info.js';
import { readEvents, ServerStreamError, StreamOverranError, StreamStalledError, type ServerSentEvent } from './sse.js';

export interface OpenAISettings {
  /** Server root including `/v1`. Default: OpenAI's API. */
  baseURL?: string;
  /** Sent as `Authorization: Bearer`. Optional for local servers (a placeholder is sent). */
  apiKey?: string;
  model: string;
  /** How long to wait for the server to start answering a request (headers, and a stream's first token). Default 60 s. */
  timeoutMs?: number;
  /** Longest silence between two pieces of a stream once it has started. Default 30 s. */
  idleMs?: number;
  /**
   * Longest a streamed reply may take, from the request to its last piece, retries
   * included. Default 5 min. The idle limit alone does not end a stream that trickles
   * (a piece now and then) or that sends only keep-alive comments.
   */
  totalMs?: number;
  /** How long a first request may take while a local server loads the model. Default 5 min. */
  loadTimeoutMs?: number;
  /** The model's context window in tokens, overriding what the server reports. */
  contextTokens?: number;
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
export const DEFAULT_IDLE_MS = 30_000;
export const DEFAULT_TOTAL_MS = 300_000;
export const DEFAULT_LOAD_TIMEOUT_MS = 300_000;
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
    fetch: fetchWithErrorBodies,
  });
}

/**
 * fetch, with error bodies put in the shape the SDK reads: OpenAI's is
 * `{"error": {"message": ...}}`, but older vLLM answers `{"object": "error", "message": ...}`
 * (vllm-project/vllm#12886) and the SDK would drop its words.
 */
async function fetchWithErrorBodies(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const response = await fetch(input, init);
  if (response.ok || !(response.headers.get('content-type') ?? '').includes('json')) return response;
  const text = await response.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    return new Response(text, { status: response.status, statusText: response.statusText, headers: response.headers });
  }
  const shaped = body && typeof body === 'object' && !body.error && typeof body.message === 'string' ? { error: body } : body;
  return new Response(JSON.stringify(shaped), { status: response.status, statusText: response.statusText, headers: response.headers });
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
  /** Put before each text by purpose (src/providers/embedding-prefixes.ts); none unless given. */
  readonly prefixes: EmbeddingPrefixes;
  readonly #connection: Connection;
  readonly #concurrency: number;
  #dimensions: number;

  constructor(settings: OpenAISettings & { prefixes?: EmbeddingPrefixes }, client?: OpenAI | Promise<OpenAI>) {
    this.#connection = new Connection(settings, 'embed', client);
    this.id = `openai:${settings.model}`;
    this.prefixes = { ...(settings.prefixes ?? NO_PREFIXES) };
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

  /** The server embeddings are sent to. */
  get baseURL(): string {
    return this.#connection.baseURL;
  }

  /**
   * Embeds in batches of `maxBatch`, `concurrency` batches at a time; vectors in input order,
   * unit length. Each text is sent with the prefix for `purpose` before it.
   */
  async embed(texts: string[], signal?: AbortSignal, purpose: EmbedPurpose = 'document'): Promise<Float32Array[]> {
    if (texts.length === 0) return [];
    const prefix = this.prefixes[purpose];
    if (prefix !== '') texts = texts.map((text) => prefix + text);
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
    if (length === 0) {
      // Ollama answered a model without embeddings with an empty list before it said so
      // (https://github.com/ollama/ollama/pull/9742); a server that does not pool a model's
      // output has no one vector per text to give.
      const { model } = this.#connection.settings;
      throw new UserError(`Model "${model}" at ${this.#connection.baseURL} returned empty vectors (0 dimensions).`, {
        hint: 'It may not be an embedding model: set RAGLINE_EMBED_MODEL to one (Ollama: `ollama pull nomic-embed-text`; llama-server: start it with --embeddings and a --pooling other than none), or use the offline embedder: RAGLINE_EMBED_PROVIDER=offline.',
      });
    }
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
  /** Set when the server rejected the no-thinking fields once; they are not sent again. */
  #plainRequests = false;
  #warmUp: Promise<void> | undefined;
  #warm = false;

  /**
   * `operation` only changes how errors read ("answer stream" or "query rewrite stream"):
   * give the model used for rewriting `'rewrite'`.
   */
  constructor(settings: OpenAISettings & { operation?: 'chat' | 'rewrite' }, client?: OpenAI | Promise<OpenAI>) {
    this.#connection = new Connection(settings, settings.operation ?? 'chat', client);
    this.id = `openai:${settings.model}`;
  }

  /**
   * Local servers (Ollama, llama.cpp, LM Studio, vLLM) load a model on its first
   * request, and Ollama aborts the load when that request's client gives up
   * (ollama/ollama#9625): a rewrite with a 15 s limit would abort a 20 s load and leave
   * the answer waiting for a reload. So when the server says the model is not loaded
   * (Ollama's /api/ps, LM Studio's model list), the first call sends a one-token request
   * with the load limit of its own and waits for it; later calls start at once.
   */
  ready(signal?: AbortSignal): Promise<void> {
    if (this.#connection.isOpenAI || this.#warm) return Promise.resolve();
    this.#warmUp ??= (async () => {
      const { settings } = this.#connection;
      const info = await modelInfo(this.#connection.baseURL, settings.apiKey, settings.model);
      if (info.loaded === false) await this.#load();
      // What the server said of a loaded model holds for its window too: not asked again. A model
      // loaded just now is asked again, as its window is known once it runs (Ollama's /api/ps).
      else this.#window ??= Promise.resolve(windowOf(info));
    })().finally(() => {
      this.#warm = true;
    });
    return signal ? untilAborted(this.#warmUp, signal) : this.#warmUp;
  }

  get loading(): boolean {
    return this.#warmUp !== undefined && !this.#warm;
  }

  #window: Promise<{ tokens: number; source: string } | undefined> | undefined;

  /** RAGLINE_CONTEXT_TOKENS, else what the server says (asked once). */
  contextWindow(signal?: AbortSignal): Promise<{ tokens: number; source: string } | undefined> {
    const { settings } = this.#connection;
    if (settings.contextTokens) return Promise.resolve({ tokens: settings.contextTokens, source: 'RAGLINE_CONTEXT_TOKENS' });
    this.#window ??= modelInfo(this.#connection.baseURL, settings.apiKey, settings.model, signal).then(windowOf);
    return this.#window;
  }

  async #load(): Promise<void> {
    const { settings } = this.#connection;
    try {
      const client = await this.#connection.client();
      const request = noThinkingRequest(false, settings.model);
      await client.chat.completions.create(
        { model: settings.model, messages: [{ role: 'user', content: 'Hi' }], max_tokens: 1, stream: false, ...request.fields } as OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming,
        { timeout: settings.loadTimeoutMs ?? DEFAULT_LOAD_TIMEOUT_MS, maxRetries: 0 },
      );
    } catch {
      // The call that follows meets the same failure and reports it.
    }
  }

  /** The server this model is served by (its base URL). */
  get baseURL(): string {
    return this.#connection.baseURL;
  }

  /**
   * Streams tokens (and reasoning, apart), then one usage chunk if the server reported
   * usage. Retries (per the retry policy) only until the first piece has arrived; after
   * that a dropped stream is an error, never a silently shortened answer. A reply with
   * no text at all is an error too, never an empty answer.
   */
  async *stream(messages: ChatMessage[], options: ChatOptions = {}): AsyncGenerator<ChatChunk> {
    const { signal } = options;
    const call = followSignal(signal);
    // The whole reply's limit: it aborts the request as a cancellation would, and is reported as itself.
    const totalMs = this.#connection.settings.totalMs ?? DEFAULT_TOTAL_MS;
    let overran = false;
    const deadline = setTimeout(() => {
      overran = true;
      call.abort();
    }, totalMs);
    const state: StreamState = {
      finished: false,
      content: 0,
      reasoning: 0,
      splitter: new ThinkSplitter(thinksByDefault(this.#connection.settings.model)),
    };
    let opened: OpenedStream | undefined;
    try {
      const client = await this.#connection.client();
      opened = await withRetry(
        () => this.#openWithFallback(client, messages, { ...options, signal: call.signal }),
        // The call's signal: the total limit ends a wait between retries too.
        this.#connection.retryOptions(call.signal),
      );
      for (const event of opened.buffered) yield* piecesOf(event, state);
      while (true) {
        if (signal?.aborted) throw new APIUserAbortError();
        const next = await nextEvent(opened.iterator, signal);
        if (next.done) break;
        yield* piecesOf(next.value, state);
      }
      if (signal?.aborted) throw new APIUserAbortError();
      yield* flush(state);
      if (!state.finished) throw state.content > 0 || state.reasoning > 0 ? new StreamInterruptedError() : new EmptyReplyError(undefined);
      if (state.content === 0) {
        throw state.reasoning > 0 && state.finishReason === 'length'
          ? new ReasoningExhaustedError(options.maxTokens)
          : new EmptyReplyError(state.finishReason, state.reasoning > 0);
      }
      if (state.usage) yield { type: 'usage', usage: state.usage };
      if (state.finishReason) yield { type: 'finish', reason: state.finishReason };
    } catch (error) {
      if (overran && !signal?.aborted) throw this.#connection.describe(new StreamOverranError(totalMs));
      throw await this.#connection.describeWithModels(error);
    } finally {
      clearTimeout(deadline);
      // Closes the HTTP response if the caller stopped early or something failed.
      await opened?.iterator.return?.(undefined).catch(() => {});
      call.release();
    }
  }

  /** Opens the stream; a server that rejects the no-thinking fields is asked again without them. */
  async #openWithFallback(client: OpenAI, messages: ChatMessage[], options: ChatOptions): Promise<OpenedStream> {
    const extras = options.thinking === false && !this.#plainRequests;
    try {
      return await this.#open(client, messages, options, extras);
    } catch (error) {
      if (extras && error instanceof APIError && error.status === 400 && REJECTED_FIELD.test(serverText(error))) {
        this.#plainRequests = true;
        return this.#open(client, messages, options, false);
      }
      throw error;
    }
  }

  /** Starts the request and reads up to the first piece of text, so failures until then can be retried. */
  async #open(client: OpenAI, messages: ChatMessage[], options: ChatOptions, noThinking: boolean): Promise<OpenedStream> {
    const { settings } = this.#connection;
    const request = noThinking ? noThinkingRequest(this.#connection.isOpenAI, settings.model) : { fields: {} };
    const sent = request.promptSuffix ? withSuffix(messages, request.promptSuffix) : messages;
    const started = performance.now();
    const body = {
      model: settings.model,
      messages: sent,
      stream: true,
      stream_options: { include_usage: true },
      ...(options.maxTokens === undefined ? {} : { max_tokens: options.maxTokens }),
      ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
      ...request.fields,
    } as OpenAI.Chat.Completions.ChatCompletionCreateParamsStreaming;
    const response = await client.chat.completions.create(body, { signal: options.signal }).asResponse();
    if (!response.body) throw new EmptyReplyError(undefined);
    const timeoutMs = settings.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const iterator = readEvents(response.body, {
      // The first token may take as long as the request was allowed, counted from its start.
      firstByteMs: Math.max(1, timeoutMs - (performance.now() - started)),
      idleMs: settings.idleMs ?? DEFAULT_IDLE_MS,
      signal: options.signal,
    });
    const buffered: ServerSentEvent[] = [];
    try {
      while (true) {
        const next = await nextEvent(iterator, options.signal);
        if (next.done) break;
        buffered.push(next.value);
        if (next.value.error !== undefined || hasText(next.value) || next.value.data === '[DONE]') break;
      }
    } catch (error) {
      await iterator.return?.(undefined).catch(() => {});
      throw error;
    }
    return { iterator, buffered };
  }
}

function windowOf(info: ModelInfo): { tokens: number; source: string } | undefined {
  return info.contextTokens ? { tokens: info.contextTokens, source: info.contextSource ?? info.kind } : undefined;
}

/** A 400 that names a field we sent only to switch thinking off. */
const REJECTED_FIELD = /chat_template_kwargs|enable_thinking|reasoning_effort|\bthink\b|unrecogni[sz]ed|unknown (?:field|parameter|argument)|extra (?:fields|inputs)/i;

/** The model reasoned until the token limit and never answered. */
export class ReasoningExhaustedError extends Error {
  constructor(readonly maxTokens: number | undefined) {
    super(`The model was still reasoning when it reached the ${maxTokens ?? 'output'}-token limit.`);
    this.name = 'ReasoningExhaustedError';
  }
}

/** The server answered 200 and finished without any text. */
export class EmptyReplyError extends Error {
  constructor(
    readonly finishReason: string | undefined,
    readonly onlyReasoning = false,
  ) {
    super(onlyReasoning ? 'The model reasoned but gave no answer.' : 'The server returned an empty reply.');
    this.name = 'EmptyReplyError';
  }
}

interface OpenedStream {
  iterator: AsyncGenerator<ServerSentEvent>;
  /** Events read while opening: up to and including the first one with text. */
  buffered: ServerSentEvent[];
}

interface StreamState {
  finished: boolean;
  finishReason?: string;
  usage?: TokenUsage;
  /** Characters of answer and of reasoning passed on. */
  content: number;
  reasoning: number;
  splitter: ThinkSplitter;
}

interface Delta {
  content?: string | null;
  reasoning_content?: string | null;
  reasoning?: string | null;
}

function parseEvent(event: ServerSentEvent): any {
  if (event.error !== undefined) throw streamError(event.error);
  if (event.data === undefined || event.data === '[DONE]') return undefined;
  let parsed: any;
  try {
    parsed = JSON.parse(event.data);
  } catch {
    throw new ServerStreamError(`unreadable event: ${event.data.slice(0, 200)}`);
  }
  if (event.event === 'error' || (parsed && typeof parsed === 'object' && parsed.error)) throw streamError(parsed.error ?? parsed);
  return parsed;
}

function streamError(raw: unknown): ServerStreamError {
  let body = raw;
  if (typeof raw === 'string') {
    try {
      body = JSON.parse(raw);
    } catch {
      body = raw;
    }
  }
  const inner = body && typeof body === 'object' && 'error' in body ? (body as { error: unknown }).error : body;
  const message =
    typeof inner === 'string' ? inner : inner && typeof inner === 'object' && typeof (inner as any).message === 'string' ? (inner as any).message : JSON.stringify(inner);
  return new ServerStreamError(message, body);
}

function hasText(event: ServerSentEvent): boolean {
  if (event.data === undefined || event.data === '[DONE]') return false;
  try {
    const delta: Delta | undefined = JSON.parse(event.data)?.choices?.[0]?.delta;
    return Boolean(delta?.content || delta?.reasoning_content || delta?.reasoning);
  } catch {
    return true; // let parseEvent report it
  }
}

function* piecesOf(event: ServerSentEvent, state: StreamState): Generator<ChatChunk> {
  if (event.data === '[DONE]') {
    state.finished = true;
    return;
  }
  const chunk = parseEvent(event);
  if (!chunk) return;
  if (chunk.usage && typeof chunk.usage.prompt_tokens === 'number') {
    state.usage = { promptTokens: chunk.usage.prompt_tokens, completionTokens: chunk.usage.completion_tokens ?? 0 };
  }
  const choices: any[] = Array.isArray(chunk.choices) ? chunk.choices : [];
  const choice = choices.find((candidate) => candidate.index === 0) ?? choices[0];
  if (!choice) return;
  const delta: Delta = choice.delta ?? {};
  const thought = delta.reasoning_content || delta.reasoning;
  if (thought) {
    state.reasoning += thought.length;
    yield { type: 'reasoning', text: thought };
  }
  if (delta.content) yield* fromSplitter(state.splitter.push(delta.content), state);
  if (choice.finish_reason) {
    state.finished = true;
    state.finishReason = choice.finish_reason;
  }
}

function* flush(state: StreamState): Generator<ChatChunk> {
  yield* fromSplitter(state.splitter.end(), state);
}

function* fromSplitter(pieces: Piece[], state: StreamState): Generator<ChatChunk> {
  for (const piece of pieces) {
    if (piece.kind === 'content') {
      state.content += piece.text.length;
      yield { type: 'token', text: piece.text };
    } else if (piece.kind === 'reasoning') {
      state.reasoning += piece.text.length;
      yield { type: 'reasoning', text: piece.text };
    } else {
      state.content -= piece.text.length;
      yield { type: 'retract', text: piece.text };
    }
  }
}

function withSuffix(messages: ChatMessage[], suffix: string): ChatMessage[] {
  const last = messages.length - 1;
  return messages.map((message, index) => (index === last && message.role === 'user' ? { ...message, content: `${message.content}${suffix}` } : message));
}

function serverText(error: APIError): string {
  const body = error.error as { message?: unknown } | undefined;
  return `${typeof body?.message === 'string' ? body.message : ''} ${error.message}`;
}

/**
 * Reads one event. A dropped connection surfaces from undici as a bare `TypeError:
 * terminated`; it becomes a StreamInterruptedError so it can be retried and described.
 */
async function nextEvent(iterator: AsyncGenerator<ServerSentEvent>, signal: AbortSignal | undefined): Promise<IteratorResult<ServerSentEvent>> {
  try {
    return await iterator.next();
  } catch (error) {
    if (signal?.aborted) throw new APIUserAbortError();
    if (error instanceof OpenAIError || error instanceof StreamStalledError || error instanceof ServerStreamError) throw error;
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

  /** Whether this is OpenAI's own API (which rejects fields other servers accept). */
  get isOpenAI(): boolean {
    return isOpenAIHost(this.baseURL);
  }

  client(): Promise<OpenAI> {
    this.#client ??= createOpenAIClient(this.settings);
    return this.#client;
  }

  retryOptions(signal: AbortSignal | undefined) {
    return { ...this.settings.retry, maxRetries: this.settings.maxRetries ?? DEFAULT_MAX_RETRIES, signal };
  }

  /** As `describe`, and for a model the server does not have, the models it has. */
  async describeWithModels(error: unknown): Promise<UserError> {
    const described = this.describe(error);
    if (!(error instanceof APIError) || error.status !== 404 || !/^Model ".*" was not found/.test(described.message)) return described;
    const info = await modelInfo(this.baseURL, this.settings.apiKey, this.settings.model).catch(() => undefined);
    const models = info?.models?.filter(Boolean) ?? [];
    if (models.length === 0) return described;
    const shown = models.length > 12 ? `${models.slice(0, 12).join(', ')} and ${models.length - 12} more` : models.join(', ');
    return new UserError(`${described.message} The server has: ${shown}.`, { hint: described.hint, exitCode: described.exitCode, cause: error });
  }

  describe(error: unknown): UserError {
    const context: ProviderErrorContext = {
      baseURL: this.baseURL,
      model: this.settings.model,
      operation: this.operation,
      apiKey: this.settings.apiKey,
      timeoutMs: this.settings.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      idleMs: this.settings.idleMs ?? DEFAULT_IDLE_MS,
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

/** `promise`, or a rejection as soon as `signal` aborts (the promise itself runs on). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new APIUserAbortError());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new APIUserAbortError());
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
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
