// The answer stage: a canned reply to small talk (no retrieval, no model), an
// extractive answer offline, or the model's answer streamed token by token (and
// then the exchange's topics, extracted by the topic model before the turn is
// stored, since they are stored with it). Returns how the turn ends.

import type { FinishedStatus } from '../../domain/index.js';
import { contentWords, extractTopicsWithModel, ownWords } from '../../rewrite/index.js';
import type { TurnEvent } from '../events.js';
import { namesAgainstIndex } from '../extractive.js';
import { passageAnswer } from '../passage.js';
import { buildAnswerMessages, estimateTokens, fitAnswerPrompt } from '../prompt.js';
import { withoutReasoning } from '../../providers/reasoning.js';
import type { ChatChunk } from '../../providers/types.js';
import { settlesWithin, turnStoreOf, WAITING_NOTICE_MS, type TurnContext, type TurnState } from './state.js';

/** Id recorded as the chat model of an offline (extractive) answer. */
export const EXTRACTIVE_MODEL_ID = 'offline:extractive-v2';
export const GREETING_REPLY = 'Hello! Ask me about your documents.';
export const THANKS_REPLY = "You're welcome.";
/** A model's topic extraction gives up after this; the local extractor's topics are used then. */
export const TOPIC_TIMEOUT_MS = 8000;

/** Small talk reply by what was said. */
export function smallTalkReply(question: string): string {
  return /\b(thanks?|thank you|thx|ty|cheers|merci|danke|gracias)\b/i.test(question) ? THANKS_REPLY : GREETING_REPLY;
}

/**
 * What the extractive answer reads as the user's own words: the question without the
 * words that point back when it says something itself ("How do I rotate it?": rotate,
 * with the API key as context), else what the rewrite says was asked ("tell me more
 * about the second one" is about the item it names, not about "second").
 */
export function askedInOwnWords(question: string, asked: string | undefined): string {
  const own = ownWords(question);
  return contentWords(own).length > 0 ? own : (asked ?? question);
}

/**
 * The standalone query as the extractive answer scores it: when the rewrite kept the
 * question and appended context ("tell me more about the second one (Helgrind, DRD)"),
 * the question's pointing words are left out there too, so that "second" is not
 * quoted for itself ("Second line: name of the tool(s) ...").
 */
export function queryInOwnWords(question: string, standaloneQuery: string): string {
  const typed = question.trim();
  if (!standaloneQuery.startsWith(typed)) return standaloneQuery;
  const own = ownWords(typed);
  return own === typed ? standaloneQuery : `${own}${standaloneQuery.slice(typed.length)}`;
}

