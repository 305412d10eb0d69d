// Retrieval measured over judged multi-turn conversations: the query variants
// (the question as asked, the reference rewrite, ragline's own rewrites) and the
// cut-off they are scored at.

import { retrievalSettingsFor } from '../chat/stages/retrieve.js';
import type { Config } from '../config/index.js';
import { ConversationRewriter } from '../eval/conversation.js';
import { DocumentNames, runEval, type EvalReport, type EvalTask, type EvalVariant } from '../eval/run.js';

export { parseTasks } from '../eval/run.js';
import { requireSessionTasks, type SessionTasks } from '../eval/sessions.js';
import type { SessionStore } from '../chat/session-store.js';
import type { SessionInfo } from '../store/sessions.js';
import { requireSession } from './sessions.js';
import { UserError } from '../util/errors.js';
import type { Workspace } from './workspace.js';

/** The query variants, in the order they are reported. */
export const EVAL_VARIANTS = ['raw', 'reference', 'ragline', 'ragline-always', 'ragline+raw', 'ragline+raw-notopics'] as const;
export type EvalVariantName = (typeof EVAL_VARIANTS)[number];

/** Chunks retrieved per task: the metrics go to R@10, MRR@10 and nDCG@10. */
export const EVAL_K = 10;

export interface EvaluateOptions {
  tasks: EvalTask[];
  /** Which variants to run (default: all). */
  variants?: readonly string[];
  /** At most this many chunks of one document in the top k (0: no limit). */
  maxPerDocument?: number;
  /** Weight of the raw question fused beside a rewrite (`ragline+raw`); default: the retrieval.rawWeight setting. */
  rawWeight?: number;
  onProgress?: (done: number, total: number) => void;
}

/** Runs every task under each variant and scores the retrieval. */
export async function evaluate(workspace: Workspace, options: EvaluateOptions): Promise<EvalReport> {
  const { config } = workspace;
  const wanted = options.variants ?? EVAL_VARIANTS;
  for (const name of wanted) {
    if (!(EVAL_VARIANTS as readonly string[]).includes(name)) throw new UserError(`Unknown variant "${name}".`, { hint: `Choose from ${EVAL_VARIANTS.join(', ')}.`, exitCode: 2 });
  }
  const retriever = await workspace.searchIndex();
  // Document names, and how common a word is (on SQLite; Postgres does not say), from the workspace's store.
  const index = await (await workspace.sessions()).index([]);
  const variants: EvalVariant[] = [];
  if (wanted.includes('raw')) variants.push({ name: 'raw', query: async (t) => t.question });
  if (wanted.includes('reference')) variants.push({ name: 'reference', query: async (t) => t.reference_rewrite ?? null });
  // ragline's own rewrite, through the chat's rewriter and gate (the configured
  // model, or the offline rewriter); `ragline-always` rewrites every turn with history.
  const rawWeight = options.rawWeight ?? config.retrieval.rawWeight;
  // `ragline+raw` is what the chat searches; `-notopics` the same without tracked topics.
  const rewriteVariants = [
    ['ragline', config.rewrite.policy],
    ['ragline-always', 'always'],
    ['ragline+raw', config.rewrite.policy],
    ['ragline+raw-notopics', config.rewrite.policy],
  ] as const;
  const shares = index.termShare;
  for (const [name, policy] of rewriteVariants) {
    if (!wanted.includes(name)) continue;
    // The chat's models: its summaries come from the answer model, its topics from the topic model.
    const conversation = new ConversationRewriter(await workspace.rewriter(), config, policy, {
      useTopics: name !== 'ragline+raw-notopics',
      termShare: shares,
      summaryModel: await workspace.answerModel(),
      topicModel: await workspace.topicModel(),
    });
    variants.push({
      name,
      rewrites: true,
      query: async (t) => {
        const outcome = await conversation.rewrite(t);
        if (!name.startsWith('ragline+raw')) return { query: outcome.standaloneQuery, decision: outcome.decision };
        // exactly what the chat searches: the same helper decides on the raw question
        const retrieval = retrievalSettingsFor(t.question, outcome, EVAL_K, rawWeight === undefined ? config : withRawWeight(config, rawWeight));
        return { query: outcome.standaloneQuery, decision: outcome.decision, secondary: retrieval.secondary, expansion: retrieval.expansion };
      },
    });
  }
  return runEval({
    tasks: options.tasks,
    names: new DocumentNames(index.names),
    variants,
    retrieve: ({ query, secondary, expansion }) => retriever.search(query, { k: EVAL_K, maxPerDocument: options.maxPerDocument ?? 0, secondary, expansion }),
    onProgress: options.onProgress,
  });
}

function withRawWeight(config: Config, rawWeight: number): Config {
  return { ...config, retrieval: { ...config.retrieval, rawWeight } };
}

/** The tasks of the judged turns of the sessions named (none named: every session with judged turns, oldest first). */
export async function sessionTasks(workspace: Workspace, refs: string[]): Promise<SessionTasks> {
  const store = await workspace.sessions();
  const named: SessionInfo[] = [];
  for (const ref of refs) named.push(await requireSession(workspace, ref));
  const sessions = refs.length
    ? [...new Map(named.map((session) => [session.id, session])).values()]
    : (await judgedSessions(store)).sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  return requireSessionTasks(store, sessions, { named: refs.length > 0 });
}

/** The sessions (on Postgres, the user's) that hold a judged turn. */
async function judgedSessions(store: SessionStore): Promise<SessionInfo[]> {
  const judged: SessionInfo[] = [];
  for (const session of await store.list()) if ((await store.judgments(session.id)).size > 0) judged.push(session);
  return judged;
}
