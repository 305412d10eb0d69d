// Names whose punctuation is their meaning (C++, C#, F#, .NET, node.js, --leak-check):
// spelled as words the same way for the indexed text and the queries, checked against
// FTS5's own terms; found as written by the keyword side and the offline embedder; and
// an index written before the spelling is refused for search until an ingest rewrites
// its keyword side (without embedding again).

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, test } from 'vitest';
import { passageAnswer } from '../src/chat/passage.js';
import { ingest } from '../src/ingest/ingest.js';
import { OfflineEmbedder } from '../src/providers/offline-embedder.js';
import { buildFtsQuery } from '../src/retrieve/fts-query.js';
import { KeywordIndex } from '../src/retrieve/memory/keyword-index.js';
import { Retriever } from '../src/retrieve/search.js';
import { openDatabase, type Db } from '../src/store/db.js';
import { assertSameEmbedder, embedderMismatchHint, getFingerprint, setFingerprint } from '../src/store/meta.js';
import { ftsStem } from '../src/text/stem.js';
import { INDEX_TEXT_VERSION, keywordText, spellOutSymbols } from '../src/text/symbols.js';
import { unicode61Tokens } from '../src/text/unicode61.js';
import { UserError } from '../src/util/errors.js';
import { openFts5Oracle } from './helpers/fts5-terms.mjs';

const oracle = openFts5Oracle('porter unicode61 remove_diacritics 2');
afterAll(() => oracle.close());

describe('spellOutSymbols', () => {
  test.each([
    ['How do I set the C++ standard?', 'How do I set the Cplusplus standard?'],
    ['C++17, g++, clang++ and libc++', 'Cplusplus 17, gplusplus, clangplusplus and libcplusplus'],
    ['C# and F# (not issue#12, ## headings or a#b)', 'Csharp and Fsharp (not issue#12, ## headings or a#b)'],
    ['.NET 8 and ASP.NET; example.net stays', 'dotnet 8 and ASP dotnet; example.net stays'],
    ['node.js --leak-check=full', 'node.js --leak-check=full'],
    ['plain text', 'plain text'],
  ])('%s', (text, spelled) => {
    expect(spellOutSymbols(text)).toBe(spelled);
    expect(spellOutSymbols(spelled)).toBe(spelled); // spelling twice changes nothing
  });

  test('the terms FTS5 stores for the spelled names are the ones the keyword copy makes, and C++ is not C', () => {
    const texts = ['C++', 'C#', 'F#', '.NET', 'node.js', '--leak-check', 'the C++ standard, C# and F# on .NET with node.js and --leak-check=full', 'C'];
    const spelled = texts.map(spellOutSymbols);
    const fts = oracle.terms(spelled);
    spelled.forEach((text, i) => expect(unicode61Tokens(text).map(ftsStem), text).toEqual(fts[i]));
    const [cpp, csharp, fsharp, dotnet, node, flag, , c] = fts;
    expect(new Set([cpp, csharp, fsharp, dotnet, c].map((terms) => terms!.join(' '))).size).toBe(5);
    expect(cpp).not.toContain('c');
    expect(dotnet).not.toEqual(oracle.terms(['net'])[0]);
    expect(node).toEqual(['node', 'js']);
    expect(flag).toEqual(['leak', 'check']);
  });

  test('queries are spelled as the index is: C++ and C# as words, node.js and --leak-check as phrases', () => {
    expect(buildFtsQuery('How do I set the C++ standard?')).toBe('"set" OR "cplusplus" OR "standard"');
    expect(buildFtsQuery('C# or F# on .NET')).toBe('"csharp" OR "fsharp" OR "dotnet"');
    expect(buildFtsQuery('node.js with --leak-check')).toBe('"node.js" OR "leak-check"');
  });
});

describe('keywordText', () => {
  test.each([
    ['http.createServer([options])', 'http.createServer create Server([options])'],
    ['EventEmitter and NodeEventTarget', 'EventEmitter Event Emitter and NodeEventTarget Node Event Target'],
    ['parseHTTPResponse and crypto.randomUUID()', 'parseHTTPResponse parse HTTP Response and crypto.randomUUID random UUID()'],
    ['getURLs, IPv6Address and XMLHttpRequest', 'getURLs get URLs, IPv6Address IPv6 Address and XMLHttpRequest XML Http Request'],
    ['The C++ API, CXX_STANDARD, URLs and ID', 'The Cplusplus API, CXX_STANDARD, URLs and ID'],
    ['plain words only', 'plain words only'],
  ])('%s', (text, indexed) => {
    expect(keywordText(text)).toBe(indexed);
  });

  test('the keyword copy reads a camelCase name as FTS5 does, and "create a server" finds http.createServer by its title', () => {
    const texts = ['http.createServer([options])', 'Returns a new instance of `http.Server`; see `server.listen()` and `fs.existsSync`.'];
    const fts = oracle.terms(texts.map(keywordText));
    texts.forEach((text, i) => expect(unicode61Tokens(keywordText(text)).map(ftsStem), text).toEqual(fts[i]));
    expect(fts[0]).toEqual(expect.arrayContaining(['createserv', 'creat', 'server']));
  });
});

