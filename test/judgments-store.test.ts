// Judgments of stored turns in the store: what /good, /bad, /expect and
// `sessions judge` record, kept by a fork, removed with their turns by prune and
// `sessions rm`, names resolved to stored document paths, and the migration that
// adds them to a schema-4 database with its rows intact.

import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { openDatabase, type Db } from '../src/store/db.js';
import { clearJudgment, getJudgment, judgeTurn, loadJudgments, requireTurnId, resolveDocumentName, sessionsWithJudgments } from '../src/store/judgments.js';
import { MIGRATIONS, SCHEMA_VERSION } from '../src/store/migrations.js';
import { pruneTurns } from '../src/store/retention.js';
import { createSession, finishTurn, forkSession, loadTurns, removeSession, startTurn, type SessionInfo } from '../src/store/sessions.js';
import { UserError } from '../src/util/errors.js';
import { requireSessionTasks, tasksFromSessions } from '../src/eval/sessions.js';
import { sqliteSessionStore } from '../src/chat/session-store.js';
import { tempDir } from './helpers/cli.js';

function count(db: Db, sql: string, ...params: unknown[]): number {
  return db.prepare(sql).pluck().get(...params) as number;
}

function addDocument(db: Db, root: string, documentPath: string): void {
  db.prepare(
    `INSERT INTO documents (root, path, kind, title, content_hash, size, mtime_ms, chunk_count, ingested_at)
     VALUES (?, ?, 'markdown', NULL, 'h', 1, 1, 1, '2026-01-01T00:00:00.000Z')`,
  ).run(root, documentPath);
}

function answeredTurn(db: Db, session: SessionInfo, question: string, paths: string[]): number {
  const turn = startTurn(db, session.id, question);
  finishTurn(db, turn.id, {
    status: 'answered',
    standaloneQuery: question,
    chunks: paths.map((documentPath, i) => ({
      chunkId: 100 + i, documentPath, heading: '', startLine: 1, endLine: 2, locator: 'line', textHash: `h${i}`, rank: i + 1, score: 1 - i / 10,
    })),
    answer: 'An answer [1].',
    answerKind: 'extractive',
    models: {},
    timings: { historyMs: 0, summaryMs: 0, rewriteMs: 0, retrieveMs: 0, answerMs: 0, persistMs: 0, totalMs: 0 },
    usage: {},
    topics: [],
  });
  return turn.id;
}

