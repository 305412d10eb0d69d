// Judgments of stored turns: which documents were relevant to a turn's question
// (picked from the chunks it retrieved, or named as what should have been found)
// and whether nothing it retrieved was useful. They turn a person's own
// conversations into a regression set: `eval --from-sessions` scores them and
// `replay --rerun` checks them. Stored beside the turn (turns.judged_at,
// turns.judged_none and turn_relevant), so a fork keeps them and removing the
// turn removes them.

import path from 'node:path';
import type { Db } from './db.js';
import { DocumentNaming } from './document-names.js';
import { turnOrdinals, turnsPhrase } from './sessions.js';
import { UserError } from '../util/errors.js';

export type RelevantSource = 'retrieved' | 'expected';

export interface RelevantDocument {
  /** documents.path when the name resolved to an indexed document, else the name as given. */
  documentPath: string;
  /** retrieved: picked from the turn's chunks; expected: named as what should have been found. */
  source: RelevantSource;
  /** The rank of the retrieved chunk it was picked from. */
  chunkRank: number | null;
}

export interface TurnJudgment {
  turnId: number;
  /** ISO 8601 UTC of the last change. */
  judgedAt: string;
  /** Nothing the turn retrieved was useful. */
  noneUseful: boolean;
  /** Relevant documents, in the order they were judged. */
  relevant: RelevantDocument[];
}

export interface RelevantInput {
  documentPath: string;
  source: RelevantSource;
  chunkRank?: number | null;
}

export interface JudgmentChange {
  /** Documents to add (an existing one is updated). */
  add?: RelevantInput[];
  /** true: nothing retrieved was useful (documents picked from the chunks are dropped); false: clears that mark. */
  noneUseful?: boolean;
  /** Start from an empty judgment instead of the stored one. */
  replace?: boolean;
}

interface JudgedRow {
  judged_at: string | null;
  judged_none: number;
}

/** The judgment of a turn, or null when it has none. */
export function getJudgment(db: Db, turnId: number): TurnJudgment | null {
  const row = db.prepare('SELECT judged_at, judged_none FROM turns WHERE id = ?').get(turnId) as JudgedRow | undefined;
  if (!row || row.judged_at === null) return null;
  const relevant = db
    .prepare(
      `SELECT document_path AS documentPath, source, chunk_rank AS chunkRank
       FROM turn_relevant WHERE turn_id = ? ORDER BY rowid`,
    )
    .all(turnId) as RelevantDocument[];
  return { turnId, judgedAt: row.judged_at, noneUseful: row.judged_none === 1, relevant };
}

/** Judgments of a session's turns, by turn id. */
export function loadJudgments(db: Db, sessionId: string): Map<number, TurnJudgment> {
  const ids = db
    .prepare('SELECT id FROM turns WHERE session_id = ? AND judged_at IS NOT NULL ORDER BY ordinal')
    .pluck()
    .all(sessionId) as number[];
  return new Map(ids.map((id) => [id, getJudgment(db, id)!]));
}

/** Ids of the sessions that hold at least one judged turn. */
export function sessionsWithJudgments(db: Db): string[] {
  return db.prepare('SELECT DISTINCT session_id FROM turns WHERE judged_at IS NOT NULL').pluck().all() as string[];
}

/** Applies `change` to a turn's judgment in one transaction and returns the result. */
export function judgeTurn(db: Db, turnId: number, change: JudgmentChange): TurnJudgment {
  return db
    .transaction(() => {
      const exists = db.prepare('SELECT 1 FROM turns WHERE id = ?').get(turnId);
      if (!exists) throw new Error(`turn ${turnId} does not exist`);
      let none = change.replace ? false : getJudgment(db, turnId)?.noneUseful ?? false;
      if (change.replace) db.prepare('DELETE FROM turn_relevant WHERE turn_id = ?').run(turnId);
      if (change.noneUseful === true) {
        none = true;
        db.prepare("DELETE FROM turn_relevant WHERE turn_id = ? AND source = 'retrieved'").run(turnId);
      } else if (change.noneUseful === false) {
        none = false;
      }
      const upsert = db.prepare(
        `INSERT INTO turn_relevant (turn_id, document_path, source, chunk_rank) VALUES (?, ?, ?, ?)
         ON CONFLICT (turn_id, document_path) DO UPDATE SET source = excluded.source, chunk_rank = excluded.chunk_rank`,
      );
      for (const doc of change.add ?? []) {
        // A judgment names documents: an empty name is a caller's mistake, never stored.
        if (doc.documentPath.trim() === '') throw new Error('a relevant document needs a name');
        upsert.run(turnId, doc.documentPath, doc.source, doc.chunkRank ?? null);
      }
      db.prepare('UPDATE turns SET judged_at = ?, judged_none = ? WHERE id = ?').run(new Date().toISOString(), none ? 1 : 0, turnId);
      return getJudgment(db, turnId)!;
    })
    .immediate();
}

