// A person's own conversations as a regression set, through the CLI (in-process):
// `sessions judge` from a script, judgments shown by `sessions show` and `replay`,
// kept by `fork`. Offline, over three small documents written here.

import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { isolatedEnv, ragline, tempDir, type CliResult } from './helpers/cli.js';

let home: string;
let docs: string;
const cli = (args: string[], input?: string): Promise<CliResult> => ragline(args, { env: isolatedEnv(home), input });

async function ok(args: string[], input?: string): Promise<string> {
  const result = await cli(args, input);
  expect(result.code, result.stderr).toBe(0);
  return result.stdout;
}

beforeAll(async () => {
  if (!fs.existsSync(path.resolve('dist/cli/main.js'))) throw new Error('Build first: npx tsc -p .');
  home = tempDir('ragline-judge-');
  docs = path.join(home, 'docs');
  fs.mkdirSync(path.join(docs, 'guides'), { recursive: true });
  fs.writeFileSync(path.join(docs, 'guides', 'keys.md'), '# API keys\n\nRotate an API key from the dashboard under Settings > Keys. A rotated key stops working after one hour.\n');
  fs.writeFileSync(path.join(docs, 'guides', 'webhooks.md'), '# Webhooks\n\nEvery webhook carries a signature header, X-Orbitly-Signature. Verify it with your signing secret.\n');
  fs.writeFileSync(path.join(docs, 'billing.md'), '# Billing\n\nInvoices are sent on the first day of the month. Change the billing email under Settings > Billing.\n');
  await ok(['ingest', docs]);
  await ok(['chat', '--new', 'keys'], ['How do I rotate an API key?', 'How do I verify a webhook signature?', 'When are invoices sent?'].join('\n') + '\n');
});

afterAll(() => fs.rmSync(home, { recursive: true, force: true }));

