// A real OpenAI-compatible HTTP server on 127.0.0.1 for tests: chat completions
// (plain JSON or server-sent events), embeddings and the model list, with queued
// replies, queued failures and a log of every request received. Provider tests
// talk to it through the real `openai` SDK, so they exercise the same code path
// as a user pointing ragline at Ollama or llama.cpp, without touching the network.

import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Route = 'chat' | 'embeddings' | 'models';

export interface RecordedRequest {
  method: string;
  /** Path including the query string, e.g. `/v1/chat/completions`. */
  path: string;
  /** Which endpoint it hit, or `undefined` for an unknown path. */
  route: Route | undefined;
  /** Lower-cased header names, as node:http gives them (`headers.authorization`). */
  headers: IncomingHttpHeaders;
  /** Parsed JSON body, or `undefined` when there was none. */
  body: any;
  /** When it arrived (performance.now(), this process's clock). */
  at: number;
}

export interface ChatReply {
  /** The whole answer; defaults to `chunks.join('')`. */
  content?: string;
  /** How the answer is split into streamed deltas; defaults to words with their trailing space. */
  chunks?: string[];
  /** Reported usage; defaults to the prompt's characters / 4 and the number of chunks. */
  usage?: { prompt_tokens: number; completion_tokens: number };
  /** Pause before each streamed content chunk, e.g. to abort mid-answer. */
  chunkDelayMs?: number;
  /**
   * Reasoning streamed before the content, in this delta field: `reasoning_content`
   * (llama.cpp --reasoning-format deepseek, ggml-org/llama.cpp#11607; vLLM's reasoning
   * parsers; DeepSeek's API) or `reasoning` (Ollama's /v1, ollama/ollama#15288; vLLM since
   * vllm-project/vllm#27755; LM Studio, lmstudio-ai/lmstudio-bug-tracker#894).
   */
  reasoning?: { field: 'reasoning_content' | 'reasoning'; chunks: string[] };
  /** The finish reason sent at the end. Default `stop`. */
  finishReason?: string;
  /** After this many content chunks the stream goes silent with the connection open (a stalled stream). */
  stallAfterChunks?: number;
  /**
   * Where the stream would stall (or after its chunks), it trickles instead, until the client
   * gives up: a word every `everyMs` (a model crawling on an overloaded machine), or only
   * `: keep-alive` comment lines (OpenRouter sends ": OPENROUTER PROCESSING" comments while a
   * model is busy, https://openrouter.ai/docs/api-reference/streaming; the SSE standard lets any
   * server send them). Either way no silence is ever as long as an idle limit.
   */
  trickle?: { everyMs: number; as: 'token' | 'keep-alive' };
}

export interface FailureSpec {
  /** Which endpoint this failure applies to. Default `'any'`. */
  route?: Route | 'any';
  /** HTTP status to answer with. Default 500. Ignored when `cutStreamAfterChunks` is set. */
  status?: number;
  /** Response body: an object is sent as JSON, a string as text. Default: an OpenAI-style error. */
  body?: unknown;
  /** Extra response headers, e.g. `{ 'retry-after': '2' }`. */
  headers?: Record<string, string>;
  /** Wait this long before answering (or cutting), e.g. to trigger a client timeout. */
  delayMs?: number;
  /**
   * Start a successful stream, send this many content chunks of the next reply, then
   * destroy the connection without `finish_reason` or `[DONE]`. A request that did not
   * ask to stream has its connection destroyed before any response.
   */
  cutStreamAfterChunks?: number;
  /** How many matching requests fail this way. Default 1. */
  count?: number;
  /**
   * Fail inside a stream that started with HTTP 200, as servers report errors there:
   * - `error-line`: an `error: {...}` SSE field line (older llama.cpp, ggml-org/llama.cpp#14566);
   * - `data-error`: `data: {"error": {...}}` (LM Studio, lmstudio-ai/lmstudio-bug-tracker#2322);
   * - `empty`: headers, then `data: [DONE]` and nothing else (LM Studio,
   *   lmstudio-ai/lmstudio-bug-tracker#2339).
   * `body` is the error object sent.
   */
  inStream?: 'error-line' | 'data-error' | 'empty';
}

