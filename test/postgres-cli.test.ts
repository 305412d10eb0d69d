// The commands that run on Postgres, through the CLI, against a real Postgres
// wire protocol (PGlite served on a loopback port; test/helpers/pglite.ts), each
// compared with what the same command gives on an SQLite file.

import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { FIXTURE_DOCS, isolatedEnv, runCliInProcess, tempDir } from './helpers/cli.js';
import { startPostgres, type TestPostgres } from './helpers/pglite.js';

let server: TestPostgres;
let home: string;

beforeAll(async () => {
  server = await startPostgres();
  home = tempDir('ragline-pg-');
}, 120_000);

afterAll(async () => {
  await server?.close();
});

const onPostgres = () => isolatedEnv(home, { RAGLINE_DB: server.url });
const onSqlite = () => isolatedEnv(home, { RAGLINE_DB: path.join(home, 'same.db') });

async function json(args: string[], env: NodeJS.ProcessEnv) {
  const result = await runCliInProcess(args, { env });
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout);
}

describe('ingest and search on Postgres', () => {
  test('ingest writes the same documents and chunks as on SQLite, and a second ingest finds nothing changed', async () => {
    const pgIngest = await json(['ingest', FIXTURE_DOCS, '--json'], onPostgres());
    const sqliteIngest = await json(['ingest', FIXTURE_DOCS, '--json'], onSqlite());
    expect(pgIngest.files).toEqual(sqliteIngest.files);
    expect(pgIngest.chunks.written).toBe(sqliteIngest.chunks.written);
    const again = await json(['ingest', FIXTURE_DOCS, '--json'], onPostgres());
    expect(again.files).toMatchObject({ added: 0, changed: 0, removed: 0, unchanged: pgIngest.files.added });
    expect(again.chunks.written).toBe(0);

    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    try {
      const { rows } = await client.query('SELECT (SELECT count(*) FROM ragline.documents)::int AS documents, (SELECT count(*) FROM ragline.chunks)::int AS chunks');
      expect(rows[0]).toEqual({ documents: pgIngest.files.added, chunks: pgIngest.chunks.written });
      // pg_textsearch is installed here: keyword search is its BM25.
      expect((await client.query(`SELECT value FROM ragline.meta WHERE key = 'keyword_method'`)).rows[0].value).toBe('bm25');
      const indexes = (await client.query(`SELECT indexname FROM pg_indexes WHERE schemaname = 'ragline' ORDER BY 1`)).rows.map((row) => row.indexname);
      expect(indexes).toEqual(expect.arrayContaining(['chunks_bm25', 'chunks_embedding']));
    } finally {
      await client.end();
    }
  }, 120_000);

  test('search finds what SQLite finds first', async () => {
    for (const query of ['rotate an API key', 'webhook signature header', 'rate limits']) {
      const onPg = await json(['search', '--json', '-k', '3', query], onPostgres());
      const onFile = await json(['search', '--json', '-k', '3', query], onSqlite());
      expect(onPg.results.length).toBe(3);
      expect(onPg.results[0].documentPath).toBe(onFile.results[0].documentPath);
      expect(onPg.results[0]).toMatchObject({ vectorRank: expect.any(Number), location: expect.any(String) });
    }
  }, 120_000);
});

describe('stats, doctor and the commands that do not run on Postgres yet', () => {
  test('stats counts what SQLite counts, names the server without its password and says how keyword search runs', async () => {
    await json(['ingest', FIXTURE_DOCS, '--json'], onPostgres());
    await json(['ingest', FIXTURE_DOCS, '--json'], onSqlite());
    const onPg = await json(['stats', '--json'], onPostgres());
    const onFile = await json(['stats', '--json'], onSqlite());
    for (const key of ['documents', 'chunks', 'embedder', 'dimensions', 'chunker']) expect(onPg[key], key).toEqual(onFile[key]);
    expect(onPg.folders).toEqual(onFile.folders);
    expect(onPg).toMatchObject({ keywordSearch: 'bm25', schemaVersion: 1, lastIngest: { root: FIXTURE_DOCS } });
    const withPassword = server.url.replace('postgres@', 'postgres:s3cret@');
    const shown = await runCliInProcess(['stats'], { env: isolatedEnv(home, { RAGLINE_DB: withPassword }) });
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/keywords +BM25 \(pg_textsearch\)/);
    expect(shown.stdout).not.toContain('s3cret');
  }, 120_000);

  test('doctor reports the server, pgvector and the keyword method', async () => {
    const report = await json(['doctor', '--json'], onPostgres());
    const byId = Object.fromEntries(report.checks.map((check: { id: string }) => [check.id, check]));
    expect(byId.database).toMatchObject({ status: 'ok', message: expect.stringMatching(/Postgres 18.*pgvector 0\.8.*schema ragline 1 of 1/) });
    expect(byId.keywords).toMatchObject({ status: 'ok', message: expect.stringMatching(/^Keyword search: BM25 \(pg_textsearch 1\./) });
  }, 120_000);

  test('a command that needs the SQLite store says so with exit code 2 and names what runs on Postgres', async () => {
    const result = await runCliInProcess(['sessions', 'list'], { env: onPostgres() });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/does not run on a Postgres database yet/);
    expect(result.stderr).toMatch(/On Postgres: ingest, search/);
  }, 60_000);
});

