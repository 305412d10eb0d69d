// The first stage of an ingest: make sure the index fits this embedder and chunker
// (or start a new one), list the folder's stored documents, and walk the folder
// deciding per file what it is: unchanged (same size and mtime, not listed), a file
// skipped before and unchanged since (counted again, not read), or work to read.
// A plan whose globs would empty the folder's index, or most of it, while adding
// nothing is named by globRemoval, for the run to ask before it writes anything.

import type { Db } from '../store/db.js';
import { clearIndex, listDocuments, listSkippedFiles, type SkippedFile, type StoredDocuments } from '../store/documents.js';
import { assertSamePrefixes, earlierOfflineMessage, embedderMismatchHint, getFingerprint, isEarlierOfflineEmbedder, keywordTextVersion, readerVersionOf, setFingerprint } from '../store/meta.js';
import { createVectorTable, hasVectorTable } from '../store/vectors.js';
import type { Embedder } from '../providers/types.js';
import { INDEX_TEXT_VERSION } from '../text/symbols.js';
import { UserError } from '../util/errors.js';
import type { ChunkerSettings } from './chunk.js';
import { keywordsOutdated, rewriteKeywordIndex } from './keywords.js';
import { loadFileTools } from './prepare.js';
import { READER_VERSION } from './reader.js';
import { countSkipped, dataVersion, type IngestRun } from './run.js';
import { askedBy, walk, type FoundFile, type SkipReason } from './walk.js';

export interface IngestPlan {
  /** The folder's documents as stored before this ingest. */
  stored: StoredDocuments;
  /** Which stored documents still have their file (1); the others are removed at the end. */
  seen: Uint8Array;
  /**
   * Files read and skipped before (binary, unparseable, no text): one that has not
   * changed is counted as skipped again without being read; the record of a file that
   * is gone, or was read again, is brought up to date at the end.
   */
  skippedBefore: Map<string, SkippedFile>;
  /** Paths of skippedBefore that the walk found again. */
  skippedFound: Set<string>;
  /** Files skipped for what they hold in this run, remembered at the end. */
  skippedNow: Map<string, SkippedFile>;
  /** Files to read: new or changed (size or mtime), every file with `checksum` or `reread`, and those skipped before that changed. */
  work: FoundFile[];
  /** The folder was last read in full by an earlier reader (reader.ts): every file is read and chunked again. */
  reread: boolean;
  /** Stored documents whose files are there but left out by the include and exclude globs: the run removes them. */
  leftOut: string[];
}

export async function planIngest(run: IngestRun): Promise<IngestPlan> {
  const { db, options, root, summary } = run;
  await prepareIndex(run);
  // data_version is read before the listing: a commit landing between the two then
  // shows as a changed version at the lock, never as one the listing is taken to include.
  const versionBefore = run.lock.taken ? undefined : dataVersion(db);
  const stored = listDocuments(db, root);
  if (versionBefore !== undefined) run.lock.listedBefore(stored, versionBefore);
  const seen = new Uint8Array(stored.count);
  // Not for files named on their own (`ingest <file>`): the folder's next whole ingest reads it again.
  const reread = !run.options.only && stored.count > 0 && (readerVersionOf(db, root) ?? 1) < READER_VERSION;
  if (reread) summary.reread = true;
  const readAll = options.checksum || reread;
  const skippedBefore = listSkippedFiles(db, root);
  const skippedFound = new Set<string>();
  // Unchanged files are counted here and not listed.
  const { found, leftOut } = walkWithGlobs(run, stored, (relative, size, mtimeMs) => {
    const at = stored.indexOf(relative);
    if (at === undefined) {
      const before = skippedBefore.get(relative);
      if (!before) return true;
      skippedFound.add(relative);
      if (readAll || before.size !== size || before.mtimeMs !== mtimeMs) return true;
      countSkipped(summary, before.reason as SkipReason, [relative]);
      return false;
    }
    seen[at] = 1;
    if (readAll || stored.sizes[at] !== size || stored.mtimesMs[at] !== mtimeMs) return true;
    summary.files.unchanged++;
    return false;
  });
  for (const [reason, paths] of found.skippedPaths) countSkipped(summary, reason, paths);
  return { stored, seen, skippedBefore, skippedFound, skippedNow: new Map(), work: found.files, reread, leftOut };
}

