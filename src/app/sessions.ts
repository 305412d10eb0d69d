// Stored chat sessions: list, find, show, rename, remove, export, fork, and the
// judgments of their turns (which documents answer a question) that
// `eval --from-sessions` and `replay --rerun` use. Returns data; the CLI and the
// MCP server render it. Every operation goes through the workspace's SessionStore,
// so it runs on an SQLite file and on Postgres (where a user has their own sessions).

import { parseCitations } from '../chat/citations.js';
import type { Topic } from '../domain/index.js';
import { requireSessionTasks, type SessionTask } from '../eval/sessions.js';
import { formatLocation } from '../retrieve/search.js';
import type { TermShare } from '../retrieve/term-stats.js';
import { resolveDocumentName, type JudgmentChange, type RelevantInput, type TurnJudgment } from '../store/judgments.js';
import { noSessionError, type ForkedSession, type SessionInfo, type SessionListing, type StoredTurn, type StoredTurnChunk } from '../store/sessions.js';
import { UserError } from '../util/errors.js';
import { oneLine, sanitizeForTerminal } from '../util/sanitize.js';
import { toJson } from '../util/json.js';
import type { Workspace } from './workspace.js';

/** Every session, most recently active first (on Postgres: the user's own). */
export async function listSessions(workspace: Workspace): Promise<SessionListing[]> {
  return (await workspace.sessions()).list();
}

/** The session with this id or name (`last`: the most recently active), if any. */
export async function findSession(workspace: Workspace, ref: string): Promise<SessionInfo | undefined> {
  return (await workspace.sessions()).find(ref);
}

/** As findSession; a UserError (exit 2) naming the sessions there are when there is none. */
export async function requireSession(workspace: Workspace, ref: string): Promise<SessionInfo> {
  const session = await findSession(workspace, ref);
  if (!session) throw noSessionError(ref);
  return session;
}

export async function getSession(workspace: Workspace, id: string): Promise<SessionInfo | undefined> {
  return (await workspace.sessions()).get(id);
}

export async function createSession(workspace: Workspace, options: { name?: string } = {}): Promise<SessionInfo> {
  return (await workspace.sessions()).create(options);
}

/** A session's turns, oldest first. */
export async function sessionTurns(workspace: Workspace, sessionId: string): Promise<StoredTurn[]> {
  return (await workspace.sessions()).turns(sessionId);
}

/** The topics the next turn of `sessionId` starts from (what `/topics` and `sessions show` list). */
export async function latestTopics(workspace: Workspace, sessionId: string): Promise<Topic[]> {
  return (await workspace.sessions()).latestTopics(sessionId);
}

/** How specific each indexed term is: the share of chunks that hold it (topics are ranked by it); undefined on Postgres. */
export async function termShares(workspace: Workspace): Promise<TermShare | undefined> {
  return (await (await workspace.sessions()).index([])).termShare;
}

/** Tells whether a document path is in the index (for "not indexed" marks). */
export async function indexedPaths(workspace: Workspace): Promise<(documentPath: string) => boolean> {
  const { names } = await (await workspace.sessions()).index([]);
  return (documentPath) => names.find(documentPath).length > 0;
}

export interface SessionDetails {
  session: SessionInfo;
  /** The session it was forked from, if it still exists. */
  parent?: SessionInfo;
  topics: Topic[];
  turns: StoredTurn[];
  /** By turn id. */
  judgments: Map<number, TurnJudgment>;
}

/** A session with its turns, topics, judgments and the session it was forked from. */
export async function showSession(workspace: Workspace, ref: string): Promise<SessionDetails> {
  const store = await workspace.sessions();
  const session = await requireSession(workspace, ref);
  const turns = await store.turns(session.id);
  const parent = session.parentSessionId ? await store.get(session.parentSessionId) : undefined;
  return { session, parent, topics: await store.latestTopics(session.id), turns, judgments: await store.judgments(session.id) };
}

/** Names (or renames) a session; returns it before and after. */
export async function renameSession(workspace: Workspace, ref: string, name: string): Promise<{ before: SessionInfo; after: SessionInfo }> {
  const before = await requireSession(workspace, ref);
  return { before, after: await (await workspace.sessions()).rename(before.id, name) };
}

/** Removes a session with its turns and retrieval rows (forks keep their own copies). */
export async function removeSession(workspace: Workspace, sessionId: string): Promise<boolean> {
  return (await workspace.sessions()).remove(sessionId);
}

/** A new session with the finished turns 1..`atTurn` of `ref` (`fork.unfinished` names those left out). */
export async function forkSession(workspace: Workspace, ref: string, atTurn: number, name?: string): Promise<{ source: SessionInfo; fork: ForkedSession }> {
  const source = await requireSession(workspace, ref);
  return { source, fork: await (await workspace.sessions()).fork(source.id, atTurn, name) };
}

