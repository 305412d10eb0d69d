// Retention of conversation history: turns older than an age are removed (never
// documents), on demand (`prune`) or when a chat starts (`history.retention`).

import { parseDuration } from '../config/index.js';
import { pruneTurns, type PruneOptions, type PruneReport } from '../store/retention.js';
import type { Workspace } from './workspace.js';

/** Removes (or with `dryRun`, counts) the turns older than `olderThanMs`, except those of `keepSessionId`. */
export function prune(workspace: Workspace, olderThanMs: number, options: PruneOptions = {}): PruneReport {
  return pruneTurns(workspace.db, new Date(Date.now() - olderThanMs), options);
}

/**
 * Applies the `history.retention` setting, if set: the report, or undefined when it
 * is unset or `off`. `keepSessionId` is the session the chat continues: it is kept
 * whole, however old, so a chat never loses the conversation it was asked to continue.
 */
export function applyRetention(workspace: Workspace, options: { keepSessionId?: string } = {}): { retention: string; report: PruneReport } | undefined {
  const retention = workspace.config.history.retention;
  if (!retention || retention === 'off') return undefined;
  return { retention, report: prune(workspace, parseDuration(retention, 'history.retention'), { keepSessionId: options.keepSessionId }) };
}
