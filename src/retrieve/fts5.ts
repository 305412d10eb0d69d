// The reference keyword search: FTS5's own bm25 over chunks_fts.

import type { Statement } from 'better-sqlite3';
import type { Db } from '../store/db.js';
import type { RankedHit } from './fuse.js';
import type { KeywordSearch } from './interfaces.js';

export class Fts5Search implements KeywordSearch {
  /** One statement per column weights. */
  private readonly statements = new Map<string, Statement<unknown[]>>();

  constructor(private readonly db: Db) {}

  search(match: string, weights: readonly number[], limit: number): RankedHit<number>[] {
    const key = weights.join(',');
    let statement = this.statements.get(key);
    if (!statement) {
      // Ties go to the lower rowid, so equal scores always come back in one order.
      statement = this.db.prepare(
        `SELECT rowid AS id, bm25(chunks_fts, ${weights.map(Number).join(', ')}) AS bm25
         FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY bm25, rowid LIMIT ?`,
      );
      this.statements.set(key, statement);
    }
    try {
      const rows = statement.all(match, limit) as { id: number; bm25: number }[];
      return rows.map((row, i) => ({ id: row.id, rank: i + 1, score: row.bm25 }));
    } catch (error) {
      // buildFtsQuery quotes every token, so a query FTS5 cannot parse is not expected;
      // should one come, the search goes on with its vector side. Any other failure (a
      // damaged index, a missing table) is the user's to know: it is not hidden as
      // "no keyword matches".
      if (error instanceof Error && /^fts5: syntax error|^unterminated string|^unknown special query/.test(error.message)) return [];
      throw error;
    }
  }
}