describe('judging turns', () => {
  let db: Db;
  let session: SessionInfo;
  let first: number;
  let second: number;
  beforeEach(() => {
    db = openDatabase(':memory:');
    session = createSession(db, { name: 'keys' });
    first = answeredTurn(db, session, 'How do I rotate an API key?', ['guides/auth.md', 'guides/webhooks.md']);
    second = answeredTurn(db, session, 'does it expire?', ['guides/webhooks.md']);
  });
  afterEach(() => db.close());

  test('a turn without a judgment has none; judging adds documents in order and marks the time', () => {
    expect(getJudgment(db, first)).toBeNull();
    const judged = judgeTurn(db, first, { add: [{ documentPath: 'guides/auth.md', source: 'retrieved', chunkRank: 1 }] });
    expect(judged).toMatchObject({ turnId: first, noneUseful: false, relevant: [{ documentPath: 'guides/auth.md', source: 'retrieved', chunkRank: 1 }] });
    expect(judged.judgedAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    const more = judgeTurn(db, first, { add: [{ documentPath: 'notes/expiry.md', source: 'expected' }] });
    expect(more.relevant.map((d) => d.documentPath)).toEqual(['guides/auth.md', 'notes/expiry.md']);
    expect(getJudgment(db, second)).toBeNull();
    expect([...loadJudgments(db, session.id).keys()]).toEqual([first]);
    expect(sessionsWithJudgments(db)).toEqual([session.id]);
  });

  test('/bad drops the documents picked from the chunks but keeps the expected ones; /good after it clears the mark', () => {
    judgeTurn(db, first, { add: [{ documentPath: 'guides/auth.md', source: 'retrieved', chunkRank: 1 }, { documentPath: 'notes/x.md', source: 'expected' }] });
    const bad = judgeTurn(db, first, { noneUseful: true });
    expect(bad.noneUseful).toBe(true);
    expect(bad.relevant).toEqual([{ documentPath: 'notes/x.md', source: 'expected', chunkRank: null }]);
    const good = judgeTurn(db, first, { noneUseful: false, add: [{ documentPath: 'guides/webhooks.md', source: 'retrieved', chunkRank: 2 }] });
    expect(good.noneUseful).toBe(false);
    expect(good.relevant.map((d) => d.documentPath)).toEqual(['notes/x.md', 'guides/webhooks.md']);
  });

  test('replace sets the whole judgment; clear removes it', () => {
    judgeTurn(db, first, { add: [{ documentPath: 'a.md', source: 'expected' }] });
    const replaced = judgeTurn(db, first, { replace: true, add: [{ documentPath: 'b.md', source: 'expected' }] });
    expect(replaced.relevant.map((d) => d.documentPath)).toEqual(['b.md']);
    clearJudgment(db, first);
    expect(getJudgment(db, first)).toBeNull();
    expect(count(db, 'SELECT count(*) FROM turn_relevant')).toBe(0);
  });

  test('a turn that does not exist is a UserError naming the turns there are', () => {
    expect(requireTurnId(db, session, 2)).toBe(second);
    expect(() => requireTurnId(db, session, 7)).toThrow(UserError);
    expect(() => requireTurnId(db, session, 7)).toThrow('Session keys has turns 1 to 2; there is no turn 7.');
    const empty = createSession(db);
    expect(() => requireTurnId(db, empty, 1)).toThrow(`Session ${empty.id} has no turns to judge.`);
  });

  test('a fork keeps the judgments of the turns it copies; the original keeps its own', () => {
    judgeTurn(db, first, { add: [{ documentPath: 'guides/auth.md', source: 'retrieved', chunkRank: 1 }] });
    judgeTurn(db, second, { noneUseful: true, add: [{ documentPath: 'notes/x.md', source: 'expected' }] });
    const fork = forkSession(db, session.id, 2, 'keys-b');
    const forked = loadJudgments(db, fork.id);
    const [forkFirst, forkSecond] = loadTurns(db, fork.id).map((t) => t.id);
    expect(forked.get(forkFirst!)?.relevant).toEqual([{ documentPath: 'guides/auth.md', source: 'retrieved', chunkRank: 1 }]);
    expect(forked.get(forkSecond!)).toMatchObject({ noneUseful: true, relevant: [{ documentPath: 'notes/x.md', source: 'expected' }] });
    // a fork before a judged turn does not carry it
    const early = forkSession(db, session.id, 1);
    expect(loadJudgments(db, early.id).size).toBe(1);
    // changing the fork's judgment leaves the original's alone
    clearJudgment(db, forkFirst!);
    expect(getJudgment(db, first)).not.toBeNull();
  });

  test('removing a session removes its judgments; prune removes those of the turns it deletes', () => {
    judgeTurn(db, first, { add: [{ documentPath: 'guides/auth.md', source: 'retrieved', chunkRank: 1 }] });
    const other = createSession(db);
    const kept = answeredTurn(db, other, 'webhooks?', ['guides/webhooks.md']);
    judgeTurn(db, kept, { add: [{ documentPath: 'guides/webhooks.md', source: 'retrieved', chunkRank: 1 }] });
    // no orphan rows even on a connection without foreign keys (no ON DELETE CASCADE)
    db.pragma('foreign_keys = OFF');
    removeSession(db, session.id);
    expect(count(db, 'SELECT count(*) FROM turn_relevant WHERE turn_id IN (?, ?)', first, second)).toBe(0);
    expect(count(db, 'SELECT count(*) FROM turn_relevant')).toBe(1);
    const report = pruneTurns(db, new Date(Date.now() + 60_000));
    expect(report.turns).toBe(1);
    expect(count(db, 'SELECT count(*) FROM turn_relevant')).toBe(0);
    expect(sessionsWithJudgments(db)).toEqual([]);
  });
});

describe('eval tasks from judged turns', () => {
  let db: Db;
  beforeEach(() => {
    db = openDatabase(':memory:');
  });
  afterEach(() => db.close());

  test('question, earlier exchanges as history, judged documents as relevant; /bad alone is not scored; a fork\'s copies count once', async () => {
    const store = sqliteSessionStore(db);
    const session = createSession(db, { name: 'keys' });
    const first = answeredTurn(db, session, 'How do I rotate an API key?', ['guides/auth.md']);
    const failed = startTurn(db, session.id, 'and webhooks?');
    finishTurn(db, failed.id, { status: 'failed', error: 'boom', chunks: [], models: {}, timings: { historyMs: 0, summaryMs: 0, rewriteMs: 0, retrieveMs: 0, answerMs: 0, persistMs: 0, totalMs: 0 }, usage: {}, topics: [] });
    const third = answeredTurn(db, session, 'does it expire?', ['guides/auth.md']);
    judgeTurn(db, first, { add: [{ documentPath: 'guides/auth.md', source: 'retrieved', chunkRank: 1 }] });
    judgeTurn(db, failed.id, { noneUseful: true });
    judgeTurn(db, third, { add: [{ documentPath: 'notes/expiry.md', source: 'expected' }] });
    const fork = forkSession(db, session.id, 3, 'keys-b');

    const found = await tasksFromSessions(store, [session, fork]);
    expect(found.tasks.map((t) => [t.id, t.group, t.question, t.relevant, t.history.map((h) => h.user)])).toEqual([
      ['keys::1', 'keys', 'How do I rotate an API key?', ['guides/auth.md'], []],
      // the failed turn is no exchange: the chat's history leaves it out, and so does the task
      ['keys::3', 'keys', 'does it expire?', ['notes/expiry.md'], ['How do I rotate an API key?']],
    ]);
    expect(found.tasks[1]!.history[0]!.assistant).toBe('An answer [1].');
    expect(found.unscored).toEqual([{ session: session.id, turn: 2 }, { session: fork.id, turn: 2 }]);
    expect(found.duplicates).toBe(2);
    expect(found.sessions.map((s) => [s.name, s.judged, s.tasks])).toEqual([['keys', 3, 2], ['keys-b', 3, 0]]);

    const bare = createSession(db, { name: 'bare' });
    answeredTurn(db, bare, 'hello docs?', ['guides/auth.md']);
    await expect(requireSessionTasks(store, [bare], { named: true })).rejects.toThrow('Session bare has no judged turns.');
    await expect(requireSessionTasks(store, [], { named: false })).rejects.toThrow('No session has judged turns yet.');
    // judged only "nothing useful": nothing to score, and the message says what to add
    const vague = createSession(db, { name: 'vague' });
    judgeTurn(db, answeredTurn(db, vague, 'anything on quotas?', ['guides/auth.md']), { noneUseful: true });
    await expect(requireSessionTasks(store, [vague], { named: true })).rejects.toThrow('The judged turns name no relevant document');
  });
});

describe('naming a document', () => {
  let db: Db;
  beforeEach(() => {
    db = openDatabase(':memory:');
    addDocument(db, '/srv/docs', 'guides/authentication.md');
    addDocument(db, '/srv/docs', 'reference/cli.md');
    addDocument(db, '/srv/docs', 'README');
  });
  afterEach(() => db.close());

  test('by stored path, by a file path inside the ingested folder, or by file name without extension', () => {
    expect(resolveDocumentName(db, 'guides/authentication.md', '/tmp')).toEqual({ documentPath: 'guides/authentication.md', indexed: true });
    expect(resolveDocumentName(db, '/srv/docs/reference/cli.md', '/tmp')).toEqual({ documentPath: 'reference/cli.md', indexed: true });
    expect(resolveDocumentName(db, 'guides/authentication.md', '/elsewhere')).toEqual({ documentPath: 'guides/authentication.md', indexed: true });
    expect(resolveDocumentName(db, '../docs/reference/cli.md', '/srv/work')).toEqual({ documentPath: 'reference/cli.md', indexed: true });
    expect(resolveDocumentName(db, 'authentication', '/tmp')).toEqual({ documentPath: 'guides/authentication.md', indexed: true });
    expect(resolveDocumentName(db, 'README', '/tmp')).toEqual({ documentPath: 'README', indexed: true });
    expect(resolveDocumentName(db, 'reference/cli', '/tmp')).toEqual({ documentPath: 'reference/cli.md', indexed: true });
    expect(resolveDocumentName(db, 'cli', '/tmp')).toEqual({ documentPath: 'reference/cli.md', indexed: true });
    expect(resolveDocumentName(db, 'guides/cli', '/tmp')).toEqual({ documentPath: 'guides/cli', indexed: false });
  });

  test('by file name with its extension, and by a stored path written with ./', () => {
    expect(resolveDocumentName(db, 'authentication.md', '/tmp')).toEqual({ documentPath: 'guides/authentication.md', indexed: true });
    expect(resolveDocumentName(db, './guides/authentication.md', '/tmp')).toEqual({ documentPath: 'guides/authentication.md', indexed: true });
    expect(resolveDocumentName(db, './reference/cli', '/tmp')).toEqual({ documentPath: 'reference/cli.md', indexed: true });
    expect(resolveDocumentName(db, 'cli.txt', '/tmp')).toEqual({ documentPath: 'cli.txt', indexed: false });
  });

  test('a document not in the index is kept as named (relative to the ingested folder when it lies inside one)', () => {
    expect(resolveDocumentName(db, 'notes/missing.md', '/tmp')).toEqual({ documentPath: 'notes/missing.md', indexed: false });
    expect(resolveDocumentName(db, '/srv/docs/guides/new.md', '/tmp')).toEqual({ documentPath: 'guides/new.md', indexed: false });
    expect(resolveDocumentName(db, 'auth%', '/tmp')).toEqual({ documentPath: 'auth%', indexed: false });
  });
});

describe('migrating a schema-4 database to schema 5', () => {
  let dir: string;
  beforeEach(() => {
    dir = tempDir('ragline-migrate-v4-');
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('adds the judgment columns and table; sessions, turns and turn chunks are unchanged and can be judged', () => {
    expect(SCHEMA_VERSION).toBeGreaterThanOrEqual(5);
    const file = path.join(dir, 'v4.db');
    const raw = new Database(file);
    for (const [version, migration] of MIGRATIONS.slice(0, 4).entries()) {
      raw.transaction(() => {
        migration.up(raw);
        raw.pragma(`user_version = ${version + 1}`);
      })();
    }
    raw.prepare("INSERT INTO sessions (id, name, created_at, updated_at) VALUES ('s-000001', 'old', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')").run();
    raw.prepare("INSERT INTO turns (session_id, ordinal, created_at, status, question, answer) VALUES ('s-000001', 1, '2026-01-01T00:00:01.000Z', 'answered', 'How do I rotate a key?', 'Like so [1].')").run();
    raw.prepare(
      `INSERT INTO turn_chunks (turn_id, rank, chunk_id, document_path, start_line, end_line, locator, heading, text_hash, score)
       VALUES (1, 1, 9, 'keys.md', 1, 3, 'line', 'Keys', 'abc', 0.5)`,
    ).run();
    const before = {
      turns: raw.prepare('SELECT * FROM turns').all(),
      chunks: raw.prepare('SELECT * FROM turn_chunks').all(),
      sessions: raw.prepare('SELECT * FROM sessions').all(),
    };
    expect(raw.pragma('user_version', { simple: true })).toBe(4);
    raw.close();

    const db = openDatabase(file);
    try {
      expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
      const turns = db.prepare('SELECT * FROM turns').all() as Record<string, unknown>[];
      expect(turns.map(({ judged_at, judged_none, ...rest }) => rest)).toEqual(before.turns);
      expect(turns[0]).toMatchObject({ judged_at: null, judged_none: 0 });
      expect(db.prepare('SELECT * FROM turn_chunks').all()).toEqual(before.chunks);
      expect(db.prepare('SELECT * FROM sessions').all()).toEqual(before.sessions);
      expect(count(db, 'SELECT count(*) FROM turn_relevant')).toBe(0);
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      const judged = judgeTurn(db, 1, { add: [{ documentPath: 'keys.md', source: 'retrieved', chunkRank: 1 }] });
      expect(judged.relevant).toHaveLength(1);
    } finally {
      db.close();
    }
  });
});
