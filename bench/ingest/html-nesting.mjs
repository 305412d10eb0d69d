#!/usr/bin/env node
// Time to ingest one HTML file of n nested elements ('<div>' x n, 'x', '</div>' x n)
// for each n given: a reading that costs n² shows as a time that quadruples when n
// doubles. Each file is ingested alone into a new database, offline; the time is the
// whole CLI run (start-up included), the best of R runs.
//
//   node bench/ingest/html-nesting.mjs [--depths 25000,50000,100000,200000] [--runs 3] [--bin bin/ragline.js]

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const depths = arg('depths', '25000,50000,100000,200000').split(',').map(Number);
const runs = Number(arg('runs', 3));
const bin = path.resolve(arg('bin', path.join(root, 'bin/ragline.js')));

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'ragline-nesting-bench-'));
try {
  console.log('| depth | file | ingest s (best of ' + runs + ') |');
  console.log('|---|---|---|');
  for (const depth of depths) {
    const docs = path.join(work, `depth-${depth}`);
    fs.mkdirSync(docs);
    const html = `${'<div>'.repeat(depth)}x${'</div>'.repeat(depth)}`;
    fs.writeFileSync(path.join(docs, 'nested.html'), html);
    let best = Infinity;
    for (let run = 0; run < runs; run++) {
      const db = path.join(work, `depth-${depth}-${run}.db`);
      const started = performance.now();
      const result = spawnSync(process.execPath, [bin, '--db', db, 'ingest', docs, '--json'], { encoding: 'utf8', env: { ...process.env, RAGLINE_PROVIDER: 'offline' } });
      const seconds = (performance.now() - started) / 1000;
      if (result.status !== 0) throw new Error(result.stderr);
      if (JSON.parse(result.stdout).files.added !== 1) throw new Error(`depth ${depth}: the file was not indexed: ${result.stdout}`);
      best = Math.min(best, seconds);
    }
    console.log(`| ${depth} | ${(html.length / 1e6).toFixed(1)} MB | ${best.toFixed(2)} |`);
  }
} finally {
  fs.rmSync(work, { recursive: true, force: true });
}
