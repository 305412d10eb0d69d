// Replay: a stored session shown as it happened, and re-run (rewrites and
// retrievals, with the current configuration and index) as a diff. Returns data;
// src/cli/commands/replay.ts renders it.

export { chunkKey, describeIndexState, IndexStateLookup, type ChunkIndexState, type ChunkPlace } from './index-state.js';
export { loadReplay, storedK, type ReplayChunk, type ReplaySession, type ReplayTurn } from './load.js';
export { diffRetrieval, rewriteChanged, type ComparableChunk, type RankMove, type RetrievalDiff, type RewriteSide } from './diff.js';
export {
  checkJudged,
  rerunSession,
  summarize,
  type JudgedCheck,
  type JudgedDocument,
  type RerunChunk,
  type RerunContext,
  type RerunOptions,
  type RerunReport,
  type RerunRewrite,
  type RerunSummary,
  type RerunTurn,
} from './rerun.js';
export { COPIED_ANSWER, rerunName, rerunOrigin, saveRerun, type RerunOrigin, type SavedRerun } from './save.js';
