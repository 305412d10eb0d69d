// The contract of a session store: the same operations, run on both implementations,
// the SQLite file (the reference) and Postgres (PGlite over its wire protocol,
// test/helpers/pglite.ts), give the same results. Each case runs on a fresh SQLite
// database and, on Postgres, as a user of its own (sessions are per user there).

import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { postgresSessionStore } from '../src/chat/postgres-session-store.js';
import { sqliteSessionStore, type SessionStore } from '../src/chat/session-store.js';
import type { TurnStore } from '../src/chat/stages/store.js';
import { openDatabase } from '../src/store/db.js';
import { PostgresStore } from '../src/store/postgres/store.js';
import type { FinishTurnInput } from '../src/store/sessions.js';
import { startPostgres, type TestPostgres } from './helpers/pglite.js';

let server: TestPostgres;
let postgres: PostgresStore;
let users = 0;

beforeAll(async () => {
  server = await startPostgres({ textsearch: false });
  // One connection: PGlite serves one backend.
  postgres = new PostgresStore(server.url, { max: 1 });
}, 120_000);

afterAll(async () => {
  await postgres?.close();
  await server?.close();
});

type Stores = { name: string; make: () => Promise<SessionStore> };
const STORES: Stores[] = [
  { name: 'sqlite', make: async () => sqliteSessionStore(openDatabase(':memory:')) },
  { name: 'postgres', make: async () => postgresSessionStore(postgres, `user-${++users}`) },
];

const ISO_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

function finished(overrides: Partial<FinishTurnInput> = {}): FinishTurnInput {
  return {
    status: 'answered',
    standaloneQuery: 'How do Orbitly API keys expire?',
    rewriteDecision: 'rewritten',
    rewriteReason: 'pronoun "it" refers to the API key',
    chunks: [
      { chunkId: 11, documentPath: 'guides/authentication.md', heading: 'Auth > Keys', startLine: 10, endLine: 20, locator: 'line', textHash: 'h11', rank: 1, score: 0.9, vectorRank: 1, vectorDistance: 0.25, keywordRank: 2, bm25: -3.5 },
      { chunkId: 12, documentPath: 'guides/webhooks.md', heading: 'Hooks', startLine: 21, endLine: 30, locator: 'line', textHash: 'h12', rank: 2, score: 0.5, vectorRank: 3, vectorDistance: 0.5 },
    ],
    prompt: [{ role: 'user', content: 'q' }],
    answer: 'They expire after 90 days [1].',
    answerKind: 'model',
    models: { rewrite: 'offline:rewrite-v1', chat: 'test-model', embed: 'offline:hash-v1' },
    settings: { k: 2, rewritePolicy: 'auto' },
    timings: { historyMs: 1, summaryMs: 0, rewriteMs: 2, retrieveMs: 3, answerMs: 4, persistMs: 0, totalMs: 10 },
    usage: { answer: { promptTokens: 10, completionTokens: 5 } },
    topics: [{ term: 'API key', weight: 1, lastTurn: 1, source: 'question' }],
    ...overrides,
  } as FinishTurnInput;
}

async function ask(turns: TurnStore, sessionId: string, question: string, finish?: FinishTurnInput): Promise<number> {
  const started = await turns.startTurn(sessionId, question);
  if (finish) await turns.finishTurn(started.id, finish);
  return started.id;
}

/** A turn without what differs between two stores: ids, times and the timings the store extends. */
function comparable<T extends object>(value: T): unknown {
  return JSON.parse(
    JSON.stringify(value, (key, field) => (['id', 'turnId', 'sessionId', 'createdAt', 'finishedAt', 'updatedAt', 'judgedAt', 'lastActive', 'parentSessionId', 'timings'].includes(key) ? undefined : field)),
  );
}

/** Runs `scenario` on each store and expects the same result of both. */
async function onBoth(scenario: (store: SessionStore) => Promise<unknown>): Promise<void> {
  const results: unknown[] = [];
  for (const { make } of STORES) results.push(comparable((await scenario(await make())) as object));
  expect(results[1]).toEqual(results[0]);
}

async function error(promise: Promise<unknown>): Promise<{ message: string; exitCode?: number }> {
  try {
    await promise;
  } catch (caught) {
    return { message: (caught as Error).message, exitCode: (caught as { exitCode?: number }).exitCode };
  }
  throw new Error('expected an error');
}