let home: string;
let db: Db;
const embedder = new OfflineEmbedder();
const chunker = { size: 600, overlap: 100 };

function writeDocs(docs: string): void {
  fs.mkdirSync(docs, { recursive: true });
  fs.writeFileSync(path.join(docs, 'c.md'), '# C standard\n\nSet the C standard of a target with C_STANDARD. C11 and C17 are C standards for C compilers.\n');
  fs.writeFileSync(path.join(docs, 'cpp.md'), '# C++ standard\n\nSet the C++ standard of a target with CXX_STANDARD, for example C++17.\n');
  fs.writeFileSync(path.join(docs, 'dotnet.md'), '# .NET\n\nBuild .NET projects and C# or F# code with the dotnet tool.\n');
  fs.writeFileSync(path.join(docs, 'net.md'), '# Networks\n\nThe net module opens a net server on a port of the network.\n');
}

beforeEach(() => {
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'ragline-symbols-'));
  db = openDatabase(path.join(home, 'ragline.db'), { create: true });
});
afterEach(() => {
  db.close();
  fs.rmSync(home, { recursive: true, force: true });
});

describe('names found as written', () => {
  test('"the C++ standard" finds the C++ page first on the keyword side, in the embedder and in the answer', async () => {
    const docs = path.join(home, 'docs');
    writeDocs(docs);
    await ingest({ root: docs, db, embedder, chunker, maxFileBytes: 1 << 20 });
    expect(getFingerprint(db)?.text).toBe(INDEX_TEXT_VERSION);
    const pathOf = db.prepare('SELECT d.path FROM chunks c JOIN documents d ON d.id = c.document_id WHERE c.id = ?').pluck();
    const question = 'How do I set the C++ standard for a target?';
    const fts = db.prepare('SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY bm25(chunks_fts, 4, 1), rowid').pluck().all(buildFtsQuery(question)) as number[];
    expect(pathOf.get(fts[0])).toBe('cpp.md');
    const copy = new KeywordIndex(db);
    copy.refresh();
    expect(copy.search(buildFtsQuery(question)!, [4, 1], 10)!.map((hit) => hit.id)).toEqual(fts);

    const [q, c, cpp] = await embedder.embed([question, fs.readFileSync(path.join(docs, 'c.md'), 'utf8'), fs.readFileSync(path.join(docs, 'cpp.md'), 'utf8')]);
    const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, x, i) => sum + x * b[i]!, 0);
    expect(dot(q!, cpp!)).toBeGreaterThan(dot(q!, c!));

    const chunks = await new Retriever(db, embedder).search(question, { k: 3 });
    expect(chunks[0]!.documentPath).toBe('cpp.md');
    expect(passageAnswer(question, chunks, question).passages[0]!.n).toBe(1);

    const dotnet = await new Retriever(db, embedder).search('How do I build a .NET project?', { k: 2 });
    expect(dotnet[0]!.documentPath).toBe('dotnet.md');
  });

  test('a name found in only two chunks brings both into the results, above chunks that only look alike', async () => {
    const docs = path.join(home, 'docs');
    fs.mkdirSync(docs, { recursive: true });
    // Chunks that look like the name (random, UUID) and two long ones that hold it once.
    for (let i = 0; i < 8; i++) fs.writeFileSync(path.join(docs, `random-${i}.md`), `# Random UUID ${i}\n\nA random UUID ${i}: random UUID values, random and UUID.\n`);
    const filler = 'The module signs, verifies, encrypts and decrypts data with keys, ciphers, hashes and certificates. '.repeat(4);
    fs.writeFileSync(path.join(docs, 'uuid.md'), `# Crypto\n\n${filler}Call \`crypto.randomUUID()\` for one.\n`);
    fs.writeFileSync(path.join(docs, 'web.md'), `# Web Crypto\n\n${filler}The global object has randomUUID too.\n`);
    await ingest({ root: docs, db, embedder, chunker, maxFileBytes: 1 << 20 });
    const found = await new Retriever(db, embedder).search('randomUUID', { k: 5 });
    expect(found.slice(0, 2).map((chunk) => chunk.documentPath).sort()).toEqual(['uuid.md', 'web.md']);
  });

  test('"create an HTTP server" finds the section of http.createServer on the keyword side (the name read as its words)', async () => {
    const docs = path.join(home, 'docs');
    fs.mkdirSync(docs, { recursive: true });
    fs.writeFileSync(
      path.join(docs, 'http.md'),
      [
        '# HTTP',
        '',
        '## Class: http.Server',
        '',
        'This class inherits from `net.Server` and emits an event for each request.',
        '',
        '## http.createServer([options][, requestListener])',
        '',
        'Returns a new instance of `http.Server`. The `requestListener` is added to its request event.',
        '',
      ].join('\n'),
    );
    const settings = { root: docs, db, embedder, chunker: { size: 200, overlap: 0 }, maxFileBytes: 1 << 20 };
    await ingest(settings);
    const heading = db.prepare('SELECT heading FROM chunks WHERE id = ?').pluck();
    const query = buildFtsQuery('create HTTP server')!;
    const best = () => db.prepare('SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY bm25(chunks_fts, 4, 1), rowid').pluck().all(query) as number[];
    const fts = best();
    expect(heading.get(fts[0])).toMatch(/createServer/);
    const copy = new KeywordIndex(db);
    copy.refresh();
    expect(copy.search(query, [4, 1], 10)!.map((hit) => hit.id)).toEqual(fts);

    // What version 2 wrote (names such as C++ spelled, camelCase names whole): still
    // searched, and the next ingest rewrites it without embedding.
    setFingerprint(db, { ...getFingerprint(db)!, text: 2 });
    db.exec("INSERT INTO chunks_fts (chunks_fts) VALUES ('delete-all')");
    const rows = db.prepare('SELECT c.id, d.title, c.heading, c.text FROM chunks c JOIN documents d ON d.id = c.document_id').all() as { id: number; title: string; heading: string; text: string }[];
    for (const row of rows) db.prepare('INSERT INTO chunks_fts (rowid, title, body) VALUES (?, ?, ?)').run(row.id, spellOutSymbols(row.heading), spellOutSymbols(row.text));
    expect(heading.get(best()[0])).not.toMatch(/createServer/);
    expect((await new Retriever(db, embedder).search('create HTTP server', { k: 1 })).length).toBe(1);
    const summary = await ingest(settings);
    expect(summary.chunks.embedded).toBe(0);
    expect(getFingerprint(db)?.text).toBe(INDEX_TEXT_VERSION);
    expect(best()).toEqual(fts);
  });

  test('an index written before the spelling is refused for search, and the next ingest rewrites its keyword side without embedding', async () => {
    const docs = path.join(home, 'docs');
    writeDocs(docs);
    await ingest({ root: docs, db, embedder, chunker, maxFileBytes: 1 << 20 });
    // What an earlier version wrote: the same chunks, C++ indexed as c, no text version.
    const { text: _text, ...old } = getFingerprint(db)!;
    setFingerprint(db, old);
    db.exec("INSERT INTO chunks_fts (chunks_fts) VALUES ('delete-all')");
    const rows = db.prepare('SELECT c.id, d.title, c.heading, c.text FROM chunks c JOIN documents d ON d.id = c.document_id').all() as { id: number; title: string; heading: string; text: string }[];
    for (const row of rows) db.prepare('INSERT INTO chunks_fts (rowid, title, body) VALUES (?, ?, ?)').run(row.id, row.heading, row.text);

    expect(() => new Retriever(db, embedder)).toThrow(UserError);
    expect(() => new Retriever(db, embedder)).toThrow(/earlier version of ragline/);

    const summary = await ingest({ root: docs, db, embedder, chunker, maxFileBytes: 1 << 20 });
    expect(summary.chunks.embedded).toBe(0);
    expect(getFingerprint(db)?.text).toBe(INDEX_TEXT_VERSION);
    const chunks = await new Retriever(db, embedder).search('the C++ standard', { k: 1 });
    expect(chunks[0]!.documentPath).toBe('cpp.md');
    const copy = new KeywordIndex(db);
    copy.refresh();
    const match = buildFtsQuery('C++ or .NET standard')!;
    const fts = db.prepare('SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY bm25(chunks_fts, 4, 1), rowid').pluck().all(match);
    expect(copy.search(match, [4, 1], 10)!.map((hit) => hit.id)).toEqual(fts);
  });

  test('an index of an earlier offline embedder asks for --reindex, not for configuring it back', async () => {
    const docs = path.join(home, 'docs');
    writeDocs(docs);
    await ingest({ root: docs, db, embedder, chunker, maxFileBytes: 1 << 20 });
    setFingerprint(db, { ...getFingerprint(db)!, embedder: 'offline:hash-v1-384' });
    expect(() => assertSameEmbedder(db, embedder)).toThrow(`This index was built by an earlier version of the offline embedder (offline:hash-v1-384); this version embeds with ${embedder.id}.`);
    await expect(ingest({ root: docs, db, embedder, chunker, maxFileBytes: 1 << 20 })).rejects.toThrow(/earlier version of the offline embedder/);
    expect(embedderMismatchHint('offline:hash-v1-384', embedder.id)).toBe('Rebuild it with `ragline ingest <folder> --reindex` (sessions are kept).');
    expect(embedderMismatchHint('openai:text-embedding-3-small', embedder.id)).toMatch(/^Use the embedder it was built with/);
  });
});
