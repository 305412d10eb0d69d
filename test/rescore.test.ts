import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingest } from '../src/ingest/ingest.js';
import { OfflineEmbedder } from '../src/providers/offline-embedder.js';
import { buildFtsPhraseQuery } from '../src/retrieve/fts-query.js';
import type { FusedHit } from '../src/retrieve/fuse.js';
import { addPhraseScores, boostTitleMatches, queryStems, titleCoverage } from '../src/retrieve/rescore.js';
import { documentIdentity } from '../src/retrieve/copies.js';
import { Retriever } from '../src/retrieve/search.js';
import { openDatabase, type Db } from '../src/store/db.js';
import { tempDir } from './helpers/cli.js';

describe('buildFtsPhraseQuery', () => {
  it('quotes adjacent pairs of content words, skips pairs with a stopword, dedupes', () => {
    expect(buildFtsPhraseQuery('Install the mobile SDK, install the mobile SDK')).toBe('"mobile sdk" OR "sdk install"');
    expect(buildFtsPhraseQuery('rotate API keys')).toBe('"rotate api" OR "api keys"');
    expect(buildFtsPhraseQuery('what is it')).toBeNull();
    expect(buildFtsPhraseQuery('carthage?')).toBeNull();
    expect(buildFtsPhraseQuery('')).toBeNull();
  });

  it('property: MATCH never throws on arbitrary text (fixed seed)', () => {
    const db = new Database(':memory:');
    db.exec(`CREATE VIRTUAL TABLE t USING fts5(title, body, tokenize = "porter unicode61 remove_diacritics 2")`);
    db.prepare('INSERT INTO t(rowid, title, body) VALUES (1, ?, ?)').run('Install SDK', 'NOT NULL "quoted" NEAR(a b)');
    const search = db.prepare('SELECT rowid FROM t WHERE t MATCH ?');
    const text = fc.array(fc.constantFrom('a', 'NOT', 'NEAR', 'AND', '"', '(', ')', '*', ':', '^', ' ', 'é', '東', '🎉', '\u0000'), { maxLength: 30 });
    fc.assert(
      fc.property(text, (parts) => {
        const q = buildFtsPhraseQuery(parts.join(''));
        if (q !== null) search.all(q);
      }),
      { seed: 20250102, numRuns: 300 },
    );
    db.close();
  });
});

describe('addPhraseScores', () => {
  const hits = (pairs: [string, number][]) => pairs.map(([id, score], i) => ({ id, rank: i + 1, score }));

  it('adds weighted phrase bm25 to the terms bm25 and re-ranks', () => {
    const out = addPhraseScores(hits([['a', -10], ['b', -9], ['c', -2]]), hits([['b', -8]]), 0.25, 10);
    expect(out.map((h) => h.id)).toEqual(['b', 'a', 'c']);
    expect(out[0]).toEqual({ id: 'b', rank: 1, score: -11 });
  });

  it('gives a phrase-only chunk the last terms score, and keeps the best n', () => {
    const out = addPhraseScores(hits([['a', -10], ['b', -4]]), hits([['z', -40]]), 0.25, 2);
    expect(out).toEqual([
      { id: 'z', rank: 1, score: -14 },
      { id: 'a', rank: 2, score: -10 },
    ]);
  });

  it('returns the terms list unchanged with no phrase hits', () => {
    const terms = hits([['a', -3], ['b', -1]]);
    expect(addPhraseScores(terms, [], 0.25, 10)).toEqual(terms);
  });
});

describe('title coverage', () => {
  it('counts the share of query stems in the title', () => {
    expect(queryStems('How do I create schemas?')).toEqual(['creat', 'schema']);
    expect(titleCoverage(queryStems('How do I create schemas?'), 'Creating schema')).toBe(1);
    expect(titleCoverage(queryStems('create schema tables'), 'Data manager > Tables')).toBeCloseTo(1 / 3);
    expect(titleCoverage(queryStems('create schema'), '')).toBe(0);
  });

  it('moves chunks with matching titles up within the first n only', () => {
    const fused: FusedHit<number>[] = [1, 2, 3, 4].map((id, i) => ({ id, rank: i + 1, score: 1 - i * 0.1 }));
    const titles: Record<number, string> = { 1: 'Overview', 2: 'Billing', 3: 'Creating schemas', 4: 'Creating schemas' };
    const out = boostTitleMatches(fused, 'create a schema', (id) => titles[id]!, 0.8, 3);
    expect(out.map((h) => h.id)).toEqual([3, 1, 2, 4]);
    expect(out.map((h) => h.rank)).toEqual([1, 2, 3, 4]);
    expect(out[0]!.score).toBeCloseTo(0.8 + 0.8);
    expect(boostTitleMatches(fused, 'create a schema', (id) => titles[id]!, 0, 3)).toEqual(fused);
  });
});

