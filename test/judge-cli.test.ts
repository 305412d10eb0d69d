// A person's own conversations as a regression set, through the built CLI:
// `sessions judge` from a script, judgments shown by `sessions show` and `replay`,
// kept by `fork`. Offline, over three small documents written here.
// Build first: npx tsc -p .

import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { isolatedEnv, runCli, tempDir, type CliResult } from './helpers/cli.js';

let home: string;
let docs: string;
const cli = (args: string[], input?: string): Promise<CliResult> => runCli(args, { env: isolatedEnv(home), input });

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
