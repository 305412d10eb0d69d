// `ragline migrate` between an SQLite file and Postgres (PGlite over its wire
// protocol, test/helpers/pglite.ts), both ways, through the CLI: nothing lost (the
// counts, and the sessions, replays and exports read back alike), a non-empty
// target refused, and the copied index searched as the original is.

import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { FIXTURE_DOCS, isolatedEnv, runCliInProcess, tempDir } from './helpers/cli.js';
import { startPostgres, type TestPostgres } from './helpers/pglite.js';

let server: TestPostgres;
let home: string;
const original = () => path.join(home, 'original.db');
const back = () => path.join(home, 'back.db');
const on = (db: string) => isolatedEnv(home, { RAGLINE_DB: db, RAGLINE_USER: 'erin' });

async function ok(args: string[], db: string, input?: string) {
  const result = await runCliInProcess(args, { env: on(db), input });
  expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(0);
  return result;
}

beforeAll(async () => {
  server = await startPostgres();
  home = tempDir('ragline-migrate-');
  await ok(['ingest', FIXTURE_DOCS], original());
  await ok(['chat', '--new', 'keys'], original(), 'How do I create an API key?\nDoes it expire?\nHow do I rotate it?\n');
  await ok(['chat', '--new', 'relay'], original(), 'Which port does the Relay agent listen on?\n');
  await ok(['sessions', 'judge', 'keys', '2', '--relevant', 'guides/authentication.md', 'faq.md'], original());
  await ok(['sessions', 'fork', 'keys', '--at', '2', '--name', 'keys-b'], original());
}, 180_000);

afterAll(async () => {
  await server?.close();
});

/**
 * What two databases must show alike after a migration: the sessions, a replay and an
 * export, as JSON, without the turns' row ids (each database numbers its own rows).
 */
async function views(db: string) {
  const json = async (args: string[]) => JSON.parse((await ok([...args], db)).stdout, (key, value) => ((key === 'id' || key === 'turnId') && typeof value === 'number' ? undefined : value));
  const exported = await json(['sessions', 'export', 'keys', '--format', 'json']);
  delete exported.exportedAt;
  return {
    sessions: await json(['sessions', '--json']),
    show: await json(['sessions', 'show', 'keys-b', '--json']),
    replay: await json(['replay', 'keys', '--json']),
    exported,
    tasks: (await ok(['sessions', 'export', 'keys', '--format', 'tasks'], db)).stdout,
  };
}

describe('ragline migrate', () => {
  test('SQLite to Postgres and back: every row copied and checked, sessions, replays and exports read back alike, the index searched alike', async () => {
    const before = await views(original());
    const there = await ok(['migrate', '--from', original(), '--to', server.url, '--json'], original());
    const summary = JSON.parse(there.stdout);
    expect(summary).toMatchObject({ owner: 'erin', copied: { documents: 16, sessions: 3, turns: 6, judgedDocuments: 4 }, turnsCompared: 6 });
    expect(summary.copied.chunks).toBeGreaterThan(16);
    expect(summary.copied.vectors).toBe(summary.copied.chunks);
    expect(summary.copied.turnChunks).toBeGreaterThan(0);
    expect(summary.target).toEqual(summary.copied);
    expect(there.stderr).toMatch(/copying 16 documents .* and 3 sessions \(6 turns\)/);
    expect(there.stderr).toMatch(/documents 16\/16\n.*sessions 3\/3\n.*checking the copy/s);

    // On Postgres, erin's sessions are what they were in the file, turn for turn.
    expect(await views(server.url)).toEqual(before);
    const stats = JSON.parse((await ok(['stats', '--json'], server.url)).stdout);
    expect(stats).toMatchObject({ documents: 16, chunks: summary.copied.chunks, sessions: 3 });
    for (const query of ['rotate an API key', 'webhook signature header']) {
      const [onPg, onFile] = [JSON.parse((await ok(['search', '--json', '-k', '3', query], server.url)).stdout), JSON.parse((await ok(['search', '--json', '-k', '3', query], original())).stdout)];
      expect(onPg.results[0].documentPath).toBe(onFile.results[0].documentPath);
      expect(onPg.results.some((result: { keywordRank: number | null }) => result.keywordRank !== null)).toBe(true);
    }
    // A chat continues a migrated session there.
    const followUp = await ok(['ask', '--json', '--session', 'relay', 'Is it configurable?'], server.url);
    expect(followUp.stdout).toMatch(/"ordinal":2/);

    // Back into a new file: the same again (the follow-up asked on Postgres comes along).
    const home2 = JSON.parse((await ok(['migrate', '--from', server.url, '--to', back(), '--json'], original())).stdout);
    expect(home2.copied).toMatchObject({ documents: 16, chunks: summary.copied.chunks, vectors: summary.copied.chunks, sessions: 3, turns: 7, judgedDocuments: 4 });
    const returned = await views(back());
    expect({ ...returned, sessions: undefined }).toEqual({ ...before, sessions: undefined });
    expect(returned.sessions.map((s: { id: string; turns: number }) => [s.id, s.turns])).toEqual(
      (await views(server.url)).sessions.map((s: { id: string; turns: number }) => [s.id, s.turns]),
    );
    for (const query of ['rotate an API key', 'Relay agent port']) {
      const [onBack, onFile] = [JSON.parse((await ok(['search', '--json', '-k', '5', query], back())).stdout), JSON.parse((await ok(['search', '--json', '-k', '5', query], original())).stdout)];
      expect(onBack.results).toEqual(onFile.results);
    }
  }, 240_000);

  test('a target that holds anything is refused, naming --force, and nothing is written', async () => {
    const again = await runCliInProcess(['migrate', '--from', original(), '--to', back()], { env: on(original()) });
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/holds 16 documents and 3 sessions already/);
    expect(again.stderr).toMatch(/--force/);
    // --force copies into it, but not a session whose id or name is there already.
    const forced = await runCliInProcess(['migrate', '--from', original(), '--to', back(), '--force'], { env: on(original()) });
    expect(forced.code).toBe(2);
    expect(forced.stderr).toMatch(/holds a session with the id s-[0-9a-f]+ already/);
    const missing = await runCliInProcess(['migrate', '--from', path.join(home, 'nope.db'), '--to', server.url], { env: on(original()) });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/No database at .*nope\.db to migrate from/);
    expect(JSON.parse((await ok(['stats', '--json'], back())).stdout)).toMatchObject({ documents: 16, sessions: 3, turns: 7 });
  }, 120_000);

  test('file to file: the copy is checked alike, and the next ingest there finds every file unchanged (the reader versions come along)', async () => {
    const copy = path.join(home, 'copy.db');
    const summary = JSON.parse((await ok(['migrate', '--from', original(), '--to', copy, '--json'], original())).stdout);
    expect(summary).toMatchObject({ copied: { documents: 16, sessions: 3, turns: 6 }, turnsCompared: 6 });
    expect(summary.owner).toBeUndefined();
    const ingest = JSON.parse((await ok(['ingest', FIXTURE_DOCS, '--json'], copy)).stdout);
    expect(ingest.files).toMatchObject({ added: 0, changed: 0, unchanged: 16 });
  }, 120_000);
});
