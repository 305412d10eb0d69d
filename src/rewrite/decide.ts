// The policy and gate decision shared by both rewriters, so the offline and the LLM
// rewriter skip exactly the same turns for exactly the same reasons.

import { classifyQuestion } from './gate.js';
import type { RewriteOutcome, RewriteRequest } from './types.js';

export type Decision = { rewrite: false; outcome: RewriteOutcome } | { rewrite: true; reason: string };

/**
 * Small talk is never searched or rewritten; `never` and the first turn search the
 * question as typed; `always` rewrites whenever there is history; `auto` rewrites
 * what the gate calls a follow-up.
 */
export function decide(request: RewriteRequest): Decision {
  const question = request.question;
  const hasHistory = request.history.length > 0;
  const gate = classifyQuestion(question, hasHistory);
  if (gate.kind === 'small_talk') {
    return { rewrite: false, outcome: { standaloneQuery: question, decision: 'small_talk', reason: gate.reason } };
  }
  if (request.policy === 'never') {
    return { rewrite: false, outcome: { standaloneQuery: question, decision: 'skipped', reason: 'rewrite policy: never' } };
  }
  if (!hasHistory) {
    return { rewrite: false, outcome: { standaloneQuery: question, decision: 'skipped', reason: gate.reason } };
  }
  if (request.policy === 'always') {
    return { rewrite: true, reason: gate.kind === 'follow_up' ? gate.reason : 'rewrite policy: always' };
  }
  if (gate.kind === 'follow_up') return { rewrite: true, reason: gate.reason };
  return { rewrite: false, outcome: { standaloneQuery: question, decision: 'skipped', reason: gate.reason } };
}
