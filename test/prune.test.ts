// Retention at its boundaries. Turns are written through the sessions store into a
// real database file holding an offline index of fixtures/docs, then their
// timestamps are set directly on the rows. The exact cutoff is tested against the
// store (`pruneTurns` with a fixed cutoff); `ragline prune` (in-process) is
// tested a minute either side of "now - age", since its clock is its own.

import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../src/store/db.js';
import { pruneTurns } from '../src/store/retention.js';
import { createSession, finishTurn, startTurn } from '../src/store/sessions.js';
import { FIXTURE_DOCS, ROOT, isolatedEnv, ragline, tempDir } from './helpers/cli.js';

const DAY = 86_400_000;
let template: string;
let home: string;
const dbFile = () => path.join(home, 'ragline.db');

beforeAll(async () => {
  if (!fs.existsSync(path.join(ROOT, 'dist/cli/main.js'))) throw new Error('Build first: npx tsc -p .');
  template = tempDir('ragline-prune-template-');
  const result = await ragline(['--db', path.join(template, 'ragline.db'), 'ingest', FIXTURE_DOCS], { env: isolatedEnv(template) });
  expect(result.code, result.stderr).toBe(0);
});
afterAll(() => fs.rmSync(template, { recursive: true, force: true }));
beforeEach(() => {
  home = tempDir('ragline-prune-');
  fs.copyFileSync(path.join(template, 'ragline.db'), dbFile());
});
afterEach(() => fs.rmSync(home, { recursive: true, force: true }));

/** A finished turn with two retrieval rows, created at `at` (set on the row). */
function turnAt(db: Db, sessionId: string, at: Date, question: string): number {
  const turn = startTurn(db, sessionId, question);
  const chunk = { chunkId: 1, documentPath: 'guides/authentication.md', heading: 'h', startLine: 1, endLine: 9, locator: 'line' as const, textHash: 'x', score: 1 };
  finishTurn(db, turn.id, {
    status: 'answered',
    standaloneQuery: question,
    chunks: [{ ...chunk, rank: 1 }, { ...chunk, rank: 2, textHash: 'y' }],
    answer: 'a',
    answerKind: 'extractive',
    models: {},
    timings: { historyMs: 0, summaryMs: 0, rewriteMs: 0, retrieveMs: 0, answerMs: 0, persistMs: 0, totalMs: 0 },
    usage: {},
    topics: [],
  });
  db.prepare('UPDATE turns SET created_at = ? WHERE id = ?').run(at.toISOString(), turn.id);
  return turn.id;
}

/** A session created at `at` (set on the row). */
function sessionAt(db: Db, at: Date, name: string): string {
  const session = createSession(db, { name });
  db.prepare('UPDATE sessions SET created_at = ?, updated_at = ? WHERE id = ?').run(at.toISOString(), at.toISOString(), session.id);
  return session.id;
}

function counts(db: Db) {
  const n = (sql: string) => db.prepare(sql).pluck().get() as number;
  return {
    sessions: n('SELECT count(*) FROM sessions'),
    turns: n('SELECT count(*) FROM turns'),
    turnChunks: n('SELECT count(*) FROM turn_chunks'),
    documents: n('SELECT count(*) FROM documents'),
    chunks: n('SELECT count(*) FROM chunks'),
    fts: n('SELECT count(*) FROM chunks_fts'),
    vectors: n('SELECT count(*) FROM vec_chunks'),
  };
}

