// Ingest a folder into a workspace: the embedder the index needs (or, rebuilding,
// the configured one) and the chunker and size limit from the settings.

import path from 'node:path';
import { ingest, type IngestProgress, type IngestSummary } from '../ingest/ingest.js';
import type { Workspace } from './workspace.js';

export interface IngestFolderOptions {
  /** Only files matching these globs (relative to the folder). */
  include?: string[];
  /** Skip files matching these globs. */
  exclude?: string[];
  /**
   * Only these files of the folder (paths relative to it, not globs): they are added
   * or updated and the folder's other documents are kept as they are.
   */
  only?: string[];
  /** Drop the index and rebuild it (sessions are kept). */
  reindex?: boolean;
  /** Hash every file, even when its size and modification time are unchanged. */
  checksum?: boolean;
  /** Aborting stops the ingest; what was written is kept. */
  signal?: AbortSignal;
  onProgress?: (progress: IngestProgress) => void;
}

/** Chunks, embeds and indexes `folder`; a second run only processes what changed. */
export async function ingestFolder(workspace: Workspace, folder: string, options: IngestFolderOptions = {}): Promise<IngestSummary> {
  const { config } = workspace;
  const summary = await ingest({
    root: path.resolve(folder),
    db: workspace.db,
    embedder: await workspace.ingestEmbedder({ reindex: options.reindex }),
    chunker: config.chunk,
    include: options.only ? options.only.map(literalGlob) : options.include,
    exclude: options.only ? undefined : options.exclude,
    keepUnseen: options.only !== undefined,
    maxFileBytes: config.ingest.maxFileBytes,
    reindex: options.reindex,
    checksum: options.checksum,
    signal: options.signal,
    onProgress: options.onProgress,
  });
  return options.only ? withoutOtherFiles(summary, options.only) : summary;
}

/**
 * The summary of single files of a folder: the folder's other files are not counted
 * as left out by a filter (they were not asked about); the given ones are, when a
 * .gitignore left them out.
 */
function withoutOtherFiles(summary: IngestSummary, only: string[]): IngestSummary {
  const { excluded, ...skipped } = summary.files.skipped;
  const { excluded: _paths, ...skippedPaths } = summary.skippedPaths;
  if (!excluded) return summary;
  const f = summary.files;
  const read = f.added + f.changed + f.unchanged + Object.values(skipped).reduce((sum, n) => sum + (n ?? 0), 0);
  const left = Math.max(0, only.length - read);
  return {
    ...summary,
    files: { ...f, skipped: left > 0 ? { ...skipped, excluded: left } : skipped },
    skippedPaths: left > 0 ? { ...skippedPaths, excluded: only.slice(0, left) } : skippedPaths,
  };
}

/** A path as a glob that matches only itself (`[draft].md` is not a character class). */
function literalGlob(relative: string): string {
  return relative.split(path.sep).join('/').replace(/[\\*?[\]{}()!+@#]/g, '\\$&');
}
