// Re-runs a stored session's rewrites and retrievals with the current
// configuration and diffs them against what was recorded. Each turn's rewrite sees
// the history as it stood at that turn (the earlier turns' questions, stored
// standalone queries and stored answers, the topics stored on the previous turn,
// the running summary the turn saw), so only the rewriter, its prompt, the gate
// policy and the index can make a difference. A judged turn also says, for each
// document judged relevant, whether it was in the top k then and is now. Nothing
// is written here: see save.ts.

import type { Config } from '../config/index.js';
import type { ChatMessage, RewritePolicy, TokenUsage } from '../domain/index.js';
import { loadHistory, type TurnHistory } from '../chat/stages/history.js';
import type { TurnStore } from '../chat/stages/store.js';
import { retrieve } from '../chat/stages/retrieve.js';
import { gateAndRewrite } from '../chat/stages/rewrite.js';
import type { TermShare } from '../retrieve/term-stats.js';
import type { RetrievedChunk, Retriever } from '../retrieve/search.js';
import type { QueryRewriter } from '../rewrite/index.js';
import type { DocumentNaming } from '../store/document-names.js';
import type { StoredTurn } from '../store/sessions.js';
import type { RelevantSource, TurnJudgment } from '../store/judgments.js';
import { diffRetrieval, rewriteChanged, type ComparableChunk, type RetrievalDiff, type RewriteSide } from './diff.js';
import type { ChunkIndexState } from './index-state.js';
import type { ReplayChunk, ReplaySession, ReplayTurn } from './load.js';

export interface RerunContext {
  /** Where each turn's history is read (the session's store). */
  store: TurnStore;
  /** The index's document names (whether a judged document is still indexed) and how common a word is in it, where the store says. */
  index: { names: DocumentNaming; termShare?: TermShare };
  /** Searches the current index; only `search` and the embedder's id are used. */
  retriever: Pick<Retriever, 'search' | 'embedder'>;
  /** The rewriter of the current configuration (model or offline). */
  rewriter: QueryRewriter;
  config: Config;
}

export interface RerunOptions {
  /** Instead of config.rewrite.policy. */
  policy?: RewritePolicy;
  signal?: AbortSignal;
}

/** A chunk of the rerun's retrieval: what a turn stores, without the text. */
export interface RerunChunk extends ComparableChunk {
  chunkId: number;
  vectorRank?: number;
  vectorDistance?: number;
  keywordRank?: number;
  bm25?: number;
}

/** The rewrite as it comes out now. */
export interface RerunRewrite extends RewriteSide {
  model?: string;
  /** The provider error behind a `fallback`. */
  error?: string;
  /** Messages sent to the rewrite model, when one was asked. */
  prompt?: ChatMessage[];
  usage?: TokenUsage;
}

/** Where a document judged relevant to a turn stands in its top k, then and now. */
export interface JudgedDocument {
  documentPath: string;
  source: RelevantSource;
  /** Best rank of its chunks in the stored top k; null when none was there. */
  before: number | null;
  /** Best rank of its chunks in the rerun's top k; null when none is. */
  now: number | null;
  /** kept: in the top k then and now; entered: only now; left: only then; missing: neither time. */
  change: 'kept' | 'entered' | 'left' | 'missing';
  /** Whether the document is in today's index. */
  indexed: boolean;
}

/** A judged turn's documents checked against both retrievals. */
export interface JudgedCheck {
  /** The person said nothing the turn retrieved was useful. */
  noneUseful: boolean;
  documents: JudgedDocument[];
}

export interface RerunTurn {
  turnId: number;
  ordinal: number;
  question: string;
  /** Status of the original turn. */
  status: StoredTurn['status'];
  /** The k the original turn retrieved with, used again. */
  k: number;
  /** The question as asked, searched beside a rewritten query and fused with this weight (retrieval.rawWeight), as a live turn does. */
  fusedWith?: { query: string; weight: number };
  /** The stored rewrite; null when the turn never got that far. */
  before: RewriteSide | null;
  after: RerunRewrite;
  rewriteChanged: boolean;
  /** The chunks as stored, each with where it stands in today's index. */
  oldChunks: ReplayChunk[];
  newChunks: RerunChunk[];
  retrieval: RetrievalDiff<ReplayChunk, RerunChunk>;
  /** For a judged turn: its judged documents in the top k then and now. */
  judged?: JudgedCheck;
}

