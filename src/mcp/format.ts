// What the MCP tools return: a text an agent reads (content) and the same as JSON
// (structuredContent). Everything that comes from a document or a stored turn is
// sanitised as for a terminal: no escape sequences, control characters or bidi
// overrides reach the client.

import { EXTRACTIVE_LABEL } from '../chat/extractive.js';
import type { Citation, RewriteEvent } from '../chat/events.js';
import type { ChunkSpan } from '../domain/index.js';
import { formatLocation, type RetrievedChunk } from '../retrieve/search.js';
import type { ReplaySession } from '../replay/index.js';
import { describeIndexState } from '../replay/index.js';
import type { SessionInfo, SessionListing } from '../app/index.js';
import { oneLine, sanitizeForTerminal } from '../util/sanitize.js';
import { documentUri } from './documents.js';
import { stamp } from '../util/time.js';

const clean = (text: string) => sanitizeForTerminal(text);

export interface ChunkResult extends ChunkSpan {
  rank: number;
  /** `path:lines` (or `path:p.N` for a PDF page). */
  location: string;
  /** Opens the cited lines as an MCP resource. */
  uri: string;
  path: string;
  heading: string;
  score: number;
  text: string;
}

export interface RewriteResult {
  /** rewritten | skipped | fallback | small_talk */
  decision: string;
  reason: string;
  model?: string;
}

export function chunkResult(chunk: RetrievedChunk): ChunkResult {
  const path = clean(chunk.documentPath);
  return {
    rank: chunk.rank,
    location: clean(formatLocation(chunk)),
    uri: documentUri(chunk.documentPath, { from: chunk.startLine, to: chunk.endLine }),
    path,
    startLine: chunk.startLine,
    endLine: chunk.endLine,
    locator: chunk.locator,
    heading: clean(chunk.heading),
    score: Number(chunk.score.toFixed(6)),
    text: clean(chunk.text),
  };
}

/**
 * The rewrite as the turn stored it, so `replay` shows the same reason later. (A call
 * without a session is searched as written, "rewrite policy: never"; the session line
 * of the text says how to have follow-ups rewritten.)
 */
export function rewriteResult(event: RewriteEvent | undefined): RewriteResult {
  if (!event) return { decision: 'none', reason: 'the turn ended before the question was rewritten' };
  return { decision: event.decision, reason: clean(event.reason), ...(event.model ? { model: clean(event.model) } : {}) };
}

/** The lines that say which session a turn went to and how to follow up in it. */
function sessionLine(session: SessionInfo, ordinal: number, conversational: boolean): string {
  // A name read from the database, as any string from it, is shown as one safe line.
  const label = oneLine(session.name ?? session.id, 200);
  const follow = conversational ? '' : ` Pass session "${label}" to have follow-ups rewritten against this conversation.`;
  return `Session "${label}", turn ${ordinal}.${follow}`;
}

function rewriteLines(question: string, standaloneQuery: string, rewrite: RewriteResult): string[] {
  if (rewrite.decision === 'small_talk') return [`Not searched: small talk (${rewrite.reason}).`];
  const lines = [`Searched for: ${oneLine(standaloneQuery, 1000)}`];
  if (rewrite.decision === 'rewritten' && standaloneQuery !== question) {
    lines.push(`Rewritten from: ${oneLine(question, 1000)} (${rewrite.reason})`);
  } else {
    lines.push(`Not rewritten: ${rewrite.reason}${rewrite.decision === 'fallback' ? ' (the rewriter failed)' : ''}`);
  }
  return lines;
}

function chunkLines(chunks: ChunkResult[], withText: boolean): string[] {
  if (chunks.length === 0) return ['No chunks matched. If nothing is ingested yet, run `ragline ingest <folder>`.'];
  const lines = [`${chunks.length} chunk${chunks.length === 1 ? '' : 's'}, best first:`];
  for (const chunk of chunks) {
    lines.push('', `[${chunk.rank}] ${chunk.location}${chunk.heading ? ` · ${oneLine(chunk.heading, 200)}` : ''} · score ${chunk.score.toFixed(4)}`);
    lines.push(`    ${chunk.uri}`);
    if (withText) lines.push(chunk.text.trim());
  }
  return lines;
}

export interface TurnResult {
  /** False for a search on a database this process cannot write: answered, not kept as a turn. */
  stored: boolean;
  /** The session the turn went to (or, not stored, was read from); null when there was none to read. */
  session: { id: string; name: string | null } | null;
  /** The turn's number in its session (not stored: the number it would have had). */
  turn: number;
  question: string;
  standaloneQuery: string;
  rewrite: RewriteResult;
  chunks: ChunkResult[];
}

/** Said in place of the session line when a search was not stored. */
export const NOT_STORED =
  'Not stored: the database is read-only for this user, so this search was not kept as a turn (make the database file and its folder writable to keep them).';

export function searchText(result: TurnResult, session: SessionInfo | undefined, conversational: boolean): string {
  return [
    result.stored && session ? sessionLine(session, result.turn, conversational) : NOT_STORED,
    ...rewriteLines(result.question, result.standaloneQuery, result.rewrite),
    '',
    ...(result.rewrite.decision === 'small_talk' ? [] : chunkLines(result.chunks, true)),
  ].join('\n');
}