/**
 * Which server's own endpoints to answer besides the OpenAI API, as they document them:
 * - `ollama`: GET /api/version, GET /api/tags, POST /api/show, GET /api/ps
 *   (ollama/ollama#11331 added `context_length` to /api/ps);
 * - `llama.cpp`: GET /props with `default_generation_settings.n_ctx` (ggml-org/llama.cpp#5307);
 * - `vllm`: `max_model_len` and `owned_by: "vllm"` in GET /v1/models;
 * - `lmstudio`: GET /api/v0/models with `state`, `loaded_context_length`, `max_context_length`.
 */
export type Flavor = 'openai' | 'ollama' | 'llama.cpp' | 'vllm' | 'lmstudio';

export interface StartOptions {
  /** Length of the default hash vectors. Default 8. */
  embeddingDimensions?: number;
  /**
   * Refuse an embeddings request holding a text longer than this many characters, as
   * llama-server refuses an input longer than its physical batch (-b/-ub, 512 tokens by
   * default) with LLAMA_CPP_INPUT_TOO_LARGE: "The input for embeddings must fit inside the
   * physical batch size. If it does not, we now return an error" (ggml-org/llama.cpp#7389,
   * https://github.com/ggml-org/llama.cpp/pull/7389; users meet it as ggml-org/llama.cpp#12295).
   */
  maxInputChars?: number;
  /** How a text over maxInputChars is refused: llama-server's 500 (default) or vLLM's 400 (VLLM_INPUT_TOO_LONG). */
  tooLarge?: 'llama.cpp' | 'vllm';
  /** Ids listed by GET /v1/models. */
  models?: string[];
  /** Default: a bare OpenAI-compatible server with no endpoints of its own. */
  flavor?: Flavor;
  /** The context window the server reports (and, with `truncate`, enforces). */
  contextTokens?: number;
  /**
   * Ollama cuts a prompt longer than its context silently, keeping its end, and counts
   * only what it kept in `usage.prompt_tokens` ("truncating input prompt",
   * ollama/ollama#10368). Prompts are measured at four characters a token.
   */
  truncate?: boolean;
  /**
   * A model that is not loaded yet takes this long to answer its first request; a client
   * that disconnects during the load aborts it, and the next request starts it again
   * ("client connection closed before server finished loading, aborting load",
   * ollama/ollama#9625). Models in `loaded` start loaded.
   */
  loadMs?: number;
  loaded?: string[];
  /**
   * `loose`: server-sent events as the standard allows and some servers and proxies
   * send them: CRLF line ends, `data:` without a space, `: comment` keep-alive lines
   * (WHATWG HTML, "Parsing an event stream"; OpenRouter's ": OPENROUTER PROCESSING").
   */
  sseDialect?: 'strict' | 'loose';
}

export interface FakeOpenAI {
  /** e.g. `http://127.0.0.1:54321/v1` */
  readonly baseURL: string;
  /** Every request received, in arrival order. */
  readonly requests: RecordedRequest[];
  /** Requests that hit one endpoint. */
  requestsTo(route: Route): RecordedRequest[];
  /** Serves `reply` for the next chat completion. Failures never consume queued replies. */
  queueChat(reply: string | ChatReply): void;
  /** Answers chat completions when nothing is queued. Default: `Echo: <last user message>`. */
  onChat(responder: (body: any) => string | ChatReply): void;
  /** Makes the next `count` matching requests fail. Failures are matched in the order queued. */
  queueFailure(failure: FailureSpec): void;
  /** Replaces the embedding function (one vector per input text). */
  onEmbeddings(handler: (input: string[], body: any) => number[][]): void;
  setModels(ids: string[]): void;
  /** Model loads started, aborted by a client that left, and finished (StartOptions.loadMs). */
  readonly loads: { started: number; aborted: number; finished: number };
  close(): Promise<void>;
}

