// Turns whatever a provider call threw (the SDK's typed errors, a dropped stream,
// an abort) into one UserError a person can act on: what happened, naming the
// server and the model, and a hint with the fix. The API key never appears in the
// result, even when the server echoed it back in its error text.

import {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
} from 'openai/error';
import { UserError } from '../util/errors.js';
import { redactSecrets, registerSecret } from '../util/secrets.js';
import { displayURL } from '../util/url.js';

export { displayURL } from '../util/url.js';
import { causeCode, isBadPort, retryRecordOf, StreamInterruptedError } from './retry.js';
import { ServerStreamError, StreamOverranError, StreamStalledError } from './sse.js';
import { EmptyReplyError, ReasoningExhaustedError } from './openai.js';
import { isOpenAIHost } from './server-info.js';
import { isContextOverflow, isInputTooLarge, lacksEmbeddings } from './server-errors.js';

export type ProviderOperation = 'embed' | 'chat' | 'rewrite' | 'models';

export interface ProviderErrorContext {
  baseURL: string;
  model: string;
  operation: ProviderOperation;
  /** Scrubbed from every message, whatever the server or SDK put in its error text. */
  apiKey?: string;
  /** The request timeout in force, to say how long we waited. */
  timeoutMs?: number;
  /** The longest silence allowed inside a stream. */
  idleMs?: number;
}

/** The model names ragline falls back to when none is set: OpenAI's, meaningless to another server. */
const OPENAI_DEFAULTS = new Set(['gpt-4o-mini', 'text-embedding-3-small']);

/** Exit code for a cancelled operation (128 + SIGINT), as shells report Ctrl-C. */
export const EXIT_CANCELLED = 130;

const NOUN: Record<ProviderOperation, string> = {
  embed: 'embedding',
  chat: 'chat',
  rewrite: 'query rewrite',
  models: 'model list',
};

// Setting names from src/config, so a hint names the variable that fixes it.
const MODEL_VARIABLE: Record<ProviderOperation, string> = {
  embed: 'RAGLINE_EMBED_MODEL',
  chat: 'RAGLINE_CHAT_MODEL',
  rewrite: 'RAGLINE_REWRITE_MODEL',
  models: 'RAGLINE_CHAT_MODEL',
};
const TIMEOUT_VARIABLE = (operation: ProviderOperation) =>
  operation === 'rewrite' ? 'RAGLINE_REWRITE_TIMEOUT_MS' : 'RAGLINE_TIMEOUT_MS';
const MAX_TOKENS_VARIABLE = (operation: ProviderOperation) => (operation === 'rewrite' ? 'RAGLINE_REWRITE_MAX_TOKENS' : 'RAGLINE_ANSWER_MAX_TOKENS');
/** What makes the answer prompt smaller. */
const CONTEXT_FIX =
  'Set RAGLINE_CONTEXT_TOKENS to the context the model is loaded with (ragline then fits the prompt to it), or lower RAGLINE_K, or load the model with a larger context (Ollama: OLLAMA_CONTEXT_LENGTH or num_ctx; llama-server: -c; vLLM: --max-model-len; LM Studio: the context length slider).';

/**
 * True for a cancellation by the caller's AbortSignal, raw (SDK `APIUserAbortError`,
 * DOM `AbortError`) or already described by `describeProviderError`. The CLI uses it to
 * stop quietly on Ctrl-C instead of printing an error.
 */
export function isAbortError(error: unknown): boolean {
  if (error instanceof APIUserAbortError) return true;
  if (error instanceof UserError) return error.exitCode === EXIT_CANCELLED && isAbortError(error.cause);
  return typeof error === 'object' && error !== null && (error as { name?: unknown }).name === 'AbortError';
}

export function describeProviderError(error: unknown, context: ProviderErrorContext): UserError {
  if (error instanceof UserError) return scrubUserError(error, context.apiKey);
  const described = describe(error, context);
  return new UserError(scrub(described.message, context.apiKey), {
    hint: described.hint === undefined ? undefined : scrub(described.hint, context.apiKey),
    exitCode: described.exitCode,
    cause: error,
  });
}

interface Description {
  message: string;
  hint?: string;
  exitCode?: number;
}