describe('on a Postgres without pg_textsearch', () => {
  test('keyword search is full-text search ranked with ts_rank_cd, and finds what SQLite finds first', async () => {
    const plain = await startPostgres({ textsearch: false });
    try {
      const env = isolatedEnv(home, { RAGLINE_DB: plain.url });
      await json(['ingest', FIXTURE_DOCS, '--json'], env);
      await json(['ingest', FIXTURE_DOCS, '--json'], onSqlite());
      const method = await plain.db.query<{ value: string }>(`SELECT value FROM ragline.meta WHERE key = 'keyword_method'`);
      expect(method.rows[0]!.value).toBe('fts');
      for (const query of ['rotate an API key', 'webhook signature header']) {
        const onPg = await json(['search', '--json', '-k', '3', query], env);
        const onFile = await json(['search', '--json', '-k', '3', query], onSqlite());
        expect(onPg.results[0].documentPath).toBe(onFile.results[0].documentPath);
        expect(onPg.results.some((result: { keywordRank: number | null }) => result.keywordRank !== null)).toBe(true);
      }
    } finally {
      await plain.close();
    }
  }, 120_000);
});

describe('ask and chat on Postgres', () => {
  test('ask stores the turn whole in a session of the user, as on SQLite; a follow-up in it is rewritten; another user does not see it', async () => {
    await json(['ingest', FIXTURE_DOCS, '--json'], onPostgres());
    await json(['ingest', FIXTURE_DOCS, '--json'], onSqlite());
    const events = (text: string) => text.trim().split('\n').map((line) => JSON.parse(line));
    const asked = async (env: NodeJS.ProcessEnv, args: string[]) => {
      const result = await runCliInProcess(['ask', '--json', ...args], { env });
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      return events(result.stdout);
    };
    const first = await asked(onPostgres(), ['How do I rotate an API key?']);
    const onFile = await asked(onSqlite(), ['How do I rotate an API key?']);
    const done = first.find((event) => event.type === 'done');
    expect(done).toMatchObject({ status: 'answered', answerKind: 'extractive', answer: expect.stringMatching(/rotate/) });
    const retrieval = first.find((event) => event.type === 'retrieval');
    expect(retrieval.chunks[0].documentPath).toBe(onFile.find((event) => event.type === 'retrieval').chunks[0].documentPath);

    const followUp = await asked(onPostgres(), ['--session', 'last', 'does it expire?']);
    expect(followUp.find((event) => event.type === 'start')).toMatchObject({ sessionId: first[0].sessionId, ordinal: 2 });
    expect(followUp.find((event) => event.type === 'rewrite')).toMatchObject({ decision: 'rewritten' });

    const { rows } = await server.db.query<{ owner: string; status: string; chunks: number; answer: string | null }>(
      `SELECT s.owner, t.status, t.answer, (SELECT count(*)::int FROM ragline.turn_chunks c WHERE c.turn_id = t.id) AS chunks
       FROM ragline.turns t JOIN ragline.sessions s ON s.id = t.session_id WHERE s.id = $1 ORDER BY t.ordinal`,
      [first[0].sessionId],
    );
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(row).toMatchObject({ owner: 'postgres', status: 'answered', chunks: expect.any(Number), answer: expect.any(String) });
    expect(rows[0]!.chunks).toBeGreaterThan(0);

    // Another user (RAGLINE_USER) sees none of postgres's sessions.
    const alice = isolatedEnv(home, { RAGLINE_DB: server.url, RAGLINE_USER: 'alice' });
    const refused = await runCliInProcess(['ask', '--session', first[0].sessionId, 'does it expire?'], { env: alice });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/No session .* of alice/);
    const own = await asked(alice, ['How do I rotate an API key?']);
    const owners = await server.db.query<{ owner: string }>('SELECT owner FROM ragline.sessions WHERE id = $1', [own[0].sessionId]);
    expect(owners.rows[0]!.owner).toBe('alice');
  }, 120_000);

  test('a piped chat asks each line in one session', async () => {
    const result = await runCliInProcess(['chat', '--json'], { env: onPostgres(), input: 'How do I rotate an API key?\ndoes it expire?\n' });
    expect(result.code).toBe(0);
    const starts = result.stdout.trim().split('\n').map((line) => JSON.parse(line)).filter((event) => event.type === 'start');
    expect(starts.map((event) => event.ordinal)).toEqual([1, 2]);
    expect(new Set(starts.map((event) => event.sessionId)).size).toBe(1);
  }, 120_000);
});