/**
 * llama-server started without `--embeddings`, answering POST /v1/embeddings with 501:
 * `{"error":{"code":501,"message":"This server does not support embeddings. Start it with
 * `--embeddings`","type":"not_supported_error"}}` (as quoted in
 * https://github.com/unslothai/unsloth/issues/8535; the line is the server's `res_error(...,
 * ERROR_TYPE_NOT_SUPPORTED)`). Use with `queueFailure({ route: 'embeddings', status: 501, body })`.
 */
export const LLAMA_CPP_NO_EMBEDDINGS = {
  error: { code: 501, message: 'This server does not support embeddings. Start it with `--embeddings`', type: 'not_supported_error' },
};

/**
 * Ollama asked for embeddings from a chat model (gemma3, llama3): HTTP 500 with
 * "this model does not support embeddings" (ollama/ollama#9739,
 * https://github.com/ollama/ollama/issues/9739; the 500 and the `/v1` body shape as seen in
 * https://github.com/chunkhound/chunkhound/issues/41).
 */
export const OLLAMA_NO_EMBEDDINGS = {
  error: { message: 'this model does not support embeddings', type: 'api_error', param: null, code: null },
};

/**
 * llama-server's answer (500) to an embedding input longer than its physical batch
 * (https://github.com/ggml-org/llama.cpp/pull/7389, #12295; the 500 as logged in
 * https://github.com/gpustack/gpustack/issues/472).
 */
export const LLAMA_CPP_INPUT_TOO_LARGE = {
  error: { code: 500, message: 'input is too large to process. increase the physical batch size', type: 'server_error' },
};

/**
 * vLLM's answer (400) to an embedding input longer than the model's context: "ValueError: This
 * model's maximum context length is 512 tokens. However, you requested 1451 tokens in the input
 * for embedding generation. Please reduce the length of the input." (vllm-project/vllm#19798,
 * https://github.com/vllm-project/vllm/issues/19798), in vLLM's error body
 * (https://github.com/vllm-project/vllm/issues/12886).
 */
export const VLLM_INPUT_TOO_LONG = {
  object: 'error',
  message: "This model's maximum context length is 512 tokens. However, you requested 1451 tokens in the input for embedding generation. Please reduce the length of the input.",
  type: 'BadRequestError',
  param: null,
  code: 400,
};

/** A deterministic, unnormalised vector for `text`: FNV-1a hashes of `<dimension>:<text>`. */
export function hashVector(text: string, dimensions: number): number[] {
  const vector: number[] = [];
  for (let dimension = 0; dimension < dimensions; dimension++) {
    let hash = 0x811c9dc5;
    for (const char of `${dimension}:${text}`) {
      hash ^= char.codePointAt(0)!;
      hash = Math.imul(hash, 0x01000193) >>> 0;
    }
    vector.push(hash / 0xffffffff - 0.5);
  }
  return vector;
}