/** Answers the turn (after the rewrite, and the retrieval unless it is small talk), yielding its tokens. */
export async function* answer(context: TurnContext, state: TurnState, signal?: AbortSignal): AsyncGenerator<TurnEvent, FinishedStatus> {
  const { rewrite, asked: question } = state;
  const standaloneQuery = rewrite?.standaloneQuery ?? question;
  if (rewrite?.outcome.decision === 'small_talk') {
    state.answerKind = 'small_talk';
    state.answer = smallTalkReply(question);
    yield { type: 'token', text: state.answer };
    return 'answered';
  }

  const started = performance.now();
  const { answerModel, config } = context;
  if (!answerModel) {
    state.answerKind = 'extractive';
    state.models.chat = EXTRACTIVE_MODEL_ID;
    // The names typed in this turn: one the index has never seen says the documents do not cover the
    // question; one few chunks hold is what it is about, and only passages that mention it are quoted.
    const store = turnStoreOf(context);
    const names = await store.names(ownWords(question));
    const { unknown, rare } = namesAgainstIndex(ownWords(question), (word, atMost) => names.holding(word, atMost), () => names.total());
    const asked = askedInOwnWords(question, rewrite?.outcome.asked);
    state.answer = passageAnswer(queryInOwnWords(question, standaloneQuery), state.chunks, asked, unknown, rare, store.termShare()).text;
    state.timings.answerMs = performance.now() - started;
    yield { type: 'token', text: state.answer };
    return 'answered';
  }

  state.answerKind = 'llm';
  state.models.chat = answerModel.id;
  // Searches have no answer to show the model; their questions live on in the rewrite.
  const answered = (state.history?.verbatim ?? []).filter((t) => t.answerKind !== 'search');
  const answerWindow = config.history.answerTurns > 0 ? answered.slice(-config.history.answerTurns) : [];
  const promptInput = {
    question,
    standaloneQuery,
    chunks: state.chunks,
    // An answer stored before reasoning was kept apart may hold a <think> block: never sent back.
    history: answerWindow.map((t) => ({ question: t.question, answer: withoutReasoning(t.answer ?? '') })),
    summary: state.history?.summary,
    scope: config.assistant?.scope,
  };
  state.prompt = buildAnswerMessages(promptInput);
  // Fitted to the model's window where it is known: a server that truncates silently (Ollama) drops the start,
  // which holds the instructions and the best documents.
  const window = await answerModel.contextWindow?.(signal).catch(() => undefined);
  if (window) {
    const reserve = config.answer?.maxTokens ?? Math.min(1024, Math.floor(window.tokens / 4));
    const fitted = fitAnswerPrompt(promptInput, window.tokens - reserve);
    state.prompt = fitted.messages;
    if (fitted.trimmed) {
      const parts = [`${fitted.chunks} of ${state.chunks.length} documents`];
      if (fitted.shortened > 0) parts.push(`${fitted.shortened} cut short`);
      if (fitted.exchanges < promptInput.history.length) parts.push(`${fitted.exchanges} of ${promptInput.history.length} earlier exchanges`);
      yield { type: 'status', text: `fitted the prompt to the model's ${window.tokens.toLocaleString('en-US')}-token context (${window.source}): ${parts.join(', ')}` };
    }
  }
  let thinking = false;
  try {
    for await (const chunk of noticingSilence(answerModel.stream(state.prompt, { signal, maxTokens: config.answer?.maxTokens }), answerModel.id)) {
      if (chunk.type === 'waiting') {
        yield { type: 'status', text: chunk.text };
        continue;
      }
      if (chunk.type === 'usage') {
        state.usage.answer = chunk.usage;
      } else if (chunk.type === 'reasoning') {
        // Shown as "thinking", never as the answer, never stored or sent back.
        if (!thinking) yield { type: 'thinking' };
        thinking = true;
      } else if (chunk.type === 'retract') {
        state.answer = state.answer.slice(chunk.text.length);
        yield { type: 'retract', text: chunk.text };
      } else if (chunk.type === 'token') {
        state.answer += chunk.text;
        yield { type: 'token', text: chunk.text };
      }
    }
  } finally {
    state.timings.answerMs = performance.now() - started;
  }
  if (signal?.aborted) return 'interrupted';
  // A server that cut the prompt to its context says so only in the tokens it counted.
  const counted = state.usage.answer?.promptTokens;
  const estimated = estimateTokens(state.prompt);
  // Tokenizers give about 4 characters a token on prose; the estimate assumes 3.2, so a count under 55% of it is a cut.
  if (counted !== undefined && counted > 0 && counted < estimated * 0.55) {
    yield {
      type: 'status',
      text: `the server read ${counted.toLocaleString('en-US')} tokens of a prompt of about ${estimated.toLocaleString('en-US')}: it may have cut the prompt to its context. Set RAGLINE_CONTEXT_TOKENS to the model's context (or raise it on the server).`,
    };
  }
  if (context.topicModel) {
    const extracted = await extractTopicsWithModel(context.topicModel, { question, answer: state.answer }, { timeoutMs: TOPIC_TIMEOUT_MS, signal });
    if (extracted) {
      state.modelTopics = extracted.terms;
      if (extracted.usage) state.usage.topics = extracted.usage;
    }
  }
  return 'answered';
}

/**
 * The model's chunks, with one `waiting` notice first when the first chunk takes longer
 * than WAITING_NOTICE_MS (a model reading a long prompt, or a slow server), so the REPL
 * says what it is waiting for instead of pausing silently.
 */
async function* noticingSilence(
  stream: AsyncIterable<ChatChunk>,
  modelId: string,
): AsyncGenerator<ChatChunk | { type: 'waiting'; text: string }> {
  const iterator = stream[Symbol.asyncIterator]();
  try {
    const first = iterator.next();
    if (!(await settlesWithin(first, WAITING_NOTICE_MS))) yield { type: 'waiting', text: `waiting for ${modelId.replace(/^openai:/, '')} to answer …` };
    let next = await first;
    while (!next.done) {
      yield next.value;
      next = await iterator.next();
    }
  } finally {
    await iterator.return?.(undefined);
  }
}
