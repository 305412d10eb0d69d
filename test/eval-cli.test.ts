// `ragline eval` end to end through the CLI, run in-process: a
// tasks file in the documented shape against fixtures/docs ingested into a temp
// database; documents named by path or by file name without extension; a document
// that is not in the database reported, not dropped; the subset whose reference
// rewrite differs; ragline's own rewrite through the chat's code; bad files refused
// with the line that is wrong.

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { FIXTURE_DOCS, isolatedEnv, ragline, runCli, tempDir } from './helpers/cli.js';

let home: string;
const env = () => isolatedEnv(home);

const TASKS = [
  { id: 'relay::1', group: 'relay', question: 'How do I install the Relay agent?', history: [], relevant: ['guides/relay.md'], note: 'extra fields are ignored' },
  {
    id: 'relay::2',
    group: 'relay',
    question: 'and on Windows?',
    history: [{ user: 'How do I install the Relay agent?', assistant: 'Install the orbit-relay package.' }],
    reference_rewrite: 'How do I install the Relay agent on Windows?',
    relevant: ['relay'],
  },
  { id: 'gone::1', group: 'other', question: 'How do webhooks retry a delivery?', history: [], relevant: ['no-such-page'] },
];

interface Row {
  n: number;
  recall5: number;
}
interface Report {
  tasks: number;
  variants: {
    name: string;
    overall: Row;
    groups: Record<string, Row>;
    rewriteDiffers: Row;
    decisions?: Record<string, number>;
    addedTerms?: { recall: number; recallN: number; precision: number; precisionN: number };
  }[];
  missing: { task: string; document: string }[];
  results: { id: string; variant: string; query: string; decision?: string; ranked: (string | null)[]; metrics: { recall5: number } }[];
}

beforeEach(async () => {
  home = tempDir();
  const ingested = await ragline(['ingest', FIXTURE_DOCS], { env: env() });
  expect(ingested.code).toBe(0);
});
afterEach(() => fs.rmSync(home, { recursive: true, force: true }));

