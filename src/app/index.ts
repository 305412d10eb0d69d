// The application layer: a workspace (database, settings, providers, retriever)
// and the operations every command needs, returning typed data or event streams.
// src/cli, src/mcp and the library entry (src/index.ts) use ragline through it.

export { openWorkspace, resolveSettings, Workspace, type Settings, type WorkspaceOptions } from './workspace.js';
export {
  ingestFolder,
  ingestPaths,
  MASS_REMOVAL_MIN,
  planIngestPaths,
  RemovalRefused,
  type GlobRemoval,
  type IngestFolderOptions,
  type IngestPathsOptions,
  type IngestPathsPlan,
  type IngestPathsSummary,
  type IngestTarget,
  type IngestTotal,
  type PathIngested,
} from './ingest.js';
export { forgetFolder, indexedFolder } from './forget.js';
export { search, type SearchResult } from './search.js';
export { ASKS_SESSION, askIn, Chat, type ChatStart } from './chat.js';
export {
  createSession,
  exportSessionJson,
  exportSessionMarkdown,
  exportSessionTasks,
  findSession,
  forkSession,
  getSession,
  indexedPaths,
  judgeLastTurn,
  judgeSessionTurn,
  latestTopics,
  listSessions,
  removeSession,
  renameSession,
  requireSession,
  sessionTurns,
  showSession,
  termShares,
  turnChunks,
  type JudgeInput,
  type JudgeResult,
  type QuickJudgment,
  type QuickJudgmentResult,
  type SessionDetails,
} from './sessions.js';
export { replay, rerun, type RerunResult } from './replay.js';
export { EVAL_K, EVAL_VARIANTS, evaluate, parseTasks, sessionTasks, type EvalVariantName, type EvaluateOptions } from './eval.js';
export { applyRetention, prune } from './prune.js';
export { stats, statsOf, type Stats } from './stats.js';
export { DEFAULT_DOCTOR_TIMEOUT_MS, runDoctor, type Check, type CheckStatus, type DoctorFacts, type DoctorReport } from './doctor.js';
export { embedderInUse } from './settings.js';
export { listIndexedDocuments, readIndexedDocument, type DocumentRange, type DocumentText, type IndexedDocument } from './documents.js';

// The types the operations take and return.
export type { TurnEvent, StartEvent, RewriteEvent, RetrievalEvent, TokenEvent, ErrorEvent, DoneEvent, Citation } from '../chat/events.js';
export type { TurnContext, TurnOptions } from '../chat/turn.js';
export type { Config, ResolvedConfig, EmbedderChoice } from '../config/index.js';
export type * from '../domain/index.js';
export type { ChatModel, Embedder } from '../providers/types.js';
export type { QueryRewriter, RewriteOutcome, RewriteRequest } from '../rewrite/index.js';
export type { EvalReport, EvalTask, MetricsRow } from '../eval/run.js';
export type { SessionTask, SessionTasks } from '../eval/sessions.js';
export type { IngestProgress, IngestSummary } from '../ingest/ingest.js';
export type { RetrievalSettings, RetrievedChunk, Retriever } from '../retrieve/search.js';
export type { ReplaySession, RerunReport } from '../replay/index.js';
export type { PruneReport } from '../store/retention.js';
export type { IndexFingerprint } from '../store/meta.js';
export type { StoredFolder } from '../store/documents.js';
export type { TurnJudgment } from '../store/judgments.js';
export type { SessionInfo, SessionListing, StoredTurn, StoredTurnChunk } from '../store/sessions.js';
