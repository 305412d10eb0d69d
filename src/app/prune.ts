// Retention of conversation history: turns older than an age are removed (never
// documents), on demand (`prune`) or when a chat starts (`history.retention`).

import { parseDuration } from '../config/index.js';
import { pruneTurns, type PruneReport } from '../store/retention.js';
import type { Workspace } from './workspace.js';

/** Removes (or with `dryRun`, counts) the turns older than `olderThanMs`. */
export function prune(workspace: Workspace, olderThanMs: number, options: { dryRun?: boolean } = {}): PruneReport {
  return pruneTurns(workspace.db, new Date(Date.now() - olderThanMs), Boolean(options.dryRun));
}

/** Applies the `history.retention` setting, if set: the report, or undefined when it is unset. */
export function applyRetention(workspace: Workspace): { retention: string; report: PruneReport } | undefined {
  const retention = workspace.config.history.retention;
  if (!retention) return undefined;
  return { retention, report: prune(workspace, parseDuration(retention, 'history.retention')) };
}
