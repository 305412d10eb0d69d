// Asks SQLite's own FTS5 `unicode61 remove_diacritics 2` tokenizer (the one bundled in
// better-sqlite3) what terms it makes of some texts. Shared by the generator of
// src/text/unicode61-data.ts and by test/unicode61.test.ts, so the table and the check
// of it come from the same oracle. Plain JavaScript, so `node` can run the generator.

import Database from 'better-sqlite3';

/**
 * An in-memory FTS5 table and its fts5vocab instance view. `terms(texts)` indexes each
 * text as one row and returns, per text, its terms in token order. `tokenizer` is the
 * table's tokenize option (add `porter` for the stems ragline's chunks_fts holds).
 */
export function openFts5Oracle(tokenizer = 'unicode61 remove_diacritics 2') {
  const db = new Database(':memory:');
  db.exec(`
    CREATE VIRTUAL TABLE t USING fts5(x, content = '', tokenize = '${tokenizer}');
    CREATE VIRTUAL TABLE v USING fts5vocab(t, instance);
  `);
  const insert = db.prepare('INSERT INTO t (rowid, x) VALUES (?, ?)');
  const read = db.prepare('SELECT doc, term FROM v ORDER BY doc, "offset"').raw();
  const clear = db.prepare("INSERT INTO t (t) VALUES ('delete-all')");

  /**
   * @param {string[]} texts
   * @returns {string[][]}
   */
  function terms(texts) {
    db.transaction(() => {
      clear.run();
      texts.forEach((text, i) => insert.run(i + 1, text));
    })();
    /** @type {string[][]} */
    const out = texts.map(() => []);
    for (const [doc, term] of read.iterate()) out[doc - 1].push(term);
    return out;
  }

  return {
    terms,
    /** @returns {string} */
    sqliteVersion: () => db.prepare('SELECT sqlite_version()').pluck().get(),
    close: () => db.close(),
  };
}

/**
 * The two probes that tell what unicode61 does with one code point: alone before a
 * word (does it start a token?) and between two letters (does it continue one, and
 * what does it fold to?).
 * @param {number} cp
 * @returns {[string, string]}
 */
export function probesOf(cp) {
  const ch = String.fromCodePoint(cp);
  return [`${ch} y`, `a${ch}b`];
}

/**
 * Reads the probes' terms back as a class and a fold.
 * class 1: starts (and continues) a token; 2: only continues one; 0: separator.
 * fold: what the code point becomes inside a token ('' = dropped), null for separators.
 * @param {string[]} alone terms of the first probe
 * @param {string[]} inner terms of the second probe
 * @returns {{ cls: 0 | 1 | 2, fold: string | null }}
 */
export function classify(alone, inner) {
  const starts = alone.length === 2;
  if (!starts && !(alone.length === 1 && alone[0] === 'y')) throw new Error(`odd probe: ${JSON.stringify(alone)}`);
  if (inner.length === 2 && inner[0] === 'a' && inner[1] === 'b') {
    if (starts) throw new Error('a token character that does not continue a token');
    return { cls: 0, fold: null };
  }
  if (inner.length !== 1 || !inner[0].startsWith('a') || !inner[0].endsWith('b')) {
    throw new Error(`odd probe: ${JSON.stringify(inner)}`);
  }
  const fold = inner[0].slice(1, -1);
  if (starts && alone[0] !== fold) throw new Error(`fold differs at token start: ${JSON.stringify([alone, inner])}`);
  return { cls: starts ? 1 : 2, fold };
}
