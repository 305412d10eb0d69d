// A conversation with the documents: a chat in one session at a time, each turn a
// stream of typed events (rewrite, retrieval, token, error, done) that is stored
// as it runs. A new session is only planned until its first question is asked, so
// a chat that asks nothing leaves nothing behind.

import type { TurnEvent } from '../chat/events.js';
import type { Topic } from '../domain/index.js';
import { runTurn, type TurnContext, type TurnOptions } from '../chat/turn.js';
import { turnStoreOf } from '../chat/stages/state.js';
import type { TurnStore } from '../chat/stages/store.js';
import { findSession, isStored, loadTurns, noSessionError, planSession, requireSession, validSessionName, type ForkedSession, type SessionInfo, type StoredTurn } from '../store/sessions.js';
import { newPgSessionId } from '../store/postgres/sessions.js';
import { UserError } from '../util/errors.js';
import { checkAskable } from './limits.js';
import type { Workspace } from './workspace.js';

export interface ChatStart {
  /** Continue this session (id, name, or `last`); a UserError when there is none. */
  session?: string;
  /** Continue the most recent session, if there is one (else a new one). */
  continueLast?: boolean;
  /** The new session's name (when neither of the above). */
  name?: string;
  /**
   * Ask in the session of this name, kept by every chat started so: continued when
   * it exists, else planned (stored with its first question). One-off asks use
   * ASKS_SESSION, so they add one session, not one each.
   */
  rolling?: string;
}

/** The session `ragline ask` keeps its one-off questions in (those asked without --session). */
export const ASKS_SESSION = 'asks';

export class Chat {
  private context?: Promise<TurnContext>;

  private constructor(
    private readonly workspace: Workspace,
    /** The session the next question is asked in. */
    public session: SessionInfo,
    /** The session is planned, not stored yet (no question asked in it). */
    public planned: boolean,
    /** The name of the rolling session this chat asks in (ChatStart.rolling). */
    private readonly rolling?: string,
  ) {}

  /** A chat in a new session (planned), or in the session `start` names. */
  static start(workspace: Workspace, start: ChatStart = {}): Chat {
    if (start.session !== undefined) return new Chat(workspace, requireSession(workspace.db, start.session), false);
    if (start.rolling !== undefined) {
      const kept = findSession(workspace.db, start.rolling);
      return kept ? new Chat(workspace, kept, false, start.rolling) : new Chat(workspace, newSqliteSession(workspace, start.rolling), true, start.rolling);
    }
    if (start.continueLast) {
      const last = findSession(workspace.db, 'last');
      if (last) return new Chat(workspace, last, false);
    }
    return new Chat(workspace, newSqliteSession(workspace, start.name), true);
  }

  /**
   * Chat.start on either store: on Postgres the session named is looked up among the
   * user's own, and a new one is planned as on SQLite (stored with its first question).
   */
  static async open(workspace: Workspace, start: ChatStart = {}): Promise<Chat> {
    const postgres = workspace.postgres;
    if (!postgres) return Chat.start(workspace, start);
    const sessions = await workspace.sessions();
    if (start.session !== undefined || start.continueLast) {
      const found = await sessions.find(start.session ?? 'last');
      if (found) return new Chat(workspace, found, false);
      if (start.session !== undefined) {
        const owner = await postgres.owner();
        throw new UserError(`No session "${start.session}" of ${owner}.`, { hint: 'Sessions are per user on Postgres: start one without --session.', exitCode: 2 });
      }
    }
    if (start.rolling !== undefined) {
      const kept = await sessions.find(start.rolling);
      return kept ? new Chat(workspace, kept, false, start.rolling) : new Chat(workspace, await newSession(workspace, start.rolling), true, start.rolling);
    }
    return new Chat(workspace, await newSession(workspace, start.name), true);
  }

  /** Makes the providers and the retriever now (a UserError when the index was built with another embedder); asking does it otherwise. */
  async prepare(): Promise<void> {
    await this.turnContext();
  }

  /**
   * Asks `question` in the current session: the turn's events, as they happen. A
   * planned session is stored with the question. When the session was removed by
   * another process since, the question starts a new session, and its `start`
   * event names the one removed.
   */
  async *ask(question: string, options: TurnOptions = {}): AsyncGenerator<TurnEvent> {
    // Nothing is stored for it: an empty question was kept as a turn of small talk.
    checkAskable(question, 'question', 'Ask it in words, e.g. chat.ask("How do I rotate an API key?").');
    const turnContext = await this.turnContext();
    // Another chat stored the rolling session since this one planned it: ask in that one.
    const kept = this.planned && this.rolling !== undefined ? await (await this.workspace.sessions()).find(this.rolling) : undefined;
    if (kept) {
      this.session = kept;
      this.planned = false;
    }
    const removed = !this.planned && !(await this.isStored(this.session.id)) ? this.session : undefined;
    if (removed) await this.startNew();
    const context = { ...turnContext, sessionId: this.session.id, plannedSession: this.planned ? this.session : undefined };
    try {
      const events = runTurn(context, question, options);
      yield* removed ? markRemoved(events, removed) : events;
    } finally {
      if (this.planned && (await this.isStored(this.session.id))) this.planned = false;
    }
  }

