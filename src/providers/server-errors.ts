// What a server's error means, read from its words: servers of one kind word the same
// failure differently from version to version, and often with a status (500, or an
// error inside a 200 stream) that says nothing. Each pattern names where it comes from.

import { APIError } from 'openai/error';
import { ServerStreamError } from './sse.js';

function textOf(error: unknown): string {
  if (error instanceof APIError) {
    const body = error.error as { message?: unknown; type?: unknown; code?: unknown } | undefined;
    return [body?.message, body?.type, body?.code, error.message].filter((part) => typeof part === 'string').join(' ');
  }
  if (error instanceof ServerStreamError) return `${error.message} ${JSON.stringify(error.body ?? '')}`;
  return '';
}

/**
 * The prompt does not fit the model's context window:
 * llama.cpp `exceed_context_size_error` / "the request exceeds the available context size"
 * (ggml-org/llama.cpp#15780, #16486); vLLM and OpenAI "This model's maximum context length is N
 * tokens" / `context_length_exceeded` (vllm-project/vllm#12886); LM Studio "...loaded with
 * context length of only N tokens" (lmstudio-ai/lmstudio-bug-tracker#2322).
 */
const OVERFLOW =
  /exceed_context_size_error|context_length_exceeded|exceeds? the (?:available )?context (?:size|length|window)|maximum context length is \d+|context length of only \d+|context (?:window |length )?overflow|prompt is too long|too many tokens in (?:the )?prompt/i;

export function isContextOverflow(error: unknown): boolean {
  return OVERFLOW.test(textOf(error));
}

/**
 * An embedding input longer than the server takes at once: llama-server's "input is too large
 * to process. increase the physical batch size" (ggml-org/llama.cpp#7389, #12295); vLLM's
 * "This model's maximum context length is 512 tokens. However, you requested 1451 tokens in the
 * input for embedding generation" (400, vllm-project/vllm#19798).
 */
export function isInputTooLarge(error: unknown): boolean {
  return /too large to process|physical batch size|input (?:is )?too long|maximum (?:input|sequence) length|input for embedding generation/i.test(textOf(error));
}

/**
 * The server (or this model) does not do embeddings: llama-server without `--embeddings`
 * (501), Ollama's "this model does not support embeddings" for a chat model (ollama/ollama#9739).
 */
export function lacksEmbeddings(error: unknown): boolean {
  return /does not support embeddings|--embeddings|embeddings? (?:are|is) not (?:supported|enabled)/i.test(textOf(error));
}

/** Errors that come back the same however often the request is repeated. */
export function isPermanent(error: unknown): boolean {
  return isContextOverflow(error) || isInputTooLarge(error) || lacksEmbeddings(error);
}