/**
 * Walks the run's folder with its globs and files, `select` deciding which files are
 * listed; also gives the stored documents whose files the globs leave out.
 */
function walkWithGlobs(run: IngestRun, stored: StoredDocuments, select: (relative: string, size: number, mtimeMs: number) => boolean): { found: ReturnType<typeof walk>; leftOut: string[] } {
  const { options, root } = run;
  const leftOut: string[] = [];
  const found = walk(root, {
    include: options.include,
    exclude: options.exclude,
    only: options.only,
    maxFileBytes: options.maxFileBytes,
    select,
    excluded: (relative) => {
      if (stored.indexOf(relative) !== undefined) leftOut.push(relative);
    },
  });
  return { found, leftOut };
}

/**
 * What the globs of a rebuild (`reindex`) would leave out of the folder's documents,
 * looked at by the rebuild's caller before anything of it is written (the index is
 * cleared before the plan's own walk): a walk that reads nothing and writes nothing.
 * Undefined when the run has no globs, or they leave out too few to ask about (globRemoval).
 */
export function rebuildRemoval(run: IngestRun): GlobRemoval | undefined {
  const { db, options, root } = run;
  if (!options.reindex || (!options.include?.length && !options.exclude?.length) || !getFingerprint(db)) return undefined;
  const stored = listDocuments(db, root);
  if (stored.count === 0) return undefined;
  const seen = new Uint8Array(stored.count);
  // A stored file is seen; a new one is what the rebuild would add.
  const { found, leftOut } = walkWithGlobs(run, stored, (relative) => {
    const at = stored.indexOf(relative);
    if (at === undefined) return true;
    seen[at] = 1;
    return false;
  });
  return globRemoval(run, { stored, seen, leftOut, work: found.files });
}

/** More than this many documents, and more than half of those stored, left out by the globs of a run that adds none: asked about. */
export const MASS_REMOVAL_MIN = 10;

/** What a run's globs would remove from the index, asked about before the run writes anything (see globRemoval). */
export interface GlobRemoval {
  /** The folder, as its documents are stored. */
  root: string;
  /** Documents stored for the folder (for a run given files or subfolders, those among them). */
  stored: number;
  /** Of those, the ones whose files are there but the include and exclude globs leave out. */
  leftOut: number;
  /** Of those stored, the ones the run would keep. */
  remaining: number;
  /** A few of the paths left out, relative to the folder. */
  examples: string[];
}

/**
 * What the globs would remove when a run adds no file and its globs leave out
 * every stored document it would not otherwise keep (the folder's index would be
 * empty), or more than half of the stored documents and more than MASS_REMOVAL_MIN:
 * far more likely a mistyped glob (`--include '*.mdd'`) than a wish to empty the
 * index. Undefined for any other run, including one that removes documents whose
 * files are gone, which is what an ingest is for.
 */
export function globRemoval(run: IngestRun, plan: Pick<IngestPlan, 'stored' | 'seen' | 'leftOut' | 'work'>): GlobRemoval | undefined {
  const { stored, seen, leftOut, work } = plan;
  if (leftOut.length === 0) return undefined;
  if (work.some((file) => stored.indexOf(file.relative) === undefined)) return undefined;
  const asked = run.options.only ? askedBy(run.options.only) : undefined;
  let inScope = 0;
  let remaining = 0;
  for (let i = 0; i < stored.count; i++) {
    if (asked && !asked(stored.paths[i]!)) continue;
    inScope++;
    if (seen[i]) remaining++;
  }
  const most = leftOut.length * 2 > inScope && leftOut.length > MASS_REMOVAL_MIN;
  if (remaining > 0 && !most) return undefined;
  return { root: run.root, stored: inScope, leftOut: leftOut.length, remaining, examples: [...leftOut].sort().slice(0, 3) };
}

/** What the globs leave out, in words: "all 12 documents", "24 of the 30 documents", "the only document". */
export function leftOutWords({ leftOut, stored }: GlobRemoval): string {
  if (leftOut !== stored) return `${leftOut} of the ${stored} documents`;
  return stored === 1 ? 'the only document' : `all ${stored} documents`;
}

