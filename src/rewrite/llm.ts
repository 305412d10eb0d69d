// The rewriter used with a chat model: a condense prompt (recent history with the
// latest exchange weighted most, tracked topics as one line, the scope, the user's
// language kept) that asks for the standalone question only, and a sanitiser that
// throws away anything that does not look like one. A failed, empty, overlong or
// answer-like rewrite falls back to the question as typed, with the reason; only the
// user's own cancellation propagates. Prompts are assembled by concatenation, never
// with String.replace and user text as the replacement (`$'` in a message would
// splice the template into the prompt).

import { APIConnectionTimeoutError } from 'openai/error';
import { isAbortError } from '../providers/describe-error.js';
import type { ChatMessage, TokenUsage } from '../domain/index.js';
import { complete, type ChatModel } from '../providers/types.js';
import { decide } from './decide.js';
import { topicsLine } from './topics.js';
import type { ConversationTurn, QueryRewriter, RewriteOutcome, RewriteRequest } from './types.js';

export interface LlmRewriterOptions {
  /** Give up on the model after this long and search the question as typed. Default: no timer of our own (the provider's timeout applies). */
  timeoutMs?: number;
  /** Upper bound on the rewrite's tokens. Default 120. */
  maxTokens?: number;
}

/** Characters of the latest answer shown to the model. */
const LAST_ANSWER_CHARS = 800;
/** Characters of each earlier answer shown to the model. */
const EARLIER_ANSWER_CHARS = 160;
/** A rewrite is never longer than this... */
const MAX_REWRITE_CHARS = 300;
/** ...nor longer than this many times the question plus the topics line (but always allows this floor). */
const REWRITE_LENGTH_FACTOR = 3;
const MIN_REWRITE_CAP = 120;

export const SYSTEM_PROMPT = [
  'You rewrite the last message of a conversation into a standalone question for a document search.',
  'Resolve pronouns and references (it, that, the second one, what about X) using the conversation, so the question can be understood without it.',
  'Keep the meaning, the details and the language of the user\'s message: if the user wrote in French, write the question in French.',
  'If the message is already standalone, repeat it unchanged.',
  'Do not answer the question. Do not explain. Reply with the standalone question only, on one line.',
].join('\n');

export class LlmRewriter implements QueryRewriter {
  readonly id: string;

  constructor(
    private readonly model: ChatModel,
    private readonly options: LlmRewriterOptions = {},
  ) {
    this.id = model.id;
  }

  async rewrite(request: RewriteRequest): Promise<RewriteOutcome> {
    const decision = decide(request, { eager: true });
    if (!decision.rewrite) return decision.outcome;
    const question = request.question;
    const prompt = buildRewritePrompt(request);
    const base = { model: this.id, prompt };

    const timer = new AbortController();
    const signals = [timer.signal, ...(request.signal ? [request.signal] : [])];
    const signal = signals.length === 1 ? timer.signal : AbortSignal.any(signals);
    let timedOut = false;
    const handle =
      this.options.timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            timedOut = true;
            timer.abort();
          }, this.options.timeoutMs);

    let text: string;
    let usage: TokenUsage | undefined;
    try {
      ({ text, usage } = await complete(this.model, prompt, { signal, maxTokens: this.options.maxTokens ?? 120, temperature: 0 }));
    } catch (error) {
      // The user's own cancellation propagates; any other failure falls back to the question.
      if (request.signal?.aborted && isAbortError(error)) throw error;
      if (request.signal?.aborted) throw request.signal.reason ?? error;
      const message = errorMessage(error);
      if (timedOut || isTimeout(error)) {
        return { ...base, standaloneQuery: question, decision: 'fallback', reason: 'rewrite timed out', error: message };
      }
      return { ...base, standaloneQuery: question, decision: 'fallback', reason: `rewrite failed: ${message}`, error: message };
    } finally {
      if (handle) clearTimeout(handle);
    }

    const checked = sanitizeRewrite(text, question, topicsLine(request.topics));
    if (!checked.ok) return { ...base, usage, standaloneQuery: question, decision: 'fallback', reason: checked.reason };
    return { ...base, usage, standaloneQuery: checked.text, decision: 'rewritten', reason: decision.reason };
  }
}

/**
 * The condense prompt: a fixed system message, then one user message holding the
 * scope, the summary of older turns, the topics line, the recent exchanges (earlier
 * ones with their answers cut short, the latest with most of its answer) and the
 * follow-up.
 */
