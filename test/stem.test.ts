// ftsStem against SQLite's own porter tokenizer, token by token: each word is a row of
// an in-memory FTS5 table, and fts5vocab says which term FTS5 stored for it
// (test/helpers/fts5-terms.mjs).
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ftsStem, stem, tokenize } from '../src/text/index.js';
import { openFts5Oracle } from './helpers/fts5-terms.mjs';

function sqliteStems(words: string[]): string[] {
  const oracle = openFts5Oracle('porter unicode61 remove_diacritics 2');
  try {
    return oracle.terms(words).map((terms) => terms[0]!);
  } finally {
    oracle.close();
  }
}

function fixtureWords(): string[] {
  const words = new Set<string>();
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(file);
      else for (const word of tokenize(fs.readFileSync(file, 'utf8'))) words.add(word);
    }
  };
  walk(path.join(import.meta.dirname, '../fixtures/docs'));
  return [...words];
}

// The textbook examples of every step, FTS5's own departures, digits and other scripts.
const HAND_PICKED = [
  'caresses', 'ponies', 'ties', 'caress', 'cats', 'feed', 'agreed', 'plastered', 'bled', 'motoring', 'sing',
  'conflated', 'troubled', 'sized', 'hopping', 'tanned', 'falling', 'hissing', 'fizzed', 'failing', 'filing',
  'happy', 'sky', 'relational', 'conditional', 'rational', 'valenci', 'hesitanci', 'digitizer', 'conformabli',
  'radicalli', 'differentli', 'vileli', 'analogousli', 'vietnamization', 'predication', 'operator', 'feudalism',
  'decisiveness', 'hopefulness', 'callousness', 'formaliti', 'sensitiviti', 'sensibiliti', 'triplicate',
  'formative', 'formalize', 'electriciti', 'electrical', 'hopeful', 'goodness', 'revival', 'allowance',
  'inference', 'airliner', 'gyroscopic', 'adjustable', 'defensible', 'irritant', 'replacement', 'adjustment',
  'dependent', 'adoption', 'homologou', 'communism', 'activate', 'angulariti', 'homologous', 'effective',
  'bowdlerize', 'probate', 'rate', 'cease', 'controll', 'roll', 'aed', 'yyed', 'ayes', 'yes', 'eed', 'ied',
  '401ks', '1960s', '10000mbps', '1101primary', 'h1b', 'w2s', 'ab', 'abs', 'ing', 'ssss',
  'привет', 'приветs', 'аs', 'ありがとう', 'naïve', 'x'.repeat(61) + 'ing', 'x'.repeat(62) + 'ing', 'é'.repeat(31) + 'ing',
];

describe('ftsStem', () => {
  it('stores the term SQLite FTS5 porter stores, for every word of the fixtures and the hand-picked cases', () => {
    const words = [...new Set([...HAND_PICKED.flatMap((w) => tokenize(w)), ...fixtureWords()])];
    expect(words.length).toBeGreaterThan(1000);
    const expected = sqliteStems(words);
    const differing = words.filter((word, i) => ftsStem(word) !== expected[i]).map((word) => `${word}: ${ftsStem(word)} != ${expected[words.indexOf(word)]}`);
    expect(differing).toEqual([]);
  });

  it('stems tokens with digits and other scripts, as FTS5 does; stem() leaves them alone', () => {
    expect(ftsStem('401ks')).toBe('401k');
    expect(stem('401ks')).toBe('401ks');
    expect(ftsStem('connections')).toBe('connect');
    expect(stem('connections')).toBe('connect');
  });
});
