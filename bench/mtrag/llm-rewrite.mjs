#!/usr/bin/env node
// ragline's LLM rewrite path on MTRAG without a model: an OpenAI-compatible
// server on 127.0.0.1 answers every rewrite request with MTRAG's reference
// rewrite of that turn (the question it finds on the prompt's "Last message:"
// line), so the numbers measure ragline's pipeline around the model (gate,
// prompt, sanitising, fusion), not a model. Embeddings stay offline.
//
//   node bench/mtrag/llm-rewrite.mjs [--domains cloud,fiqa]
//
// Needs the databases built by bench/mtrag/run.mjs (default chunking).

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const out = path.join(root, 'bench/out/mtrag');
const i = process.argv.indexOf('--domains');
const domains = (i > 0 ? process.argv[i + 1] : 'cloud,fiqa').split(',');
const norm = (s) => s.replace(/\s+/g, ' ').trim();

const references = new Map();
let requests = 0;
let unmatched = 0;
const server = http.createServer((req, res) => {
  let body = '';
  req.on('data', (d) => (body += d));
  req.on('end', () => {
    if (!req.url.endsWith('/chat/completions')) {
      res.writeHead(404, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ error: { message: 'not found' } }));
    }
    requests++;
    const request = JSON.parse(body);
    const prompt = request.messages.map((m) => m.content).join('\n');
    const last = /Last message: (.*)/.exec(prompt)?.[1] ?? '';
    const users = [...prompt.matchAll(/^User: (.*)$/gm)].map((m) => norm(m[1]));
    const key = `${norm(last)}|${users.at(-1) ?? ''}`;
    let reply = references.get(key) ?? references.get(norm(last));
    if (reply === undefined) {
      unmatched++;
      reply = last;
    }
    const completion = { id: 'c', object: 'chat.completion', created: 0, model: request.model };
    const usage = { prompt_tokens: Math.ceil(prompt.length / 4), completion_tokens: Math.ceil(reply.length / 4), total_tokens: 0 };
    if (request.stream) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify({ ...completion, object: 'chat.completion.chunk', choices: [{ index: 0, delta: { role: 'assistant', content: reply }, finish_reason: null }] })}\n\n`);
      res.write(`data: ${JSON.stringify({ ...completion, object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`);
      if (request.stream_options?.include_usage) res.write(`data: ${JSON.stringify({ ...completion, object: 'chat.completion.chunk', choices: [], usage })}\n\n`);
      res.end('data: [DONE]\n\n');
    } else {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ...completion, choices: [{ index: 0, message: { role: 'assistant', content: reply }, finish_reason: 'stop' }], usage }));
    }
  });
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const baseURL = `http://127.0.0.1:${server.address().port}/v1`;

const run = (args, env) =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(root, 'bin/ragline.js'), ...args], { env, cwd: root });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`exit ${code}: ${stderr}`))));
  });

console.log('| domain | subset | variant | n | R@5 | R@10 | MRR@10 | nDCG@10 | decisions |');
console.log('|---|---|---|---|---|---|---|---|---|');
for (const domain of domains) {
  const tasksFile = path.join(out, domain, 'tasks.jsonl');
  for (const line of fs.readFileSync(tasksFile, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const task = JSON.parse(line);
    if (!task.reference_rewrite) continue;
    references.set(`${norm(task.question)}|${norm(task.history.at(-1)?.user ?? '')}`, task.reference_rewrite);
    if (!references.has(norm(task.question))) references.set(norm(task.question), task.reference_rewrite);
  }
  const env = {
    ...process.env,
    RAGLINE_BASE_URL: baseURL,
    RAGLINE_API_KEY: 'bench',
    RAGLINE_EMBED_PROVIDER: 'offline',
    RAGLINE_CHAT_MODEL: 'reference-rewrites',
    RAGLINE_MAX_RETRIES: '0',
    NO_COLOR: '1',
  };
  const before = requests;
  const report = JSON.parse(
    await run(['--db', path.join(out, `${domain}.db`), 'eval', tasksFile, '--variants', 'raw,reference,ragline,ragline-always,ragline+raw', '--json'], env),
  );
  for (const v of report.variants) {
    const decisions = v.decisions ? Object.entries(v.decisions).map(([d, n]) => `${d} ${n}`).join(', ') : '';
    for (const [subset, m] of [['all', v.overall], ['rewrite differs', v.rewriteDiffers]]) {
      console.log(`| ${domain} | ${subset} | ${v.name} | ${m.n} | ${m.recall5.toFixed(3)} | ${m.recall10.toFixed(3)} | ${m.mrr10.toFixed(3)} | ${m.ndcg10.toFixed(3)} | ${subset === 'all' ? decisions : ''} |`);
    }
  }
  console.log(`\n${domain}: ${requests - before} rewrite requests to the loopback server\n`);
}
console.log(`requests whose question had no reference rewrite (earlier non-task turns; answered with the question): ${unmatched}`);
server.close();
