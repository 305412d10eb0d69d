// `ragline migrate --from <db> --to <db>`: copies an index (documents, chunks, their
// vectors; the keyword index is rebuilt from the chunks) and the sessions (turns,
// the chunks each retrieved, judgments) from an SQLite file to Postgres or back, in
// one transaction on the target, then checks the copy: every count, and a sample
// of turns compared field by field through each store's SessionStore. A target that
// holds anything is refused unless `force`. On Postgres, the sessions are the user's:
// the `user` setting, else the role.

import fs from 'node:fs';
import { sqliteSessionStore, type SessionStore } from '../chat/session-store.js';
import { indexText } from '../ingest/index-text.js';
import { openDatabase } from '../store/db.js';
import { postgresSessionStore } from '../chat/postgres-session-store.js';
import { postgresTransfer } from '../store/postgres/transfer.js';
import { isPostgresUrl, PostgresStore, redactedUrl } from '../store/postgres/store.js';
import { sqliteTransfer, type TransferChunk, type TransferCounts, type TransferDocument, type TransferStore } from '../store/transfer.js';
import { UserError } from '../util/errors.js';

export interface MigrateOptions {
  /** An SQLite file or a postgres:// URL, read. */
  from: string;
  /** An SQLite file (made when missing) or a postgres:// URL, written. */
  to: string;
  /** Copy into a target that holds documents or sessions already. */
  force?: boolean;
  /** Whose sessions, on Postgres (else the role). */
  user?: string;
  /** How many turns to compare field by field after the copy (default 20). */
  sample?: number;
  onProgress?: (progress: MigrateProgress) => void;
}

export type MigrateProgress =
  | { phase: 'start'; source: TransferCounts }
  | { phase: 'documents' | 'sessions'; done: number; total: number }
  | { phase: 'check' };

export interface MigrateSummary {
  from: string;
  to: string;
  /** Whose sessions were copied, where a side is Postgres. */
  owner?: string;
  /** What the source held (on Postgres: the user's sessions) and so was copied. */
  copied: TransferCounts;
  /** What the target holds after. */
  target: TransferCounts;
  /** The turns compared field by field (with their chunks and judgments). */
  turnsCompared: number;
  seconds: number;
}

interface Side {
  transfer: TransferStore;
  sessions: SessionStore;
  owner?: string;
  close(): Promise<void>;
}

async function openSide(db: string, options: { user?: string; create: boolean }): Promise<Side> {
  if (isPostgresUrl(db)) {
    const store = new PostgresStore(db, { user: options.user, max: 1 });
    try {
      const owner = await store.owner();
      return { transfer: postgresTransfer(store, owner), sessions: postgresSessionStore(store, owner), owner, close: () => store.close() };
    } catch (error) {
      await store.close();
      throw error;
    }
  }
  if (!options.create && !fs.existsSync(db)) throw new UserError(`No database at ${db} to migrate from.`, { hint: 'Give --from an SQLite file ragline made, or a postgres:// URL.', exitCode: 2 });
  const handle = openDatabase(db, { create: options.create });
  return { transfer: sqliteTransfer(handle), sessions: sqliteSessionStore(handle), close: async () => void handle.close() };
}

const isEmpty = (counts: TransferCounts) => counts.documents === 0 && counts.sessions === 0;

export async function migrate(options: MigrateOptions): Promise<MigrateSummary> {
  const started = performance.now();
  if (options.from.trim() === options.to.trim()) throw new UserError('--from and --to name the same database.', { exitCode: 2 });
  const source = await openSide(options.from, { user: options.user, create: false });
  let target: Side | undefined;
  try {
    target = await openSide(options.to, { user: options.user, create: true });
    const [copied, before, fingerprint] = [await source.transfer.counts(), await target.transfer.counts(), await source.transfer.fingerprint()];
    if (!isEmpty(before) && !options.force) {
      throw new UserError(`${shown(options.to)} holds ${before.documents} documents and ${before.sessions} sessions already.`, {
        hint: 'Migrate into an empty database, or add --force to copy into this one (a document at the same folder and path is replaced; sessions are added).',
        exitCode: 2,
      });
    }
    const keys = await target.transfer.sessionKeys();
    for await (const session of source.transfer.sessions()) {
      if (keys.ids.has(session.id)) throw new UserError(`${shown(options.to)} holds a session with the id ${session.id} already.`, { hint: 'Remove it there first (ragline sessions rm).', exitCode: 2 });
      if (session.name !== null && keys.names.has(session.name)) {
        throw new UserError(`${shown(options.to)} holds a session named "${session.name}" already.`, { hint: 'Rename one of them first (ragline sessions rename).', exitCode: 2 });
      }
    }
    options.onProgress?.({ phase: 'start', source: copied });
    let documents = 0;
    let sessions = 0;
    await target.transfer.write(fingerprint, await source.transfer.readerVersions(), withKeywordText(source.transfer.documents()), source.transfer.sessions(), (what) => {
      if (what === 'document') options.onProgress?.({ phase: 'documents', done: ++documents, total: copied.documents });
      else options.onProgress?.({ phase: 'sessions', done: ++sessions, total: copied.sessions });
    });
    options.onProgress?.({ phase: 'check' });
    const after = await target.transfer.counts();
    checkCounts(copied, before, after);
    const turnsCompared = await compareSample(source, target, options.sample ?? 20);
    return { from: shown(options.from), to: shown(options.to), owner: source.owner ?? target.owner, copied, target: after, turnsCompared, seconds: (performance.now() - started) / 1000 };
  } finally {
    await target?.close();
    await source.close();
  }
}