describe('Retriever with phrases and title coverage', () => {
  let dir: string;
  let db: Db;
  let retriever: Retriever;
  const write = (name: string, text: string) => fs.writeFileSync(path.join(dir, name), text);
  const filler = Array.from({ length: 120 }, (_, i) => `word${i % 17} text`).join(' ');

  beforeAll(async () => {
    dir = tempDir('ragline-rescore-');
    write('creating-schema.md', `# Creating schema\n\nOpen the console, choose a database and press the add button. ${filler}\n`);
    write('data-manager.md', '# Data manager\n\nThe data manager lists tables and their schema. You create a table in a database.\n');
    write('buckets.md', `# Buckets\n\nA bucket in object storage keeps your files. ${filler}\n`);
    write('regions.md', '# Regions\n\nPick an object to copy. Local storage differs per region; a bucket object, a storage class, a bucket policy.\n');
    for (let i = 0; i < 6; i++) write(`filler-${i}.md`, `# Note ${i}\n\nUnrelated text about billing, invoices and payment number ${i}.\n`);
    db = openDatabase(':memory:');
    const embedder = new OfflineEmbedder();
    await ingest({ root: dir, db, embedder, chunker: { size: 4000, overlap: 200 }, maxFileBytes: 1024 * 1024 });
    retriever = new Retriever(db, embedder);
  });
  afterAll(() => {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const byPath = async (query: string, settings: { phraseWeight?: number; titleWeight?: number } = {}) =>
    new Map((await retriever.search(query, { k: 5, ...settings })).map((hit) => [hit.documentPath, hit]));

  it('adds the title bonus to chunks whose title holds the query terms, and only to them', async () => {
    const without = await byPath('How do I create a schema?', { titleWeight: 0, phraseWeight: 0 });
    const withTitle = await byPath('How do I create a schema?', { phraseWeight: 0 });
    expect(withTitle.get('creating-schema.md')!.score - without.get('creating-schema.md')!.score).toBeCloseTo(0.8);
    expect(withTitle.get('data-manager.md')!.score).toBeCloseTo(without.get('data-manager.md')!.score);
  });

  it('improves the keyword score of a chunk with the query words side by side, not of one with them scattered', async () => {
    const without = await byPath('object storage bucket', { titleWeight: 0, phraseWeight: 0 });
    const withPhrases = await byPath('object storage bucket', { titleWeight: 0 });
    expect(withPhrases.get('buckets.md')!.bm25!).toBeLessThan(without.get('buckets.md')!.bm25!);
    expect(withPhrases.get('regions.md')!.bm25!).toBeCloseTo(without.get('regions.md')!.bm25!);
  });
});

/** Ingests `files` into a new in-memory database and searches it for `query`, k = 5. */
async function searchFiles(files: Record<string, string | Buffer>, query: string, chunker = { size: 4000, overlap: 200 }) {
  const dir = tempDir('ragline-copies-');
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
  const db = openDatabase(':memory:');
  try {
    const embedder = new OfflineEmbedder();
    await ingest({ root: dir, db, embedder, chunker, maxFileBytes: 1024 * 1024 });
    return await new Retriever(db, embedder).search(query, { k: 5 });
  } finally {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe('Retriever and copies of a section in other files', () => {
  it('returns a section once when the folder holds it as Markdown and as HTML, and keeps same-titled sections that say other things', async () => {
    const section = 'The `timeout` option kills the child process after the given number of milliseconds with the `killSignal` signal.';
    const hits = await searchFiles(
      {
        'child.md': `# Child process\n\n## Class: ChildProcess\n\n${section}\n`,
        'child.html': `<html><body><h1>Child process</h1><h2>Class: ChildProcess</h2><p>${section}</p></body></html>`,
        'worker.md': '# Worker\n\n## Class: ChildProcess\n\nA worker kills its child process when the pool shuts down after a timeout.\n',
      },
      'kill the child process after a timeout',
    );
    const paths = hits.map((hit) => hit.documentPath);
    expect(paths.filter((p) => p === 'child.md' || p === 'child.html')).toHaveLength(1);
    expect(paths).toContain('worker.md');
    expect(hits.map((hit) => hit.rank)).toEqual(hits.map((_, i) => i + 1));
  });

  it('still returns k results when most of the first rows read are copies of one another', async () => {
    const sections = Array.from({ length: 12 }, (_, i) => `## Widget step ${i}\n\nThe widget step ${i} turns the quartz gear number ${i} and locks plate ${i * 7}.\n`).join('\n');
    const page = `# Widget\n\n${sections}`;
    const hits = await searchFiles({ 'a.md': page, 'b.md': page, 'c.md': page }, 'widget step quartz gear', { size: 200, overlap: 0 });
    expect(hits).toHaveLength(5);
    expect(new Set(hits.map((hit) => hit.text.split('\n')[0])).size).toBe(5);
    expect(hits.map((hit) => hit.rank)).toEqual([1, 2, 3, 4, 5]);
  });

  it('gives a manual shipped as .html, .txt.gz and .md one slot of the top 3', async () => {
    const sections = [
      ['Memory management', 'bzip2 compresses large files in blocks. Compression needs about eight times the block size in memory, decompression about four times; the small-memory mode halves that at half the speed.'],
      ['Recovering data from damaged files', 'bzip2recover writes each block of a damaged archive to a file of its own, so that the intact blocks can be decompressed.'],
      ['Command-line options', 'The -k option keeps the input files, and -s reduces memory usage when decompressing, for machines with little memory.'],
    ];
    const markdown = `# The bzip2 manual\n\n${sections.map(([title, text]) => `## ${title}\n\n${text}\n`).join('\n')}`;
    const html = `<html><body><h1>The bzip2 manual</h1>${sections.map(([title, text]) => `<h2>${title}</h2><p>${text}</p>`).join('')}</body></html>`;
    // The plain-text manual as Debian ships one: no heading marks, lines cut at 72 columns.
    const text = sections.map(([title, body]) => `${title!.toUpperCase()}\n\n${body!.replace(/(.{1,72})(?:\s|$)/g, '$1\n')}`).join('\n');
    const hits = await searchFiles(
      {
        'manual.md': markdown,
        'manual.html': html,
        'manual.txt.gz': zlib.gzipSync(text),
        'zlib.md': '# zlib\n\nzlib compresses in memory with a window of 32 KB; deflateInit sets how much memory it uses.\n',
        'xz.md': '# xz\n\nThe memory usage of xz depends on the preset; decompression memory is limited with --memlimit.\n',
      },
      'how much memory does bzip2 need',
    );
    // Each file is one chunk: without the copies left out, the three formats would be the top 3.
    const top3 = hits.slice(0, 3).map((hit) => hit.documentPath);
    expect(top3.filter((p) => p.startsWith('manual.'))).toHaveLength(1);
    expect(top3).toEqual(expect.arrayContaining(['zlib.md', 'xz.md']));
  });

  it('names a document by its folder and name without format extensions', () => {
    expect(documentIdentity('docs/manual.pdf.gz')).toBe('docs/manual');
    expect(documentIdentity('docs/manual.HTML')).toBe('docs/manual');
    expect(documentIdentity('api/fs.md')).toBe('api/fs');
    expect(documentIdentity('other/manual.txt')).not.toBe(documentIdentity('docs/manual.txt'));
    expect(documentIdentity('NEWS.gz')).toBeUndefined();
    expect(documentIdentity('README')).toBeUndefined();
  });

  it('leaves out a chunk whose text is a copy of a kept one in another format, under another name and heading; keeps such pages of one format', async () => {
    const body = Array.from({ length: 6 }, (_, i) => `The spool daemon retries delivery ${i} times before the message bounces to the sender.`).join(' ');
    const guide = `# Guide\n\n## Delivery retries\n\n${body}\n`;
    const question = 'how many times does the spool daemon retry delivery';
    const hits = await searchFiles({ 'guide.md': guide, 'all.html': `<html><body><h1>All pages</h1><h2>Retrying delivery</h2><p>${body}</p></body></html>` }, question);
    expect(hits).toHaveLength(1);
    // Two pages of a folder that say the same under other titles are its own pages (MTRAG's passages): both stay.
    expect(await searchFiles({ 'guide.md': guide, 'howto.md': `# How-to\n\n## Retrying delivery\n\n${body}\n` }, question)).toHaveLength(2);
  });

  it('leaves out a short piece whose words are nearly all in a better-ranked copy of its section', async () => {
    const long = Array.from({ length: 12 }, (_, i) => `Step ${i} of reading lines: the interface emits line event ${i} for the stream.`).join(' ');
    const hits = await searchFiles(
      {
        'readline.md': `# Readline\n\n## Example: read file stream line by line\n\nRead a file stream line by line with the interface. ${long}\n`,
        'readline.html': '<html><body><h1>Readline</h1><h2>Example: read file stream line by line</h2><p>Read a file stream line by line with the interface.</p></body></html>',
      },
      'read a file stream line by line',
    );
    expect(hits.map((hit) => hit.documentPath)).toHaveLength(1);
  });
});
