#!/usr/bin/env node
// Turns ../shared/bench (MTRAG, Cloud and FiQA) into what ragline ingests and
// evaluates: one .txt file per passage, named by its passage id, and an eval
// tasks file per domain in the `ragline eval` format. Nothing is copied into
// the repository: the output goes to bench/out/ (gitignored).
//
//   node bench/mtrag/prepare.mjs [--out bench/out/mtrag]

import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const shared = path.resolve(root, '../shared/bench');
const outArg = process.argv.indexOf('--out');
const out = path.resolve(outArg > 0 ? process.argv[outArg + 1] : path.join(root, 'bench/out/mtrag'));

if (!fs.existsSync(shared)) {
  console.error(`error: the benchmark is not at ${shared}; these scripts need ../shared/bench beside the project.`);
  process.exit(2);
}

async function* lines(file) {
  const rl = readline.createInterface({ input: fs.createReadStream(file), crlfDelay: Infinity });
  for await (const line of rl) if (line.trim()) yield JSON.parse(line);
}

for (const domain of ['cloud', 'fiqa']) {
  const docs = path.join(out, domain, 'docs');
  fs.rmSync(docs, { recursive: true, force: true });
  fs.mkdirSync(docs, { recursive: true });
  let count = 0;
  let bytes = 0;
  for await (const passage of lines(path.join(shared, `corpus_${domain}.jsonl`))) {
    fs.writeFileSync(path.join(docs, `${passage.id}.txt`), passage.text);
    count++;
    bytes += Buffer.byteLength(passage.text);
  }
  const tasks = [];
  for await (const task of lines(path.join(shared, 'retrieval_tasks.jsonl'))) {
    if (task.domain !== domain) continue;
    tasks.push({
      id: task.task_id,
      group: domain,
      conversation: task.conversation_id,
      turn: task.turn,
      question: task.question,
      history: task.previous_questions.map((user, i) => ({ user, assistant: task.previous_answers[i] ?? '' })),
      reference_rewrite: task.reference_rewrite,
      relevant: task.relevant_passage_ids,
    });
  }
  fs.writeFileSync(path.join(out, domain, 'tasks.jsonl'), tasks.map((t) => JSON.stringify(t)).join('\n') + '\n');
  console.log(`${domain}: ${count} passages (${(bytes / 1e6).toFixed(1)} MB) -> ${docs}; ${tasks.length} tasks`);
}
