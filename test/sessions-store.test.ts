import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { openDatabase, type Db } from '../src/store/db.js';
import {
  createSession,
  findSession,
  finishTurn,
  forkSession,
  getTurn,
  isStored,
  latestConversationState,
  latestTopics,
  listSessions,
  loadTurnChunks,
  loadTurns,
  planSession,
  removeSession,
  renameSession,
  requireSession,
  startTurn,
  type FinishTurnInput,
} from '../src/store/sessions.js';
import { UserError } from '../src/util/errors.js';

const ISO_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

function finished(overrides: Partial<FinishTurnInput> = {}): FinishTurnInput {
  return {
    status: 'answered',
    standaloneQuery: 'How do Orbitly API keys expire?',
    rewriteDecision: 'rewritten',
    rewriteReason: 'pronoun "it" refers to the API key',
    chunks: [
      {
        chunkId: 11, documentPath: 'guides/authentication.md', heading: 'Auth > Keys', startLine: 10, endLine: 20,
        locator: 'line', textHash: 'h11', rank: 1, score: 0.9, vectorRank: 1, vectorDistance: 0.2, keywordRank: 2, bm25: -3.5,
      },
      {
        chunkId: 12, documentPath: 'guides/authentication.md', heading: 'Auth > Rotation', startLine: 21, endLine: 30,
        locator: 'line', textHash: 'h12', rank: 2, score: 0.5, vectorRank: 3, vectorDistance: 0.4,
      },
    ],
    prompt: [{ role: 'system', content: 'sys' }, { role: 'user', content: 'q' }],
    answer: 'Keys expire after 90 days [1].',
    answerKind: 'llm',
    models: { rewrite: 'openai:r', chat: 'openai:c', embed: 'offline:e' },
    settings: { k: 5 },
    timings: { historyMs: 1, summaryMs: 0, rewriteMs: 2, retrieveMs: 3, answerMs: 4, persistMs: 0.5, totalMs: 10 },
    usage: { rewrite: { promptTokens: 5, completionTokens: 6 }, answer: { promptTokens: 7, completionTokens: 8 } },
    topics: [{ term: 'api key', weight: 1, lastTurn: 1 }],
    summary: 'earlier: plans',
    summaryThrough: 0,
    ...overrides,
  };
}

function count(db: Db, sql: string, ...params: unknown[]): number {
  return db.prepare(sql).pluck().get(...params) as number;
}

