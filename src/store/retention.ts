// Retention for conversation history: turns older than a cutoff are removed
// with their retrieval rows and judgments (never documents). Sessions left without turns go too.

import type { Db } from './db.js';

export interface PruneReport {
  cutoff: string;
  turns: number;
  retrievalRows: number;
  sessions: number;
  dryRun: boolean;
}

export interface PruneOptions {
  /** Count what would go and remove nothing. */
  dryRun?: boolean;
  /** A session kept whole, whatever its age: the one a chat is about to continue. */
  keepSessionId?: string;
}

/** Removes (or with dryRun, counts) turns created before `cutoff`, in one transaction. */
export function pruneTurns(db: Db, cutoff: Date, options: PruneOptions = {}): PruneReport {
  const params = { iso: cutoff.toISOString(), keep: options.keepSessionId ?? null };
  const old = 'SELECT id FROM turns WHERE created_at < @iso AND session_id IS NOT @keep';
  const run = db.transaction(() => {
    const turns = (db.prepare(`SELECT count(*) AS n FROM (${old})`).get(params) as { n: number }).n;
    const retrievalRows = (db.prepare(`SELECT count(*) AS n FROM turn_chunks WHERE turn_id IN (${old})`).get(params) as { n: number }).n;
    // Left without turns: created before the cutoff, or holding only older turns
    // (a fork made today of an old conversation keeps its turns' times).
    const emptied = `SELECT s.id FROM sessions s
      WHERE s.id IS NOT @keep
        AND (s.created_at < @iso OR EXISTS (SELECT 1 FROM turns t WHERE t.session_id = s.id AND t.created_at < @iso))
        AND NOT EXISTS (SELECT 1 FROM turns t WHERE t.session_id = s.id AND t.created_at >= @iso)`;
    const emptiedIds = db.prepare(emptied).pluck().all(params) as string[];
    const sessions = emptiedIds.length;
    if (!options.dryRun) {
      db.prepare(`DELETE FROM turn_chunks WHERE turn_id IN (${old})`).run(params);
      db.prepare(`DELETE FROM turn_relevant WHERE turn_id IN (${old})`).run(params);
      db.prepare(`DELETE FROM turns WHERE id IN (${old})`).run(params);
      const removeSession = db.prepare('DELETE FROM sessions WHERE id = ?');
      for (const id of emptiedIds) removeSession.run(id);
    }
    return { cutoff: params.iso, turns, retrievalRows, sessions, dryRun: Boolean(options.dryRun) };
  });
  return run.immediate();
}
