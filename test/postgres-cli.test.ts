// The commands that run on Postgres, through the CLI, against a real Postgres
// wire protocol (PGlite served on a loopback port; test/helpers/pglite.ts), each
// compared with what the same command gives on an SQLite file.

import path from 'node:path';
import Database from 'better-sqlite3';
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
    expect(onPg).toMatchObject({ keywordSearch: 'bm25', schemaVersion: 2, lastIngest: { root: FIXTURE_DOCS } });
    const withPassword = server.url.replace('postgres@', 'postgres:s3cret@');
    const shown = await runCliInProcess(['stats'], { env: isolatedEnv(home, { RAGLINE_DB: withPassword }) });
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/keywords +BM25 \(pg_textsearch\)/);
    expect(shown.stdout).not.toContain('s3cret');
  }, 120_000);

  test('doctor reports the server, pgvector and the keyword method', async () => {
    const report = await json(['doctor', '--json'], onPostgres());
    const byId = Object.fromEntries(report.checks.map((check: { id: string }) => [check.id, check]));
    expect(byId.database).toMatchObject({ status: 'ok', message: expect.stringMatching(/Postgres 18.*pgvector 0\.8.*schema ragline 2 of 2/) });
    expect(byId.keywords).toMatchObject({ status: 'ok', message: expect.stringMatching(/^Keyword search: BM25 \(pg_textsearch 1\./) });
  }, 120_000);

  test('a command that needs the SQLite store says so with exit code 2 and names what runs on Postgres', async () => {
    const result = await runCliInProcess(['documents'], { env: onPostgres() });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/does not run on a Postgres database yet/);
    expect(result.stderr).toMatch(/On Postgres: ingest, search, ask, chat, sessions, replay, eval, prune, forget/);
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


describe('sessions, judgments and replay on Postgres', () => {
  // bob's sessions on Postgres beside the same sessions in an SQLite file of their own.
  const pgEnv = (user = 'bob') => isolatedEnv(home, { RAGLINE_DB: server.url, RAGLINE_USER: user });
  const fileEnv = () => isolatedEnv(home, { RAGLINE_DB: path.join(home, 'sessions.db') });
  const both = async (args: string[], input?: string) => {
    const onPg = await runCliInProcess(args, { env: pgEnv(), input });
    const onFile = await runCliInProcess(args, { env: fileEnv(), input });
    return { onPg, onFile };
  };
  /** Ids (and the width of their column), times and durations differ between two runs: the rest must not. */
  const same = (text: string) =>
    text
      .replace(/s-[0-9a-f]{6,12}/g, 's-ID')
      .replace(/\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?Z?)?/g, 'TIME')
      .replace(/\b\d+(\.\d+)? ?ms\b/g, 'N ms')
      .replace(/"(turnId|id|chunkId|totalMs|persistMs|historyMs|summaryMs|rewriteMs|retrieveMs|answerMs|ms)": [\d.]+/g, '"$1": N')
      .replace(/^(s-ID|id) +/gm, '$1 ');
  /**
   * What the two stores retrieved differs (their keyword searches score apart, and the
   * offline rewriter is told word frequencies on SQLite only), so a turn's chunk lines,
   * scores and rewrite reasons are left out where a command prints them.
   */
  const sameShape = (text: string) =>
    same(text)
      .split('\n')
      .filter((line) => !/^\s*(\d+\.|[-+~≈]?\s*\d+)\s+(\d+\.\d{4}|`)/.test(line) && !/^\s+“/.test(line) && !/^\s+"(score|vectorRank|vectorDistance|keywordRank|bm25|rank|documentPath|startLine|endLine|heading|textHash|locator|indexState|indexedAs)":/.test(line))
      .join('\n')
      .replace(/\((rewritten|not rewritten|kept)[^)]*\)/g, '($1)')
      .replace(/"(rewriteReason|reason)": "[^"]*"/g, '"$1": ""')
      .replace(/("query": "[^"]*",\s*"weight": )[\d.]+/g, '$1N');
  /** Runs `args` on both stores: the same exit code (`code`), and the same output once `shape` leaves out what may differ. */
  const alike = async (args: string[], input?: string, shape = same, code = 0) => {
    const { onPg, onFile } = await both(args, input);
    expect(onFile.code, onFile.stderr).toBe(code);
    expect(onPg.code, onPg.stderr).toBe(code);
    expect(shape(onPg.stderr)).toBe(shape(onFile.stderr));
    expect(shape(onPg.stdout)).toBe(shape(onFile.stdout));
    return onPg;
  };
  const alikeShape = (args: string[], input?: string) => alike(args, input, sameShape);
  /** As alike, for a command both stores refuse with exit code 2. */
  const refusedAlike = (args: string[]) => alike(args, undefined, sameShape, 2);

  beforeAll(async () => {
    await json(['ingest', FIXTURE_DOCS, '--json'], onPostgres());
    await json(['ingest', FIXTURE_DOCS, '--json'], fileEnv());
    for (const [name, questions] of [['keys', 'How do I create an API key?\nDoes it expire?\nHow do I rotate it?\n'], ['relay', 'Which port does the Relay agent listen on?\n']] as const) {
      const { onPg, onFile } = await both(['chat', '--new', name], questions);
      expect(onPg.code, onPg.stderr).toBe(0);
      expect(onFile.code, onFile.stderr).toBe(0);
    }
  }, 120_000);

  test('list, show, export and replay print what they print on SQLite', async () => {
    const listed = await alike(['sessions']);
    expect(listed.stdout).toMatch(/relay\s+1\s/);
    // Postgres ids are longer: the names still start under their heading.
    const [heading, ...rows] = listed.stdout.trim().split('\n');
    for (const row of rows) expect(row.indexOf(row.includes('relay') ? 'relay' : 'keys')).toBe(heading!.indexOf('name'));
    await alike(['sessions', '--json']);
    await alike(['sessions', 'show', 'keys']);
    await alike(['sessions', 'show', 'last', '--json']);
    await alikeShape(['sessions', 'export', 'keys', '--format', 'md']);
    const exported = JSON.parse((await alikeShape(['sessions', 'export', 'keys', '--format', 'json'])).stdout.replace(/"exportedAt": "[^"]*"/, '"exportedAt": ""'));
    expect(exported.turns.map((turn: { ordinal: number; chunks: unknown[] }) => [turn.ordinal, turn.chunks.length > 0])).toEqual([[1, true], [2, true], [3, true]]);
    await alikeShape(['replay', 'keys']);
    await alikeShape(['replay', 'keys', '--turn', '2', '--full']);
    await alikeShape(['replay', 'keys', '--json']);
    // What is not there: the same message and exit code.
    await refusedAlike(['sessions', 'show', 'nope']);
    await refusedAlike(['replay', 'keys', '--turn', '9']);
  }, 120_000);

  test('judge, the REPL\'s /good /bad /expect, and export as tasks, as on SQLite', async () => {
    await alike(['sessions', 'judge', 'keys', '1', '--relevant', 'guides/authentication.md', '--json']);
    await alike(['sessions', 'judge', 'keys', '2', '--none', '--relevant', 'webhooks', '--json']);
    await alike(['sessions', 'judge', 'keys', '3', '--relevant', 'nowhere.md']);
    await alike(['sessions', 'judge', 'keys', '3', '--clear']);
    await refusedAlike(['sessions', 'judge', 'keys', '7', '--relevant', 'faq.md']);
    await alikeShape(['chat', '--session', 'relay'], 'Which port does the Relay agent listen on?\n/good 1\n/expect guides/relay.md\n/bad\n/expect\n');
    await alike(['sessions', 'show', 'relay']);
    await alike(['sessions', 'show', 'keys', '--json']);
    await alike(['sessions', 'export', 'keys', '--format', 'tasks']);
    await alikeShape(['replay', 'keys', '--rerun']);
    // eval scores the judged turns on either store: the same tasks, each variant run.
    const evalOn = async (env: NodeJS.ProcessEnv) => {
      const result = await runCliInProcess(['eval', '--from-sessions', '--json', '--variants', 'raw,ragline+raw'], { env });
      expect(result.code, result.stderr).toBe(0);
      return JSON.parse(result.stdout);
    };
    const [pgEval, fileEval] = [await evalOn(pgEnv()), await evalOn(fileEnv())];
    expect(pgEval.tasks).toBe(2);
    expect(pgEval.tasks).toBe(fileEval.tasks);
    expect(pgEval.variants.map((variant: { name: string; overall: { n: number } }) => [variant.name, variant.overall.n])).toEqual(
      fileEval.variants.map((variant: { name: string; overall: { n: number } }) => [variant.name, variant.overall.n]),
    );
    const { rows } = await server.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ragline.turn_relevant r JOIN ragline.turns t ON t.id = r.turn_id JOIN ragline.sessions s ON s.id = t.session_id WHERE s.owner = 'bob'`,
    );
    expect(rows[0]!.n).toBeGreaterThan(0);
  }, 120_000);

  test('rename, fork, rerun --save and rm, as on SQLite; another user sees none of it', async () => {
    await alike(['sessions', 'rename', 'relay', 'relay-agent']);
    await refusedAlike(['sessions', 'rename', 'keys', 'relay-agent']);
    await alike(['sessions', 'fork', 'keys', '--at', '2', '--name', 'keys-b']);
    await refusedAlike(['sessions', 'fork', 'keys', '--at', '5']);
    await alike(['sessions', 'show', 'keys-b']);
    await alikeShape(['replay', 'keys-b']);
    await alikeShape(['replay', 'keys', '--rerun', '--save', '--json']);
    await alikeShape(['replay', 'keys-rerun-1']);
    await alike(['sessions']);
    await alike(['sessions', 'rm', 'keys-b', '--yes']);
    await refusedAlike(['sessions', 'rm', 'keys-b', '--yes']);
    await alike(['sessions', 'show', 'keys']);

    // alice has her own sessions: bob's are not hers to list, show, replay, judge or remove.
    const alice = (args: string[]) => runCliInProcess(args, { env: pgEnv('alice') });
    expect((await alice(['sessions', '--json'])).stdout).not.toMatch(/keys|relay/);
    for (const args of [['sessions', 'show', 'keys'], ['replay', 'keys'], ['sessions', 'judge', 'keys', '1', '--relevant', 'faq.md'], ['sessions', 'rm', 'keys', '--yes']]) {
      const refused = await alice(args);
      expect(refused.code, args.join(' ')).toBe(2);
      expect(refused.stderr).toMatch(/No session with the id or name "keys"/);
    }
    expect((await runCliInProcess(['sessions', 'show', 'keys'], { env: pgEnv() })).code).toBe(0);
  }, 120_000);

  test('prune removes the old turns of the user\'s own sessions, as on SQLite; forget removes a folder, keeping the sessions', async () => {
    // relay-agent's turns and the session itself are made 40 days old in both stores.
    const old = new Date(Date.now() - 40 * 86_400_000).toISOString();
    await server.db.query(`UPDATE ragline.turns SET created_at = $1 WHERE session_id IN (SELECT id FROM ragline.sessions WHERE owner = 'bob' AND name = 'relay-agent')`, [old]);
    await server.db.query(`UPDATE ragline.sessions SET created_at = $1 WHERE owner = 'bob' AND name = 'relay-agent'`, [old]);
    // alice's are as old: bob's prune leaves them to her.
    await server.db.query(`UPDATE ragline.turns SET created_at = $1 WHERE session_id IN (SELECT id FROM ragline.sessions WHERE owner = 'alice')`, [old]);
    const hers = JSON.parse((await runCliInProcess(['sessions', '--json'], { env: pgEnv('alice') })).stdout);
    expect(hers.length).toBeGreaterThan(0);
    const file = new Database(path.join(home, 'sessions.db'));
    try {
      file.prepare(`UPDATE turns SET created_at = ? WHERE session_id IN (SELECT id FROM sessions WHERE name = 'relay-agent')`).run(old);
      file.prepare(`UPDATE sessions SET created_at = ? WHERE name = 'relay-agent'`).run(old);
    } finally {
      file.close();
    }
    const sameReport = (text: string) => text.replace(/"cutoff": "[^"]*"/, '"cutoff": ""');
    const dry = await alike(['prune', '--older-than', '30d', '--dry-run', '--json'], undefined, sameReport);
    expect(JSON.parse(dry.stdout)).toMatchObject({ turns: 2, sessions: 1, dryRun: true });
    await alike(['prune', '--older-than', '30d'], undefined, (text) => same(text).replace(/before \S+/, 'before TIME'));
    await refusedAlike(['sessions', 'show', 'relay-agent']);
    await alike(['sessions']);
    expect(JSON.parse((await runCliInProcess(['sessions', '--json'], { env: pgEnv('alice') })).stdout)).toEqual(hers);

    const forgot = await alike(['forget', FIXTURE_DOCS, '--yes', '--json']);
    expect(JSON.parse(forgot.stdout)).toMatchObject({ root: FIXTURE_DOCS, documents: 16 });
    const stats = JSON.parse((await runCliInProcess(['stats', '--json'], { env: pgEnv() })).stdout);
    expect(stats).toMatchObject({ documents: 0, chunks: 0 });
    expect(stats.sessions).toBeGreaterThan(0);
    await alike(['sessions', 'show', 'keys']);
    await refusedAlike(['forget', FIXTURE_DOCS, '--yes']);
  }, 120_000);
});