export async function startOpenAIServer(options: StartOptions = {}): Promise<FakeOpenAI> {
  const dimensions = options.embeddingDimensions ?? 8;
  const requests: RecordedRequest[] = [];
  const chatQueue: ChatReply[] = [];
  const failures: Array<FailureSpec & { remaining: number }> = [];
  const timers = new Set<NodeJS.Timeout>();
  let models = options.models ?? ['fake-chat-model', 'fake-embed-model'];
  let chatResponder = (body: any): string | ChatReply => {
    const lastUser = [...(body?.messages ?? [])].reverse().find((message: any) => message.role === 'user');
    return `Echo: ${lastUser?.content ?? ''}`;
  };
  let embed = (input: string[], _body: any): number[][] => input.map((text) => hashVector(text, dimensions));
  const flavor = options.flavor ?? 'openai';
  const loaded = new Set(options.loaded ?? []);
  const loads = { started: 0, aborted: 0, finished: 0 };

  /** Waits out a model's load (see StartOptions.loadMs); false when the client left first, which aborts it. */
  async function load(model: string, res: ServerResponse): Promise<boolean> {
    if (!options.loadMs || loaded.has(model)) return true;
    loads.started++;
    const until = Date.now() + options.loadMs;
    while (Date.now() < until) {
      if (res.destroyed || res.socket?.destroyed) {
        loads.aborted++;
        return false;
      }
      await sleep(Math.min(50, until - Date.now()));
    }
    loaded.add(model);
    loads.finished++;
    return true;
  }

  /** The server's own endpoints (Flavor), or undefined when this path is not one of them. */
  function own(method: string, path: string, body: any): unknown | undefined {
    const context = options.contextTokens;
    if (flavor === 'ollama') {
      if (method === 'GET' && path === '/api/version') return { version: '0.12.6' };
      if (method === 'GET' && path === '/api/tags') return { models: models.map((name) => ({ name, model: name })) };
      if (method === 'POST' && path === '/api/show') {
        return models.includes(body?.model) ? { parameters: context ? `num_ctx                        ${context}` : '', model_info: { 'general.architecture': 'qwen3', 'qwen3.context_length': 40960 } } : undefined;
      }
      if (method === 'GET' && path === '/api/ps') return { models: [...loaded].map((name) => ({ name, model: name, ...(context ? { context_length: context } : {}) })) };
    }
    if (flavor === 'llama.cpp' && method === 'GET' && path === '/props') return { default_generation_settings: { n_ctx: context ?? 4096 }, total_slots: 1 };
    if (flavor === 'lmstudio' && method === 'GET' && path === '/api/v0/models') {
      return { object: 'list', data: models.map((id) => ({ id, object: 'model', type: 'llm', state: loaded.has(id) ? 'loaded' : 'not-loaded', max_context_length: 32768, ...(loaded.has(id) && context ? { loaded_context_length: context } : {}) })) };
    }
    return undefined;
  }

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, ms);
      timers.add(timer);
    });

  function takeFailure(route: Route | undefined): FailureSpec | undefined {
    const index = failures.findIndex((failure) => failure.route === 'any' || failure.route === route);
    if (index === -1) return undefined;
    const failure = failures[index]!;
    if (--failure.remaining === 0) failures.splice(index, 1);
    return failure;
  }

  function nextChatReply(body: any, consume: boolean): Required<Pick<ChatReply, 'content' | 'chunks' | 'usage'>> & ChatReply {
    const queued = consume ? chatQueue.shift() : chatQueue[0];
    const reply = queued ?? normaliseReply(chatResponder(body));
    const chunks = reply.chunks ?? (reply.content ?? '').match(/\S+\s*|\s+/g) ?? [];
    const content = reply.content ?? chunks.join('');
    // About four characters a token, as real tokenizers count English prose.
    const promptChars = (body?.messages ?? []).reduce((sum: number, message: any) => sum + String(message.content ?? '').length, 0);
    const promptTokens = Math.ceil(promptChars / 4);
    const counted = options.truncate && options.contextTokens ? Math.min(promptTokens, options.contextTokens) : promptTokens;
    const usage = reply.usage ?? { prompt_tokens: counted, completion_tokens: chunks.length };
    return { ...reply, content, chunks, usage };
  }

  async function handle(route: Route | undefined, body: any, res: ServerResponse, method = 'POST', path = ''): Promise<void> {
    if (route === undefined) {
      const answer = own(method, path, body);
      if (answer !== undefined) return sendJSON(res, 200, answer);
    }
    if ((route === 'chat' || route === 'embeddings') && !(await load(String(body?.model), res))) return;
    const failure = takeFailure(route);
    if (failure?.delayMs) await sleep(failure.delayMs);
    if (res.destroyed) return;

    if (failure?.cutStreamAfterChunks !== undefined) {
      if (route !== 'chat' || body?.stream !== true) {
        res.socket?.destroy();
        return;
      }
      return streamChat(body, nextChatReply(body, false), res, failure.cutStreamAfterChunks);
    }
    if (failure?.inStream) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const error = failure.body ?? { message: 'failure', type: 'server_error' };
      if (failure.inStream === 'error-line') res.end(`error: ${JSON.stringify(error)}\n\n`);
      else if (failure.inStream === 'data-error') res.end(`data: ${JSON.stringify({ error })}\n\n`);
      else res.end('data: [DONE]\n\n');
      return;
    }
    if (failure) return sendFailure(failure, body, res);

    switch (route) {
      case 'chat': {
        const reply = nextChatReply(body, true);
        if (body?.stream === true) return streamChat(body, reply, res);
        return sendJSON(res, 200, {
          id: 'chatcmpl-fake',
          object: 'chat.completion',
          created: 0,
          model: body?.model,
          choices: [{ index: 0, message: { role: 'assistant', content: reply.content }, finish_reason: 'stop' }],
          usage: withTotal(reply.usage),
        });
      }
      case 'embeddings': {
        const input: string[] = typeof body?.input === 'string' ? [body.input] : body?.input ?? [];
        if (options.maxInputChars !== undefined && input.some((text) => text.length > options.maxInputChars!)) {
          return options.tooLarge === 'vllm' ? sendJSON(res, 400, VLLM_INPUT_TOO_LONG) : sendJSON(res, 500, LLAMA_CPP_INPUT_TOO_LARGE);
        }
        const vectors = embed(input, body);
        return sendJSON(res, 200, {
          object: 'list',
          model: body?.model,
          data: vectors.map((vector, index) => ({
            object: 'embedding',
            index,
            embedding:
              body?.encoding_format === 'base64'
                ? Buffer.from(new Float32Array(vector).buffer).toString('base64')
                : vector,
          })),
          usage: { prompt_tokens: input.length, total_tokens: input.length },
        });
      }
      case 'models':
        return sendJSON(res, 200, {
          object: 'list',
          data: models.map((id) =>
            flavor === 'vllm'
              ? { id, object: 'model', created: 0, owned_by: 'vllm', max_model_len: options.contextTokens ?? 4096 }
              : { id, object: 'model', created: 0, owned_by: 'ragline-test' },
          ),
        });
      default:
        return sendJSON(res, 404, { error: { message: 'Unknown path', type: 'invalid_request_error' } });
    }
  }

  async function streamChat(body: any, reply: ReturnType<typeof nextChatReply>, res: ServerResponse, cutAfter?: number) {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const event = (payload: string) =>
      options.sseDialect === 'loose' ? `: keep-alive\r\ndata:${payload}\r\n\r\n` : `data: ${payload}\n\n`;
    const chunk = (choices: unknown[], extra: object = {}) =>
      event(JSON.stringify({ id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 0, model: body.model, choices, ...extra }));

    res.write(chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]));
    for (const text of reply.reasoning?.chunks ?? []) {
      if (reply.chunkDelayMs) await sleep(reply.chunkDelayMs);
      if (res.destroyed) return;
      res.write(chunk([{ index: 0, delta: { [reply.reasoning!.field]: text }, finish_reason: null }]));
    }
    const trickle = async () => {
      const every = reply.trickle!.everyMs;
      while (!res.destroyed && !res.socket?.destroyed) {
        await sleep(every);
        if (res.destroyed || res.socket?.destroyed) return;
        res.write(reply.trickle!.as === 'token' ? chunk([{ index: 0, delta: { content: 'and ' }, finish_reason: null }]) : ': keep-alive\n\n');
      }
    };
    for (const [index, text] of reply.chunks.entries()) {
      if (reply.stallAfterChunks !== undefined && index >= reply.stallAfterChunks) {
        if (reply.trickle) return trickle();
        // Silent with the connection open, until the client gives up.
        while (!res.destroyed && !res.socket?.destroyed) await sleep(50);
        return;
      }
      if (cutAfter !== undefined && index >= cutAfter) break;
      if (reply.chunkDelayMs) await sleep(reply.chunkDelayMs);
      if (res.destroyed) return;
      res.write(chunk([{ index: 0, delta: { content: text }, finish_reason: null }]));
    }
    if (reply.trickle) return trickle();
    if (cutAfter !== undefined) {
      // Let the chunks leave before the connection drops, so the client sees them first.
      await sleep(20);
      res.socket?.destroy();
      return;
    }
    res.write(chunk([{ index: 0, delta: {}, finish_reason: reply.finishReason ?? 'stop' }]));
    if (body.stream_options?.include_usage) res.write(chunk([], { usage: withTotal(reply.usage) }));
    res.end(event('[DONE]'));
  }

  function sendFailure(failure: FailureSpec, body: any, res: ServerResponse) {
    const status = failure.status ?? 500;
    const payload = failure.body ?? { error: defaultError(status, body?.model) };
    const text = typeof payload === 'string' ? payload : JSON.stringify(payload);
    res.writeHead(status, {
      'content-type': typeof payload === 'string' ? 'text/plain' : 'application/json',
      ...failure.headers,
    });
    res.end(text);
  }

  const server = createServer((req, res) => {
    const at = performance.now();
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: any;
      try {
        body = raw ? JSON.parse(raw) : undefined;
      } catch {
        body = raw;
      }
      const path = req.url ?? '/';
      const route = routeOf(req.method ?? 'GET', path.split('?')[0]!);
      requests.push({ method: req.method ?? 'GET', path, route, headers: req.headers, body, at });
      handle(route, body, res, req.method ?? 'GET', path.split('?')[0]!).catch((error: unknown) => {
        if (!res.headersSent) sendJSON(res, 500, { error: { message: String(error) } });
        else res.destroy();
      });
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    requestsTo: (route) => requests.filter((request) => request.route === route),
    queueChat: (reply) => void chatQueue.push(normaliseReply(reply)),
    onChat: (responder) => void (chatResponder = responder),
    queueFailure: (failure) =>
      void failures.push({ ...failure, route: failure.route ?? 'any', remaining: failure.count ?? 1 }),
    onEmbeddings: (handler) => void (embed = handler),
    setModels: (ids) => void (models = ids),
    loads,
    close: () =>
      new Promise<void>((resolve, reject) => {
        for (const timer of timers) clearTimeout(timer);
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

function routeOf(method: string, path: string): Route | undefined {
  if (method === 'POST' && path === '/v1/chat/completions') return 'chat';
  if (method === 'POST' && path === '/v1/embeddings') return 'embeddings';
  if (method === 'GET' && path === '/v1/models') return 'models';
  return undefined;
}

function normaliseReply(reply: string | ChatReply): ChatReply {
  return typeof reply === 'string' ? { content: reply } : reply;
}

function withTotal(usage: { prompt_tokens: number; completion_tokens: number }) {
  return { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens };
}

function defaultError(status: number, model: unknown) {
  if (status === 401) return { message: 'Incorrect API key provided.', type: 'invalid_request_error', code: 'invalid_api_key' };
  if (status === 404) return { message: `The model \`${model}\` does not exist.`, type: 'invalid_request_error', code: 'model_not_found' };
  if (status === 429) return { message: 'Rate limit reached.', type: 'requests', code: 'rate_limit_exceeded' };
  if (status >= 500) return { message: 'The server had an error while processing your request.', type: 'server_error', code: null };
  return { message: `Request failed with status ${status}.`, type: 'invalid_request_error', code: null };
}

function sendJSON(res: ServerResponse, status: number, payload: unknown) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(payload));
}