describe('the session store contract, on SQLite and on Postgres', () => {
  test('create, list, find (by id, name, last), rename; names refused alike', async () => {
    await onBoth(async (store) => {
      const a = await store.create({ name: 'alpha' });
      const b = await store.create();
      await ask(store.turnStore(), a.id, 'How do I create an API key?', finished());
      expect(a.createdAt).toMatch(ISO_UTC);
      const list = await store.list();
      expect(list.map((s) => s.id)).toEqual([a.id, b.id]);
      expect((await store.find('last'))?.id).toBe(a.id); // b, newer, has no turn
      expect((await store.find(a.id))?.name).toBe('alpha');
      expect((await store.find(' alpha '))?.id).toBe(a.id);
      const renamed = await store.rename(b.id, 'beta');
      return {
        list,
        renamed,
        byName: await store.find('beta'),
        missing: await store.find('nope'),
        errors: [
          await error(store.rename(a.id, 'beta')),
          await error(store.rename(a.id, ' ')),
          await error(store.rename(a.id, 'last')),
          await error(store.rename(a.id, 'bad\u001bname')),
          await error(store.create({ name: 'alpha' })),
        ].map((e) => ({ ...e, message: e.message.replace(/s-[0-9a-f]+/g, 's-ID') })),
      };
    });
  });

  test('turns, their chunks and topics read back as written', async () => {
    await onBoth(async (store) => {
      const session = await store.create({ name: 'trail' });
      const turns = store.turnStore();
      const first = await ask(turns, session.id, 'How do I create an API key?', finished());
      await ask(turns, session.id, 'Does it expire?', finished({ status: 'failed', error: 'boom', chunks: [], answer: undefined, answerKind: undefined, topics: undefined }));
      await ask(turns, session.id, 'and rotate it?');
      const stored = await store.turns(session.id);
      expect(stored.map((turn) => turn.status)).toEqual(['answered', 'failed', 'pending']);
      expect(stored[0]!.finishedAt).toMatch(ISO_UTC);
      return { stored, chunks: await store.turnChunks(first), topics: await store.latestTopics(session.id) };
    });
  });

  test('judge, clear and the turn a judgment names; judgments read back in the order given', async () => {
    await onBoth(async (store) => {
      const session = await store.create({ name: 'judged' });
      const turns = store.turnStore();
      const first = await ask(turns, session.id, 'How do I create an API key?', finished());
      const second = await ask(turns, session.id, 'Does it expire?', finished());
      expect(await store.turnId(session, 2)).toBe(second);
      const judged = await store.judge(first, { add: [{ documentPath: 'guides/webhooks.md', source: 'retrieved', chunkRank: 2 }, { documentPath: 'faq.md', source: 'expected' }] });
      const none = await store.judge(first, { noneUseful: true });
      const replaced = await store.judge(second, { replace: true, add: [{ documentPath: 'guides/authentication.md', source: 'retrieved', chunkRank: 1 }] });
      await store.judge(second, { add: [{ documentPath: 'guides/authentication.md', source: 'expected' }] });
      const all = await store.judgments(session.id);
      await store.clearJudgment(second);
      return {
        judged,
        none,
        replaced,
        all: [...all.values()],
        after: [...(await store.judgments(session.id)).values()],
        errors: [await error(store.turnId(session, 5)), await error(store.turnId(await store.create({ name: 'empty' }), 1))],
      };
    });
  });

  test('fork copies turns with chunks and judgments; remove leaves the fork its copies', async () => {
    await onBoth(async (store) => {
      const source = await store.create({ name: 'source' });
      const turns = store.turnStore();
      const first = await ask(turns, source.id, 'How do I create an API key?', finished());
      await ask(turns, source.id, 'Does it expire?', finished());
      await ask(turns, source.id, 'and rotate it?', finished());
      await store.judge(first, { add: [{ documentPath: 'faq.md', source: 'expected' }] });
      const fork = await store.fork(source.id, 2, 'fork');
      expect(fork.parentSessionId).toBe(source.id);
      const copied = await store.turns(fork.id);
      const chunks = await store.turnChunks(copied[0]!.id);
      const judgments = [...(await store.judgments(fork.id)).values()];
      // A turn still pending is not copied, and cannot be forked at.
      await ask(turns, source.id, 'and webhooks?');
      await ask(turns, source.id, 'and retries?', finished());
      const skipping = await store.fork(source.id, 5);
      expect(skipping.unfinished).toEqual([4]);
      const skipped = (await store.turns(skipping.id)).map((turn) => [turn.ordinal, turn.question]);
      const errors = [await error(store.fork(source.id, 4)), await error(store.fork(source.id, 6)), await error(store.fork(source.id, 0))].map((e) => ({ ...e, message: e.message.replace(/s-[0-9a-f]+/g, 's-ID') }));
      expect(await store.remove(source.id)).toBe(true);
      expect(await store.remove(source.id)).toBe(false);
      const left = await store.get(fork.id);
      expect(left?.parentSessionId).toBeNull();
      return { fork, copied, chunks, judgments, skipped, errors, left, stillThere: await store.turns(fork.id), list: await store.list() };
    });
  });

  test('a session written whole (a saved rerun) holds its turns finished, in order', async () => {
    await onBoth(async (store) => {
      const written = await store.write('rerun-1', [
        { question: 'How do I create an API key?', finish: finished() },
        { question: 'Does it expire?', finish: finished({ status: 'interrupted', answer: 'They exp' }) },
      ]);
      expect(written.name).toBe('rerun-1');
      const taken = await error(store.write('rerun-1', []));
      return { written, turns: await store.turns(written.id), taken: { ...taken, message: taken.message.replace(/s-[0-9a-f]+/g, 's-ID') }, sessions: (await store.list()).length };
    });
  });
});

describe('on Postgres, sessions belong to a user', () => {
  test("another user's sessions are not listed, found, renamed, forked or removed", async () => {
    const mine = postgresSessionStore(postgres, 'carol');
    const theirs = postgresSessionStore(postgres, 'dave');
    const session = await mine.create({ name: 'shared-name' });
    await ask(mine.turnStore(), session.id, 'How do I create an API key?', finished());
    expect(await theirs.list()).toEqual([]);
    expect(await theirs.find(session.id)).toBeUndefined();
    expect(await theirs.find('shared-name')).toBeUndefined();
    expect(await theirs.find('last')).toBeUndefined();
    expect(await theirs.get(session.id)).toBeUndefined();
    await expect(theirs.rename(session.id, 'mine-now')).rejects.toMatchObject({ exitCode: 2 });
    await expect(theirs.fork(session.id, 1)).rejects.toMatchObject({ exitCode: 2 });
    expect(await theirs.remove(session.id)).toBe(false);
    // The same name is free for another user.
    expect((await theirs.create({ name: 'shared-name' })).name).toBe('shared-name');
    expect((await mine.find('shared-name'))?.id).toBe(session.id);
  });
});
