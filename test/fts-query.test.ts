import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildFtsQuery, quoteFtsToken } from '../src/retrieve/fts-query.js';

// A real FTS5 table with the tokenizer and title/body columns the lab recommends.
let db: Database.Database;
let search: Database.Statement;

beforeAll(() => {
  db = new Database(':memory:');
  db.exec(`CREATE VIRTUAL TABLE chunks_fts USING fts5(title, body, tokenize = "porter unicode61 remove_diacritics 2")`);
  const ins = db.prepare('INSERT INTO chunks_fts(rowid, title, body) VALUES (?, ?, ?)');
  ins.run(1, 'Installing the SDK', 'Use CocoaPods or Carthage to install the mobile SDK.');
  ins.run(2, 'Database limits', 'Set max_connections on the ibm-cloud database. NOT NULL columns.');
  ins.run(3, 'Unicode', 'Привет мир. 東京タワー. مرحبا. Café crème.');
  search = db.prepare('SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY bm25(chunks_fts, 4.0, 1.0)');
});
afterAll(() => db.close());

const run = (text: string): number[] => {
  const q = buildFtsQuery(text);
  return q === null ? [] : search.all(q).map((r) => (r as { rowid: number }).rowid);
};

describe('buildFtsQuery', () => {
  it('quotes every token and joins with OR, dropping stopwords', () => {
    expect(buildFtsQuery('How do I install the mobile SDK?')).toBe('"install" OR "mobile" OR "sdk"');
    expect(buildFtsQuery('install SDK', { operator: 'AND' })).toBe('"install" AND "sdk"');
    expect(quoteFtsToken('he"llo')).toBe('"he""llo"');
  });

  it('keeps stopwords when nothing else is left', () => {
    expect(buildFtsQuery('what is it')).toBe('"what" OR "is" OR "it"');
  });

  it('returns null when nothing searchable is left', () => {
    for (const text of ['', '   ', '?!', '🎉🎉', '"', '()', '\u0000\u0007', '* ^ : - +']) {
      expect(buildFtsQuery(text), JSON.stringify(text)).toBeNull();
    }
  });

  it('finds documents through stemming, identifiers and other scripts', () => {
    expect(run('installing carthage')).toContain(1);
    expect(run('max_connections')).toEqual([2]);
    expect(run('IBM-Cloud')).toEqual([2]);
    expect(run('привет')).toEqual([3]);
    expect(run('東京タワー')).toEqual([3]);
    expect(run('cafe')).toEqual([3]);
  });

  it('treats FTS5 operators and syntax characters written by the user as plain words', () => {
    const hostile = [
      'NOT NULL',
      'AND OR NOT NEAR',
      'NEAR(sdk install, 3)',
      'sdk AND',
      'OR',
      '"unbalanced quote',
      'say ""hi""',
      '(((sdk',
      'sdk)))',
      'title:sdk',
      'body : install',
      '^sdk',
      'sdk*',
      '* sdk',
      '-sdk +install',
      '{title body}: sdk',
      'sdk\u0000install',
      'sdk\u202einstall\u200b',
      'sdk 🎉 install 👩‍💻',
      "it's O'Reilly's",
      'a'.repeat(5000),
      '\uD800 lone surrogate',
    ];
    for (const text of hostile) expect(() => run(text), JSON.stringify(text)).not.toThrow();
    expect(run('NOT NULL')).toEqual([2]);
    expect(run('title:sdk')).toContain(1);
  });

  it('property: MATCH never throws on arbitrary text (fixed seed)', () => {
    const alphabet = fc.constantFrom(
      ...'aZ09 "\'()*^:-+_.{}[]<>,;!?\\/\t\n\u0000\u0001\u007fé東к🎉\u200d\u202eANDORNOTNEAR'.split(''),
      'AND',
      'OR',
      'NOT',
      'NEAR',
      ' NEAR(',
    );
    const text = fc.oneof(
      fc.string({ maxLength: 80 }),
      fc.string({ unit: 'binary', maxLength: 40 }),
      fc.array(alphabet, { maxLength: 40 }).map((parts) => parts.join('')),
    );
    fc.assert(
      fc.property(text, (t) => {
        const q = buildFtsQuery(t);
        if (q !== null) search.all(q);
      }),
      { seed: 20250101, numRuns: 500 },
    );
  });
});