export interface AskResult extends TurnResult {
  answer: string;
  /** llm | extractive | small_talk */
  answerKind: string | null;
  citations: (Citation & { uri: string })[];
}

export function askText(result: AskResult, session: SessionInfo, conversational: boolean): string {
  const cited = result.citations.map((c) => `[${c.n}] ${c.location}  ${c.uri}`);
  return [
    sessionLine(session, result.turn, conversational),
    ...rewriteLines(result.question, result.standaloneQuery, result.rewrite),
    '',
    `Answer (${result.answerKind === 'llm' ? 'from the model' : result.answerKind === 'extractive' ? 'extractive: quoted from the documents, no model configured' : 'small talk'}):`,
    // The extractive answer's own first line says again what the heading above says.
    (result.answerKind === 'extractive' ? result.answer.replace(EXTRACTIVE_LABEL, '') : result.answer).trim(),
    ...(cited.length ? ['', 'Citations:', ...cited] : []),
    '',
    ...(result.rewrite.decision === 'small_talk' ? [] : chunkLines(result.chunks, false)),
  ].join('\n');
}

export function sessionsResult(sessions: SessionListing[]) {
  return sessions.map((s) => ({
    id: s.id,
    name: s.name === null ? null : clean(s.name),
    turns: s.turns,
    createdAt: s.createdAt,
    lastActive: s.lastActive,
    firstQuestion: s.firstQuestion === null ? null : oneLine(s.firstQuestion, 200),
  }));
}

export function sessionsText(sessions: ReturnType<typeof sessionsResult>, total: number): string {
  if (sessions.length === 0) return 'No sessions yet. Every search and ask is stored as a turn of a session.';
  const shown = total > sessions.length ? `The ${sessions.length} most recently active of ${total} sessions (raise limit for more):` : `${total} session${total === 1 ? '' : 's'}, most recently active first:`;
  return [
    shown,
    ...sessions.map(
      (s) => `${s.id}${s.name ? ` "${oneLine(s.name, 200)}"` : ''} · ${s.turns} turn${s.turns === 1 ? '' : 's'} · last active ${stamp(s.lastActive)}${s.firstQuestion ? ` · first: ${s.firstQuestion}` : ''}`,
    ),
  ].join('\n');
}

export function replayResult(replay: ReplaySession) {
  const { session } = replay;
  return {
    session: { id: session.id, name: session.name === null ? null : clean(session.name), createdAt: session.createdAt },
    turns: replay.turns.map((turn) => ({
      turn: turn.ordinal,
      createdAt: turn.createdAt,
      status: turn.status,
      question: clean(turn.question),
      standaloneQuery: turn.standaloneQuery === null ? null : clean(turn.standaloneQuery),
      rewrite: turn.rewriteDecision === null ? null : { decision: turn.rewriteDecision, reason: clean(turn.rewriteReason ?? '') },
      answerKind: turn.answerKind,
      answer: turn.answer === null ? null : clean(turn.answer),
      error: turn.error === null ? null : clean(turn.error),
      chunks: turn.chunks.map((chunk) => ({
        rank: chunk.rank,
        location: clean(formatLocation(chunk)),
        // Opens the document under the name it has now (its folder merged into another since, say).
        uri: documentUri(chunk.indexedAs ?? chunk.documentPath, { from: chunk.startLine, to: chunk.endLine }),
        heading: clean(chunk.heading),
        score: Number(chunk.score.toFixed(6)),
        /** current | document_changed | removed */
        indexState: chunk.indexState,
      })),
    })),
  };
}

export function replayText(result: ReturnType<typeof replayResult>): string {
  const { session } = result;
  const lines = [`Session ${session.id}${session.name ? ` "${oneLine(session.name, 200)}"` : ''} · ${result.turns.length} turn${result.turns.length === 1 ? '' : 's'}`];
  for (const turn of result.turns) {
    lines.push('', `Turn ${turn.turn} · ${turn.status} · ${stamp(turn.createdAt)}`, `Asked: ${oneLine(turn.question, 1000)}`);
    if (turn.standaloneQuery !== null && turn.rewrite?.decision !== 'small_talk') {
      const rewritten = turn.rewrite?.decision === 'rewritten' && turn.standaloneQuery !== turn.question;
      lines.push(`${rewritten ? 'Rewritten to' : 'Searched as asked'}: ${oneLine(turn.standaloneQuery, 1000)}${turn.rewrite ? ` (${turn.rewrite.decision}: ${oneLine(turn.rewrite.reason, 200)})` : ''}`);
    }
    for (const chunk of turn.chunks) {
      const note = describeIndexState(chunk.indexState);
      lines.push(`  [${chunk.rank}] ${chunk.location}${chunk.heading ? ` · ${oneLine(chunk.heading, 120)}` : ''} · score ${chunk.score.toFixed(4)}${note ? ` (${note})` : ''}`);
    }
    if (turn.answerKind === 'search') lines.push('Search only: no answer was asked for.');
    else if (turn.answer) lines.push(`Answer (${turn.answerKind ?? 'unknown'}): ${turn.answer.trim()}`);
    if (turn.error) lines.push(`Error: ${oneLine(turn.error, 500)}`);
  }
  return lines.join('\n');
}