function shown(db: string): string {
  return isPostgresUrl(db) ? redactedUrl(db) : db;
}

/**
 * The chunks with their keyword text: an SQLite index keeps none (its FTS5 table is
 * contentless), so it is made again as the ingest made it, from the document's title,
 * the chunk's heading path and its text.
 */
async function* withKeywordText(documents: AsyncIterable<{ document: TransferDocument; chunks: TransferChunk[] }>): AsyncIterable<{ document: TransferDocument; chunks: TransferChunk[] }> {
  for await (const { document, chunks } of documents) {
    yield {
      document,
      chunks: chunks.map((chunk) => (chunk.keyword ? chunk : { ...chunk, keyword: indexText(document.title ?? undefined, chunk.heading === '' ? [] : chunk.heading.split(' > '), chunk.text).fts })),
    };
  }
}

/** Every row copied arrived: the sessions' rows on top of what the target held, and (into an empty target) the index's as well. */
function checkCounts(copied: TransferCounts, before: TransferCounts, after: TransferCounts): void {
  const keys: (keyof TransferCounts)[] = ['sessions', 'turns', 'turnChunks', 'judgedDocuments'];
  // Into a target with an index, a document at the same folder and path was replaced: its counts cannot be added up.
  if (before.documents === 0) keys.push('documents', 'chunks', 'vectors');
  for (const key of keys) {
    if (after[key] !== before[key] + copied[key]) {
      throw new Error(`The migration's check failed: the target holds ${after[key]} ${key} where ${before[key] + copied[key]} were expected. Nothing is wrong with the source.`);
    }
  }
}

/** Up to `sample` turns, spread over the sessions, read back from both stores and compared field by field. */
async function compareSample(source: Side, target: Side, sample: number): Promise<number> {
  const listed = await source.sessions.list();
  const all: { sessionId: string; ordinal: number }[] = [];
  for (const session of listed) for (const turn of await source.sessions.turns(session.id)) all.push({ sessionId: session.id, ordinal: turn.ordinal });
  const step = Math.max(1, all.length / Math.max(1, sample));
  const picked = new Map<string, Set<number>>();
  for (let i = 0; i < all.length; i += step) {
    const turn = all[Math.floor(i)]!;
    picked.set(turn.sessionId, (picked.get(turn.sessionId) ?? new Set()).add(turn.ordinal));
  }
  let compared = 0;
  for (const [sessionId, ordinals] of picked) {
    const [was, now] = [await source.sessions.turns(sessionId), await target.sessions.turns(sessionId)];
    const [wasJudged, nowJudged] = [await source.sessions.judgments(sessionId), await target.sessions.judgments(sessionId)];
    for (const ordinal of ordinals) {
      const before = was.find((turn) => turn.ordinal === ordinal)!;
      const after = now.find((turn) => turn.ordinal === ordinal);
      const where = `turn ${ordinal} of session ${sessionId}`;
      if (!after) throw new Error(`The migration's check failed: ${where} is missing from the target.`);
      sameFields(where, { ...before, id: 0 }, { ...after, id: 0 });
      sameFields(`${where}'s chunks`, await source.sessions.turnChunks(before.id), await target.sessions.turnChunks(after.id), ['turnId']);
      sameFields(`${where}'s judgment`, wasJudged.get(before.id) ?? null, nowJudged.get(after.id) ?? null, ['turnId']);
      compared++;
    }
  }
  return compared;
}

function sameFields(where: string, before: unknown, after: unknown, ignore: string[] = []): void {
  const plain = (value: unknown) => JSON.stringify(value, (key, field) => (ignore.includes(key) ? undefined : field));
  if (plain(before) === plain(after)) return;
  const a = before as Record<string, unknown>;
  const b = after as Record<string, unknown>;
  const field = a && b && typeof a === 'object' ? Object.keys({ ...a, ...b }).find((key) => plain(a[key]) !== plain(b[key])) : undefined;
  throw new Error(`The migration's check failed: ${where} differs in the target${field ? ` (${field}: ${plain(a[field])} against ${plain(b[field])})` : ''}.`);
}