describe('pruneTurns at the cutoff', () => {
  const cutoff = new Date('2025-03-01T12:00:00.000Z');
  const justBefore = new Date(cutoff.getTime() - 1);
  const justAfter = new Date(cutoff.getTime() + 1);

  function seed(db: Db) {
    const old = sessionAt(db, new Date(cutoff.getTime() - 10 * DAY), 'old-only');
    const mixed = sessionAt(db, new Date(cutoff.getTime() - 10 * DAY), 'mixed');
    const ids = {
      oldOnly: turnAt(db, old, justBefore, 'only turn, a millisecond before the cutoff'),
      before: turnAt(db, mixed, justBefore, 'a millisecond before'),
      exactly: turnAt(db, mixed, cutoff, 'exactly at the cutoff'),
      after: turnAt(db, mixed, justAfter, 'a millisecond after'),
    };
    return { old, mixed, ids };
  }

  it('removes turns created before the cutoff with their retrieval rows; a turn exactly at it and one just after stay', () => {
    const db = openDatabase(dbFile());
    try {
      const { old, mixed, ids } = seed(db);
      const before = counts(db);
      const report = pruneTurns(db, cutoff);
      expect(report).toEqual({ cutoff: cutoff.toISOString(), turns: 2, retrievalRows: 4, sessions: 1, dryRun: false });
      const left = db.prepare('SELECT id FROM turns ORDER BY id').pluck().all();
      expect(left).toEqual([ids.exactly, ids.after]);
      const after = counts(db);
      expect(after.turnChunks).toBe(before.turnChunks - 4);
      expect(db.prepare('SELECT count(*) FROM turn_chunks WHERE turn_id NOT IN (SELECT id FROM turns)').pluck().get()).toBe(0);
      // The session left without turns goes; the one with newer turns stays.
      expect(db.prepare('SELECT id FROM sessions ORDER BY id').pluck().all()).toEqual([mixed]);
      expect(db.prepare('SELECT 1 FROM sessions WHERE id = ?').get(old)).toBeUndefined();
      // Documents and the index are never touched.
      expect({ ...after, sessions: 0, turns: 0, turnChunks: 0 }).toEqual({ ...before, sessions: 0, turns: 0, turnChunks: 0 });
      expect(before.documents).toBeGreaterThan(0);
      expect(before.vectors).toBe(before.chunks);
    } finally {
      db.close();
    }
  });

  it('--dry-run counts the same and removes nothing', () => {
    const db = openDatabase(dbFile());
    try {
      seed(db);
      const before = counts(db);
      expect(pruneTurns(db, cutoff, { dryRun: true })).toEqual({ cutoff: cutoff.toISOString(), turns: 2, retrievalRows: 4, sessions: 1, dryRun: true });
      expect(counts(db)).toEqual(before);
    } finally {
      db.close();
    }
  });

  it('a session created after the cutoff is kept even with no turns at all', () => {
    const db = openDatabase(dbFile());
    try {
      const fresh = sessionAt(db, justAfter, 'fresh-empty');
      const exact = sessionAt(db, cutoff, 'exact-empty');
      const stale = sessionAt(db, justBefore, 'stale-empty');
      expect(pruneTurns(db, cutoff).sessions).toBe(1);
      expect(db.prepare('SELECT id FROM sessions ORDER BY id').pluck().all()).toEqual([fresh, exact].sort());
      expect(db.prepare('SELECT 1 FROM sessions WHERE id = ?').get(stale)).toBeUndefined();
    } finally {
      db.close();
    }
  });

  it('a session created after the cutoff whose turns are all older (a fork of an old conversation) goes with them', () => {
    const db = openDatabase(dbFile());
    try {
      const fork = sessionAt(db, justAfter, 'fork-of-old');
      turnAt(db, fork, justBefore, 'copied from the old session, with its time');
      const report = pruneTurns(db, cutoff, { dryRun: true });
      expect(report.sessions).toBe(1);
      expect(pruneTurns(db, cutoff).sessions).toBe(1);
      expect(db.prepare('SELECT 1 FROM sessions WHERE id = ?').get(fork)).toBeUndefined();
    } finally {
      db.close();
    }
  });

  it('keepSessionId keeps that session whole, however old; the other old turns still go', () => {
    const db = openDatabase(dbFile());
    try {
      const { old, mixed, ids } = seed(db);
      const dry = pruneTurns(db, cutoff, { dryRun: true, keepSessionId: old });
      expect(dry).toMatchObject({ turns: 1, retrievalRows: 2, sessions: 0 });
      expect(pruneTurns(db, cutoff, { keepSessionId: old })).toEqual({ ...dry, dryRun: false });
      expect(db.prepare('SELECT id FROM sessions ORDER BY id').pluck().all()).toEqual([mixed, old].sort());
      expect(db.prepare('SELECT id FROM turns ORDER BY id').pluck().all()).toEqual([ids.oldOnly, ids.exactly, ids.after]);
      expect(db.prepare('SELECT count(*) FROM turn_chunks WHERE turn_id = ?').pluck().get(ids.oldOnly)).toBe(2);
    } finally {
      db.close();
    }
  });
});

