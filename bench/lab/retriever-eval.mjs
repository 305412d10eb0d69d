// Runs the shipped Retriever (dist/) over the eval tasks with settings overridden from
// the SETTINGS environment variable (JSON RetrievalSettings), e.g.
//   SETTINGS='{"phraseWeight":0,"titleWeight":0}' node bench/lab/retriever-eval.mjs cloud fiqa
// and prints R@5 / R@10 / MRR@10 / nDCG@10 for the reference rewrite and the raw question,
// plus mean milliseconds per search.
import path from 'node:path';
import { Retriever } from '../../dist/retrieve/search.js';
import { OfflineEmbedder } from '../../dist/providers/offline-embedder.js';
import { openDatabase } from '../../dist/store/db.js';
import { scoreQuery, meanMetrics } from '../../dist/eval/metrics.js';
import { loadTasks, fmt } from './rerank.mjs';

const settings = JSON.parse(process.env.SETTINGS ?? '{}');
const cells = [];
for (const domain of process.argv.slice(2)) {
  const db = openDatabase(path.resolve(path.dirname(new URL(import.meta.url).pathname), `../out/mtrag/${domain}.db`), { readonly: true });
  const retriever = new Retriever(db, new OfflineEmbedder());
  const tasks = loadTasks(domain);
  let ms = 0;
  let searches = 0;
  for (const which of ['reference', 'raw']) {
    const per = [];
    for (const t of tasks) {
      const q = which === 'raw' ? t.question : (t.reference_rewrite ?? t.question);
      const t0 = performance.now();
      const hits = await retriever.search(q, { k: 10, ...settings });
      ms += performance.now() - t0;
      searches++;
      const seen = new Set();
      const ranked = [];
      for (const h of hits) {
        const name = path.posix.basename(h.documentPath).replace(/\.[^.]*$/, '');
        ranked.push(seen.has(name) ? null : name);
        seen.add(name);
      }
      per.push(scoreQuery(ranked, t.relevant));
    }
    cells.push(fmt(meanMetrics(per)));
  }
  console.error(`${domain}: ${(ms / searches).toFixed(1)} ms per search (${searches} searches)`);
  db.close();
}
console.log(`| ${JSON.stringify(settings)} | ${cells.join(' | ')} |`);