describe('sessions store', () => {
  let db: Db;
  beforeEach(() => {
    db = openDatabase(':memory:');
  });
  afterEach(() => db.close());

  test('a planned session is stored with its first question, in the same transaction, and not before', () => {
    const planned = planSession(db, { name: 'later' });
    expect(planned.id).toMatch(/^s-[0-9a-f]{6}$/);
    expect(isStored(db, planned.id)).toBe(false);
    expect(listSessions(db)).toEqual([]);
    // Without the plan, an unknown id is still refused.
    expect(() => startTurn(db, planned.id, 'q?')).toThrow(UserError);
    expect(isStored(db, planned.id)).toBe(false);
    const turn = startTurn(db, planned.id, 'How do keys expire?', { create: planned });
    expect(turn.ordinal).toBe(1);
    expect(findSession(db, 'later')?.id).toBe(planned.id);
    // Once stored, the plan is ignored: the next turn goes to the same session.
    expect(startTurn(db, planned.id, 'and rotate?', { create: planned }).ordinal).toBe(2);
    expect(listSessions(db).map((s) => [s.id, s.turns])).toEqual([[planned.id, 2]]);
  });

  test('a planned name taken meanwhile is refused when the first question would store it', () => {
    const planned = planSession(db, { name: 'shared' });
    createSession(db, { name: 'shared' });
    expect(() => startTurn(db, planned.id, 'q?', { create: planned })).toThrow(/already exists/);
    expect(isStored(db, planned.id)).toBe(false);
    expect(() => planSession(db, { name: 'shared' })).toThrow(UserError);
  });

  test('creates sessions with short random ids and ISO UTC timestamps, finds them by id, name and last', () => {
    const first = createSession(db);
    const named = createSession(db, { name: 'billing' });
    expect(first.id).toMatch(/^s-[0-9a-f]{6}$/);
    expect(first.createdAt).toMatch(ISO_UTC);
    expect(findSession(db, first.id)?.id).toBe(first.id);
    expect(findSession(db, 'billing')?.id).toBe(named.id);
    startTurn(db, first.id, 'latest question');
    expect(findSession(db, 'last')?.id).toBe(first.id);
    expect(findSession(db, 'nope')).toBeUndefined();
    expect(() => requireSession(db, 'nope')).toThrow(UserError);
  });

  test('`last` is the most recently active session that holds a turn: one left without turns is never it', () => {
    const asked = createSession(db, { name: 'asked' });
    finishTurn(db, startTurn(db, asked.id, 'a question').id, finished());
    const empty = createSession(db, { name: 'empty' });
    db.prepare("UPDATE sessions SET updated_at = '2999-01-01T00:00:00.000Z' WHERE id = ?").run(empty.id);
    expect(findSession(db, 'last')?.id).toBe(asked.id);
  });

  test('refuses a duplicate name and names that read as references', () => {
    createSession(db, { name: 'billing' });
    expect(() => createSession(db, { name: 'billing' })).toThrow(/already exists/);
    expect(() => createSession(db, { name: 'last' })).toThrow(UserError);
    expect(() => createSession(db, { name: 's-abcdef' })).toThrow(UserError);
  });

  test('refuses names with escapes, controls, line breaks or bidi overrides (they are printed in listings)', () => {
    for (const name of ['x\u001b]0;PWNED\u0007', 'two\nlines', 'c1\u009b2J', 'rtl\u202eevil', 'zw\u200bj']) {
      expect(() => createSession(db, { name }), JSON.stringify(name)).toThrow(/cannot contain control characters/);
    }
    const session = createSession(db, { name: 'plain' });
    expect(() => renameSession(db, session.id, 'bad\u0007')).toThrow(UserError);
    expect(createSession(db, { name: 'Café – notes' }).name).toBe('Café – notes');
    // The zero-width non-joiner and joiner are text in Persian and emoji sequences.
    for (const name of ['می\u200cخواهم', '👩\u200d💻 notes', 'שלום', 'مرحبا']) expect(createSession(db, { name }).name).toBe(name);
  });

  test('the question is stored as a pending turn before anything else', () => {
    const session = createSession(db);
    const turn = startTurn(db, session.id, 'Does it expire?');
    expect(turn.ordinal).toBe(1);
    const stored = getTurn(db, turn.id)!;
    expect(stored).toMatchObject({ status: 'pending', question: 'Does it expire?', answer: null, finishedAt: null });
    expect(stored.createdAt).toMatch(ISO_UTC);
    expect(startTurn(db, session.id, 'next').ordinal).toBe(2);
  });

  test('finishing a turn records the whole trail, chunks with their score parts', () => {
    const session = createSession(db);
    const turn = startTurn(db, session.id, 'Does it expire?');
    const timings = finishTurn(db, turn.id, finished());
    expect(timings.persistMs).toBeGreaterThanOrEqual(0.5);
    const [stored] = loadTurns(db, session.id);
    expect(stored).toMatchObject({
      status: 'answered',
      question: 'Does it expire?',
      standaloneQuery: 'How do Orbitly API keys expire?',
      rewriteDecision: 'rewritten',
      answer: 'Keys expire after 90 days [1].',
      answerKind: 'llm',
      models: { rewrite: 'openai:r', chat: 'openai:c', embed: 'offline:e' },
      usage: { rewrite: { promptTokens: 5, completionTokens: 6 }, answer: { promptTokens: 7, completionTokens: 8 } },
      topics: [{ term: 'api key', weight: 1, lastTurn: 1 }],
      summary: 'earlier: plans',
      prompt: [{ role: 'system', content: 'sys' }, { role: 'user', content: 'q' }],
      settings: { k: 5 },
    });
    expect(stored!.finishedAt).toMatch(ISO_UTC);
    expect(stored!.timings).toEqual(timings);
    const chunks = loadTurnChunks(db, turn.id);
    expect(chunks).toHaveLength(2);
    expect(chunks[0]).toMatchObject({ rank: 1, chunkId: 11, bm25: -3.5, keywordRank: 2, vectorDistance: 0.2 });
    expect(chunks[1]).not.toHaveProperty('bm25');
  });

  test('lists sessions with turn counts, first question and parent', () => {
    const a = createSession(db, { name: 'a' });
    finishTurn(db, startTurn(db, a.id, 'first of a').id, finished());
    startTurn(db, a.id, 'second of a');
    const fork = forkSession(db, a.id, 1, 'fork-of-a');
    const listing = listSessions(db);
    const rowA = listing.find((s) => s.id === a.id)!;
    expect(rowA).toMatchObject({ name: 'a', turns: 2, firstQuestion: 'first of a', parentSessionId: null });
    expect(rowA.lastActive).toMatch(ISO_UTC);
    expect(listing.find((s) => s.id === fork.id)).toMatchObject({ turns: 1, parentSessionId: a.id, parentTurn: 1 });
  });

  test('renames, and unnames with null', () => {
    const a = createSession(db, { name: 'old' });
    renameSession(db, a.id, 'new');
    expect(findSession(db, 'new')?.id).toBe(a.id);
    renameSession(db, a.id, null);
    expect(findSession(db, a.id)?.name).toBeNull();
  });

  test('the topics a session lists are the ones its next turn starts from', () => {
    const session = createSession(db);
    expect(latestTopics(db, session.id)).toEqual([]);
    finishTurn(db, startTurn(db, session.id, 'q1').id, finished({ topics: [{ term: 'api key', weight: 1, lastTurn: 1 }] }));
    expect(latestTopics(db, session.id)).toEqual([{ term: 'api key', weight: 1, lastTurn: 1 }]);
    // A pending turn stores no topics yet: the last stored ones still count.
    const pending = startTurn(db, session.id, 'q2');
    expect(latestTopics(db, session.id)).toEqual([{ term: 'api key', weight: 1, lastTurn: 1 }]);
    // A turn that stored an empty list empties them, for the next turn as for the listing.
    finishTurn(db, pending.id, finished({ status: 'failed', topics: [] }));
    expect(latestTopics(db, session.id)).toEqual([]);
    expect(latestConversationState(db, session.id, 3)?.topics).toEqual([]);
  });

  test('fork copies turns 1..N with chunks, topics and summary; the original is untouched', () => {
    const a = createSession(db);
    for (let i = 1; i <= 3; i++) {
      finishTurn(db, startTurn(db, a.id, `q${i}`).id, finished({ answer: `a${i}`, summary: `s${i}`, topics: [{ term: `t${i}`, weight: i, lastTurn: i }] }));
    }
    const before = loadTurns(db, a.id);
    const fork = forkSession(db, a.id, 2, 'branch');
    expect(fork).toMatchObject({ parentSessionId: a.id, parentTurn: 2, name: 'branch' });
    const copied = loadTurns(db, fork.id);
    expect(copied.map((t) => [t.ordinal, t.question, t.answer, t.summary])).toEqual([
      [1, 'q1', 'a1', 's1'],
      [2, 'q2', 'a2', 's2'],
    ]);
    expect(copied[1]!.topics).toEqual([{ term: 't2', weight: 2, lastTurn: 2 }]);
    expect(copied[1]!.id).not.toBe(before[1]!.id);
    expect(loadTurnChunks(db, copied[1]!.id).map((c) => c.chunkId)).toEqual([11, 12]);
    expect(loadTurns(db, a.id)).toEqual(before);
    expect(startTurn(db, fork.id, 'q3 in fork').ordinal).toBe(3);
    expect(() => forkSession(db, a.id, 4)).toThrow(/turns 1 to 3/);
  });

  test('remove leaves no orphan turns or turn_chunks, and forks keep their copies', () => {
    const a = createSession(db);
    finishTurn(db, startTurn(db, a.id, 'q1').id, finished());
    finishTurn(db, startTurn(db, a.id, 'q2').id, finished());
    const fork = forkSession(db, a.id, 1);
    expect(removeSession(db, a.id)).toBe(true);
    expect(count(db, 'SELECT count(*) FROM turns WHERE session_id = ?', a.id)).toBe(0);
    expect(count(db, 'SELECT count(*) FROM turn_chunks WHERE turn_id NOT IN (SELECT id FROM turns)')).toBe(0);
    expect(count(db, 'SELECT count(*) FROM turns WHERE session_id NOT IN (SELECT id FROM sessions)')).toBe(0);
    expect(loadTurns(db, fork.id)).toHaveLength(1);
    expect(findSession(db, fork.id)?.parentSessionId).toBeNull();
    expect(removeSession(db, a.id)).toBe(false);
  });

  test('a pending question survives the process being killed (file database, reopened)', async () => {
    const fs = await import('node:fs');
    const os = await import('node:os');
    const path = await import('node:path');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ragline-sessions-'));
    const file = path.join(dir, 'r.db');
    const writer = openDatabase(file, { create: true });
    const session = createSession(writer);
    startTurn(writer, session.id, 'kept?');
    // No close: a second connection sees the committed row, as after SIGKILL.
    const reader = openDatabase(file);
    expect(loadTurns(reader, session.id).map((t) => [t.question, t.status])).toEqual([['kept?', 'pending']]);
    reader.close();
    writer.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
