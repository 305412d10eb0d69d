// Reasoning ("thinking") kept apart from a model's answer. Servers hand it over in
// three ways, depending on the server and its version:
//   - a `reasoning_content` or `reasoning` field of each streamed delta (llama.cpp with
//     --reasoning-format, vLLM's reasoning parsers, DeepSeek's API, Ollama's /v1);
//   - inline in the content, as `<think>...</think>` (Qwen3, DeepSeek-R1 distills),
//     sometimes empty (`<think>\n\n</think>` when thinking was switched off);
//   - only the closing `</think>`, when the chat template opened the tag in the prompt.
// The first is read in openai.ts; ThinkSplitter handles the other two. And the
// request fields that ask a server not to think, chosen so a server that ignores a
// field is not broken by it.

const OPEN = '<think>';
const CLOSE = '</think>';

export type Piece = { kind: 'content' | 'reasoning'; text: string } | { kind: 'retract'; text: string };

/**
 * Model families that think by default and may leave out the opening `<think>`:
 * their content is held back until `</think>` or the end, so reasoning is never shown
 * as the answer. Other models stream at once; a stray `</think>` from them retracts
 * what was shown (a `retract` piece) so it is neither stored nor sent back.
 */
const THINKING_FAMILY = /deepseek-r1|r1-distill|\bqwq\b|qwen3(?![-.\w]*(?:embed|instruct-2507|coder|rerank))|think|reason|magistral|gpt-oss|exaone-deep|cogito/i;

export function thinksByDefault(model: string): boolean {
  return THINKING_FAMILY.test(model);
}

/** Splits streamed content into answer text and inline reasoning. */
export class ThinkSplitter {
  #mode: 'start' | 'thinking' | 'content' = 'start';
  #buffer = '';
  #emitted = '';
  #closed = false;

  /** `holdBack`: keep content until `</think>` or the end (see THINKING_FAMILY). */
  constructor(private readonly holdBack = false) {}

  /** Whether any reasoning was seen inline. */
  get sawReasoning(): boolean {
    return this.#closed || this.#mode === 'thinking';
  }

  push(text: string): Piece[] {
    this.#buffer += text;
    return this.#drain(false);
  }

  /** The stream ended: whatever is held back is content (an unclosed `<think>` is reasoning). */
  end(): Piece[] {
    return this.#drain(true);
  }

  #drain(final: boolean): Piece[] {
    const pieces: Piece[] = [];
    while (this.#buffer) {
      if (this.#mode === 'start') {
        const trimmed = this.#buffer.trimStart();
        if (trimmed.startsWith(OPEN)) {
          this.#buffer = trimmed.slice(OPEN.length);
          this.#mode = 'thinking';
          continue;
        }
        if (!final && trimmed.length < OPEN.length && OPEN.startsWith(trimmed)) break; // maybe "<thi"
        const close = this.#buffer.indexOf(CLOSE);
        if (close >= 0) {
          // Only the closing tag: everything before it was reasoning.
          pieces.push(...this.#closeAt(close));
          continue;
        }
        if (this.holdBack && !final) break;
        if (!final && !trimmed) break;
        this.#mode = 'content';
        continue;
      }
      if (this.#mode === 'thinking') {
        const close = this.#buffer.indexOf(CLOSE);
        if (close >= 0) {
          pieces.push(...this.#closeAt(close));
          continue;
        }
        const keep = final ? 0 : partialSuffix(this.#buffer, CLOSE);
        pieces.push(...reasoning(this.#buffer.slice(0, this.#buffer.length - keep)));
        this.#buffer = this.#buffer.slice(this.#buffer.length - keep);
        break;
      }
      // content
      if (!this.#closed) {
        const close = this.#buffer.indexOf(CLOSE);
        if (close >= 0) {
          // A stray closing tag after content was shown: all of it was reasoning.
          if (this.#emitted) pieces.push({ kind: 'retract', text: this.#emitted });
          pieces.push(...this.#closeAt(close, this.#emitted));
          this.#emitted = '';
          continue;
        }
        const keep = final ? 0 : partialSuffix(this.#buffer, CLOSE);
        const text = this.#buffer.slice(0, this.#buffer.length - keep);
        if (text) {
          pieces.push({ kind: 'content', text });
          this.#emitted += text;
        }
        this.#buffer = this.#buffer.slice(this.#buffer.length - keep);
        break;
      }
      pieces.push({ kind: 'content', text: this.#buffer });
      this.#buffer = '';
    }
    return pieces;
  }

  /** The reasoning up to `</think>` at `close` (after `shown`, content that turned out to be reasoning); content follows. */
  #closeAt(close: number, shown = ''): Piece[] {
    const thought = reasoning(shown + this.#buffer.slice(0, close));
    this.#buffer = this.#buffer.slice(close + CLOSE.length).replace(/^\s+/, '');
    this.#closed = true;
    this.#mode = 'content';
    return thought;
  }
}

function reasoning(text: string): Piece[] {
  return text ? [{ kind: 'reasoning', text }] : [];
}

/** Length of the longest end of `text` that starts `tag` ("</th" of "</think>"), kept until more arrives. */
function partialSuffix(text: string, tag: string): number {
  for (let length = Math.min(tag.length - 1, text.length); length > 0; length--) {
    if (text.endsWith(tag.slice(0, length))) return length;
  }
  return 0;
}

/** Removes inline reasoning from a whole text (a stored answer, a rewrite). */
export function withoutReasoning(text: string): string {
  const splitter = new ThinkSplitter(false);
  let content = '';
  for (const piece of [...splitter.push(text), ...splitter.end()]) {
    if (piece.kind === 'content') content += piece.text;
    else if (piece.kind === 'retract') content = '';
  }
  return content;
}

/**
 * Request fields that ask a server not to think, for calls whose reply must be short
 * (rewrite, topics, summary). Each is one a server either understands or ignores:
 *   - OpenAI: `reasoning_effort` only for its reasoning models (others reject it);
 *   - other servers: `chat_template_kwargs.enable_thinking: false` (vLLM, llama.cpp,
 *     SGLang) and `think: false` (Ollama); `reasoning_effort: "low"` for gpt-oss, which
 *     cannot stop thinking but can think little (vLLM rejects values other than
 *     low/medium/high, so nothing else is sent);
 *   - Qwen3: the `/no_think` soft switch in the prompt, which its template honours
 *     whatever the server passes on.
 * A server that rejects a field anyway is asked again without any (see openai.ts).
 */
export function noThinkingRequest(serverIsOpenAI: boolean, model: string): { fields: Record<string, unknown>; promptSuffix?: string } {
  if (serverIsOpenAI) {
    if (/^gpt-5/i.test(model)) return { fields: { reasoning_effort: 'minimal' } };
    if (/^o\d/i.test(model)) return { fields: { reasoning_effort: 'low' } };
    return { fields: {} };
  }
  const fields: Record<string, unknown> = { chat_template_kwargs: { enable_thinking: false }, think: false };
  if (/gpt-oss/i.test(model)) fields.reasoning_effort = 'low';
  const qwen3 = /qwen3(?![-.\w]*(?:embed|rerank))/i.test(model);
  return { fields, promptSuffix: qwen3 ? ' /no_think' : undefined };
}
