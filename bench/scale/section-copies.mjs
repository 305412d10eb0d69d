#!/usr/bin/env node
// The cost of leaving out copies of a section (src/retrieve/search.ts, SectionCopies)
// in its worst case: 1,500 generated files that each hold a section titled "Example",
// so every result shares its title with every other and is compared with them.
// Ingested into an in-memory database; `search` for "example option" at k = 10, 100
// and 1000, best of 5 runs each.
//
//   npx tsc -p . && node bench/scale/section-copies.mjs [--build <dir with dist/>]

import fs from 'node:fs';
import path from 'node:path';
import { option, root } from '../turn/common.mjs';

const build = path.resolve(option('build', root));
const load = (module) => import(path.join(build, 'dist', module));
const { ingest } = await load('ingest/ingest.js');
const { OfflineEmbedder } = await load('providers/offline-embedder.js');
const { Retriever } = await load('retrieve/search.js');
const { openDatabase } = await load('store/db.js');

const dir = path.join(root, 'bench/out/section-copies');
if (!fs.existsSync(dir)) {
  fs.mkdirSync(dir, { recursive: true });
  for (let i = 0; i < 1500; i++) {
    const words = Array.from({ length: 150 }, (_, j) => `w${(i * 7919 + j * 104729) % 50000}`);
    fs.writeFileSync(path.join(dir, `f${i}.md`), `# Doc ${i}\n\n## Example\n\nThe example option ${words.join(' ')}.\n`);
  }
}
const db = openDatabase(':memory:');
const embedder = new OfflineEmbedder();
await ingest({ root: dir, db, embedder, chunker: { size: 4000, overlap: 0 }, maxFileBytes: 1024 * 1024 });
const retriever = new Retriever(db, embedder);
console.log(`build ${build}`);
for (const k of [10, 100, 1000]) {
  let best = Infinity;
  let n = 0;
  for (let run = 0; run < 5; run++) {
    const started = performance.now();
    n = (await retriever.search('example option', { k })).length;
    best = Math.min(best, performance.now() - started);
  }
  console.log(`k=${k}: ${n} results, best of 5 ${best.toFixed(1)} ms`);
}
db.close();
