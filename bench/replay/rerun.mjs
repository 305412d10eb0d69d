#!/usr/bin/env node
// How long `ragline replay <session> --rerun` takes on a 50-turn session, end to
// end (process start included) and in-process (the rerun itself, as reported in
// --json summary.ms). Offline throughout: an index of fixtures/docs, a session
// recorded with `ragline chat` piped, questions from fixtures/FACTS.json and
// fixtures/CONVERSATIONS.json (conversations keep their follow-ups, so the gate
// and the rewriter have work to do), repeated and varied up to 50 turns.
// Build first (npx tsc -p .). Target: under 2 s end to end.
//
//   node bench/replay/rerun.mjs [--turns 50] [--runs 7] [--keep]

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const bin = path.join(root, 'bin', 'ragline.js');
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const turns = Number(arg('turns', '50'));
const runs = Number(arg('runs', '7'));

const home = fs.mkdtempSync(path.join(os.tmpdir(), 'ragline-bench-replay-'));
const db = path.join(home, 'bench.db');
const env = {
  PATH: process.env.PATH,
  HOME: home,
  XDG_DATA_HOME: path.join(home, 'data'),
  XDG_CONFIG_HOME: path.join(home, 'config'),
  NO_COLOR: '1',
  RAGLINE_PROVIDER: 'offline',
  RAGLINE_DB: db,
};

function ragline(args, input) {
  const started = process.hrtime.bigint();
  const result = spawnSync(process.execPath, [bin, ...args], { env, input, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (result.status !== 0) throw new Error(`ragline ${args.join(' ')} exited ${result.status}:\n${result.stderr}`);
  return { ms, stdout: result.stdout };
}

/** 50 questions: conversations (with their follow-ups) interleaved with facts; repeats reworded. */
function questions(n) {
  const facts = JSON.parse(fs.readFileSync(path.join(root, 'fixtures/FACTS.json'), 'utf8')).map((f) => f.question);
  const conversations = JSON.parse(fs.readFileSync(path.join(root, 'fixtures/CONVERSATIONS.json'), 'utf8')).map((c) => c.turns.map((t) => t.question));
  const variants = [(q) => q, (q) => `Remind me: ${q.charAt(0).toLowerCase()}${q.slice(1)}`, (q) => q.replace(/\?$/, ', please?')];
  const out = [];
  for (let round = 0; out.length < n; round++) {
    const vary = variants[round % variants.length];
    for (let i = 0; out.length < n && (i < conversations.length || i < facts.length); i++) {
      for (const q of conversations[i] ?? []) if (out.length < n) out.push(vary(q));
      if (facts[i] && out.length < n) out.push(vary(facts[i]));
    }
  }
  return out;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

try {
  const ingest = ragline(['ingest', path.join(root, 'fixtures/docs')]);
  const asked = questions(turns);
  const record = ragline(['chat', '--new', 'bench'], asked.join('\n') + '\n');
  const stored = JSON.parse(ragline(['sessions', 'show', 'bench', '--json']).stdout);
  const rewritten = stored.turns.filter((t) => t.rewriteDecision === 'rewritten').length;

  const startup = [];
  const endToEnd = [];
  const endToEndJson = [];
  const inProcess = [];
  let summary;
  for (let i = 0; i < runs; i++) {
    startup.push(ragline(['--version']).ms);
    endToEnd.push(ragline(['replay', 'bench', '--rerun']).ms);
    const json = ragline(['replay', 'bench', '--rerun', '--json']);
    endToEndJson.push(json.ms);
    summary = JSON.parse(json.stdout).summary;
    inProcess.push(summary.ms);
  }
  const fmt = (xs) => `median ${median(xs).toFixed(0)} ms (min ${Math.min(...xs).toFixed(0)}, max ${Math.max(...xs).toFixed(0)})`;
  const lines = [
    `node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? '?'}), ${runs} runs`,
    `index: fixtures/docs ingested offline in ${ingest.ms.toFixed(0)} ms; session: ${stored.turns.length} turns recorded offline in ${record.ms.toFixed(0)} ms (${rewritten} rewritten)`,
    '',
    '| measure | time |',
    '|---|---|',
    `| \`ragline replay bench --rerun\`, end to end (process start included) | ${fmt(endToEnd)} |`,
    `| \`ragline replay bench --rerun --json\`, end to end | ${fmt(endToEndJson)} |`,
    `| rerun in-process (summary.ms: ${stored.turns.length} rewrites + retrievals + diffs) | ${fmt(inProcess)} |`,
    `| \`ragline --version\` (process start, for scale) | ${fmt(startup)} |`,
    '',
    `rerun summary: ${summary.rewritesChanged.length} rewrites changed, ${summary.retrievalsChanged.length} retrievals changed, mean overlap ${summary.meanOverlap?.toFixed(2)}`,
    `target < 2000 ms end to end: ${median(endToEnd) < 2000 ? 'met' : 'NOT met'}`,
    '',
    `command: RAGLINE_PROVIDER=offline RAGLINE_DB=${db} node bin/ragline.js replay bench --rerun`,
  ];
  console.log(lines.join('\n'));
} finally {
  if (process.argv.includes('--keep')) console.error(`kept ${home}`);
  else fs.rmSync(home, { recursive: true, force: true });
}
