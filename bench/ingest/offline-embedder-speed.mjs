#!/usr/bin/env node
// How fast the offline embedder embeds chunk-sized text on one core, on the built
// dist/: 2000 texts of about 1.6 KB (a paragraph of product documentation repeated),
// after 200 to warm up the JIT; the best of R runs. Exits 1 below the floor (8 MB/s,
// generous for a loaded machine; about 20 on a quiet one).
//
//   npx tsc -p . && node bench/ingest/offline-embedder-speed.mjs [--runs 3] [--floor 8]

import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const runs = Number(arg('runs', 3));
const floor = Number(arg('floor', 8));
const { OfflineEmbedder } = await import(pathToFileURL(path.join(root, 'dist/providers/offline-embedder.js')).href);

const embedder = new OfflineEmbedder();
const para = 'To run Spark applications in a serverless IBM Analytics Engine instance, optionally give users access to the provisioned instance. ';
const texts = Array.from({ length: 2000 }, (_, i) => para.repeat(12) + ` chunk ${i} token${i % 97}`);
const megabytes = texts.reduce((sum, text) => sum + text.length, 0) / 1e6;
for (const text of texts.slice(0, 200)) embedder.embedOne(text);
let best = 0;
for (let run = 0; run < runs; run++) {
  const start = performance.now();
  for (const text of texts) embedder.embedOne(text);
  best = Math.max(best, megabytes / ((performance.now() - start) / 1000));
}
console.log(`${embedder.id}: ${megabytes.toFixed(1)} MB, best of ${runs}: ${best.toFixed(1)} MB/s (floor ${floor})`);
if (best < floor) process.exitCode = 1;
