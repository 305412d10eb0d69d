// A running summary of the turns that fell out of the rewrite window, made without a
// model: what was asked (the standalone queries, most recent kept when it must be
// cut) and what the conversation is about (the tracked topics). It is short because
// it is context for the rewrite prompt, not a transcript.

import { topicsLine } from './topics.js';
import type { Topic } from '../domain/index.js';
import type { ConversationTurn } from './types.js';

/** Longest summary, in characters. */
export const SUMMARY_MAX_CHARS = 400;
const QUERY_MAX_CHARS = 100;

/** e.g. `Asked: How do I create an API key?; Do API keys expire? Topics: API key, rotation.` */
export function summarizeOffline(turns: ConversationTurn[], topics: Topic[]): string {
  const topicText = topicsLine(topics, 5);
  const topicPart = topicText ? ` Topics: ${topicText}.` : '';
  const budget = SUMMARY_MAX_CHARS - topicPart.length - 'Asked: '.length;
  const queries: string[] = [];
  let used = 0;
  // Most recent first while filling the budget, then shown in conversation order.
  for (let i = turns.length - 1; i >= 0; i--) {
    const query = clip((turns[i]!.standaloneQuery || turns[i]!.question).replace(/\s+/g, ' ').trim(), QUERY_MAX_CHARS);
    if (!query) continue;
    if (used + query.length + 2 > budget) break;
    queries.unshift(query);
    used += query.length + 2;
  }
  const asked = queries.length > 0 ? `Asked: ${queries.join('; ')}` : '';
  return `${asked}${asked ? topicPart : topicPart.trim()}`.trim();
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 3).trimEnd()}...`;
}