describe('history.retention when chat starts', () => {
  it('never removes the session the chat continues (--session or -c), only the other old ones', async () => {
    const now = Date.now();
    const db = openDatabase(dbFile());
    let continued: string;
    let other: string;
    try {
      continued = sessionAt(db, new Date(now - 60 * DAY), 'old-but-wanted');
      turnAt(db, continued, new Date(now - 60 * DAY), 'How do I create an API key?');
      other = sessionAt(db, new Date(now - 60 * DAY), 'old-and-forgotten');
      turnAt(db, other, new Date(now - 60 * DAY), 'What is a webhook?');
    } finally {
      db.close();
    }
    const env = isolatedEnv(home, { RAGLINE_HISTORY_RETENTION: '30d' });
    const result = await ragline(['--db', dbFile(), 'chat', '--session', 'old-but-wanted'], { env, input: 'does it expire?\n' });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('history.retention 30d: removed 1 turn (2 retrieval rows) and 1 emptied session');
    const after = openDatabase(dbFile());
    try {
      expect(after.prepare('SELECT id FROM sessions').pluck().all()).toEqual([continued]);
      expect(after.prepare('SELECT question FROM turns WHERE session_id = ? ORDER BY ordinal').pluck().all(continued)).toEqual([
        'How do I create an API key?',
        'does it expire?',
      ]);
    } finally {
      after.close();
    }

    // -c continues the most recent session: kept too, though every turn of it is old.
    const aged = openDatabase(dbFile());
    try {
      aged.prepare('UPDATE turns SET created_at = ?').run(new Date(now - 60 * DAY).toISOString());
      aged.prepare('UPDATE sessions SET created_at = ?, updated_at = ?').run(new Date(now - 60 * DAY).toISOString(), new Date(now - 60 * DAY).toISOString());
    } finally {
      aged.close();
    }
    const resumed = await ragline(['--db', dbFile(), 'chat', '-c'], { env, input: 'how long is the default lifetime?\n' });
    expect(resumed.code, resumed.stderr).toBe(0);
    const last = openDatabase(dbFile());
    try {
      expect(last.prepare('SELECT count(*) FROM turns WHERE session_id = ?').pluck().get(continued)).toBe(3);
    } finally {
      last.close();
    }
  });
});

describe('history.retention off', () => {
  it('off prunes nothing when chat starts, where an age set in the config file would', async () => {
    const db = openDatabase(dbFile());
    try {
      turnAt(db, sessionAt(db, new Date(Date.now() - 60 * DAY), 'old'), new Date(Date.now() - 60 * DAY), 'What is a webhook?');
    } finally {
      db.close();
    }
    fs.writeFileSync(path.join(home, 'config.json'), JSON.stringify({ history: { retention: '30d' } }));
    const env = isolatedEnv(home, { RAGLINE_CONFIG: path.join(home, 'config.json'), RAGLINE_HISTORY_RETENTION: 'off' });
    const result = await ragline(['--db', dbFile(), 'chat'], { env, input: 'How do I create an API key?\n' });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).not.toContain('history.retention');
    const after = openDatabase(dbFile());
    try {
      expect(after.prepare('SELECT count(*) FROM sessions').pluck().get()).toBe(2);
    } finally {
      after.close();
    }
  });
});