/** The chunks a turn retrieved, best first. */
export async function turnChunks(workspace: Workspace, turnId: number): Promise<StoredTurnChunk[]> {
  return (await workspace.sessions()).turnChunks(turnId);
}

/** The whole trail, as stored: turns with their retrieved chunks, as JSON text. JSON escapes control characters. */
export async function exportSessionJson(workspace: Workspace, session: SessionInfo): Promise<string> {
  const store = await workspace.sessions();
  const judgments = await store.judgments(session.id);
  const turns = [];
  for (const turn of await store.turns(session.id)) turns.push({ ...turn, chunks: await store.turnChunks(turn.id), judgment: judgments.get(turn.id) ?? null });
  return toJson({ format: 'ragline-session-v1', exportedAt: new Date().toISOString(), session, turns }, 2) + '\n';
}

/** The judged turns as eval tasks, and the judged turns left out (they name no relevant document); a session without judged turns is a UserError (exit 2). */
export async function exportSessionTasks(workspace: Workspace, session: SessionInfo): Promise<{ tasks: SessionTask[]; unscored: { session: string; turn: number }[] }> {
  const found = await requireSessionTasks(await workspace.sessions(), [session], { named: true });
  return { tasks: found.tasks, unscored: found.unscored };
}

/** A readable transcript. Text is sanitised (it may be printed to a terminal) and kept otherwise as written. */
export async function exportSessionMarkdown(workspace: Workspace, session: SessionInfo): Promise<string> {
  const store = await workspace.sessions();
  const clean = (text: string) => sanitizeForTerminal(text).trim();
  const inline = (text: string) => oneLine(text, 10_000).replace(/`/g, 'ʼ');
  const lines: string[] = [`# Session ${inline(session.name ?? session.id)}`, ''];
  lines.push(`- id: ${session.id}`, `- created: ${session.createdAt}`);
  if (session.parentSessionId) lines.push(`- forked from: ${session.parentSessionId} at turn ${session.parentTurn}`);
  const turns = await store.turns(session.id);
  lines.push(`- turns: ${turns.length}`, '');
  for (const turn of turns) {
    lines.push(`## Turn ${turn.ordinal}`, '');
    lines.push(`**Question:** ${inline(turn.question)}`, '');
    if (turn.standaloneQuery !== null) {
      const why = turn.rewriteReason ? `: ${inline(turn.rewriteReason)}` : '';
      lines.push(`**Searched as:** ${inline(turn.standaloneQuery)} _(${turn.rewriteDecision ?? 'skipped'}${why})_`, '');
    }
    const chunks = await store.turnChunks(turn.id);
    if (chunks.length > 0) {
      lines.push('**Sources:**', '');
      for (const chunk of chunks) {
        lines.push(`${chunk.rank}. \`${inline(formatLocation(chunk))}\`${chunk.heading ? ` — ${inline(chunk.heading)}` : ''} (score ${chunk.score.toFixed(4)})`);
      }
      lines.push('');
    }
    if (turn.status !== 'answered') lines.push(`**Status:** ${turn.status}${turn.error ? ` — ${inline(turn.error)}` : ''}`, '');
    if (turn.answer) lines.push('**Answer:**', '', clean(turn.answer), '');
  }
  return lines.join('\n');
}

export interface JudgeInput {
  /** Documents that answer the question: paths as ingested, file paths (against `cwd`), or file names. */
  relevant?: string[];
  /** Nothing the turn retrieved was useful. */
  none?: boolean;
  /** Remove the turn's judgment. */
  clear?: boolean;
  cwd: string;
}

export interface JudgeResult {
  session: SessionInfo;
  ordinal: number;
  /** null when it was cleared. */
  judgment: TurnJudgment | null;
  /** Named documents that are not in the index (kept). */
  notIndexed: string[];
}

/** Sets (or clears) the whole judgment of turn `ordinal` of `ref`. */
export async function judgeSessionTurn(workspace: Workspace, ref: string, ordinal: number, input: JudgeInput): Promise<JudgeResult> {
  const store = await workspace.sessions();
  const session = await requireSession(workspace, ref);
  const turnId = await store.turnId(session, ordinal);
  if (input.clear) {
    await store.clearJudgment(turnId);
    return { session, ordinal, judgment: null, notIndexed: [] };
  }
  const bestRank = new Map<string, number>();
  const { names } = await store.index([]);
  for (const chunk of await store.turnChunks(turnId)) if (!bestRank.has(chunk.documentPath)) bestRank.set(chunk.documentPath, chunk.rank);
  const notIndexed: string[] = [];
  const add: RelevantInput[] = [];
  for (const name of input.relevant ?? []) {
    const asked = documentNameAsTyped(name);
    if (asked === '') {
      throw new UserError('--relevant was given an empty document name.', { hint: 'Name each document: a path as ingested (guides/auth.md), a file path, or a file name.', exitCode: 2 });
    }
    const resolved = resolveDocumentName(names, asked, input.cwd);
    // Two names of one document (guides/keys.md, ./guides/keys.md, keys) are one judgment.
    if (add.some((doc) => doc.documentPath === resolved.documentPath)) continue;
    if (!resolved.indexed) notIndexed.push(resolved.documentPath);
    const rank = input.none ? undefined : bestRank.get(resolved.documentPath);
    add.push(rank === undefined ? { documentPath: resolved.documentPath, source: 'expected' } : { documentPath: resolved.documentPath, source: 'retrieved', chunkRank: rank });
  }
  const judgment = await store.judge(turnId, { replace: true, add, noneUseful: Boolean(input.none) });
  return { session, ordinal, judgment, notIndexed };
}

/**
 * A document name as a person typed it, without the quotes a shell would have taken
 * off (`/expect "my notes.md"`, `--relevant ''`): what is left may be empty.
 */
function documentNameAsTyped(name: string): string {
  let text = name.trim();
  while (text.length >= 2 && (text[0] === '"' || text[0] === "'") && text.at(-1) === text[0]) text = text.slice(1, -1).trim();
  return text;
}

export type QuickJudgment = 'good' | 'bad' | 'expect';

/** What a quick judgment of the last turn recorded, or why nothing was. */
export type QuickJudgmentResult = { error: string } | { ordinal: number; judgment: TurnJudgment; notes: string[] };

/**
 * The chat's judgments of the last turn of `sessionId`: `good [N...]` (retrieved
 * chunks N were relevant; no number: the chunks the answer cited), `bad` (nothing
 * retrieved was useful) and `expect <document>` (a document that should have been
 * found).
 */
export async function judgeLastTurn(workspace: Workspace, sessionId: string, command: QuickJudgment, arg: string, cwd: string): Promise<QuickJudgmentResult> {
  const store = await workspace.sessions();
  const turn = (await store.turns(sessionId)).at(-1);
  if (!turn) return { error: 'Nothing to judge yet: ask a question first.' };
  const chunks = await store.turnChunks(turn.id);
  let change: JudgmentChange;
  const notes: string[] = [];
  if (command === 'good') {
    if (chunks.length === 0) return { error: `Turn ${turn.ordinal} retrieved no chunks. Name a document that should have been found with /expect <document>.` };
    let numbers: number[];
    if (arg === '') {
      numbers = parseCitations(turn.answer ?? '').filter((n) => n <= chunks.length);
      if (numbers.length === 0) return { error: `The answer to turn ${turn.ordinal} cites no chunk: give their numbers, e.g. /good 1 3.` };
    } else {
      numbers = arg.split(/[\s,]+/).filter(Boolean).map(Number);
      if (numbers.some((n) => !Number.isInteger(n) || n < 1 || n > chunks.length)) return { error: `Give chunk numbers from 1 to ${chunks.length}, e.g. /good 1 3.` };
    }
    const add: RelevantInput[] = [];
    for (const n of [...new Set(numbers)].sort((a, b) => a - b)) {
      const chunk = chunks[n - 1]!;
      if (!add.some((doc) => doc.documentPath === chunk.documentPath)) add.push({ documentPath: chunk.documentPath, source: 'retrieved', chunkRank: chunk.rank });
    }
    change = { add, noneUseful: false };
  } else if (command === 'bad') {
    if (arg !== '') return { error: 'Usage: /bad (then /expect <document> to name what should have been found)' };
    change = { noneUseful: true };
    notes.push('name what should have been found with /expect <document>');
  } else {
    const asked = documentNameAsTyped(arg);
    if (asked === '') return { error: 'Usage: /expect <document> (a path as ingested, a file path, or a file name, with or without its extension)' };
    const resolved = resolveDocumentName((await store.index([])).names, asked, cwd);
    const judged = (await store.judgments(sessionId)).get(turn.id);
    // Named again (by the same or another name of it): the judgment has it already, as it was recorded.
    if (judged?.relevant.some((doc) => doc.documentPath === resolved.documentPath)) {
      return { ordinal: turn.ordinal, judgment: judged, notes: [`${oneLine(resolved.documentPath, 100)} is in this judgment already: nothing added`] };
    }
    if (!resolved.indexed) notes.push(`${oneLine(resolved.documentPath, 100)} is not in the index: kept; eval reports it as not indexed`);
    change = { add: [{ documentPath: resolved.documentPath, source: 'expected' }] };
  }
  return { ordinal: turn.ordinal, judgment: await store.judge(turn.id, change), notes };
}
