// Offline embedder throughput on the Cloud + FiQA corpus texts, one core, cold caches.
// Usage: node bench/lab/throughput.mjs [dims] [featuresJSON]
import { loadCorpus } from './common.mjs';
import { OfflineEmbedder } from '../out/lib/providers/offline-embedder.js';

const dims = Number(process.argv[2] ?? 384);
const features = process.argv[3] ? JSON.parse(process.argv[3]) : undefined;
const texts = [...loadCorpus('cloud'), ...loadCorpus('fiqa')].map((d) => d.text);
const bytes = texts.reduce((s, t) => s + Buffer.byteLength(t), 0);
for (let pass = 1; pass <= 2; pass++) {
  const e = new OfflineEmbedder({ dimensions: dims, features });
  const t0 = performance.now();
  for (const t of texts) e.embedOne(t);
  const s = (performance.now() - t0) / 1000;
  console.log(`${e.id} pass ${pass}: ${(bytes / 1e6).toFixed(1)} MB in ${s.toFixed(2)} s = ${(bytes / 1e6 / s).toFixed(1)} MB/s`);
}
