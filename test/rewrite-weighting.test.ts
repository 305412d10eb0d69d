// A vague follow-up (only common words) is searched as the question plus the
// rewrite's context words at a lower weight, with the question's own results fused
// beside at a lower weight too; a specific one keeps the plain rewrite and raw weight.
// Covers the offline rewriter's decision, retrievalSettingsFor, the retriever's
// weighted query and the index's term shares.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { retrievalSettingsFor } from '../src/chat/stages/retrieve.js';
import { DEFAULT_SEARCH_PATHS, resolveConfig, type Config } from '../src/config/index.js';
import { ingest } from '../src/ingest/ingest.js';
import { OfflineEmbedder } from '../src/providers/offline-embedder.js';
import { addedWords, Retriever } from '../src/retrieve/search.js';
import { chunkCount, chunksHolding, termShares } from '../src/retrieve/term-stats.js';
import type { Topic } from '../src/domain/index.js';
import { DEFAULT_VAGUE, isVague, OfflineRewriter, type RewriteRequest } from '../src/rewrite/index.js';
import { openDatabase, type Db } from '../src/store/db.js';
import { DocumentWriter } from '../src/store/documents.js';
import { SearchAccelerators } from '../src/retrieve/memory/accelerators.js';
import { FIXTURE_DOCS } from './helpers/cli.js';

const topics: Topic[] = [
  { term: 'personal income tax', weight: 1, lastTurn: 3, source: 'question' },
  { term: 'corporate tax', weight: 0.8, lastTurn: 3, source: 'question' },
  { term: 'FICA withholding', weight: 0.6, lastTurn: 2, source: 'question' },
  { term: 'employee salaries', weight: 0.5, lastTurn: 1, source: 'question' },
];
const request = (question: string, termShare?: (word: string) => number): RewriteRequest => ({
  question,
  history: [{ question: 'Is personal income tax the same as corporate tax?', standaloneQuery: 'Is personal income tax the same as corporate tax?', answer: 'No.' }],
  topics,
  policy: 'auto',
  ...(termShare ? { termShare } : {}),
});
/** "investments" is everywhere, "carthage" almost nowhere. */
const shares: Record<string, number> = { investments: 0.23, carthage: 0.0007 };
const termShare = (word: string) => shares[word] ?? 0.05;

describe('offline rewriter: vague and specific follow-ups', () => {
  it('gives a vague question about 4 context words, each phrase whole, and says how to weigh them', () => {
    const outcome = new OfflineRewriter().rewriteSync(request('Investments?', termShare));
    expect(outcome.decision).toBe('rewritten');
    expect(outcome.standaloneQuery).toBe('Investments? (personal income tax, corporate tax)');
    expect(outcome.weighting).toEqual({ expansion: DEFAULT_VAGUE.expansionWeight, raw: DEFAULT_VAGUE.rawWeight });
    expect(outcome.reason).toBe('1 content word; the question as typed, with words of the conversation in parentheses; a general question: searched mostly as rewritten');
  });

  it('keeps at most three whole phrases and no weighting for a question with a rare word', () => {
    const outcome = new OfflineRewriter().rewriteSync(request('carthage?', termShare));
    expect(outcome.standaloneQuery).toBe('carthage? (personal income tax, corporate tax, FICA withholding)');
    expect(outcome.weighting).toBeUndefined();
  });

  it('treats every question as specific without term shares, or with vague: false', () => {
    expect(new OfflineRewriter().rewriteSync(request('Investments?')).weighting).toBeUndefined();
    expect(new OfflineRewriter({ vague: false }).rewriteSync(request('Investments?', termShare)).weighting).toBeUndefined();
  });

  it('isVague: every content word above the share; numbers and stopwords do not count', () => {
    expect(isVague('What about investments in 2024?', termShare, 0.01)).toBe(true);
    expect(isVague('investments with carthage', termShare, 0.01)).toBe(false);
    expect(isVague('and then?', termShare, 0.01)).toBe(true);
  });
});

