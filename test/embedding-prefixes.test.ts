// The prefix table (src/providers/embedding-prefixes.ts), row by row: each family
// is found under every name it is served by, gets the prefixes its card gives, and
// a model of no known family is sent its texts as they are.

import { describe, expect, it } from 'vitest';
import { describePrefixes, modelPrefixes, PREFIX_RULES, prefixRuleFor, resolvePrefixes } from '../src/providers/embedding-prefixes.js';
import { OfflineEmbedder } from '../src/providers/offline-embedder.js';
import type { Embedder } from '../src/providers/types.js';

const REPRESENT = 'Represent this sentence for searching relevant passages: ';

/** What each family's card asks for, written out again here so that a change to the table is a visible change to this test. */
const EXPECTED: Record<string, { query: string; document: string }> = {
  'nomic-embed-text': { query: 'search_query: ', document: 'search_document: ' },
  'e5-instruct': { query: 'Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery: ', document: '' },
  e5: { query: 'query: ', document: 'passage: ' },
  'bge-m3': { query: '', document: '' },
  'bge (Chinese)': { query: '为这个句子生成表示以用于检索相关文章:', document: '' },
  bge: { query: REPRESENT, document: '' },
  'mxbai-embed-large': { query: REPRESENT, document: '' },
  'snowflake-arctic-embed 2.0': { query: 'query: ', document: '' },
  'snowflake-arctic-embed': { query: REPRESENT, document: '' },
  embeddinggemma: { query: 'task: search result | query: ', document: 'title: none | text: ' },
  'Qwen3-Embedding': { query: 'Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery:', document: '' },
};

describe('embedding prefixes by model name', () => {
  it('every row is expected here, and every expected family has a row', () => {
    expect(PREFIX_RULES.map((rule) => rule.family).sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  for (const rule of PREFIX_RULES) {
    it(`${rule.family}: found under each of its names, with the prefixes its card gives`, () => {
      expect(rule.examples.length).toBeGreaterThan(0);
      for (const name of rule.examples) {
        expect(prefixRuleFor(name)?.family, name).toBe(rule.family);
        expect(modelPrefixes(name), name).toEqual(EXPECTED[rule.family]);
      }
    });
  }

  it('a model of no known family gets no prefixes', () => {
    for (const name of ['text-embedding-3-small', 'all-minilm', 'fake-embed-model', 'granite-embedding:278m', 'bge-reranker-v2-m3x', 'e5x', 'nomic-embed-code']) {
      expect(prefixRuleFor(name), name).toBeUndefined();
      expect(modelPrefixes(name), name).toEqual({ query: '', document: '' });
    }
  });

  it('names are matched whatever their case and surrounding spaces', () => {
    expect(modelPrefixes('  Nomic-Embed-Text:Latest ')).toEqual(EXPECTED['nomic-embed-text']);
  });

  it('a side that is set wins over the table, side by side; the empty string means none', () => {
    expect(resolvePrefixes('nomic-embed-text', { queryPrefix: 'q: ' })).toEqual({ query: 'q: ', document: 'search_document: ' });
    expect(resolvePrefixes('nomic-embed-text', { documentPrefix: '' })).toEqual({ query: 'search_query: ', document: '' });
    expect(resolvePrefixes('fake-embed-model', { queryPrefix: 'query: ', documentPrefix: 'passage: ' })).toEqual({ query: 'query: ', document: 'passage: ' });
  });

  it('describes prefixes for messages', () => {
    expect(describePrefixes({ query: '', document: '' })).toBe('none');
    expect(describePrefixes({ query: 'search_query: ', document: 'search_document: ' })).toBe('query "search_query: ", document "search_document: "');
    expect(describePrefixes({ query: REPRESENT, document: '' })).toBe(`query ${JSON.stringify(REPRESENT)}, document none`);
  });
});

describe('the offline embedder', () => {
  it('takes no prefixes: a text is the same vector as a query and as a document', async () => {
    // Through the interface every caller uses, which passes a purpose.
    const embedder: Embedder = new OfflineEmbedder();
    expect(embedder.prefixes).toBeUndefined();
    const texts = ['How do I rotate an API key?', 'Webhooks carry a signature header.'];
    const [asQueries, asDocuments] = await Promise.all([embedder.embed(texts, undefined, 'query'), embedder.embed(texts, undefined, 'document')]);
    expect(asQueries).toEqual(asDocuments);
    expect(asQueries[0]).not.toEqual(asQueries[1]);
  });
});
