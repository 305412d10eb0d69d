// Replay after the documents moved on: a session is recorded offline over a copy of
// fixtures/docs, then one document is deleted from the folder and another rewritten,
// and the folder re-ingested. Stored chunks are matched to the index by document name
// + text hash, so replay and --rerun say which chunks are "no longer in the index" or
// whose "document changed since", and neither fails; a document renamed by a merge of
// its folder into the one holding it is found by its text under its new name.

import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { FIXTURE_DOCS, isolatedEnv, ragline, tempDir, type CliResult } from './helpers/cli.js';

let home: string;
let docs: string;
const cli = (args: string[], input?: string): Promise<CliResult> => ragline(args, { env: isolatedEnv(home), input });

async function ok(args: string[], input?: string): Promise<string> {
  const result = await cli(args, input);
  expect(result.code, result.stderr).toBe(0);
  return result.stdout;
}

beforeEach(() => {
  home = tempDir('ragline-replay-reingest-');
  docs = path.join(home, 'docs');
  fs.cpSync(FIXTURE_DOCS, docs, { recursive: true });
});
afterEach(() => fs.rmSync(home, { recursive: true, force: true }));

it('rerun shows a chunk whose text was edited since, and that the search still finds there, once, as edited', async () => {
  await ok(['ingest', docs]);
  await ok(['chat', '--new', 'keys'], 'How long is an Orbitly API key valid by default?\n');
  const auth = path.join(docs, 'guides', 'authentication.md');
  fs.writeFileSync(auth, fs.readFileSync(auth, 'utf8').replace('90 days', '60 days'));
  await ok(['ingest', docs]);
  const rerun = await ok(['replay', 'keys', '--rerun']);
  expect(rerun).toMatch(/≈\s+\d+\s+\d+\.\d{4}\s+guides\/authentication\.md:\d+-\d+.*\(its text changed since; rank \d+ → \d+\)/);
  expect(rerun).not.toMatch(/guides\/authentication\.md:\d+-\d+.*\((?:entered|left)/);
});

it('a chunk whose document was deleted shows as no longer in the index; one whose document was rewritten as changed; rerun does not fail', async () => {
  await ok(['ingest', docs]);
  await ok(['chat', '--new', 'hooks'], ['How do I verify webhook signatures?', 'How long is an API key valid?'].join('\n') + '\n');
  const recorded = JSON.parse(await ok(['replay', 'hooks', '--json']));
  const paths = recorded.turns.flatMap((t: any) => t.chunks.map((c: any) => c.documentPath));
  expect(paths).toContain('guides/webhooks.md');
  expect(paths).toContain('guides/authentication.md');

  fs.rmSync(path.join(docs, 'guides', 'webhooks.md'));
  const auth = path.join(docs, 'guides', 'authentication.md');
  fs.writeFileSync(auth, fs.readFileSync(auth, 'utf8').replace(/API key/g, 'API token'));
  await ok(['ingest', docs]);

  const replay = await ok(['replay', 'hooks']);
  expect(replay).toMatch(/guides\/webhooks\.md:\d+-\d+.*\(no longer in the index\)/);
  expect(replay).toMatch(/guides\/authentication\.md:\d+-\d+.*\(document changed since\)/);

  const rerun = await ok(['replay', 'hooks', '--rerun']);
  expect(rerun).toMatch(/-\s+\d+\s+\d+\.\d{4}\s+guides\/webhooks\.md:\d+-\d+.*\(left; was \d; no longer in the index\)/);
  expect(rerun).toMatch(/guides\/authentication\.md:\d+-\d+.*\(left; was \d; document changed since\)/);
  expect(rerun).toMatch(/stored chunks no longer in the index: [1-9]\d*; document changed since: [1-9]\d*/);
  expect(rerun).not.toMatch(/guides\/webhooks\.md.*\(entered\)/);

  const report = JSON.parse(await ok(['replay', 'hooks', '--rerun', '--json']));
  const states = report.turns.flatMap((t: any) => t.oldChunks.map((c: any) => c.indexState));
  expect(states).toContain('removed');
  expect(states).toContain('document_changed');
  // The recorded trail itself is unchanged by re-ingesting.
  expect(JSON.parse(await ok(['replay', 'hooks', '--json'])).turns.map((t: any) => t.chunks.map((c: any) => c.textHash))).toEqual(
    recorded.turns.map((t: any) => t.chunks.map((c: any) => c.textHash)),
  );
});

it('a subfolder merged into the folder holding it: its chunks are found under their new names, and only a chunk really gone is reported gone', async () => {
  await ok(['ingest', path.join(docs, 'guides')]);
  await ok(['chat', '--new', 'merged'], ['How do I create an API key?', 'How do I verify webhook signatures?'].join('\n') + '\n');
  const recorded = JSON.parse(await ok(['replay', 'merged', '--json']));
  const storedPaths = recorded.turns.flatMap((t: any) => t.chunks.map((c: any) => c.documentPath));
  expect(storedPaths).toContain('authentication.md');
  expect(storedPaths).toContain('webhooks.md');
  await ok(['sessions', 'judge', 'merged', '1', '--relevant', 'authentication.md']);

  // One of its files is deleted (and dropped by the next ingest of guides/), then the holder is ingested: guides/ is merged into it.
  fs.rmSync(path.join(docs, 'guides', 'webhooks.md'));
  await ok(['ingest', path.join(docs, 'guides')]);
  await ok(['ingest', docs]);

  const replay = await ok(['replay', 'merged']);
  expect(replay).toMatch(/ authentication\.md:\d+-\d+.*\(now guides\/authentication\.md\)/);
  expect(replay).toMatch(/ webhooks\.md:\d+-\d+.*\(no longer in the index\)/);
  expect(replay).not.toMatch(/authentication\.md:\d+-\d+.*no longer in the index/);

  const report = JSON.parse(await ok(['replay', 'merged', '--rerun', '--json']));
  const old = report.turns.flatMap((t: any) => t.oldChunks);
  for (const chunk of old) {
    if (chunk.documentPath === 'webhooks.md') expect(chunk.indexState).toBe('removed');
    else expect(chunk).toMatchObject({ indexState: 'current', indexedAs: `guides/${chunk.documentPath}` });
  }
  // The judged document is the same document under its new name: still in the top k.
  expect(report.turns[0].judged.documents).toEqual([expect.objectContaining({ documentPath: 'authentication.md', change: 'kept', indexed: true })]);
  expect(report.summary.staleChunks).toEqual({ removed: old.filter((c: any) => c.documentPath === 'webhooks.md').length, documentChanged: 0 });
  // A chunk still indexed is the same chunk under its new name: never "left" and "entered" at once.
  for (const turn of report.turns) {
    const entered = new Set(turn.retrieval.entered.map((c: any) => c.textHash));
    expect(turn.retrieval.left.filter((c: any) => entered.has(c.textHash))).toEqual([]);
  }
  const rerun = await ok(['replay', 'merged', '--rerun']);
  expect(rerun).not.toMatch(/authentication\.md.*no longer in the index/);
  expect(rerun).toMatch(/stored chunks no longer in the index: [1-9]\d*; document changed since: 0/);
});
