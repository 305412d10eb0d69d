// The policy and gate decision shared by both rewriters: the same rules and reasons;
// the LLM rewriter asks the gate to be eager (a model leaves a standalone question
// as it is, so a missed follow-up costs more than a call).

import { classifyQuestion, type GateOptions } from './gate.js';
import type { RewriteOutcome, RewriteRequest } from './types.js';

export type Decision = { rewrite: false; outcome: RewriteOutcome } | { rewrite: true; reason: string };

/**
 * Small talk is never searched or rewritten; `never` and the first turn search the
 * question as typed; `always` rewrites whenever there is history; `auto` rewrites
 * what the gate calls a follow-up (`gate.eager` when a model rewrites).
 */
export function decide(request: RewriteRequest, gateOptions: GateOptions = {}): Decision {
  const question = request.question;
  const hasHistory = request.history.length > 0;
  const gate = classifyQuestion(question, hasHistory, gateOptions);
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
