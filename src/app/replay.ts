// Replay: a stored session as it happened, and re-run (its rewrites and retrievals
// with today's settings and index) as a diff, optionally saved as a new session.
// On either store, through the workspace's SessionStore.

import { loadReplay, rerunSession, saveRerun, type RerunReport, type ReplaySession, type SavedRerun } from '../replay/index.js';
import type { RewritePolicy } from '../domain/index.js';
import type { SessionInfo } from '../store/sessions.js';
import { requireSession } from './sessions.js';
import type { Workspace } from './workspace.js';

/** A session (or its id, name, or `last`) as stored: every turn, or only turn `turn`. */
export async function replay(workspace: Workspace, session: string | SessionInfo, options: { turn?: number } = {}): Promise<ReplaySession> {
  return loadReplay(await workspace.sessions(), typeof session === 'string' ? await requireSession(workspace, session) : session, options);
}

export interface RerunResult {
  report: RerunReport;
  /** The new session, with `save`: the finished turns (`unfinished` names those left out). */
  saved?: SavedRerun;
}

/**
 * Runs each rewrite and retrieval of `replayed` again with the current rewriter
 * and index. Nothing is written unless `save`: then the rerun is kept as a new
 * session (named `name`, else `<session>-rerun-<n>`), the answers copied.
 */
export async function rerun(
  workspace: Workspace,
  replayed: ReplaySession,
  options: { policy?: RewritePolicy; signal?: AbortSignal; save?: boolean; name?: string } = {},
): Promise<RerunResult> {
  const store = await workspace.sessions();
  const [rewriter, retriever, index] = [await workspace.rewriter(), await workspace.searchIndex(), await store.index([])];
  const report = await rerunSession({ store: store.turnStore(), index, config: workspace.config, rewriter, retriever }, replayed, { policy: options.policy, signal: options.signal });
  return { report, saved: options.save ? await saveRerun(store, replayed, report, { name: options.name }) : undefined };
}
