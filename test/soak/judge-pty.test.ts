// Judging turns in the REPL as a person does: `ragline chat` in a real
// pseudo-terminal, offline over fixtures/docs; /good (the cited chunks, or chunks
// by number), /bad and /expect on the last turn, then the judgments as stored.
// Build first: npx tsc -p .

import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURE_DOCS, isolatedEnv, runCli, tempDir } from '../helpers/cli.js';
import { KEY, ptyUnavailable, spawnRaglineInPty, type PtySession } from '../helpers/pty.js';

const unavailable = ptyUnavailable();
if (unavailable) console.warn(`judge-pty.test.ts skipped: ${unavailable}`);

const PROMPT = '› ';

let home: string;
let env: NodeJS.ProcessEnv;
const sessions: PtySession[] = [];

beforeAll(async () => {
  if (!fs.existsSync(path.resolve('dist/cli/main.js'))) throw new Error('Build first: npx tsc -p .');
  home = tempDir('ragline-judge-pty-');
  env = isolatedEnv(home);
  const ingested = await runCli(['ingest', FIXTURE_DOCS], { env });
  expect(ingested.code, ingested.stderr).toBe(0);
});

afterEach(() => {
  for (const session of sessions.splice(0)) session.kill();
});

afterAll(() => fs.rmSync(home, { recursive: true, force: true }));

/** Types a line and waits for what it printed, up to the next prompt. */
async function say(pty: PtySession, line: string): Promise<string> {
  pty.type(line + KEY.enter);
  await pty.expect(line);
  return pty.expect(PROMPT);
}

describe.skipIf(unavailable !== undefined)('judging turns in the REPL', () => {
  it('/good marks the cited chunks or chunks by number, /bad and /expect record the rest; the judgments are stored with the turns', async () => {
    const pty = spawnRaglineInPty(['chat', '--new', 'judged'], { env });
    sessions.push(pty);
    await pty.expect(PROMPT);

    expect(await say(pty, '/good')).toContain('Nothing to judge yet: ask a question first.');

    const first = await say(pty, 'How do I create an API key?');
    // the sources the answer cites, as listed under it: `[n] path:lines`
    const cited = [...first.matchAll(/\[(\d+)\] ([^\s:]+):\d+-\d+/g)].map((m) => ({ n: Number(m[1]), path: m[2]! }));
    expect(cited[0]).toEqual({ n: 1, path: 'guides/authentication.md' });
    const citedDocs = cited.filter((c, i) => cited.findIndex((o) => o.path === c.path) === i);
    const citedText = citedDocs.map((c) => `relevant ${c.path} (chunk ${c.n})`).join('; ');
    // no number: the chunks the answer cited
    expect(await say(pty, '/good')).toContain(`turn 1 judged: ${citedText}\n`);
    expect(await say(pty, '/expect reference/cli')).toContain(`turn 1 judged: ${citedText}; expected reference/cli.rst\n`);
    expect(await say(pty, '/good 9')).toContain('Give chunk numbers from 1 to 5, e.g. /good 1 3.');

    const second = await say(pty, 'How do I verify webhook signatures?');
    expect(second).toMatch(/^\s+1\s+\d\.\d{4}\s+guides\/webhooks\.md/m);
    expect(await say(pty, '/bad')).toMatch(/turn 2 judged: nothing retrieved was useful\n.*\/expect <document>/);
    const expected = await say(pty, '/expect notes/signing.md');
    expect(expected).toContain('turn 2 judged: nothing retrieved was useful; expected notes/signing.md (not indexed)');
    expect(expected).toContain('notes/signing.md is not in the index: kept; eval reports it as not indexed');
    // /good by number clears "nothing useful" and keeps what was expected
    expect(await say(pty, '/good 1')).toMatch(/turn 2 judged: expected notes\/signing\.md \(not indexed\); relevant guides\/webhooks\.md \(chunk 1\)/);

    pty.type(KEY.ctrlD);
    expect((await pty.exited).code).toBe(0);

    const shown = await runCli(['sessions', 'show', 'judged', '--json'], { env });
    expect(shown.code, shown.stderr).toBe(0);
    const turns = JSON.parse(shown.stdout).turns;
    expect(turns.map((t: any) => t.judgment)).toEqual([
      expect.objectContaining({
        noneUseful: false,
        relevant: [
          ...citedDocs.map((c) => ({ documentPath: c.path, source: 'retrieved', chunkRank: c.n })),
          { documentPath: 'reference/cli.rst', source: 'expected', chunkRank: null },
        ],
      }),
      expect.objectContaining({
        noneUseful: false,
        relevant: [
          { documentPath: 'notes/signing.md', source: 'expected', chunkRank: null },
          { documentPath: 'guides/webhooks.md', source: 'retrieved', chunkRank: 1 },
        ],
      }),
    ]);
  });
});
