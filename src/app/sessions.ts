// Stored chat sessions: list, find, show, rename, remove, export, fork, and the
// judgments of their turns (which documents answer a question) that
// `eval --from-sessions` and `replay --rerun` use. Returns data; the CLI and the
// MCP server render it.

import { parseCitations } from '../chat/citations.js';
import type { Topic } from '../domain/index.js';
import { requireSessionTasks, type SessionTask } from '../eval/sessions.js';
import { formatLocation } from '../retrieve/search.js';
import { termShares as indexTermShares, type TermShare } from '../retrieve/term-stats.js';
import { indexedPathLookup } from '../store/inspect.js';
import {
  clearJudgment,
  judgeTurn,
  loadJudgments,
  requireTurnId,
  resolveDocumentName,
  type JudgmentChange,
  type RelevantInput,
  type TurnJudgment,
} from '../store/judgments.js';
import {
  createSession as storeCreateSession,
  findSession as storeFindSession,
  forkSession as storeForkSession,
  getSession as storeGetSession,
  latestTopics as storeLatestTopics,
  listSessions as storeListSessions,
  loadTurnChunks,
  loadTurns,
  removeSession as storeRemoveSession,
  renameSession as storeRenameSession,
  requireSession as storeRequireSession,
  type ForkedSession,
  type SessionInfo,
  type SessionListing,
  type StoredTurn,
  type StoredTurnChunk,
} from '../store/sessions.js';
import { UserError } from '../util/errors.js';
import { oneLine, sanitizeForTerminal } from '../util/sanitize.js';
import { toJson } from '../util/json.js';
import type { Workspace } from './workspace.js';

/** Every session, most recently active first. */
export function listSessions(workspace: Workspace): SessionListing[] {
  return storeListSessions(workspace.db);
}

/** The session with this id or name (`last`: the most recently active), if any. */
export function findSession(workspace: Workspace, ref: string): SessionInfo | undefined {
  return storeFindSession(workspace.db, ref);
}

/** As findSession; a UserError (exit 2) naming the sessions there are when there is none. */
export function requireSession(workspace: Workspace, ref: string): SessionInfo {
  return storeRequireSession(workspace.db, ref);
}

export function getSession(workspace: Workspace, id: string): SessionInfo | undefined {
  return storeGetSession(workspace.db, id);
}

export function createSession(workspace: Workspace, options: { name?: string } = {}): SessionInfo {
  return storeCreateSession(workspace.db, options);
}

/** A session's turns, oldest first. */
export function sessionTurns(workspace: Workspace, sessionId: string): StoredTurn[] {
  return loadTurns(workspace.db, sessionId);
}

/** The topics the next turn of `sessionId` starts from (what `/topics` and `sessions show` list). */
export function latestTopics(workspace: Workspace, sessionId: string): Topic[] {
  return storeLatestTopics(workspace.db, sessionId);
}

/** How specific each indexed term is: the share of chunks that hold it (topics are ranked by it). */
export function termShares(workspace: Workspace): TermShare {
  return indexTermShares(workspace.db);
}

