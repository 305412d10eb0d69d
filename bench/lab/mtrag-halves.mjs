#!/usr/bin/env node
// MTRAG by conversation-id halves (halfOf, bench/turn/common.mjs): R@5 and the rewrite's
// added-term precision and recall against the reference rewrite, per domain, variant and
// half, from `ragline eval --per-task` on the databases bench/mtrag/run.mjs built. The
// offline context model is fitted on the 'dev' half (bench/lab/fit-context-model.mjs);
// the 'held-out' half is what it did not see. `--bin` runs another build (an older commit's).
//
//   node bench/lab/mtrag-halves.mjs [--bin bin/ragline.js] [--variants raw,ragline+raw] [--out file.json]

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { halfOf, option, root } from '../turn/common.mjs';

const bin = path.resolve(option('bin', path.join(root, 'bin/ragline.js')));
const variants = option('variants', 'raw,ragline+raw');
const report = { domains: {} };
for (const domain of ['cloud', 'fiqa']) {
  const db = path.join(root, `bench/out/mtrag/${domain}.db`);
  const tasks = path.join(root, `bench/out/mtrag/${domain}/tasks.jsonl`);
  if (!fs.existsSync(db)) {
    console.log(`skipped ${domain}: run bench/mtrag/run.mjs first`);
    continue;
  }
  const run = spawnSync(process.execPath, [bin, '--db', db, 'eval', tasks, '--variants', variants, '--max-per-document', '0', '--per-task', '--json'], { encoding: 'utf8', maxBuffer: 1 << 28, env: { ...process.env, RAGLINE_PROVIDER: 'offline', NO_COLOR: '1' } });
  if (run.status !== 0) throw new Error(run.stderr);
  report.domains[domain] = { eval: JSON.parse(run.stdout) };
}
if (option('out')) fs.writeFileSync(option('out'), JSON.stringify(report));
const mean = (xs) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);
console.log('| domain | variant | half | n | R@5 | added-term precision (n) | added-term recall (n) |');
console.log('|---|---|---|---|---|---|---|');
for (const [domain, { eval: e }] of Object.entries(report.domains)) {
  if (!e) continue;
  const variants = [...new Set(e.results.map((r) => r.variant))];
  for (const variant of variants) {
    for (const half of ['dev', 'held-out', 'all']) {
      const rows = e.results.filter((r) => r.variant === variant && (half === 'all' || halfOf(r.id.split('<::>')[0]) === half));
      const precision = rows.flatMap((r) => (r.addedTerms?.precision === undefined ? [] : [r.addedTerms.precision]));
      const recall = rows.flatMap((r) => (r.addedTerms?.recall === undefined ? [] : [r.addedTerms.recall]));
      const added = precision.length ? `${mean(precision).toFixed(3)} (${precision.length})` : '-';
      const found = recall.length ? `${mean(recall).toFixed(3)} (${recall.length})` : '-';
      console.log(`| ${domain} | ${variant} | ${half} | ${rows.length} | ${mean(rows.map((r) => r.metrics.recall5)).toFixed(3)} | ${added} | ${found} |`);
    }
  }
}