  private async isStored(id: string): Promise<boolean> {
    const postgres = this.workspace.postgres;
    if (!postgres) return isStored(this.workspace.db, id);
    const { pgIsStored } = await import('../store/postgres/sessions.js');
    return pgIsStored(postgres, id);
  }

  /** Switches to a new (planned) session, optionally named; a UserError when the name is taken. */
  async startNew(name?: string): Promise<SessionInfo> {
    this.session = await newSession(this.workspace, name);
    this.planned = true;
    return this.session;
  }

  /** Switches to the session with this id, name, or `last`. */
  async switchTo(ref: string): Promise<SessionInfo> {
    const session = await (await this.workspace.sessions()).find(ref);
    if (!session) throw noSessionError(ref);
    this.session = session;
    this.planned = false;
    return this.session;
  }

  /** Switches to a new session holding the finished turns 1..`atTurn` of this one (`unfinished` names those left out). */
  async fork(atTurn: number): Promise<ForkedSession> {
    const { unfinished, ...fork } = await (await this.workspace.sessions()).fork(this.session.id, atTurn);
    this.session = fork;
    this.planned = false;
    return { ...fork, unfinished };
  }

  /** This session's turns, oldest first. */
  async turns(): Promise<StoredTurn[]> {
    return this.planned ? [] : (await this.workspace.sessions()).turns(this.session.id);
  }

  /** What this conversation is about: the topics its next turn starts from. */
  async topics(): Promise<Topic[]> {
    return this.planned ? [] : (await this.workspace.sessions()).latestTopics(this.session.id);
  }

  private turnContext(): Promise<TurnContext> {
    const context = (this.context ??= this.workspace.turnContext(this.session.id));
    context.catch(() => {
      if (this.context === context) this.context = undefined;
    });
    return context;
  }
}

/** A turn's events, its `start` naming the session removed before it. */
async function* markRemoved(events: AsyncGenerator<TurnEvent>, removed: SessionInfo): AsyncGenerator<TurnEvent> {
  for await (const event of events) yield event.type === 'start' ? { ...event, removedSession: { id: removed.id, name: removed.name } } : event;
}

/** A new planned session; a UserError when `name` is taken. */
async function newSession(workspace: Workspace, name?: string): Promise<SessionInfo> {
  if (!workspace.postgres) return newSqliteSession(workspace, name);
  if (name && (await (await workspace.sessions()).find(name))) throw nameInUse(name);
  const at = new Date().toISOString();
  return { id: newPgSessionId(), name: name === undefined ? null : validSessionName(name), createdAt: at, updatedAt: at, parentSessionId: null, parentTurn: null };
}

function newSqliteSession(workspace: Workspace, name?: string): SessionInfo {
  if (name && findSession(workspace.db, name)) throw nameInUse(name);
  return planSession(workspace.db, { name });
}

function nameInUse(name: string): UserError {
  return new UserError(`A session named "${name}" exists already.`, { hint: `Continue it with --session ${name}, or pick another name.`, exitCode: 2 });
}

/**
 * Runs one turn as askIn does, storing nothing: its history is read as usual, but no
 * question, trail or session is written. For a search on a database this process
 * cannot write (read-only for its user), which answers as the CLI's `search` does.
 * `sessionId` may name no stored session (the turn then has no history).
 */
export function askWithoutStoring(context: TurnContext, sessionId: string, question: string, options: TurnOptions = {}): AsyncGenerator<TurnEvent> {
  const store = turnStoreOf(context);
  const unstored: TurnStore = {
    ...store,
    startTurn: async () => {
      const last = context.db ? loadTurns(context.db, sessionId).at(-1) : undefined;
      return { id: 0, ordinal: (last?.ordinal ?? 0) + 1, createdAt: new Date().toISOString() };
    },
    finishTurn: async (_turnId, input) => input.timings,
  };
  return runTurn({ ...context, sessionId, store: unstored, plannedSession: undefined }, question, options);
}

/** Runs one turn in `sessionId` with `context` (made by Workspace.turnContext, for callers that switch sessions per call). */
export function askIn(context: TurnContext, sessionId: string, question: string, options: TurnOptions = {}): AsyncGenerator<TurnEvent> {
  return runTurn({ ...context, sessionId }, question, options);
}
