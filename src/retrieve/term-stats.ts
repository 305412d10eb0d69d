// How common a word is in the index: the share of chunks whose text holds it, read
// from FTS5's own vocabulary (an fts5vocab table over chunks_fts), so the offline
// rewriter can tell a vague question ("Investments?": every word in thousands of
// chunks) from a specific one ("carthage?") without a model or a dictionary.

import type { Statement } from 'better-sqlite3';
import type { Db } from '../store/db.js';
import { ftsStem } from '../text/stem.js';

/** Share of the indexed chunks holding `word` (0 for an unknown word or an empty index). */
export type TermShare = (word: string) => number;

/**
 * The keyword index's vocabulary as a table (FTS5's fts5vocab over chunks_fts, one row
 * per term with the number of chunks holding it), made in the connection's temp
 * schema: nothing is written to the file. Returns its name.
 */
export function vocabularyTable(db: Db): string {
  db.exec('CREATE VIRTUAL TABLE IF NOT EXISTS temp.ragline_vocab USING fts5vocab(main, chunks_fts, row)');
  return 'temp.ragline_vocab';
}

/** An in-memory keyword copy: how many chunks hold a term (ftsStem of a word), of how many. */
export interface TermCounts {
  holding(term: string): number;
  readonly size: number;
}

/** Each connection's keyword copy: up to date when it is loaded, undefined while it is not. */
const copies = new WeakMap<Db, () => TermCounts | undefined>();

/** Registers the keyword copy of `db` (memory/keyword-copy.ts): termShares asks it first. */
export function registerTermCounts(db: Db, counts: () => TermCounts | undefined): void {
  copies.set(db, counts);
}

/**
 * A `TermShare` over the current index. Nothing is read until the first call; then
 * each word is looked up once, and the chunk count read once, at the first word some
 * chunk holds. The vocabulary table lives in the connection's temp schema.
 */
export function termShares(db: Db): TermShare {
  let statement: Statement<unknown[]> | undefined;
  let total: number | undefined;
  const cache = new Map<string, number>();
  // Each read runs in a read transaction: on a chat's long-lived connection, a read on
  // its own failed with `database schema has changed` (2-3 in 1000) while another
  // process changed the schema many times in a row (test/store.test.ts).
  const open = db.transaction(() => db.prepare(`SELECT doc FROM ${vocabularyTable(db)} WHERE term = ?`));
  const documents = db.transaction((term: string) => (statement!.get(term) as { doc: number } | undefined)?.doc ?? 0);
  // The chunk count is read only once a word is found: a word no chunk holds needs none.
  const chunks = db.transaction(() => chunkCount(db));
  // The keyword copy, asked (and brought up to date) once, at the first word; null: not loaded.
  let copy: TermCounts | null | undefined;
  return (word) => {
    const term = ftsStem(word.toLowerCase());
    let share = cache.get(term);
    if (share === undefined) copy ??= copies.get(db)?.() ?? null;
    if (share === undefined && copy) {
      const holding = copy.holding(term);
      share = holding > 0 && copy.size > 0 ? holding / copy.size : 0;
      cache.set(term, share);
    } else if (share === undefined) {
      statement ??= open();
      const holding = documents(term);
      total ??= holding > 0 ? chunks() : undefined;
      share = holding > 0 && total ? holding / total : 0;
      cache.set(term, share);
    }
    return share;
  };
}

/** The chunk count of each connection, and when it was read. */
const counted = new WeakMap<Db, { stamp: string; count: number }>();

/**
 * How many chunks the index holds. Counting them is a scan (0.8 ms at 100k chunks,
 * which every offline answer with a name in its question paid), so the count is kept
 * per connection until the database changes: another connection's commit (`PRAGMA
 * data_version`), a schema change, or a chunk written on this one (the highest chunk
 * id; a removal alone on this connection keeps an older, larger count).
 */
export function chunkCount(db: Db): number {
  const stamp = `${db.pragma('data_version', { simple: true })}:${db.pragma('schema_version', { simple: true })}:${(db.prepare('SELECT max(id) AS id FROM chunks').get() as { id: number | null }).id ?? 0}`;
  const known = counted.get(db);
  if (known?.stamp === stamp) return known.count;
  const count = (db.prepare('SELECT count(*) AS n FROM chunks').get() as { n: number }).n;
  counted.set(db, { stamp, count });
  return count;
}

/**
 * How many chunks hold a word, counted up to `atMost` + 1: a keyword search that
 * stops there. FTS5's vocabulary counts every chunk that holds a word (a millisecond
 * for a word in a fifth of 100k chunks); this reads at most `atMost` + 1 of them.
 * Cached per word and bound.
 */
export function chunksHolding(db: Db): (word: string, atMost: number) => number {
  const statement = db.prepare('SELECT count(*) AS n FROM (SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT ?)');
  // Per word, the count read and its bound: a smaller bound is answered from it.
  const cache = new Map<string, { count: number; bound: number }>();
  return (word, atMost) => {
    const key = word.toLowerCase();
    const known = cache.get(key);
    if (known && (known.bound >= atMost || known.count <= known.bound)) return Math.min(known.count, atMost + 1);
    const count = (statement.get(`"${word.replace(/"/g, '""')}"`, atMost + 1) as { n: number }).n;
    cache.set(key, { count, bound: atMost });
    return count;
  };
}
