// The reference vector search: sqlite-vec's own exact KNN over the vec0 table
// (`embedding MATCH ? AND k = ?`), cosine distance as the table declares it.

import type { Statement } from 'better-sqlite3';
import type { Db } from '../store/db.js';
import { vectorBytes } from '../store/vectors.js';
import type { VectorCandidate, VectorSearch } from './interfaces.js';

/** The vec0 table as it is declared now. */
export interface Vec0Declaration {
  /** Its CREATE statement. */
  sql: string;
  /** NaN if the declaration does not say. */
  dimensions: number;
}

/**
 * Follows the vec0 table's declaration: the same object while the table stays as it
 * is, a new one when it is dropped or created again (a reindex), undefined while
 * there is none. Costs one `PRAGMA schema_version` when nothing changed.
 */
export class Vec0Table {
  private readonly schemaVersion: Statement<unknown[]>;
  private version = -1;
  private declaration: Vec0Declaration | undefined;

  constructor(private readonly db: Db) {
    this.schemaVersion = db.prepare('PRAGMA schema_version').pluck();
  }

  current(): Vec0Declaration | undefined {
    const version = this.schemaVersion.get() as number;
    if (version === this.version) return this.declaration;
    this.version = version;
    const row = this.db.prepare("SELECT sql FROM sqlite_master WHERE name = 'vec_chunks'").get() as { sql: string } | undefined;
    if (row?.sql === this.declaration?.sql) return this.declaration; // another table changed
    this.declaration = row ? { sql: row.sql, dimensions: Number(/float\[(\d+)\]/i.exec(row.sql)?.[1] ?? NaN) } : undefined;
    return this.declaration;
  }
}

export class Vec0Search implements VectorSearch {
  private readonly table: Vec0Table;
  private knn: { declaration: Vec0Declaration; statement: Statement<unknown[]> } | undefined;

  constructor(private readonly db: Db) {
    this.table = new Vec0Table(db);
  }

  /** The vec0 search runs in the returned function. No vec0 table: nothing found. */
  begin(vector: Float32Array, n: number): () => VectorCandidate[] {
    const declaration = this.table.current();
    if (!declaration || n <= 0) return () => [];
    if (this.knn?.declaration !== declaration) {
      const statement = this.db.prepare('SELECT rowid AS id, distance FROM vec_chunks WHERE embedding MATCH ? AND k = ? ORDER BY distance');
      this.knn = { declaration, statement };
    }
    const statement = this.knn.statement;
    return () => statement.all(vectorBytes(vector), n) as VectorCandidate[];
  }
}