function describe(error: unknown, context: ProviderErrorContext): Description {
  const url = displayURL(context.baseURL);
  const { model, operation } = context;
  const noun = NOUN[operation];
  const retries = retryRecordOf(error);
  const afterRetries = retries?.retries ? ` after ${plural(retries.retries, 'retry', 'retries')}` : '';

  if (isAbortError(error)) {
    return { message: `The ${noun} request to ${url} was cancelled.`, exitCode: EXIT_CANCELLED };
  }

  if (error instanceof APIConnectionTimeoutError) {
    const waited = context.timeoutMs ? ` within ${formatSeconds(context.timeoutMs)}` : ' in time';
    return {
      message: `The server at ${url} did not answer the ${noun} request for model "${model}"${waited}.`,
      hint: `A local model may still be loading: try again, or raise ${TIMEOUT_VARIABLE(operation)}.`,
    };
  }

  if (error instanceof APIConnectionError) {
    return describeConnectionFailure(error, url, afterRetries);
  }

  // Before the prompt's overflow: vLLM words a too-long embedding input as one.
  if (operation === 'embed' && isInputTooLarge(error)) {
    return {
      message: `The embedding server at ${url} refused a text as too long for model "${model}": ${oneLine(errorText(error)).slice(0, 160)}`,
      hint: 'Lower RAGLINE_CHUNK_SIZE (e.g. 1500) and re-ingest, or raise the server\'s batch size (llama-server: -b 4096 -ub 4096).',
    };
  }

  if (isContextOverflow(error)) {
    const detail = overflowDetail(error);
    return {
      message: `The prompt is longer than model "${model}" at ${url} can read${detail ? ` (${detail})` : ''}.`,
      hint: CONTEXT_FIX,
    };
  }

  if (operation === 'embed' && lacksEmbeddings(error)) {
    return {
      message: `The server at ${url} does not serve embeddings for model "${model}": ${oneLine(errorText(error)).slice(0, 160)}`,
      hint: 'Set RAGLINE_EMBED_MODEL to an embedding model the server has (Ollama: `ollama pull nomic-embed-text`), point RAGLINE_EMBED_BASE_URL at a server started for embeddings (llama-server --embeddings), or use the offline embedder: RAGLINE_EMBED_PROVIDER=offline.',
    };
  }

  if (error instanceof StreamStalledError) {
    const stream = operation === 'rewrite' ? 'query rewrite' : operation === 'chat' ? 'answer' : noun;
    return error.beforeFirstToken
      ? {
          message: `Model "${model}" at ${url} sent nothing for ${formatSeconds(error.ms)} after accepting the ${stream} request.`,
          hint: `The model may still be loading or reading a long prompt: try again, or raise ${TIMEOUT_VARIABLE(operation)}.`,
        }
      : {
          message: `The ${stream} stream from ${url} stalled: nothing for ${formatSeconds(error.ms)} (model "${model}").`,
          hint: "Check the server's log; raise RAGLINE_STREAM_IDLE_MS if the model is just slow.",
        };
  }

  if (error instanceof StreamOverranError) {
    const stream = operation === 'rewrite' ? 'query rewrite' : operation === 'chat' ? 'answer' : noun;
    return {
      message: `The ${stream} from model "${model}" at ${url} was not finished after ${formatSeconds(error.ms)}, the limit for a whole reply, and was stopped.`,
      hint: 'The server may be stuck, or sending a token now and then; raise RAGLINE_STREAM_TOTAL_MS (request.totalMs) if the model is just slow.',
    };
  }

  if (error instanceof ReasoningExhaustedError) {
    return {
      message: `Model "${model}" at ${url} was still reasoning when it reached its ${error.maxTokens ?? ''}${error.maxTokens ? '-token ' : ''}limit, and gave no ${operation === 'rewrite' ? 'rewrite' : 'answer'}.`,
      hint: `Raise ${MAX_TOKENS_VARIABLE(operation)}, or use a model that does not reason for ${operation === 'rewrite' ? 'RAGLINE_REWRITE_MODEL' : 'RAGLINE_CHAT_MODEL'}.`,
    };
  }

  if (error instanceof EmptyReplyError) {
    return {
      message: error.onlyReasoning
        ? `Model "${model}" at ${url} reasoned but gave no ${operation === 'rewrite' ? 'rewrite' : 'answer'}.`
        : `Model "${model}" at ${url} returned an empty reply${error.finishReason ? ` (finish reason: ${error.finishReason})` : ''}.`,
      hint: `Some servers (LM Studio among them) answer a prompt longer than the model's context with an empty reply. ${CONTEXT_FIX}`,
    };
  }

  if (error instanceof ServerStreamError) {
    return {
      message: `The server at ${url} reported an error during the ${noun} request (model "${model}"): ${oneLine(error.message).slice(0, 200)}`,
      hint: "Check the server's log.",
    };
  }

  if (error instanceof StreamInterruptedError) {
    const stream = operation === 'rewrite' ? 'query rewrite stream' : 'answer stream';
    return {
      message: `The ${stream} from ${url} stopped midway (model "${model}").`,
      hint: "The server closed the connection before the model finished. Try again; if it keeps happening, check the server's log.",
    };
  }

  if (error instanceof APIError) {
    const status = error.status;
    const detail = serverMessage(error);
    if (status === 401 || status === 403) {
      return {
        message: `The server at ${url} rejected the API key (${status}).`,
        hint: operation === 'embed' ? 'Check RAGLINE_EMBED_API_KEY (the embeddings server\'s key; else OPENAI_API_KEY) with `ragline config show`.' : 'Check OPENAI_API_KEY or `ragline config show`.',
      };
    }
    if (status === 404) {
      if (operation !== 'models' && mentionsModel(error, detail)) {
        const openAIDefault = OPENAI_DEFAULTS.has(model) && !isOpenAIHost(context.baseURL);
        return {
          message: `Model "${model}" was not found at ${url}.${openAIDefault ? ` ("${model}" is OpenAI's default, used because ${MODEL_VARIABLE[operation]} is not set.)` : ''}`,
          hint: openAIDefault
            ? `Set ${MODEL_VARIABLE[operation]} to a model this server has (\`ragline doctor\` lists them).`
            : `Set ${MODEL_VARIABLE[operation]} to a model the server has (\`ragline doctor\` lists them), or fetch this one on the server (Ollama: \`ollama pull ${model}\`).`,
        };
      }
      return {
        message: `The server at ${url} has no ${operation === 'models' ? 'model list' : `${noun} endpoint`} (404).`,
        hint: 'Check the base URL: for OpenAI-compatible servers it usually ends in /v1 (e.g. http://localhost:11434/v1 for Ollama).',
      };
    }
    if (status === 429) {
      if (retries?.serverAskedMs !== undefined) {
        return {
          message: `The server at ${url} is rate limiting requests (429) and asked to wait ${formatSeconds(retries.serverAskedMs)}.`,
          hint: 'Try again after that; for large ingests, lower RAGLINE_EMBED_CONCURRENCY.',
        };
      }
      return {
        message: `The server at ${url} is still rate limiting requests (429)${afterRetries}.`,
        hint: 'Wait a minute and try again; for large ingests, lower RAGLINE_EMBED_CONCURRENCY.',
      };
    }
    if (status === 501) {
      return {
        message: `The server at ${url} does not implement the ${noun} request (501)${detail ? `: ${detail}` : '.'}`,
        hint: operation === 'embed' ? 'Start the server with embeddings on (llama-server --embeddings), or use the offline embedder: RAGLINE_EMBED_PROVIDER=offline.' : 'Check the base URL and the server.',
      };
    }
    if (typeof status === 'number' && status >= 500) {
      return {
        message: `The server at ${url} failed with ${status}${afterRetries} (model "${model}")${detail ? `: ${detail}` : '.'}`,
        hint: "The server may be overloaded or the model may have failed to load; check the server's log and try again.",
      };
    }
    if (typeof status === 'number') {
      return {
        message: `The server at ${url} refused the ${noun} request for model "${model}" (${status})${detail ? `: ${detail}` : '.'}`,
        hint: 'Check the model and its settings with `ragline config show`.',
      };
    }
    // No status: an error event inside a stream.
    return {
      message: `The server at ${url} reported an error during the ${noun} request (model "${model}")${detail ? `: ${detail}` : '.'}`,
      hint: "Check the server's log.",
    };
  }

  const text = error instanceof Error ? error.message : String(error);
  return { message: `The ${noun} request to ${url} failed: ${oneLine(text)}` };
}

function describeConnectionFailure(error: APIConnectionError, url: string, afterRetries: string): Description {
  const code = causeCode(error);
  if (code === 'ECONNREFUSED') {
    return {
      message: `Could not connect to ${url}: connection refused${afterRetries}.`,
      hint: 'Is the server running? For Ollama: `ollama serve`. Or answer offline meanwhile: --provider offline.',
    };
  }
  if (isBadPort(error)) {
    return {
      message: `Could not connect to ${url}: port ${portOf(url)} is one that fetch refuses to use (a "bad port").`,
      hint: 'Run the server on another port (Ollama uses 11434), and set RAGLINE_BASE_URL to it.',
    };
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    return {
      message: `Could not connect to ${url}: unknown host "${hostOf(url)}".`,
      hint: 'Check RAGLINE_BASE_URL with `ragline config show`.',
    };
  }
  const reason = code === 'UND_ERR_SOCKET' || code === 'ECONNRESET' ? 'the connection was closed' : (code ?? 'connection error');
  return {
    message: `Could not connect to ${url}: ${reason}${afterRetries}.`,
    hint: 'Is the server running and reachable? Check RAGLINE_BASE_URL with `ragline config show`.',
  };
}


function errorText(error: unknown): string {
  if (error instanceof APIError) return serverMessage(error) ?? error.message;
  return error instanceof Error ? error.message : String(error);
}

/** "8,412 tokens, the model reads 4,096", from what the server said, when it said it. */
function overflowDetail(error: unknown): string | undefined {
  const text = errorText(error);
  const body: any = error instanceof APIError ? error.error : error instanceof ServerStreamError ? error.body : undefined;
  const inner = body?.error ?? body;
  const prompt = Number(inner?.n_prompt_tokens) || Number(/you requested (\d+)/i.exec(text)?.[1]) || undefined;
  const context = Number(inner?.n_ctx) || Number(/maximum context length is (\d+)/i.exec(text)?.[1]) || Number(/context length of only (\d+)/i.exec(text)?.[1]) || undefined;
  if (prompt && context) return `${prompt.toLocaleString('en-US')} tokens; it reads ${context.toLocaleString('en-US')}`;
  if (context) return `it reads ${context.toLocaleString('en-US')} tokens`;
  return undefined;
}

/** The server's own words, on one line and short, or undefined when it gave none. */
function serverMessage(error: APIError): string | undefined {
  const body = error.error as { message?: unknown } | undefined;
  const text =
    typeof body?.message === 'string' ? body.message : error.message.replace(/^\d{3}\s+/, '').replace(/^status code \(no body\)$/, '');
  const line = oneLine(text);
  return line ? (line.length > 200 ? `${line.slice(0, 197)}...` : line) : undefined;
}

function mentionsModel(error: APIError, detail: string | undefined): boolean {
  return error.code === 'model_not_found' || /model/i.test(detail ?? '');
}

/** The one redaction (src/util/secrets.ts), with this call's key known to it. */
function scrub(text: string, apiKey: string | undefined): string {
  registerSecret(apiKey);
  return redactSecrets(text);
}

function scrubUserError(error: UserError, apiKey: string | undefined): UserError {
  const message = scrub(error.message, apiKey);
  const hint = error.hint === undefined ? undefined : scrub(error.hint, apiKey);
  if (message === error.message && hint === error.hint) return error;
  return new UserError(message, { hint, exitCode: error.exitCode, cause: error.cause });
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return url;
  }
}

function portOf(url: string): string {
  try {
    const parsed = new URL(url);
    return parsed.port || (parsed.protocol === 'https:' ? '443' : '80');
  } catch {
    return '?';
  }
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function plural(count: number, one: string, many: string): string {
  return `${count} ${count === 1 ? one : many}`;
}

function formatSeconds(ms: number): string {
  const seconds = ms / 1000;
  return `${Number.isInteger(seconds) ? seconds : seconds.toFixed(1)} s`;
}