describe('retrievalSettingsFor', () => {
  const config = (rawWeight?: number): Config => {
    const { config: resolved } = resolveConfig({ env: { HOME: os.tmpdir(), XDG_CONFIG_HOME: path.join(os.tmpdir(), 'ragline-none') } });
    const copy = structuredClone(resolved);
    if (rawWeight !== undefined) copy.retrieval.rawWeight = rawWeight;
    return copy;
  };
  const weighted = { standaloneQuery: 'Investments? (personal income tax)', decision: 'rewritten', model: 'offline:rewrite-v1', weighting: { expansion: 0.85, raw: 0.3 } };

  it('weighs the added words and fuses the question at the rewriter\'s raw weight', () => {
    expect(retrievalSettingsFor('Investments?', weighted, 10, config())).toEqual({
      k: 10,
      secondary: { query: 'Investments?', weight: 0.3 },
      expansion: { core: 'Investments?', weight: 0.85 },
    });
  });

  it('lets retrieval.rawWeight override the rewriter and keeps the plain path without weighting', () => {
    expect(retrievalSettingsFor('Investments?', weighted, 10, config(1)).secondary).toEqual({ query: 'Investments?', weight: 1 });
    const { weighting: _unused, ...plain } = weighted;
    expect(retrievalSettingsFor('Investments?', plain, 10, config())).toEqual({ k: 10, secondary: { query: 'Investments?', weight: 1 } });
    expect(retrievalSettingsFor('Investments?', { ...weighted, decision: 'skipped' }, 10, config())).toEqual({ k: 10 });
  });

  it('searches the question without the words of "the second one", and a referent put in place as asked', () => {
    const inPlace = { standaloneQuery: 'how do I run Cachegrind?', decision: 'rewritten', model: 'offline:rewrite-v1', asked: 'how do I run Cachegrind?', weighting: { expansion: 0.85, raw: 0.3 } };
    expect(retrievalSettingsFor('how do I run the second one?', inPlace, 5, config())).toEqual({
      k: 5,
      secondary: { query: 'how do I run?', weight: 0.3 },
      expansion: { core: 'how do I run Cachegrind?', weight: 0.85 },
    });
    // A pronoun is a stopword: the question is searched as typed.
    expect(retrievalSettingsFor('Does it expire?', { ...inPlace, standaloneQuery: 'Does the API key expire?', asked: undefined }, 5, config()).secondary).toEqual({ query: 'Does it expire?', weight: 0.3 });
    // Nothing of its own left ("tell me more about the second one"): the rewrite alone.
    expect(retrievalSettingsFor('tell me more about the second one', { ...inPlace, standaloneQuery: 'tell me more about execFile' }, 5, config())).toEqual({ k: 5 });
  });
});

