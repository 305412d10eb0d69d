// Readers beside a writer: while `ragline ingest` runs again and again on a
// changing folder (edits, additions, deletions), (1) a long-lived reader process
// searching in a loop on one connection, as a chat session does
// (bench/reliability/reader-loop.mjs), and (2) one-shot `ragline search`
// processes never see an error (no SQLITE_BUSY, nothing) and never see a
// half-written index: in a read snapshot every search returns k results whose
// chunks have their FTS row and vector, and the three tables agree.
// Retriever reads candidates and chunk rows in one read transaction; before it
// did, a commit in between dropped results (2-5 of ~500 searches returned fewer
// than k), so a short result is a failure here, in the loop and from the CLI.
// Built CLI and dist/ (build first: npx tsc -p .), real processes, real file.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ROOT, isolatedEnv, runCli, tempDir } from '../helpers/cli.js';

const ROUNDS = 6;
const FILES = 400;
const CHUNK_FLAGS = ['--chunk-size', '200', '--chunk-overlap', '20'];

let home: string;
let docs: string;

function writeDoc(i: number, version: number): void {
  const parts = Array.from(
    { length: 12 },
    (_, p) => `## Part ${p}\n\nParagraph ${p} of document ${i} (revision ${version}) covers topic-${(i * 7 + p + version) % 97} and widget-${i % 13}, gadget covers.\n`,
  );
  fs.writeFileSync(path.join(docs, `doc-${String(i).padStart(4, '0')}.md`), `# Document ${i}\n\n${parts.join('\n')}`);
}

beforeAll(() => {
  if (!fs.existsSync(path.join(ROOT, 'dist/cli/main.js'))) throw new Error('Build first: npx tsc -p .');
  home = tempDir('ragline-concurrency-');
  docs = path.join(home, 'docs');
  fs.mkdirSync(docs);
  for (let i = 0; i < FILES; i++) writeDoc(i, 0);
});
afterAll(() => fs.rmSync(home, { recursive: true, force: true }));

describe('searching while another process ingests', () => {
  test(`a reader loop and one-shot searches see no error and a consistent index across ${ROUNDS} concurrent ingests`, async () => {
    const env = isolatedEnv(home);
    const dbFile = path.join(home, 'data', 'ragline', 'ragline.db');
    const first = await runCli(['ingest', docs, ...CHUNK_FLAGS], { env });
    expect(first.code, first.stderr).toBe(0);

    const stopFile = path.join(home, 'stop');
    const reader = spawn(process.execPath, [path.join(ROOT, 'bench/reliability/reader-loop.mjs'), dbFile, stopFile, '5'], {
      env,
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let readerOut = '';
    let readerErr = '';
    reader.stdout!.on('data', (d) => (readerOut += d));
    reader.stderr!.on('data', (d) => (readerErr += d));
    const readerDone = new Promise<number | null>((resolve) => reader.on('close', (code) => resolve(code)));

    let writing = true;
    const cliSearches: { code: number | null; stderr: string; results: number }[] = [];
    const searchLoop = (async () => {
      for (let i = 0; writing; i++) {
        const result = await runCli(['search', '--json', i % 2 ? 'widget topic' : 'document revision paragraph'], { env });
        cliSearches.push({ code: result.code, stderr: result.stderr, results: result.code === 0 ? JSON.parse(result.stdout).results.length : -1 });
      }
    })();

    let version = 0;
    for (let round = 0; round < ROUNDS; round++) {
      version++;
      for (let i = round % 2; i < FILES; i += 2) writeDoc(i, version); // half the files change
      for (let n = 0; n < 10; n++) fs.rmSync(path.join(docs, `doc-${String(round * 10 + n).padStart(4, '0')}.md`), { force: true });
      for (let n = 0; n < 10; n++) writeDoc(FILES + round * 10 + n, version);
      const ingest = await runCli(['ingest', docs, '--json', ...CHUNK_FLAGS], { env });
      expect(ingest.code, ingest.stderr).toBe(0);
      expect(JSON.parse(ingest.stdout).files.changed).toBeGreaterThan(100);
    }
    writing = false;
    await searchLoop;
    fs.writeFileSync(stopFile, '');
    expect(await readerDone, readerErr).toBe(0);

    const summary = JSON.parse(readerOut) as {
      searches: number;
      snapshotChecks: number;
      errors: string[];
      short: number;
      shortPlain: number;
      shortInSnapshot: number;
      missingInSnapshot: number;
      countMismatch: number;
      minResults: number;
    };
    console.log(
      `reader loop: ${summary.searches} searches (${summary.snapshotChecks} snapshot checks) during ${ROUNDS} ingests; ${cliSearches.length} CLI searches; errors ${summary.errors.length}\n${JSON.stringify(summary)}`,
    );
    expect(summary.errors).toEqual([]);
    expect(summary.searches).toBeGreaterThan(20);
    expect(summary.missingInSnapshot).toBe(0);
    expect(summary.countMismatch).toBe(0);
    expect(summary.shortInSnapshot).toBe(0);
    expect(summary.snapshotChecks).toBeGreaterThan(10);
    expect(cliSearches.length).toBeGreaterThan(3);
    for (const search of cliSearches) {
      expect(search.stderr).toBe('');
      expect(search.code).toBe(0);
    }
    expect(summary.shortPlain).toBe(0);
    expect(cliSearches.filter((s) => s.results < 5)).toEqual([]);
  }, 120_000);
});
