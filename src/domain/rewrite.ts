// What the query rewriter decided about a question, and when it may rewrite at all.

/** `rewritten`: searched as a standalone query; `skipped`: searched as typed; `fallback`: a rewrite was attempted and discarded; `small_talk`: not searched. */
export type RewriteDecision = 'rewritten' | 'skipped' | 'fallback' | 'small_talk';

/** `auto`: rewrite follow-ups only; `always`: rewrite whenever there is history; `never`: search the question as typed. */
export type RewritePolicy = 'auto' | 'always' | 'never';