/** A run refused because its globs would remove documents (globRemoval) and removing them was not confirmed; nothing was written. */
export class RemovalRefused extends UserError {
  readonly removal: GlobRemoval;

  constructor(removal: GlobRemoval) {
    const { leftOut, root } = removal;
    super(`--include/--exclude leave out ${leftOutWords(removal)} stored for ${root} and add none: this ingest would remove ${leftOut === 1 ? 'it' : `those ${leftOut}`} from the index. Nothing was written.`, {
      hint: `Check the globs (read as in .gitignore; left out: ${removal.examples.join(', ')}${leftOut > removal.examples.length ? ', ...' : ''}), or add --yes to remove ${leftOut === 1 ? 'it' : 'them'}.`,
      exitCode: 2,
    });
    this.name = 'RemovalRefused';
    this.removal = removal;
  }
}

/**
 * Checks the index against the embedder and chunker, starting a new one (taking
 * the lock) when there is none or `reindex` asks for it, and rewrites a keyword
 * index written in an older text version.
 */
async function prepareIndex(run: IngestRun): Promise<void> {
  const { db, embedder, options } = run;
  // A remote model's dimension is learnt from the server only when a new index
  // needs it; an existing index records it.
  const fingerprint = getFingerprint(db);
  if (embedder.dimensions === 0 && (!fingerprint || options.reindex || fingerprint.embedder !== embedder.id)) {
    await embedder.resolveDimensions?.(options.signal);
  }
  if (!fingerprint || options.reindex) await run.lock.take();
  if (checkFingerprint(db, embedder, options.chunker, options.reindex ?? false) === 'rewrite-keywords') {
    rewriteKeywordIndex(db, (await loadFileTools()).indexText, () => keywordsOutdated(db));
  }
}

/**
 * Checks that the index was built with this embedder and chunker, or starts a new one;
 * says whether its keyword index is in an older text version and must be rewritten.
 */
function checkFingerprint(db: Db, embedder: Embedder, chunker: ChunkerSettings, reindex: boolean): 'ok' | 'rewrite-keywords' {
  const fingerprint = getFingerprint(db);
  if (fingerprint && reindex) clearIndex(db);
  else if (fingerprint) {
    const sameEmbedder = fingerprint.embedder === embedder.id && (embedder.dimensions === 0 || fingerprint.dimensions === embedder.dimensions);
    const sameChunker = fingerprint.chunker.size === chunker.size && fingerprint.chunker.overlap === chunker.overlap;
    if (!sameEmbedder) {
      throw new UserError(
        isEarlierOfflineEmbedder(fingerprint.embedder, embedder.id)
          ? earlierOfflineMessage(fingerprint.embedder, embedder.id)
          : `This database was built with the embedder ${fingerprint.embedder} (${fingerprint.dimensions} dimensions); ${embedder.id} (${embedder.dimensions}) is configured now.`,
        { hint: embedderMismatchHint(fingerprint.embedder, embedder.id), exitCode: 2 },
      );
    }
    assertSamePrefixes(fingerprint, embedder.prefixes);
    if (!sameChunker) {
      throw new UserError(
        `This database was chunked with size ${fingerprint.chunker.size} and overlap ${fingerprint.chunker.overlap}; size ${chunker.size} and overlap ${chunker.overlap} are configured now.`,
        { hint: 'Rebuild the index with `ragline ingest <folder> --reindex`, or set chunk.size and chunk.overlap back.', exitCode: 2 },
      );
    }
    return keywordTextVersion(fingerprint) < INDEX_TEXT_VERSION ? 'rewrite-keywords' : 'ok';
  }
  db.transaction(() => {
    if (!hasVectorTable(db)) createVectorTable(db, embedder.dimensions);
    const prefixes = embedder.prefixes && { query: embedder.prefixes.query, document: embedder.prefixes.document };
    setFingerprint(db, { embedder: embedder.id, dimensions: embedder.dimensions, chunker: { ...chunker }, text: INDEX_TEXT_VERSION, ...(prefixes ? { prefixes } : {}) });
  }).immediate();
  return 'ok';
}
