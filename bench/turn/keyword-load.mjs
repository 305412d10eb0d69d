#!/usr/bin/env node
// What loading the in-memory keyword copy costs a chat at 100k chunks: it loads in
// the background when the REPL starts (retrieve/memory/keyword-copy.ts, warmInBackground).
// Reports the load's wall time, how long the main thread was blocked (event-loop
// delay while loading: what a user typing meanwhile would feel), the memory the
// copy holds, and the process's RSS before and after (garbage collected).
//
//   node --expose-gc bench/turn/keyword-load.mjs [--chunks 100000]

import path from 'node:path';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { arg, existingTurnDb, root } from './common.mjs';

const chunks = arg('chunks', 100_000);
const dbPath = existingTurnDb(chunks);
const { openDatabase } = await import(path.join(root, 'dist/store/db.js'));
const { SearchAccelerators } = await import(path.join(root, 'dist/retrieve/memory/accelerators.js'));

const gc = globalThis.gc ?? (() => {});
const mb = (bytes) => (bytes / 1e6).toFixed(0);
const db = openDatabase(dbPath);
const copy = new SearchAccelerators(db).keywords;
gc();
const rssBefore = process.memoryUsage().rss;
const delay = monitorEventLoopDelay({ resolution: 5 });
// What the main thread spends, measured by a timer that should fire every 10 ms.
let ticks = 0;
let blockedMs = 0;
let last = performance.now();
const timer = setInterval(() => {
  const now = performance.now();
  blockedMs += Math.max(0, now - last - 10);
  last = now;
  ticks++;
}, 10);
delay.enable();
const started = performance.now();
await copy.warmInBackground();
const wallMs = performance.now() - started;
delay.disable();
clearInterval(timer);
const index = copy.index;
await new Promise((resolve) => setTimeout(resolve, 1000)); // a worker that built it has exited
gc();
const rssAfter = process.memoryUsage().rss;
console.log(`\n${chunks} chunks: keyword copy ${index?.ready ? 'loaded' : 'NOT loaded'}`);
console.log('| load wall s | main thread blocked s | longest block ms | copy MB | RSS before MB | RSS after MB |');
console.log('|---|---|---|---|---|---|');
console.log(
  `| ${(wallMs / 1000).toFixed(2)} | ${(blockedMs / 1000).toFixed(2)} | ${(delay.max / 1e6).toFixed(0)} | ${mb(index?.memoryBytes ?? 0)} | ${mb(rssBefore)} | ${mb(rssAfter)} |`,
);
if (process.argv.includes('--detail')) {
  const m = process.memoryUsage();
  console.log(Object.fromEntries(Object.entries(m).map(([k, v]) => [k, mb(v)])));
  console.log(require('node:fs').readFileSync('/proc/self/smaps_rollup', 'utf8'));
}
db.close();