export function buildRewritePrompt(request: Pick<RewriteRequest, 'question' | 'history' | 'topics' | 'summary' | 'scope'>): ChatMessage[] {
  const lines: string[] = [];
  if (request.scope?.trim()) lines.push(`Questions are about ${oneLine(request.scope)}.`);
  if (request.summary?.trim()) lines.push(`Earlier in the conversation: ${oneLine(request.summary)}`);
  const topics = topicsLine(request.topics);
  if (topics) lines.push(`Topics so far (most recent first): ${topics}`);
  if (request.history.length > 0) {
    lines.push('', 'Conversation:');
    request.history.forEach((turn, index) => {
      const latest = index === request.history.length - 1;
      lines.push(...exchangeLines(turn, latest ? LAST_ANSWER_CHARS : EARLIER_ANSWER_CHARS));
    });
  }
  lines.push('', `Last message: ${oneLine(request.question)}`, '', 'Standalone question (same language as the last message):');
  return [
    { role: 'system', content: SYSTEM_PROMPT },
    { role: 'user', content: lines.join('\n') },
  ];
}

function exchangeLines(turn: ConversationTurn, answerChars: number): string[] {
  const lines = [`User: ${oneLine(turn.question)}`];
  const answer = truncate(oneLine(turn.answer), answerChars);
  if (answer) lines.push(`Assistant: ${answer}`);
  return lines;
}

export type SanitizedRewrite = { ok: true; text: string } | { ok: false; reason: string };

const LABEL = /^(?:standalone|rewritten|reformulated|rephrased|search)?\s*(?:question|query|rewrite)\s*(?:\([^)]*\))?\s*[:：]\s*/i;
const ANSWER_START = /^(?:yes|no|sure|certainly|of course|absolutely|i'm|i am|i can|i cannot|i can't|as an ai|sorry|unfortunately|here is|here's|the answer|you can|you should|you need|to do this|oui|non|ja|nein|s[ií])\b[\s,.!:]/i;

/**
 * The model's reply reduced to one clean line, or why it was rejected: first
 * non-empty line (a bare label line is skipped), labels, markdown and quotes stripped,
 * length capped, answer-shaped text refused.
 */
export function sanitizeRewrite(raw: string, question: string, topics = ''): SanitizedRewrite {
  const lines = raw
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean);
  let line = '';
  for (const candidate of lines) {
    const stripped = stripDecoration(candidate);
    if (stripped) {
      line = stripped;
      break;
    }
  }
  if (!line) return { ok: false, reason: 'rewrite was empty' };
  const cap = Math.min(MAX_REWRITE_CHARS, Math.max(MIN_REWRITE_CAP, REWRITE_LENGTH_FACTOR * (question.length + topics.length)));
  if (line.length > cap) return { ok: false, reason: `rewrite too long (${line.length} > ${cap} characters)` };
  if (ANSWER_START.test(line)) return { ok: false, reason: 'rewrite looks like an answer' };
  const sentences = line.split(/(?<=[.!。])\s+/).filter(Boolean);
  if (sentences.length >= 2 && !line.includes('?') && !line.includes('？')) {
    return { ok: false, reason: 'rewrite looks like an answer (several sentences, no question)' };
  }
  return { ok: true, text: line };
}

function stripDecoration(line: string): string {
  let text = line.replace(/^(?:[-*>#]+\s*)+/, '').replace(/\*\*|__/g, '').trim();
  for (let i = 0; i < 3; i++) {
    const before = text;
    text = text.replace(LABEL, '').trim();
    text = stripQuotes(text);
    if (text === before) break;
  }
  return text;
}

function stripQuotes(text: string): string {
  const pairs: [string, string][] = [['"', '"'], ["'", "'"], ['“', '”'], ['«', '»'], ['`', '`'], ['„', '“'], ['‘', '’']];
  for (const [open, close] of pairs) {
    if (text.length >= 2 && text.startsWith(open) && text.endsWith(close)) return text.slice(open.length, -close.length).trim();
  }
  return text;
}

function isTimeout(error: unknown): boolean {
  for (let current: unknown = error, depth = 0; current && depth < 4; depth++) {
    if (current instanceof APIConnectionTimeoutError) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

function errorMessage(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return oneLine(text);
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max);
  const space = cut.lastIndexOf(' ');
  return `${space > max * 0.6 ? cut.slice(0, space) : cut}...`;
}