export interface RerunSummary {
  turns: number;
  /** Ordinals of the turns whose rewrite changed (query or decision). */
  rewritesChanged: number[];
  /** Ordinals of the turns whose ranked top k changed (entered, left or moved). */
  retrievalsChanged: number[];
  /** Mean of |old ∩ new| / k over turns that retrieved on either side; null when none did. */
  meanOverlap: number | null;
  /** Stored chunks by where they stand in today's index (each turn's chunks counted). */
  staleChunks: { removed: number; documentChanged: number };
  /** Judged turns, their judged documents, and how many of those were in the top k then and are now. */
  judged: { turns: number; documents: number; foundBefore: number; foundNow: number };
  /** In-process time of the rerun, milliseconds. */
  ms: number;
}

export interface RerunReport {
  sessionId: string;
  sessionName: string | null;
  rewriter: string;
  policy: RewritePolicy;
  embedder: string;
  turns: RerunTurn[];
  summary: RerunSummary;
}

/** Re-runs the rewrite and retrieval of every turn in `replay` (one turn, if it was loaded with `turn`). */
export async function rerunSession(context: RerunContext, replay: ReplaySession, options: RerunOptions = {}): Promise<RerunReport> {
  const started = performance.now();
  const policy = options.policy ?? context.config.rewrite.policy;
  const turns: RerunTurn[] = [];
  for (const turn of replay.turns) {
    turns.push(await rerunTurn(context, replay.session.id, turn, policy, options.signal));
  }
  return {
    sessionId: replay.session.id,
    sessionName: replay.session.name,
    rewriter: context.rewriter.id,
    policy,
    embedder: context.retriever.embedder.id,
    turns,
    summary: summarize(turns, performance.now() - started),
  };
}

async function rerunTurn(
  context: RerunContext,
  sessionId: string,
  turn: ReplayTurn,
  policy: RewritePolicy,
  signal?: AbortSignal,
): Promise<RerunTurn> {
  const { config } = context;
  const history = await historyAt(context.store, sessionId, turn, config);
  const rewrite = await gateAndRewrite(context.rewriter, { question: turn.question, history, config, policy, signal, termShare: context.index.termShare });
  const { outcome } = rewrite;
  const after: RerunRewrite = {
    standaloneQuery: rewrite.standaloneQuery,
    decision: outcome.decision,
    reason: outcome.reason,
    model: rewrite.model,
    ...(outcome.error === undefined ? {} : { error: outcome.error }),
    ...(outcome.prompt === undefined ? {} : { prompt: outcome.prompt }),
    ...(outcome.usage === undefined ? {} : { usage: outcome.usage }),
  };
  const before: RewriteSide | null =
    turn.standaloneQuery === null
      ? null
      : { standaloneQuery: turn.standaloneQuery, decision: turn.rewriteDecision ?? 'skipped', reason: turn.rewriteReason ?? '' };

  const k = turn.k ?? config.retrieval.k;
  const found = after.decision === 'small_talk' ? undefined : await retrieve(context.retriever, turn.question, rewrite, k, config, signal);
  const newChunks = (found?.chunks ?? []).map(withoutText);
  const judged = turn.judgment ? checkJudged(turn.judgment, turn.chunks, newChunks, (documentPath) => context.index.names.find(documentPath).length > 0) : undefined;
  return {
    turnId: turn.id,
    ordinal: turn.ordinal,
    question: turn.question,
    status: turn.status,
    k,
    ...(found?.settings.secondary ? { fusedWith: found.settings.secondary } : {}),
    before,
    after,
    rewriteChanged: rewriteChanged(before, after),
    oldChunks: turn.chunks,
    newChunks,
    retrieval: diffRetrieval(turn.chunks, newChunks, k),
    ...(judged ? { judged } : {}),
  };
}

/**
 * Each judged document's best rank in the old and the new top k; pure. A judged
 * document whose stored chunks are indexed under another name now (`indexedAs`) is
 * looked for in the new top k under that name.
 */