describe('weighted query and term shares on the fixture index', () => {
  let db: Db;
  let retriever: Retriever;
  let home: string;
  beforeAll(async () => {
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'ragline-weighting-'));
    db = openDatabase(':memory:');
    const embedder = new OfflineEmbedder();
    await ingest({ root: FIXTURE_DOCS, db, embedder, chunker: { size: 2000, overlap: 200 }, maxFileBytes: 20 * 1024 * 1024 });
    retriever = new Retriever(db, embedder);
  });
  afterAll(() => {
    db.close();
    fs.rmSync(home, { recursive: true, force: true });
  });

  it('addedWords: the query\'s content words the core lacks, by stem, once each', () => {
    expect(addedWords('Does it expire? (API keys, key rotation, expires)', 'Does it expire?')).toEqual(['api', 'keys', 'rotation']);
  });

  it('a tiny expansion weight searches like the core alone; weight 1 lets the added words lead', async () => {
    const core = 'How long is it valid?';
    const query = `${core} (webhook signature)`;
    const ids = (chunks: { chunkId: number }[]) => chunks.map((chunk) => chunk.chunkId);
    const alone = await retriever.search(core, { k: 5 });
    const tiny = await retriever.search(query, { k: 5, expansion: { core, weight: 0.0001 } });
    const full = await retriever.search(query, { k: 5, expansion: { core, weight: 1 } });
    // The same chunks, the best three in the same order: chunks only the added words find
    // enter the keyword list with scores near 0 and widen its min-max span, so near ties
    // further down may swap.
    expect(new Set(ids(tiny))).toEqual(new Set(ids(alone)));
    expect(ids(tiny).slice(0, 3)).toEqual(ids(alone).slice(0, 3));
    expect(ids(full)).not.toEqual(ids(alone));
    expect(full.slice(0, 3).some((chunk) => /signature/i.test(chunk.text))).toBe(true);
  });

  it('runs a bm25 query the weighted query and the question as asked share only once', async () => {
    const core = 'Does the API key expire?'; // has word pairs: its terms list goes as deep as the weighted core's
    const query = `${core} (webhook signature)`;
    const statements = new Map<string, number>();
    const prepare = db.prepare.bind(db);
    const spy = vi.spyOn(db, 'prepare').mockImplementation((sql: string) => {
      const statement = prepare(sql);
      if (!/chunks_fts MATCH \?/.test(sql)) return statement; // FTS5 queries only (not the vec0 KNN)
      const all = statement.all.bind(statement);
      statement.all = ((...args: unknown[]) => {
        const key = JSON.stringify(args);
        statements.set(key, (statements.get(key) ?? 0) + 1);
        return all(...args);
      }) as typeof statement.all;
      return statement;
    });
    try {
      // A fresh retriever prepares its statements through the spy.
      const fresh = new Retriever(db, retriever.embedder, { ...DEFAULT_SEARCH_PATHS, keyword: 'fts5' }); // the statements counted are FTS5's
      const results = await fresh.search(query, { k: 5, expansion: { core, weight: 0.85 }, secondary: { query: core, weight: 0.3 } });
      expect(results.length).toBe(5);
    } finally {
      spy.mockRestore();
    }
    // core terms (shared by both lists), added words, the question's phrases: each once
    expect([...statements.values()]).toEqual([1, 1, 1]);
  });

  it('termShares: a common word is in many chunks, an unknown one in none', () => {
    const share = termShares(db);
    expect(share('orbitly')).toBeGreaterThan(0.2);
    expect(share('orbitly')).toBeLessThanOrEqual(1);
    expect(share('zzyzx')).toBe(0);
    expect(share('Keys')).toBe(share('key'));
  });

  it('termShares: a loaded keyword copy answers as FTS5 vocabulary does, without reading it, also after deletions', async () => {
    const words = ['orbitly', 'key', 'Keys', 'webhook', 'signature', 'zzyzx', 'the', 'retry'];
    const file = path.join(home, 'shares.db');
    const own = openDatabase(file, { create: true });
    const accelerators = new SearchAccelerators(own);
    const vocabulary = () => (own.prepare("SELECT count(*) AS n FROM temp.sqlite_master WHERE name = 'ragline_vocab'").get() as { n: number }).n;
    const shares = (target = own) => words.map((word) => termShares(target)(word));
    try {
      await ingest({ root: FIXTURE_DOCS, db: own, embedder: new OfflineEmbedder(), chunker: { size: 2000, overlap: 200 }, maxFileBytes: 20 * 1024 * 1024 });
      const fromVocabulary = shares();
      expect(vocabulary()).toBe(1);
      own.exec('DROP TABLE temp.ragline_vocab');
      accelerators.keywords.warm();
      expect(shares()).toEqual(fromVocabulary);
      expect(vocabulary()).toBe(0); // the copy answered every word
      // After deletions the copy counts only the chunks still there, as the vocabulary does.
      const writer = new DocumentWriter(own);
      own.transaction(() => {
        for (const id of own.prepare('SELECT id FROM documents ORDER BY id LIMIT 2').pluck().all() as number[]) writer.deleteDocument(id);
      })();
      const fromCopy = shares();
      expect(fromCopy).not.toEqual(fromVocabulary);
      expect(vocabulary()).toBe(0);
      const other = openDatabase(file); // another connection, without a copy: FTS5's vocabulary
      try {
        expect(shares(other)).toEqual(fromCopy);
      } finally {
        other.close();
      }
    } finally {
      accelerators.close();
      own.close();
    }
  });

  it('chunksHolding counts the chunks holding a word as the keyword index stems it, up to a bound; chunkCount follows writes', () => {
    const holding = chunksHolding(db);
    const total = chunkCount(db);
    const orbitly = Math.round(termShares(db)('orbitly') * total);
    expect(holding('orbitly', 1000)).toBe(orbitly);
    expect(holding('orbitly', 2)).toBe(3); // it stops at the bound's next
    expect(holding('zzyzx', 0)).toBe(0);
    expect(holding('Keys', 1000)).toBe(holding('key', 1000));
    expect(holding('say "hi"', 5)).toBe(0); // quoted as one phrase, not read as query syntax
    const other = openDatabase(':memory:');
    expect(chunkCount(other)).toBe(0);
    other.close();
  });
});