/** Tells whether a document path is in the index (for "not indexed" marks). */
export function indexedPaths(workspace: Workspace): (documentPath: string) => boolean {
  return indexedPathLookup(workspace.db);
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
export function showSession(workspace: Workspace, ref: string): SessionDetails {
  const session = requireSession(workspace, ref);
  const turns = sessionTurns(workspace, session.id);
  const parent = session.parentSessionId ? getSession(workspace, session.parentSessionId) : undefined;
  return { session, parent, topics: latestTopics(workspace, session.id), turns, judgments: loadJudgments(workspace.db, session.id) };
}

/** Names (or renames) a session; returns it before and after. */
export function renameSession(workspace: Workspace, ref: string, name: string): { before: SessionInfo; after: SessionInfo } {
  const before = requireSession(workspace, ref);
  return { before, after: storeRenameSession(workspace.db, before.id, name) };
}

/** Removes a session with its turns and retrieval rows (forks keep their own copies). */
export function removeSession(workspace: Workspace, sessionId: string): boolean {
  return storeRemoveSession(workspace.db, sessionId);
}

/** A new session with the finished turns 1..`atTurn` of `ref` (`fork.unfinished` names those left out). */
export function forkSession(workspace: Workspace, ref: string, atTurn: number, name?: string): { source: SessionInfo; fork: ForkedSession } {
  const source = requireSession(workspace, ref);
  return { source, fork: storeForkSession(workspace.db, source.id, atTurn, name) };
}

/** A new session with the finished turns 1..`atTurn` of the session with this id. */
export function forkSessionById(workspace: Workspace, sessionId: string, atTurn: number): ForkedSession {
  return storeForkSession(workspace.db, sessionId, atTurn);
}

/** The chunks a turn retrieved, best first. */
export function turnChunks(workspace: Workspace, turnId: number): StoredTurnChunk[] {
  return loadTurnChunks(workspace.db, turnId);
}

/** The whole trail, as stored: turns with their retrieved chunks, as JSON text. JSON escapes control characters. */
export function exportSessionJson(workspace: Workspace, session: SessionInfo): string {
  const judgments = loadJudgments(workspace.db, session.id);
  const turns = sessionTurns(workspace, session.id).map((turn) => ({ ...turn, chunks: turnChunks(workspace, turn.id), judgment: judgments.get(turn.id) ?? null }));
  return toJson({ format: 'ragline-session-v1', exportedAt: new Date().toISOString(), session, turns }, 2) + '\n';
}

/** The judged turns as eval tasks, and the judged turns left out (they name no relevant document); a session without judged turns is a UserError (exit 2). */
export function exportSessionTasks(workspace: Workspace, session: SessionInfo): { tasks: SessionTask[]; unscored: { session: string; turn: number }[] } {
  const found = requireSessionTasks(workspace.db, [session], { named: true });
  return { tasks: found.tasks, unscored: found.unscored };
}

/** A readable transcript. Text is sanitised (it may be printed to a terminal) and kept otherwise as written. */
export function exportSessionMarkdown(workspace: Workspace, session: SessionInfo): string {
  const clean = (text: string) => sanitizeForTerminal(text).trim();
  const inline = (text: string) => oneLine(text, 10_000).replace(/`/g, 'ʼ');
  const lines: string[] = [`# Session ${inline(session.name ?? session.id)}`, ''];
  lines.push(`- id: ${session.id}`, `- created: ${session.createdAt}`);
  if (session.parentSessionId) lines.push(`- forked from: ${session.parentSessionId} at turn ${session.parentTurn}`);
  const turns = sessionTurns(workspace, session.id);
  lines.push(`- turns: ${turns.length}`, '');
  for (const turn of turns) {
    lines.push(`## Turn ${turn.ordinal}`, '');
    lines.push(`**Question:** ${inline(turn.question)}`, '');
    if (turn.standaloneQuery !== null) {
      const why = turn.rewriteReason ? `: ${inline(turn.rewriteReason)}` : '';
      lines.push(`**Searched as:** ${inline(turn.standaloneQuery)} _(${turn.rewriteDecision ?? 'skipped'}${why})_`, '');
    }
    const chunks = turnChunks(workspace, turn.id);
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
export function judgeSessionTurn(workspace: Workspace, ref: string, ordinal: number, input: JudgeInput): JudgeResult {
  const { db } = workspace;
  const session = requireSession(workspace, ref);
  const turnId = requireTurnId(db, session, ordinal);
  if (input.clear) {
    clearJudgment(db, turnId);
    return { session, ordinal, judgment: null, notIndexed: [] };
  }
  const bestRank = new Map<string, number>();
  for (const chunk of turnChunks(workspace, turnId)) if (!bestRank.has(chunk.documentPath)) bestRank.set(chunk.documentPath, chunk.rank);
  const notIndexed: string[] = [];
  const add: RelevantInput[] = [];
  for (const name of input.relevant ?? []) {
    const asked = documentNameAsTyped(name);
    if (asked === '') {
      throw new UserError('--relevant was given an empty document name.', { hint: 'Name each document: a path as ingested (guides/auth.md), a file path, or a file name.', exitCode: 2 });
    }
    const resolved = resolveDocumentName(db, asked, input.cwd);
    // Two names of one document (guides/keys.md, ./guides/keys.md, keys) are one judgment.
    if (add.some((doc) => doc.documentPath === resolved.documentPath)) continue;
    if (!resolved.indexed) notIndexed.push(resolved.documentPath);
    const rank = input.none ? undefined : bestRank.get(resolved.documentPath);
    add.push(rank === undefined ? { documentPath: resolved.documentPath, source: 'expected' } : { documentPath: resolved.documentPath, source: 'retrieved', chunkRank: rank });
  }
  const judgment = judgeTurn(db, turnId, { replace: true, add, noneUseful: Boolean(input.none) });
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
export function judgeLastTurn(workspace: Workspace, sessionId: string, command: QuickJudgment, arg: string, cwd: string): QuickJudgmentResult {
  const { db } = workspace;
  const turn = sessionTurns(workspace, sessionId).at(-1);
  if (!turn) return { error: 'Nothing to judge yet: ask a question first.' };
  const chunks = turnChunks(workspace, turn.id);
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
    const resolved = resolveDocumentName(db, asked, cwd);
    const judged = loadJudgments(db, sessionId).get(turn.id);
    // Named again (by the same or another name of it): the judgment has it already, as it was recorded.
    if (judged?.relevant.some((doc) => doc.documentPath === resolved.documentPath)) {
      return { ordinal: turn.ordinal, judgment: judged, notes: [`${oneLine(resolved.documentPath, 100)} is in this judgment already: nothing added`] };
    }
    if (!resolved.indexed) notes.push(`${oneLine(resolved.documentPath, 100)} is not in the index: kept; eval reports it as not indexed`);
    change = { add: [{ documentPath: resolved.documentPath, source: 'expected' }] };
  }
  return { ordinal: turn.ordinal, judgment: judgeTurn(db, turn.id, change), notes };
}