/** Removes a turn's judgment. */
export function clearJudgment(db: Db, turnId: number): void {
  db.transaction(() => {
    db.prepare('DELETE FROM turn_relevant WHERE turn_id = ?').run(turnId);
    db.prepare('UPDATE turns SET judged_at = NULL, judged_none = 0 WHERE id = ?').run(turnId);
  }).immediate();
}

/** The id of turn `ordinal` of a session; a UserError naming the turns there are when it does not exist. */
export function requireTurnId(db: Db, session: { id: string; name: string | null }, ordinal: number): number {
  const id = db.prepare('SELECT id FROM turns WHERE session_id = ? AND ordinal = ?').pluck().get(session.id, ordinal) as number | undefined;
  if (id !== undefined) return id;
  throw noTurnError(session, ordinal, turnOrdinals(db, session.id));
}

/** The error of a turn to judge that a session (holding turns `ordinals`) does not have (on either store). */
export function noTurnError(session: { id: string; name: string | null }, ordinal: number, ordinals: readonly number[]): UserError {
  const label = session.name ?? session.id;
  return new UserError(ordinals.length === 0 ? `Session ${label} has no turns to judge.` : `Session ${label} has ${turnsPhrase(ordinals)}; there is no turn ${ordinal}.`, {
    hint: `See its turns with: ragline sessions show ${label}`,
    exitCode: 2,
  });
}

export interface ResolvedName {
  /** The stored document path, or the name as given (made relative to an ingested folder when it lies in one). */
  documentPath: string;
  indexed: boolean;
}

/**
 * Resolves a document a person names: its name in the index (its path relative to
 * the ingested folder, with the folder's name before it when folders share the path),
 * a file path (absolute, or relative to `cwd`) inside an ingested folder, a file name
 * (`authentication.md`), or a file name or stored path without its extension
 * (`reference/cli`; eval's tasks name documents by the file name without its
 * extension, `authentication`, which resolves here too). A name that fits more than
 * one document is the first of them in ingest order, as eval resolves file names.
 */
export function resolveDocumentName(source: Db | DocumentNaming, name: string, cwd: string): ResolvedName {
  const asWritten = name.trim().replace(/\\/g, '/');
  // `./guides/auth.md` names the stored path guides/auth.md.
  const wanted = asWritten.startsWith('./') ? path.posix.normalize(asWritten) : asWritten;
  const names = source instanceof DocumentNaming ? source : new DocumentNaming(source);
  const named = names.find(wanted)[0];
  if (named) return { documentPath: named.name, indexed: true };
  const absolute = path.resolve(cwd, asWritten);
  let inside: string | undefined;
  for (const root of names.roots()) {
    const relative = path.relative(root, absolute);
    if (relative && !relative.startsWith('..') && !path.isAbsolute(relative)) {
      const posix = relative.split(path.sep).join('/');
      if (names.rows.held(root, posix)) return { documentPath: names.namesOf([{ root, path: posix }])[0]!, indexed: true };
      inside ??= posix;
    }
  }
  // A path without its extension, or a bare file name without it; first match in
  // ingest order (as eval resolves file names).
  const bare = !wanted.includes('/');
  const candidates = names.rows.withoutExtension(wanted, bare);
  const found =
    candidates.find((doc) => withoutExtension(doc.path) === wanted) ??
    (bare ? candidates.find((doc) => stemOf(doc.path) === wanted || path.posix.basename(doc.path) === wanted) : undefined);
  if (found) return { documentPath: names.namesOf([found])[0]!, indexed: true };
  // Kept as named, in one spelling: `notes//a.md` and `notes/./a.md` are `notes/a.md`.
  return { documentPath: inside ?? (wanted.includes('/') ? path.posix.normalize(wanted).replace(/(.)\/$/, '$1') : wanted), indexed: false };
}

function withoutExtension(p: string): string {
  const base = path.posix.basename(p);
  return base.includes('.') ? p.slice(0, p.length - (base.length - base.lastIndexOf('.'))) : p;
}

function stemOf(p: string): string {
  const base = path.posix.basename(p);
  return base.includes('.') ? base.slice(0, base.lastIndexOf('.')) : base;
}
