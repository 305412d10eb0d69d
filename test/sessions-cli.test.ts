// `ragline sessions` end to end, offline, through the CLI run in-process:
// list, show, rename, rm (confirmation and no orphan
// rows), export (md, json, -o) and fork (then replay of the fork). Two sessions are
// recorded once with `ragline chat` piped; each test works on a copy.

import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { finishTurn, startTurn } from '../src/store/sessions.js';
import { FIXTURE_DOCS, ROOT, isolatedEnv, ragline, tempDir, type CliResult } from './helpers/cli.js';

const ALPHA = ['How do I create an API key?', 'Does it expire?', 'How do I rotate it?'];
const BETA = ['Which port does the Relay agent listen on?'];

let template: string;
let home: string;
const dbFile = () => path.join(home, 'data', 'ragline', 'ragline.db');
const cli = (args: string[], input?: string): Promise<CliResult> => ragline(args, { env: isolatedEnv(home), input });

async function ok(args: string[], input?: string): Promise<string> {
  const result = await cli(args, input);
  expect(result.code, result.stderr).toBe(0);
  return result.stdout;
}

function value(sql: string): unknown {
  const db = new Database(dbFile(), { readonly: true });
  try {
    return db.prepare(sql).pluck().get();
  } finally {
    db.close();
  }
}

const count = (sql: string) => value(sql) as number;

beforeAll(async () => {
  if (!fs.existsSync(path.join(ROOT, 'dist/cli/main.js'))) throw new Error('Build first: npx tsc -p .');
  template = tempDir('ragline-sessions-template-');
  const env = isolatedEnv(template);
  for (const [args, input] of [
    [['ingest', FIXTURE_DOCS], undefined],
    [['chat', '--new', 'alpha'], ALPHA.join('\n') + '\n'],
    [['chat', '--new', 'beta'], BETA.join('\n') + '\n'],
  ] as const) {
    const result = await ragline([...args], { env, input });
    expect(result.code, result.stderr).toBe(0);
  }
});
afterAll(() => fs.rmSync(template, { recursive: true, force: true }));
beforeEach(() => {
  home = tempDir('ragline-sessions-');
  fs.cpSync(template, home, { recursive: true });
});
afterEach(() => fs.rmSync(home, { recursive: true, force: true }));