function tasksFile(lines: string[]): string {
  const file = path.join(home, 'tasks.jsonl');
  fs.writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

describe('ragline eval', () => {
  test('scores every variant per group, overall and where the reference rewrite differs, and reports a missing document', async () => {
    const result = await ragline(['eval', tasksFile(TASKS.map((t) => JSON.stringify(t))), '--json', '--per-task'], { env: env() });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as Report;
    expect(report.tasks).toBe(3);
    expect(report.variants.map((v) => v.name)).toEqual(['raw', 'reference', 'ragline', 'ragline-always', 'ragline+raw', 'ragline+raw-notopics']);
    expect(report.missing).toEqual([{ task: 'gone::1', document: 'no-such-page' }]);

    const variant = (name: string) => report.variants.find((v) => v.name === name)!;
    expect(variant('raw').overall.n).toBe(3);
    expect(Object.keys(variant('raw').groups)).toEqual(['other', 'relay']);
    expect(variant('raw').groups.relay!.n).toBe(2);
    expect(variant('reference').overall.n).toBe(1); // only one task has a reference rewrite
    expect(variant('raw').rewriteDiffers.n).toBe(1);
    // The missing document can never be found: its task scores 0 in every variant.
    for (const r of report.results.filter((r) => r.id === 'gone::1')) expect(r.metrics.recall5).toBe(0);

    const task = (id: string, name: string) => report.results.find((r) => r.id === id && r.variant === name)!;
    // Named by path and by file name without extension, the relay page counts when found.
    expect(task('relay::1', 'raw').ranked.slice(0, 5)).toContain('guides/relay.md');
    expect(task('relay::1', 'raw').metrics.recall5).toBe(1);
    // The follow-up is rewritten from its history by the chat's own code, and then finds the page.
    expect(task('relay::2', 'ragline').decision).toBe('rewritten');
    expect(task('relay::2', 'ragline').query).not.toBe('and on Windows?');
    expect(task('relay::2', 'ragline+raw').metrics.recall5).toBe(1);
    expect(task('relay::2', 'reference').query).toBe('How do I install the Relay agent on Windows?');
    expect(task('relay::1', 'ragline').decision).toBe('skipped'); // a first turn needs no rewrite
    // Rewrite variants are scored on the words they add against the reference's ("relay", "agent", "install").
    expect(variant('raw').addedTerms).toBeUndefined();
    expect(variant('reference').addedTerms).toBeUndefined();
    expect(variant('ragline').addedTerms).toMatchObject({ recallN: 1, precisionN: 1 });
    expect(variant('ragline').addedTerms!.recall).toBeGreaterThan(0);
  });

  test('the text table keeps its columns aligned whatever the names', async () => {
    const result = await ragline(['eval', tasksFile(TASKS.map((t) => JSON.stringify(t))), '--variants', 'raw,ragline+raw-notopics'], { env: env() });
    expect(result.code).toBe(0);
    const [header, ...rows] = result.stdout.split('\n').filter((line) => / R@5 |\d\.\d{3}/.test(line) && !line.includes(':'));
    expect(rows.length).toBe(8); // 2 variants x (2 groups, all, rewrite differs)
    // The last digit of every row's count stands under the header's "n", and the metrics start together.
    const countEnd = (row: string) => {
      const match = /(\d+) +\d\.\d{3}/.exec(row)!;
      return match.index + match[1]!.length - 1;
    };
    for (const row of rows) expect(countEnd(row), row).toBe(header!.indexOf(' n ') + 1);
    expect(new Set(rows.map((row) => row.search(/\d\.\d{3}/))).size).toBe(1);
    expect(result.stdout + result.stderr).toMatch(/not in the database.*no-such-page/);
  });

  test('tasks without a group are shown once, as all, beside rewrite differs', async () => {
    const ungrouped = TASKS.map(({ group: _group, ...task }) => JSON.stringify(task));
    const result = await ragline(['eval', tasksFile(ungrouped), '--variants', 'raw'], { env: env() });
    expect(result.code, result.stderr).toBe(0);
    const subsets = result.stdout.split('\n').filter((line) => /\d\.\d{3}/.test(line)).map((line) => line.split(/\s+/)[0]);
    expect(subsets).toEqual(['all', 'rewrite']);
  });

  test('a count of one in the text report is singular: one turn with a reference rewrite, one missing document', async () => {
    const result = await ragline(['eval', tasksFile(TASKS.map((t) => JSON.stringify(t))), '--variants', 'ragline'], { env: env() });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^ragline: added-term recall \d\.\d\d \(1 turn\), precision \d\.\d\d \(1 turn\) against the reference rewrite$/m);
    expect(result.stderr).toContain('1 relevant document named by the tasks is not indexed (not in the database; it counts as not found)');
  });

  test('a line that is not JSON, or has no question, is refused with its line number and exit 2', async () => {
    const bad = await ragline(['eval', tasksFile([JSON.stringify(TASKS[0]), '{"question": "unterminated'])], { env: env() });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/tasks\.jsonl:2 is not valid JSON/);
    const noQuestion = await ragline(['eval', tasksFile(['{"relevant": ["faq"]}'])], { env: env() });
    expect(noQuestion.code).toBe(2);
    expect(noQuestion.stderr).toMatch(/tasks\.jsonl:1 has no "question"/);
    const unknown = await ragline(['eval', tasksFile([JSON.stringify(TASKS[0])]), '--variants', 'raw,best'], { env: env() });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/Unknown variant "best"/);
  });

  // As a process: a FIFO blocked the read (no Ctrl-C got through), /dev/zero was read until memory ran out.
  test('a FIFO, a device or a folder named as the tasks file is refused at once with exit 2, not read', async () => {
    const fifo = path.join(home, 'tasks.fifo');
    execFileSync('mkfifo', [fifo]);
    for (const [file, what] of [[fifo, 'a FIFO'], ['/dev/zero', 'a device'], [home, 'a folder']]) {
      const result = await runCli(['eval', file!], { env: env(), timeoutMs: 10_000 });
      expect(result.code, `${file}: ${result.signal ?? ''} ${result.stderr}`).toBe(2);
      expect(result.stderr).toContain(`error: ${file} is ${what}, not a tasks file.`);
      expect(result.stderr).toContain('one JSON object a line');
    }
  });
});
