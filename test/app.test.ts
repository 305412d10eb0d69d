// The application layer's own checks, for a library caller who has no CLI in
// front of it: bad input is refused with a UserError, and a chat's sessions stay
// apart however its turns interleave.

import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { Chat, evaluate, ingestFolder, openWorkspace, removeSession, sessionTurns, type TurnEvent } from '../src/index.js';
import { UserError } from '../src/util/errors.js';
import { writeTinyDocs, tempDir } from './helpers/cli.js';

async function events(stream: AsyncIterable<TurnEvent>): Promise<TurnEvent[]> {
  const out: TurnEvent[] = [];
  for await (const event of stream) out.push(event);
  return out;
}

describe('src/app', () => {
  test('evaluate refuses a variant it does not know, naming the ones it does', async () => {
    const workspace = openWorkspace({ db: path.join(tempDir('ragline-app-'), 'app.db') });
    try {
      await ingestFolder(workspace, writeTinyDocs());
      const task = { id: 'c::0', group: 'c', question: 'How do I rotate an API key?', history: [], relevant: ['keys'] };
      const refused = evaluate(workspace, { tasks: [task], variants: ['raw', 'rawx'] });
      await expect(refused).rejects.toBeInstanceOf(UserError);
      await expect(refused).rejects.toMatchObject({ message: 'Unknown variant "rawx".', hint: expect.stringContaining('ragline+raw') });
      const report = await evaluate(workspace, { tasks: [task], variants: ['raw'] });
      expect(report).toBeTruthy();
    } finally {
      await workspace.close();
    }
  });

  test('a turn under way keeps its session when the chat moves to a new one', async () => {
    const workspace = openWorkspace({ db: path.join(tempDir('ragline-app-'), 'app.db') });
    try {
      await ingestFolder(workspace, writeTinyDocs());
      const chat = Chat.start(workspace);
      await events(chat.ask('How do I rotate an API key?'));
      const first = chat.session.id;
      const followUp = chat.ask('does it expire?');
      expect((await followUp.next()).value).toMatchObject({ type: 'start', sessionId: first });
      // The chat moves on while the follow-up is still under way.
      await chat.startNew();
      const other = chat.ask('Which header carries the webhook signature?');
      await other.next();
      const rest = await events(followUp);
      // The follow-up read its own session's history: it was rewritten against the first question.
      expect(rest.find((e) => e.type === 'rewrite')).toMatchObject({ decision: 'rewritten', standaloneQuery: expect.stringMatching(/API key/i) });
      await events(other);
      expect(chat.session.id).not.toBe(first);
    } finally {
      await workspace.close();
    }
  });

  test('a session removed by another connection while a question is answered: the turn fails with what happened, and the next question starts a new session', async () => {
    const db = path.join(tempDir('ragline-app-'), 'app.db');
    const workspace = openWorkspace({ db });
    const elsewhere = openWorkspace({ db });
    try {
      await ingestFolder(workspace, writeTinyDocs());
      const chat = Chat.start(workspace, { name: 'midway' });
      await events(chat.ask('How do I rotate an API key?'));
      const removed = chat.session;
      const turn = chat.ask('does it expire?');
      expect((await turn.next()).value).toMatchObject({ type: 'start' });
      expect(await removeSession(elsewhere, removed.id)).toBe(true);
      await expect(events(turn)).rejects.toMatchObject({
        name: 'UserError',
        message: 'The session was removed by another process while this question was answered: the answer was shown but not saved.',
      });
      const next = await events(chat.ask('does it expire?'));
      expect(next[0]).toMatchObject({ type: 'start', removedSession: { id: removed.id, name: 'midway' } });
      expect(next.at(-1)).toMatchObject({ type: 'done', status: 'answered' });
    } finally {
      await elsewhere.close();
      await workspace.close();
    }
  });

  test('a question asked after another connection removed the session starts a new session; its start event names the one removed', async () => {
    const db = path.join(tempDir('ragline-app-'), 'app.db');
    const workspace = openWorkspace({ db });
    const elsewhere = openWorkspace({ db });
    try {
      await ingestFolder(workspace, writeTinyDocs());
      const chat = Chat.start(workspace, { name: 'doomed' });
      await events(chat.ask('How do I rotate an API key?'));
      const removed = chat.session;
      expect(await removeSession(elsewhere, removed.id)).toBe(true);
      const turn = await events(chat.ask('does it expire?'));
      expect(turn[0]).toMatchObject({ type: 'start', removedSession: { id: removed.id, name: 'doomed' }, ordinal: 1 });
      expect(turn.at(-1)).toMatchObject({ type: 'done', status: 'answered' });
      expect(chat.session.id).not.toBe(removed.id);
      expect(chat.planned).toBe(false);
      expect((await sessionTurns(workspace, chat.session.id)).map((t) => t.question)).toEqual(['does it expire?']);
      // The next question stays in the new session, unmarked.
      expect((await events(chat.ask('how long do they last?')))[0]).not.toHaveProperty('removedSession');
      expect(await sessionTurns(workspace, chat.session.id)).toHaveLength(2);
    } finally {
      await elsewhere.close();
      await workspace.close();
    }
  });
});