describe('sessions judge', () => {
  test('records relevant documents by path, file path or name; shows them in sessions show and replay; a fork keeps them', async () => {
    const judged = JSON.parse(await ok(['sessions', 'judge', 'keys', '1', '--relevant', 'guides/keys.md', '--json']));
    expect(judged).toMatchObject({ turn: 1, judgment: { noneUseful: false, relevant: [{ documentPath: 'guides/keys.md', source: 'retrieved' }] }, notIndexed: [] });
    expect(judged.judgment.relevant[0].chunkRank).toBeGreaterThanOrEqual(1);

    // a file path on disk, and a name without extension, resolve to the stored paths
    const second = await ok(['sessions', 'judge', 'keys', '2', '--relevant', path.join(docs, 'guides', 'webhooks.md'), 'billing']);
    expect(second).toMatch(/^Turn 2 of keys judged: relevant guides\/webhooks\.md \(chunk \d\); (relevant|expected) billing\.md/);

    const show = await ok(['sessions', 'show', 'keys']);
    expect(show).toContain('turns    3, 2 judged');
    expect(show).toMatch(/ 1 {2}How do I rotate an API key\?\n {7}judged: relevant guides\/keys\.md \(chunk \d\)\n/);
    const shown = JSON.parse(await ok(['sessions', 'show', 'keys', '--json']));
    expect(shown.turns.map((t: any) => t.judgment?.relevant.map((d: any) => d.documentPath) ?? null)).toEqual([
      ['guides/keys.md'],
      ['guides/webhooks.md', 'billing.md'],
      null,
    ]);

    const replay = await ok(['replay', 'keys', '--turn', '1']);
    expect(replay).toMatch(/ {3}judged: relevant guides\/keys\.md \(chunk \d\)/);
    expect(JSON.parse(await ok(['replay', 'keys', '--json'])).turns[0].judgment.relevant[0].documentPath).toBe('guides/keys.md');
    const exported = JSON.parse(await ok(['sessions', 'export', 'keys', '--format', 'json']));
    expect(exported.turns.map((t: any) => t.judgment?.relevant.length ?? 0)).toEqual([1, 2, 0]);

    const fork = JSON.parse(await ok(['sessions', 'fork', 'keys', '--at', '2', '--name', 'keys-b', '--json']));
    const forked = JSON.parse(await ok(['sessions', 'show', fork.id, '--json']));
    expect(forked.turns.map((t: any) => t.judgment?.relevant.length ?? 0)).toEqual([1, 2]);
    await ok(['sessions', 'rm', 'keys-b', '--yes']);
  });

  test('--none with a document that is not indexed: kept, and reported as not indexed', async () => {
    const result = await cli(['sessions', 'judge', 'keys', '3', '--none', '--relevant', 'notes/payments.md']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('Turn 3 of keys judged: nothing retrieved was useful; expected notes/payments.md (not indexed).');
    expect(result.stderr).toContain('Not in the index: notes/payments.md (kept; eval reports it as not indexed).');
    const replay = await ok(['replay', 'keys', '--turn', '3']);
    expect(replay).toContain('judged: nothing retrieved was useful; expected notes/payments.md (not indexed)');
    await ok(['sessions', 'judge', 'keys', '3', '--clear']);
    expect(JSON.parse(await ok(['sessions', 'show', 'keys', '--json'])).turns[2].judgment).toBeNull();
  });

  test('a turn that does not exist, or nothing to record, is refused with exit 2 and changes nothing', async () => {
    const before = await ok(['sessions', 'show', 'keys', '--json']);
    const missing = await cli(['sessions', 'judge', 'keys', '9', '--relevant', 'guides/keys.md']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('Session keys has turns 1 to 3; there is no turn 9.');
    const nothing = await cli(['sessions', 'judge', 'keys', '1']);
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toContain('Say what to record: --relevant <document>..., --none, or --clear.');
    const badTurn = await cli(['sessions', 'judge', 'keys', 'two', '--none']);
    expect(badTurn.code).toBe(2);
    expect(await ok(['sessions', 'show', 'keys', '--json'])).toBe(before);
  });
});

describe('eval --from-sessions and sessions export --format tasks', () => {
  // Ranks checked by hand over the three documents above (`ragline search` shows them):
  //   "How do I rotate an API key?"              guides/keys.md at rank 1 (its only keyword match)
  //   "Which settings change the billing email?" billing.md 1, guides/keys.md 2 ("Settings"), webhooks.md 3 (no keyword)
  //   "When are invoices sent?"                  judged: notes/payments.md, not indexed: never found
  //   "How do I verify a webhook signature?"     guides/webhooks.md at rank 1
  // raw variant, session evalset: R@5 = (1 + 1 + 0) / 3, MRR@10 = (1 + 1/2 + 0) / 3 = 0.5,
  // nDCG@10 = (1 + 1/log2(3) + 0) / 3; session hooks: all 1; overall: R@5 3/4, MRR@10 2.5/4.
  beforeAll(async () => {
    await ok(['chat', '--new', 'evalset'], ['How do I rotate an API key?', 'Which settings change the billing email?', 'When are invoices sent?'].join('\n') + '\n');
    await ok(['chat', '--new', 'hooks'], 'How do I verify a webhook signature?\n');
    await ok(['chat', '--new', 'plain'], 'How do I rotate an API key?\n');
    await ok(['sessions', 'judge', 'evalset', '1', '--relevant', 'guides/keys.md']);
    await ok(['sessions', 'judge', 'evalset', '2', '--relevant', 'keys']);
    await ok(['sessions', 'judge', 'evalset', '3', '--relevant', 'notes/payments.md']);
    await ok(['sessions', 'judge', 'hooks', '1', '--relevant', 'guides/webhooks.md']);
    const search = JSON.parse(await ok(['search', '--json', 'Which settings change the billing email?']));
    expect(search.results.map((r: any) => r.documentPath)).toEqual(['billing.md', 'guides/keys.md', 'guides/webhooks.md']);
  });

  test('known ranks give known R@5, MRR@10 and nDCG@10, per session and overall; a judged document not indexed is reported', async () => {
    const result = await cli(['eval', '--from-sessions', 'evalset', 'hooks', '--variants', 'raw', '--json']);
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report.tasks).toBe(4);
    const raw = report.variants[0];
    expect(raw.name).toBe('raw');
    expect(raw.groups.evalset.n).toBe(3);
    expect(raw.groups.evalset.recall5).toBeCloseTo(2 / 3, 6);
    expect(raw.groups.evalset.mrr10).toBeCloseTo(0.5, 6);
    expect(raw.groups.evalset.ndcg10).toBeCloseTo((1 + 1 / Math.log2(3)) / 3, 6);
    expect(raw.groups.hooks).toMatchObject({ n: 1, recall5: 1, mrr10: 1 });
    expect(raw.overall.n).toBe(4);
    expect(raw.overall.recall5).toBeCloseTo(0.75, 6);
    expect(raw.overall.mrr10).toBeCloseTo(0.625, 6);
    expect(report.missing).toEqual([{ task: 'evalset::3', document: 'notes/payments.md' }]);
    expect(report.sessions.map((s: any) => [s.name, s.tasks])).toEqual([['evalset', 3], ['hooks', 1]]);

    const text = await cli(['eval', '--from-sessions', 'evalset', 'hooks', '--variants', 'raw']);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^evalset\s+raw\s+3\s+0\.667\s+0\.667\s+0\.500\s+0\.544$/m);
    expect(text.stdout).toMatch(/^hooks\s+raw\s+1\s+1\.000\s+1\.000\s+1\.000\s+1\.000$/m);
    expect(text.stdout).toMatch(/^all\s+raw\s+4\s+0\.750\s+0\.750\s+0\.625\s+/m);
    expect(text.stderr).toContain('1 relevant document named by the tasks is not indexed (not in the database; it counts as not found)');
    expect(text.stderr).toContain('notes/payments.md (evalset::3)');
  });

  test('no names: every session with judged turns; a session without judged turns is refused with exit 2', async () => {
    const all = JSON.parse(await ok(['eval', '--from-sessions', '--variants', 'raw', '--json']));
    expect(all.sessions.map((s: any) => s.name)).toEqual(expect.arrayContaining(['keys', 'evalset', 'hooks']));
    expect(all.sessions.map((s: any) => s.name)).not.toContain('plain');

    const plain = await cli(['eval', '--from-sessions', 'plain']);
    expect(plain.code).toBe(2);
    expect(plain.stderr).toContain('Session plain has no judged turns.');
    expect(plain.stderr).toContain('ragline sessions judge');
    const exported = await cli(['sessions', 'export', 'plain', '--format', 'tasks']);
    expect(exported.code).toBe(2);
    expect(exported.stderr).toContain('Session plain has no judged turns.');
    expect(exported.stdout).toBe('');
    const noFile = await cli(['eval']);
    expect(noFile.code).toBe(2);
    expect(noFile.stderr).toContain('Name a tasks file, or use --from-sessions.');
  });

  test('export --format tasks writes tasks that eval scores with the same numbers', async () => {
    const file = path.join(home, 'evalset.jsonl');
    await ok(['sessions', 'export', 'evalset', '--format', 'tasks', '-o', file]);
    const lines = fs.readFileSync(file, 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    expect(lines.map((t) => [t.id, t.group, t.question, t.relevant])).toEqual([
      ['evalset::1', 'evalset', 'How do I rotate an API key?', ['guides/keys.md']],
      ['evalset::2', 'evalset', 'Which settings change the billing email?', ['guides/keys.md']],
      ['evalset::3', 'evalset', 'When are invoices sent?', ['notes/payments.md']],
    ]);
    expect(lines[2].history.map((h: any) => h.user)).toEqual(['How do I rotate an API key?', 'Which settings change the billing email?']);
    expect(lines[2].history[0].assistant).toMatch(/Rotate an API key/);

    const variants = 'raw,ragline,ragline+raw';
    const fromFile = JSON.parse(await ok(['eval', file, '--variants', variants, '--json', '--per-task']));
    const fromSessions = JSON.parse(await ok(['eval', '--from-sessions', 'evalset', '--variants', variants, '--json', '--per-task']));
    expect(fromFile.variants).toEqual(fromSessions.variants);
    expect(fromFile.results).toEqual(fromSessions.results);
    expect(fromFile.missing).toEqual(fromSessions.missing);
  });
});

// Last in the file: the sessions it judges would change what eval --from-sessions scores above.
describe('names that are no document, and one document named twice', () => {
  test('/expect with nothing (or only quotes) is refused; quotes are taken off and a document named again is not added twice', async () => {
    const input = ['When are invoices sent?', '/expect ""', "/expect ' '", '/expect "billing.md"', '/expect billing', '/expect ./notes//signing.md', '/expect notes/signing.md'].join('\n') + '\n';
    const chat = await cli(['chat', '--new', 'expect-names'], input);
    expect(chat.code, chat.stderr).toBe(0);
    expect(chat.stderr.match(/^Usage: \/expect <document>/gm)).toHaveLength(2);
    expect(chat.stdout).toContain('(billing.md is in this judgment already: nothing added)');
    expect(chat.stdout).toContain('(notes/signing.md is in this judgment already: nothing added)');
    const shown = JSON.parse(await ok(['sessions', 'show', 'expect-names', '--json']));
    expect(shown.turns[0].judgment.relevant.map((d: any) => d.documentPath)).toEqual(['billing.md', 'notes/signing.md']);
  });

  test('sessions judge --relevant refuses an empty name and records a document named twice once', async () => {
    const empty = await cli(['sessions', 'judge', 'expect-names', '1', '--relevant', 'billing.md', '""']);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('--relevant was given an empty document name.');
    const judged = JSON.parse(await ok(['sessions', 'judge', 'expect-names', '1', '--relevant', 'billing', 'billing.md', './x.md', 'x.md', '--json']));
    expect(judged.judgment.relevant.map((d: any) => d.documentPath)).toEqual(['billing.md', 'x.md']);
    expect(judged.notIndexed).toEqual(['x.md']);
  });
});