describe('ragline sessions', () => {
  it('lists sessions (the default subcommand): id, name, turns, last active, first question; --json', async () => {
    const out = await ok(['sessions']);
    expect(out).toMatch(/^id\s+name\s+turns\s+last active\s+first question$/m);
    expect(out).toMatch(/^s-[0-9a-f]{6}\s+beta\s+1\s+\d{4}-\d\d-\d\d \d\d:\d\d\s+Which port does the Relay agent listen on\?$/m);
    expect(out).toMatch(/^s-[0-9a-f]{6}\s+alpha\s+3\s+.*How do I create an API key\?$/m);
    expect(out.indexOf('beta')).toBeLessThan(out.indexOf('alpha')); // most recently active first
    expect(await ok(['sessions', 'list'])).toBe(out);

    const listing = JSON.parse(await ok(['sessions', '--json']));
    expect(listing.map((s: any) => [s.name, s.turns, s.firstQuestion])).toEqual([
      ['beta', 1, BETA[0]],
      ['alpha', 3, ALPHA[0]],
    ]);
    expect(listing[0]).toHaveProperty('lastActive');
    expect(listing[0].parentSessionId).toBeNull();
  });

  it('show: metadata, turns with how they were searched, tracked topics', async () => {
    const out = await ok(['sessions', 'show', 'alpha']);
    expect(out).toMatch(/^session\s+s-[0-9a-f]{6}$/m);
    expect(out).toMatch(/^name\s+alpha$/m);
    expect(out).toMatch(/^turns\s+3$/m);
    expect(out).toMatch(/^\s+2\s+Does it expire\? → .*API key/m);
    expect(out).toMatch(/^topics\s+.*\(active\)/m);
    const shown = JSON.parse(await ok(['sessions', 'show', 'last', '--json']));
    expect(shown.session.name).toBe('beta');
    expect(shown.turns).toHaveLength(1);
    expect(shown.parent).toBeNull();
  });

  it('rename, and refuses a name that is taken', async () => {
    expect(await ok(['sessions', 'rename', 'alpha', 'keys'])).toMatch(/Renamed s-[0-9a-f]{6} \(was alpha\) to keys\./);
    expect(JSON.parse(await ok(['sessions', '--json'])).map((s: any) => s.name)).toEqual(['beta', 'keys']);
    const taken = await cli(['sessions', 'rename', 'keys', 'beta']);
    expect(taken.code).toBe(2);
    expect(taken.stderr).toContain('A session named "beta" already exists');
  });

  it('rm refuses without --yes when stdin is not a terminal, and removes nothing', async () => {
    const result = await cli(['sessions', 'rm', 'alpha']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('no terminal to confirm on');
    expect(result.stderr).toContain('--yes');
    expect(count('SELECT count(*) FROM turns')).toBe(4);
  });

  it('rm --yes removes the session with its turns and retrieval rows, leaving no orphans; a fork keeps its copies', async () => {
    await ok(['sessions', 'fork', 'alpha', '--at', '2', '--name', 'alpha-b']);
    const chunksBefore = count('SELECT count(*) FROM turn_chunks');
    expect(await ok(['sessions', 'rm', 'alpha', '--yes'])).toMatch(/Removed session alpha \(s-[0-9a-f]{6}\) and its 3 turns\./);
    expect(JSON.parse(await ok(['sessions', '--json'])).map((s: any) => s.name).sort()).toEqual(['alpha-b', 'beta']);
    expect(count('SELECT count(*) FROM turns WHERE session_id NOT IN (SELECT id FROM sessions)')).toBe(0);
    expect(count('SELECT count(*) FROM turn_chunks WHERE turn_id NOT IN (SELECT id FROM turns)')).toBe(0);
    expect(count('SELECT count(*) FROM turns')).toBe(3); // beta 1 + fork 2
    expect(count('SELECT count(*) FROM turn_chunks')).toBeLessThan(chunksBefore);
    expect(count("SELECT count(*) FROM sessions WHERE name = 'alpha-b' AND parent_session_id IS NULL")).toBe(1);
    expect(count('SELECT count(*) FROM chunks')).toBeGreaterThan(0); // documents untouched
    expect((await ok(['replay', 'alpha-b'])).match(/^Turn \d/gm)).toHaveLength(2);
  });

  it('export --format md: a readable transcript with questions, rewrites, sources and answers', async () => {
    const md = await ok(['sessions', 'export', 'alpha', '--format', 'md']);
    expect(md).toMatch(/^# Session alpha$/m);
    expect(md).toMatch(/^- id: s-[0-9a-f]{6}$/m);
    expect(md.match(/^## Turn \d$/gm)).toEqual(['## Turn 1', '## Turn 2', '## Turn 3']);
    expect(md).toContain(`**Question:** ${ALPHA[1]}`);
    expect(md).toMatch(/\*\*Searched as:\*\* .*API key.* _\(rewritten: /);
    expect(md).toMatch(/^1\. `guides\/authentication\.md:\d+-\d+` — Authentication/m);
    expect(md).toContain('**Answer:**');
    expect(md).toContain('Extractive answer');
  });

  it('export --format json to a file with -o: the whole trail, turns with their chunks', async () => {
    const file = path.join(home, 'alpha.json');
    const result = await cli(['sessions', 'export', 'alpha', '--format', 'json', '-o', file]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('');
    const exported = JSON.parse(fs.readFileSync(file, 'utf8'));
    expect(exported.format).toBe('ragline-session-v1');
    expect(exported.session.name).toBe('alpha');
    expect(exported.turns.map((t: any) => t.question)).toEqual(ALPHA);
    expect(exported.turns[0].chunks.length).toBeGreaterThan(0);
    expect(exported.turns[0].chunks[0]).toHaveProperty('textHash');
    expect(exported.turns[1].standaloneQuery).toMatch(/API key/);

    const bad = await cli(['sessions', 'export', 'alpha', '--format', 'pdf']);
    expect(bad.code).toBe(2);
  });

  it('export -o writes a file the way it prints: a configured key held by a question is redacted, controls removed', async () => {
    const key = 'sk-proj-7Hq2Lx9Vw4Rt8Ys1Zb6N';
    const env = { ...isolatedEnv(home), OPENAI_API_KEY: key, RAGLINE_PROVIDER: 'offline' };
    const asked = await ragline(['chat', '--new', 'secretive'], { env, input: `is ${key} my key?\u001b]0;PWN\u0007\n` });
    expect(asked.code, asked.stderr).toBe(0);
    for (const format of ['md', 'json']) {
      const file = path.join(home, `secretive.${format}`);
      const result = await ragline(['sessions', 'export', 'secretive', '--format', format, '-o', file], { env });
      expect(result.code, result.stderr).toBe(0);
      const written = fs.readFileSync(file, 'utf8');
      expect(written).not.toContain(key);
      expect(written).toContain('[redacted]');
      expect(written).not.toContain('\u001b');
      const printed = await ragline(['sessions', 'export', 'secretive', '--format', format], { env });
      const undated = (text: string) => text.replace(/"exportedAt": "[^"]+"/, '"exportedAt": ""').replace(/^- exported: .*$/m, '');
      expect(undated(written)).toBe(undated(printed.stdout));
    }
  });

  it('export -o refuses the database and its side files, leaving them as they were; a second export replaces the first whole', async () => {
    const before = fs.readFileSync(dbFile());
    for (const target of [dbFile(), `${dbFile()}-wal`]) {
      if (!fs.existsSync(target)) continue;
      const refused = await cli(['sessions', 'export', 'alpha', '-o', target]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('is the database this command reads; writing the export there would destroy it.');
    }
    expect(fs.readFileSync(dbFile()).equals(before)).toBe(true);
    expect((await cli(['stats'])).code).toBe(0);
    const file = path.join(home, 'alpha.md');
    fs.writeFileSync(file, 'an older export that is much longer than the new one will be '.repeat(400));
    expect((await cli(['sessions', 'export', 'alpha', '-o', file])).code).toBe(0);
    expect(fs.readFileSync(file, 'utf8')).toMatch(/^# /);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.readdirSync(home).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('fork --at copies the first turns into a new session that lists where it came from, and replays', async () => {
    const out = await ok(['sessions', 'fork', 'alpha', '--at', '2', '--name', 'alpha-b']);
    expect(out).toMatch(/Forked alpha at turn 2: new session alpha-b \(s-[0-9a-f]{6}\)\./);
    expect(await ok(['sessions'])).toMatch(/alpha-b\s+2\s+.*\(fork of alpha at turn 2\)/);
    expect(await ok(['sessions', 'show', 'alpha-b'])).toMatch(/^forked\s+from alpha \(s-[0-9a-f]{6}\) at turn 2$/m);
    // Just forked, it heads the list, and `last` is the same session as the list's first.
    expect(JSON.parse(await ok(['sessions', '--json']))[0].name).toBe('alpha-b');
    expect(await ok(['sessions', 'show', 'last'])).toMatch(/^name\s+alpha-b$/m);

    const fork = JSON.parse(await ok(['replay', 'alpha-b', '--json']));
    const original = JSON.parse(await ok(['replay', 'alpha', '--json']));
    expect(fork.turns.map((t: any) => t.question)).toEqual(ALPHA.slice(0, 2));
    const withoutTurnId = (t: any) => t.chunks.map(({ turnId: _, ...chunk }: any) => chunk);
    expect(fork.turns.map(withoutTurnId)).toEqual(original.turns.slice(0, 2).map(withoutTurnId));
    expect(original.turns).toHaveLength(3);
    expect(await ok(['replay', 'alpha-b'])).toMatch(/fork of s-[0-9a-f]{6} at turn 2/);
    const rerun = JSON.parse(await ok(['replay', 'alpha-b', '--rerun', '--json']));
    expect(rerun.summary.turns).toBe(2);

    const tooFar = await cli(['sessions', 'fork', 'alpha', '--at', '7']);
    expect(tooFar.code).toBe(2);
    expect(tooFar.stderr).toContain('has turns 1 to 3');
  });

  it('a turn still being answered is in flight: fork and replay --rerun --save copy only finished turns, and copy it once it is stored', async () => {
    // What a chat in another process has written while it answers: the question, as a pending turn.
    const alphaId = value("SELECT id FROM sessions WHERE name = 'alpha'") as string;
    const db = new Database(dbFile());
    const inFlight = startTurn(db, alphaId, 'And in the EU?');
    db.close();
    expect(inFlight.ordinal).toBe(4);
    const sessionsBefore = count('SELECT count(*) FROM sessions');

    const atIt = await cli(['sessions', 'fork', 'alpha', '--at', '4']);
    expect(atIt.code).toBe(2);
    expect(atIt.stderr).toContain('Turn 4 of session alpha is not finished');
    expect(atIt.stderr).toContain('--at 3');
    expect(count('SELECT count(*) FROM sessions')).toBe(sessionsBefore);

    const saved = await cli(['replay', 'alpha', '--rerun', '--save', '--name', 'alpha-rerun']);
    expect(saved.code, saved.stderr).toBe(0);
    expect(saved.stdout).toMatch(/^saved as session alpha-rerun/m);
    expect(saved.stdout).toMatch(/^not saved: turn 4, not finished/m);
    const rerunTurns = JSON.parse(await ok(['replay', 'alpha-rerun', '--json'])).turns;
    expect(rerunTurns.map((t: any) => [t.question, t.status])).toEqual(ALPHA.map((q) => [q, 'answered']));

    // Once its answer is stored, it is a finished turn like the others.
    const writer = new Database(dbFile());
    finishTurn(writer, inFlight.id, {
      status: 'answered',
      answer: 'Yes, the same way.',
      chunks: [],
      models: {},
      timings: { historyMs: 0, summaryMs: 0, rewriteMs: 0, retrieveMs: 0, answerMs: 0, persistMs: 0, totalMs: 0 },
      usage: {},
    });
    writer.close();
    await ok(['sessions', 'fork', 'alpha', '--at', '4', '--name', 'alpha-4']);
    const forked = JSON.parse(await ok(['replay', 'alpha-4', '--json'])).turns;
    expect(forked.map((t: any) => t.status)).toEqual(['answered', 'answered', 'answered', 'answered']);
    expect(count("SELECT count(*) FROM turns WHERE status = 'pending'")).toBe(0);
  });

  it('a turn left pending before the one forked at (its chat killed) is not copied, and is named', async () => {
    const alphaId = value("SELECT id FROM sessions WHERE name = 'alpha'") as string;
    const db = new Database(dbFile());
    startTurn(db, alphaId, 'a question whose chat was killed');
    const next = startTurn(db, alphaId, 'asked again');
    finishTurn(db, next.id, { status: 'answered', answer: 'answered', chunks: [], models: {}, timings: { historyMs: 0, summaryMs: 0, rewriteMs: 0, retrieveMs: 0, answerMs: 0, persistMs: 0, totalMs: 0 }, usage: {} });
    db.close();
    const result = await cli(['sessions', 'fork', 'alpha', '--at', '5', '--name', 'alpha-5']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('Not copied: 1 turn not finished (4)');
    const turns = JSON.parse(await ok(['replay', 'alpha-5', '--json'])).turns;
    expect(turns.map((t: any) => [t.ordinal, t.status])).toEqual([[1, 'answered'], [2, 'answered'], [3, 'answered'], [5, 'answered']]);
  });

  it('after prune removed the first turns, fork at a removed turn is refused (no session without turns, `last` unchanged) and replay counts the turns there are', async () => {
    const db = new Database(dbFile());
    db.prepare("UPDATE turns SET created_at = '2020-01-01T00:00:00.000Z' WHERE ordinal = 1 AND session_id = (SELECT id FROM sessions WHERE name = 'alpha')").run();
    db.close();
    expect((await cli(['prune', '--older-than', '30d'])).code).toBe(0);
    expect(count('SELECT count(*) FROM turns WHERE session_id = (SELECT id FROM sessions WHERE name = \'alpha\')')).toBe(2);
    const sessionsBefore = count('SELECT count(*) FROM sessions');

    const refused = await cli(['sessions', 'fork', 'alpha', '--at', '1']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('Session alpha has turns 2 to 3; there is no turn 1 to fork at.');
    expect(count('SELECT count(*) FROM sessions')).toBe(sessionsBefore);
    expect(count('SELECT count(*) FROM sessions s WHERE NOT EXISTS (SELECT 1 FROM turns t WHERE t.session_id = s.id)')).toBe(0);
    expect(await ok(['sessions', 'show', 'last'])).toMatch(/^name\s+beta$/m);

    expect(await ok(['replay', 'alpha'])).toMatch(/^session alpha \(s-[0-9a-f]{6}\) · 2 turns · /m);
    const noTurn = await cli(['replay', 'alpha', '--turn', '1']);
    expect(noTurn.stderr).toContain('Session alpha has turns 2 to 3; there is no turn 1.');
    const judged = await cli(['sessions', 'judge', 'alpha', '1', '--none']);
    expect(judged.stderr).toContain('Session alpha has turns 2 to 3; there is no turn 1.');

    await ok(['sessions', 'fork', 'alpha', '--at', '2', '--name', 'alpha-2']);
    expect(await ok(['replay', 'alpha-2'])).toMatch(/ · 1 turn · /);
  });
});
