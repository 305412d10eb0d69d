// Retention of conversation history: turns older than an age are removed (never
// documents), on demand (`prune`) or when a chat starts (`history.retention`).

import { parseDuration } from '../config/index.js';
import { pruneTurns, type PruneOptions, type PruneReport } from '../store/retention.js';
import type { Workspace } from './workspace.js';

/**
 * Removes (or with `dryRun`, counts) the turns older than `olderThanMs`, except those
 * of `keepSessionId`; on Postgres, of the user's own sessions.
 */
export async function prune(workspace: Workspace, olderThanMs: number, options: PruneOptions = {}): Promise<PruneReport> {
  const cutoff = new Date(Date.now() - olderThanMs);
  if (!workspace.postgres) return pruneTurns(workspace.db, cutoff, options);
  const { pgPruneTurns } = await import('../store/postgres/sessions.js');
  return pgPruneTurns(workspace.postgres, await workspace.postgres.owner(), cutoff, options);
}

/**
 * Applies the `history.retention` setting, if set: the report, or undefined when it
 * is unset or `off`. `keepSessionId` is the session the chat continues: it is kept
 * whole, however old, so a chat never loses the conversation it was asked to continue.
 */
export async function applyRetention(workspace: Workspace, options: { keepSessionId?: string } = {}): Promise<{ retention: string; report: PruneReport } | undefined> {
  const retention = workspace.config.history.retention;
  if (!retention || retention === 'off') return undefined;
  return { retention, report: await prune(workspace, parseDuration(retention, 'history.retention'), { keepSessionId: options.keepSessionId }) };
}