export function checkJudged(
  judgment: Pick<TurnJudgment, 'noneUseful' | 'relevant'>,
  oldChunks: readonly { documentPath: string; rank: number; indexedAs?: string }[],
  newChunks: readonly { documentPath: string; rank: number }[],
  indexed: (documentPath: string) => boolean,
): JudgedCheck {
  const best = (chunks: readonly { documentPath: string; rank: number }[], documentPath: string): number | null => {
    const ranks = chunks.filter((chunk) => chunk.documentPath === documentPath).map((chunk) => chunk.rank);
    return ranks.length ? Math.min(...ranks) : null;
  };
  const renamed = new Map(oldChunks.filter((chunk) => chunk.indexedAs !== undefined).map((chunk) => [chunk.documentPath, chunk.indexedAs!]));
  const documents = judgment.relevant.map((doc): JudgedDocument => {
    const current = renamed.get(doc.documentPath) ?? doc.documentPath;
    const before = best(oldChunks, doc.documentPath);
    const now = best(newChunks, current);
    const change = before !== null ? (now !== null ? 'kept' : 'left') : now !== null ? 'entered' : 'missing';
    return { documentPath: doc.documentPath, source: doc.source, before, now, change, indexed: indexed(current) };
  });
  return { noneUseful: judgment.noneUseful, documents };
}

/**
 * The history turn `turn` saw: the chat's history stage (earlier exchanges
 * within the token budget, topics stored on the previous turn), with the running
 * summary the turn itself stored when it covers the same turns (the loader would
 * otherwise recompute it offline, and replay never calls a model for a summary).
 */
async function historyAt(store: TurnStore, sessionId: string, turn: ReplayTurn, config: Config): Promise<TurnHistory> {
  const history = await loadHistory(store, sessionId, turn.ordinal, { tokenBudget: config.history.tokenBudget });
  if (turn.summary && turn.summaryThrough !== null && turn.summaryThrough === history.summaryThrough) {
    return { ...history, summary: turn.summary };
  }
  return history;
}

function withoutText(chunk: RetrievedChunk): RerunChunk {
  return {
    chunkId: chunk.chunkId,
    documentPath: chunk.documentPath,
    heading: chunk.heading,
    startLine: chunk.startLine,
    endLine: chunk.endLine,
    locator: chunk.locator,
    textHash: chunk.textHash,
    rank: chunk.rank,
    score: chunk.score,
    ...(chunk.vectorRank === undefined ? {} : { vectorRank: chunk.vectorRank }),
    ...(chunk.vectorDistance === undefined ? {} : { vectorDistance: chunk.vectorDistance }),
    ...(chunk.keywordRank === undefined ? {} : { keywordRank: chunk.keywordRank }),
    ...(chunk.bm25 === undefined ? {} : { bm25: chunk.bm25 }),
  };
}

/** The summary line of a rerun; pure. */
export function summarize(turns: RerunTurn[], ms: number): RerunSummary {
  const overlaps = turns.map((turn) => turn.retrieval.overlap).filter((value): value is number => value !== null);
  const states: ChunkIndexState[] = turns.flatMap((turn) => turn.oldChunks.map((chunk) => chunk.indexState));
  const judgedDocs = turns.filter((turn) => turn.judged).map((turn) => turn.judged!.documents);
  return {
    turns: turns.length,
    rewritesChanged: turns.filter((turn) => turn.rewriteChanged).map((turn) => turn.ordinal),
    retrievalsChanged: turns.filter((turn) => turn.retrieval.changed).map((turn) => turn.ordinal),
    meanOverlap: overlaps.length === 0 ? null : overlaps.reduce((sum, value) => sum + value, 0) / overlaps.length,
    staleChunks: {
      removed: states.filter((state) => state === 'removed').length,
      documentChanged: states.filter((state) => state === 'document_changed').length,
    },
    judged: {
      turns: judgedDocs.length,
      documents: judgedDocs.flat().length,
      foundBefore: judgedDocs.flat().filter((doc) => doc.before !== null).length,
      foundNow: judgedDocs.flat().filter((doc) => doc.now !== null).length,
    },
    ms,
  };
}
