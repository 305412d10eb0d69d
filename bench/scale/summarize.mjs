// Markdown table from bench/out/scale/results.jsonl: per database and strategy, the
// median over repeated runs of p50 and p95, the range of p50 across runs (variance on
// a shared machine), load time, recall@10 and RSS.
//   node bench/scale/summarize.mjs [results.jsonl]
import fs from 'node:fs';

const file = process.argv[2] ?? 'bench/out/scale/results.jsonl';
const rows = fs.readFileSync(file, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
const groups = new Map();
for (const r of rows) {
  const key = `${r.db}\t${r.strategy}`;
  if (!groups.has(key)) groups.set(key, []);
  groups.get(key).push(r);
}
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const f = (x) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));
console.log('| database | vectors | strategy | runs | p50 ms (median) | p50 range | p95 ms (median) | load ms | recall@10 | RSS MB (anon/file) |');
console.log('|---|---|---|---|---|---|---|---|---|---|');
for (const [key, rs] of groups) {
  const [db, strategy] = key.split('\t');
  const p50s = rs.map((r) => r.p50);
  console.log(
    `| ${db} | ${rs[0].vectors} | ${strategy} | ${rs.length} | ${f(median(p50s))} | ${f(Math.min(...p50s))}–${f(Math.max(...p50s))} | ${f(median(rs.map((r) => r.p95)))} | ${f(median(rs.map((r) => r.loadMs)))} | ${median(rs.map((r) => r.recall10)).toFixed(3)} | ${median(rs.map((r) => r.rssMB))}${rs[0].rssAnonMB !== undefined ? ` (${median(rs.map((r) => r.rssAnonMB))}/${median(rs.map((r) => r.rssFileMB))})` : ''} |`,
  );
}