describe('ragline prune', () => {
  it('--older-than 30d removes a turn a minute older than the age and keeps one a minute younger; --dry-run first removes nothing', async () => {
    const now = Date.now();
    const db = openDatabase(dbFile());
    let ids: { older: number; younger: number };
    let before: ReturnType<typeof counts>;
    try {
      const session = sessionAt(db, new Date(now - 40 * DAY), 'retention');
      ids = {
        older: turnAt(db, session, new Date(now - 30 * DAY - 60_000), 'older than 30 days'),
        younger: turnAt(db, session, new Date(now - 30 * DAY + 60_000), 'younger than 30 days'),
      };
      before = counts(db);
    } finally {
      db.close();
    }
    const env = isolatedEnv(home);
    const dry = await ragline(['--db', dbFile(), 'prune', '--older-than', '30d', '--dry-run', '--json'], { env });
    expect(dry.code, dry.stderr).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({ turns: 1, retrievalRows: 2, sessions: 0, dryRun: true });
    const text = await ragline(['--db', dbFile(), 'prune', '--older-than', '30d', '--dry-run'], { env });
    expect(text.stdout).toMatch(/^Would remove 1 turn \(2 retrieval rows\) and 0 emptied sessions older than \d{4}-/);

    const check = openDatabase(dbFile());
    try {
      expect(counts(check)).toEqual(before);
    } finally {
      check.close();
    }

    const real = await ragline(['--db', dbFile(), 'prune', '--older-than', '30d'], { env });
    expect(real.code, real.stderr).toBe(0);
    expect(real.stdout).toMatch(/^Removed 1 turn \(2 retrieval rows\) and 0 emptied sessions/);
    const after = openDatabase(dbFile());
    try {
      expect(after.prepare('SELECT id FROM turns').pluck().all()).toEqual([ids.younger]);
      const now = counts(after);
      expect(now.turnChunks).toBe(before.turnChunks - 2);
      expect([now.documents, now.chunks, now.fts, now.vectors]).toEqual([before.documents, before.chunks, before.fts, before.vectors]);
    } finally {
      after.close();
    }
    expect((await ragline(['--db', dbFile(), 'replay', 'retention'], { env })).stdout).toMatch(/Turn 2 · answered/);
  });

  it('refuses an age it cannot read, a bare m as ambiguous, and an age too long for a date, naming the flag', async () => {
    const result = await ragline(['--db', dbFile(), 'prune', '--older-than', 'a while'], { env: isolatedEnv(home) });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--older-than must be an age such as 12h, 30d or 6mo');
    const ambiguous = await ragline(['--db', dbFile(), 'prune', '--older-than', '6m'], { env: isolatedEnv(home) });
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr).toBe('error: --older-than "6m" is ambiguous: "m" could be minutes or months.\nWrite 6min for minutes or 6mo for months.\n');
    const huge = await ragline(['--db', dbFile(), 'prune', '--older-than', '99999999999w'], { env: isolatedEnv(home) });
    expect(huge.code).toBe(2);
    expect(huge.stderr).toContain('--older-than "99999999999w" is too long: at most 1000y.');
    expect(huge.stderr).not.toContain('Invalid time value');
  });

  it('refuses a zero age, with --dry-run too, saying what to give instead, and removes nothing', async () => {
    const db = openDatabase(dbFile());
    let before: ReturnType<typeof counts>;
    try {
      const session = sessionAt(db, new Date(Date.now() - DAY), 'yesterday');
      turnAt(db, session, new Date(Date.now() - DAY), 'How do I create an API key?');
      before = counts(db);
    } finally {
      db.close();
    }
    for (const args of [['0d'], ['0s', '--dry-run'], ['0.0h', '--json']]) {
      const result = await ragline(['--db', dbFile(), 'prune', '--older-than', ...args], { env: isolatedEnv(home) });
      expect(result.code, result.stderr).toBe(2);
      expect(result.stdout).toBe('');
      const [message, hint] = result.stderr.trim().split('\n');
      expect(message).toBe(`error: --older-than "${args[0]}" would remove all chat history.`);
      expect(hint).toContain('Give an age above zero, e.g. --older-than 30d');
    }
    const after = openDatabase(dbFile());
    try {
      expect(counts(after)).toEqual(before);
      expect(before.turns).toBe(1);
    } finally {
      after.close();
    }
  });

  it('accepts s, min, mo and y, and the help names the units', async () => {
    for (const age of ['90s', '45min', '1mo', '1y']) {
      const result = await ragline(['--db', dbFile(), 'prune', '--older-than', age, '--dry-run', '--json'], { env: isolatedEnv(home) });
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout).dryRun).toBe(true);
    }
    const help = await ragline(['prune', '--help'], { env: isolatedEnv(home) });
    expect(help.stdout).toContain('s, min, h, d, w, mo (30 days) or y (365 days)');
  });
});
