// Keeping the keyword index true: rewritten from the stored chunks when it was
// written in an older text version, or when its totals count too many deleted rows.

import type { Db } from '../store/db.js';
import { keywordTotalRows } from '../store/documents.js';
import { getFingerprint, keywordTextVersion, setFingerprint } from '../store/meta.js';
import { INDEX_TEXT_VERSION } from '../text/symbols.js';
import type { indexText as IndexText } from './index-text.js';

/**
 * How far the keyword index's row count may run ahead of the live chunks, as a share of
 * them, before the index is rewritten. A contentless FTS5 table cannot take a deleted
 * row out of its totals, so every chunk replaced or removed stays counted, and bm25
 * weighs terms by too many rows and too long an average. Measured on the CMake help
 * (2.5k chunks, bench/ingest/fts-totals.mjs): with 4% too many rows the top-10 bm25
 * scores are 1.6% off a fresh index's and 15% of the queries order their top 10
 * otherwise; at 11%, 4.2% and 22%; at 27%, 9.5% and 38%. The rewrite takes 0.06 s
 * there (25 us a chunk); at 10% it runs once per tenth of the index replaced, about
 * 250 us per replaced chunk, less than the ingest spent on writing that chunk.
 */
export const KEYWORD_DRIFT_BOUND = 0.1;

/** Whether the keyword index counts more rows than KEYWORD_DRIFT_BOUND allows over the live chunks. */
export function keywordsDrifted(db: Db): boolean {
  const live = db.prepare('SELECT count(*) FROM chunks').pluck().get() as number;
  return keywordTotalRows(db) - live > live * KEYWORD_DRIFT_BOUND;
}

/** Whether the keyword index was written in an older text version than this build's. */
export function keywordsOutdated(db: Db): boolean {
  return keywordTextVersion(getFingerprint(db)!) < INDEX_TEXT_VERSION;
}

/**
 * Writes the keyword index again from the stored chunks, in the current text version,
 * with true totals: after an index written before names such as C++ were spelled as
 * words, or once its totals count too many deleted rows. The chunks and their vectors
 * stay (same ids), so nothing is embedded again. One transaction, if `needed()` still
 * holds inside it (another ingest may have done it).
 */
export function rewriteKeywordIndex(db: Db, indexText: typeof IndexText, needed: () => boolean): void {
  db.transaction(() => {
    if (!needed()) return;
    const fingerprint = getFingerprint(db)!;
    db.exec("INSERT INTO chunks_fts (chunks_fts) VALUES ('delete-all')");
    const insert = db.prepare('INSERT INTO chunks_fts (rowid, title, body) VALUES (?, ?, ?)');
    const page = db.prepare(
      'SELECT c.id AS id, d.title AS title, c.heading AS heading, c.text AS text FROM chunks c JOIN documents d ON d.id = c.document_id WHERE c.id > ? ORDER BY c.id LIMIT 2000',
    );
    for (let last = 0; ; ) {
      const rows = page.all(last) as { id: number; title: string | null; heading: string; text: string }[];
      if (rows.length === 0) break;
      for (const row of rows) {
        const { fts } = indexText(row.title ?? undefined, row.heading ? row.heading.split(' > ') : [], row.text);
        insert.run(row.id, fts.title, fts.body);
      }
      last = rows[rows.length - 1]!.id;
    }
    if (keywordTextVersion(fingerprint) < INDEX_TEXT_VERSION) setFingerprint(db, { ...fingerprint, text: INDEX_TEXT_VERSION });
  }).immediate();
}
