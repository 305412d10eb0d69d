// `replay --rerun` on judged turns: each judged document's best rank in the top k
// as stored and as re-run (kept, entered, left, or in it neither time), and in the
// summary the judged turns and how many judged documents were found before and are
// found now. The pure check, then the CLI (in-process) after a re-ingest with
// another chunk size.

import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { checkJudged, summarize, type RerunTurn } from '../src/replay/index.js';
import { FIXTURE_DOCS, isolatedEnv, ragline, tempDir, type CliResult } from './helpers/cli.js';

const chunk = (documentPath: string, rank: number) => ({ documentPath, rank });

describe('checkJudged', () => {
  test('kept, entered, left and missing, by the best rank of a document\'s chunks', () => {
    const before = [chunk('a.md', 1), chunk('b.md', 2), chunk('a.md', 3)];
    const after = [chunk('c.md', 1), chunk('a.md', 2), chunk('a.md', 3)];
    const check = checkJudged(
      {
        noneUseful: false,
        relevant: [
          { documentPath: 'a.md', source: 'retrieved', chunkRank: 1 },
          { documentPath: 'b.md', source: 'retrieved', chunkRank: 2 },
          { documentPath: 'c.md', source: 'expected', chunkRank: null },
          { documentPath: 'gone.md', source: 'expected', chunkRank: null },
        ],
      },
      before,
      after,
      (p) => p !== 'gone.md',
    );
    expect(check.documents.map((d) => [d.documentPath, d.before, d.now, d.change, d.indexed])).toEqual([
      ['a.md', 1, 2, 'kept', true],
      ['b.md', 2, null, 'left', true],
      ['c.md', null, 1, 'entered', true],
      ['gone.md', null, null, 'missing', false],
    ]);
    const turn = { ordinal: 1, rewriteChanged: false, retrieval: { changed: true, overlap: 0.5 }, oldChunks: [], judged: check } as unknown as RerunTurn;
    const unjudged = { ordinal: 2, rewriteChanged: false, retrieval: { changed: false, overlap: 1 }, oldChunks: [] } as unknown as RerunTurn;
    expect(summarize([turn, unjudged], 1).judged).toEqual({ turns: 1, documents: 4, foundBefore: 2, foundNow: 2 });
    expect(summarize([unjudged], 1).judged).toEqual({ turns: 0, documents: 0, foundBefore: 0, foundNow: 0 });
  });
});

let home: string;
let docs: string;
const cli = (args: string[]): Promise<CliResult> => ragline(args, { env: isolatedEnv(home), input: '' });
async function ok(args: string[], input?: string): Promise<string> {
  const result = await ragline(args, { env: isolatedEnv(home), input });
  expect(result.code, result.stderr).toBe(0);
  return result.stdout;
}

beforeAll(() => {
  if (!fs.existsSync(path.resolve('dist/cli/main.js'))) throw new Error('Build first: npx tsc -p .');
  home = tempDir('ragline-judged-rerun-');
  docs = path.join(home, 'docs');
  fs.cpSync(FIXTURE_DOCS, docs, { recursive: true });
});
afterAll(() => fs.rmSync(home, { recursive: true, force: true }));

test('a rerun after re-ingesting with another chunk size reports each judged document before and now, and the totals', async () => {
  await ok(['ingest', docs]);
  await ok(['chat', '--new', 'rr'], ['How do I create an API key?', 'How do I verify webhook signatures?'].join('\n') + '\n');
  const recorded = JSON.parse(await ok(['replay', 'rr', '--json']));
  const firstPaths: string[] = recorded.turns[0].chunks.map((c: any) => c.documentPath);
  expect(firstPaths[0]).toBe('guides/authentication.md');
  // another document of the first turn's top 5, which small chunks of authentication.md may push out
  const other = firstPaths.find((p) => p !== 'guides/authentication.md')!;
  expect(other).toBeDefined();
  await ok(['sessions', 'judge', 'rr', '1', '--relevant', 'guides/authentication.md', other]);
  await ok(['sessions', 'judge', 'rr', '2', '--relevant', 'guides/webhooks.md', 'notes/gone.md']);

  const before = JSON.parse(await ok(['replay', 'rr', '--rerun', '--json']));
  expect(before.summary.judged).toEqual({ turns: 2, documents: 4, foundBefore: 3, foundNow: 3 });

  await ok(['ingest', docs, '--reindex', '--chunk-size', '400', '--chunk-overlap', '40']);
  const result = await cli(['replay', 'rr', '--rerun', '--json']);
  expect(result.code, result.stderr).toBe(0);
  const report = JSON.parse(result.stdout);
  const best = (chunks: any[], p: string) => {
    const ranks = chunks.filter((c) => c.documentPath === p).map((c) => c.rank);
    return ranks.length ? Math.min(...ranks) : null;
  };
  let foundBefore = 0;
  let foundNow = 0;
  for (const turn of report.turns) {
    // the index was re-chunked: no stored chunk is in today's index as it was
    expect(turn.oldChunks.every((c: any) => c.indexState !== 'current')).toBe(true);
    for (const doc of turn.judged.documents) {
      expect(doc.before).toBe(best(turn.oldChunks, doc.documentPath));
      expect(doc.now).toBe(best(turn.newChunks, doc.documentPath));
      if (doc.before !== null) foundBefore++;
      if (doc.now !== null) foundNow++;
    }
  }
  const byPath = Object.fromEntries(report.turns.flatMap((t: any) => t.judged.documents.map((d: any) => [d.documentPath, d])));
  expect(byPath['guides/authentication.md']).toMatchObject({ before: 1, change: 'kept' });
  expect(byPath['guides/webhooks.md']).toMatchObject({ before: 1, change: 'kept' });
  expect(byPath['notes/gone.md']).toMatchObject({ before: null, now: null, change: 'missing', indexed: false });
  // 400-character chunks of authentication.md fill the top 5: the other document left it
  expect(byPath[other]).toMatchObject({ change: 'left', now: null });
  expect(report.summary.judged).toEqual({ turns: 2, documents: 4, foundBefore, foundNow });
  expect([foundBefore, foundNow]).toEqual([3, 2]);

  const text = await ok(['replay', 'rr', '--rerun']);
  expect(text).toMatch(/Turn 1 · retrieval changed · judged document left/);
  expect(text).toMatch(new RegExp(`judged guides/authentication\\.md: still in the top 5 \\(rank 1( → ${byPath['guides/authentication.md'].now})?\\)`));
  expect(text).toContain(`judged ${other}: left the top 5 (was rank ${byPath[other].before})`);
  expect(text).toContain('judged notes/gone.md: not in the top 5, then or now (not indexed)');
  expect(text).toMatch(/ {2}judged turns: {8}2 \(4 judged documents\)\n {2}found before: {8}3 of 4 in the top k\n {2}found now: {11}2 of 4 \(-1\)\n/);
});
