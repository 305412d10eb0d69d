// The last stage: the writes. Each group of files in one transaction, each file
// inside it in its own savepoint: a crash loses at most the group being written,
// never leaves a half-written file, and costs one FTS5 segment per group instead
// of per file. Then, once every file is written, the documents whose files are
// gone (so a rename reuses the vectors of the old name), the record of skipped
// files, the keyword index's totals and the last-ingest record.

import type { DocumentWriter } from '../store/documents.js';
import { nestedCopies, updateSkippedFiles } from '../store/documents.js';
import { setLastIngest } from '../store/meta.js';
import { ABORTED, groupVectors, type EmbeddingGroup } from './embed.js';
import { keywordsDrifted, rewriteKeywordIndex } from './keywords.js';
import type { IngestPlan } from './plan.js';
import { loadFileTools } from './prepare.js';
import type { IngestRun } from './run.js';
import { askedBy, type FoundFile } from './walk.js';

/** Writes the group's files once its vectors are there; nothing if the run is aborted first. */
export async function commitGroup(run: IngestRun, writer: DocumentWriter, group: EmbeddingGroup): Promise<void> {
  const vectors = await groupVectors(group, run.options.signal);
  if (vectors === ABORTED) return;
  const { root, summary, progress } = run;
  await run.lock.take();
  writer.inTransaction(() => {
    for (const item of group.files) {
      const chunks = item.chunks.map(({ embedText, ...chunk }) => ({ ...chunk, vector: vectors.get(chunk.textHash)! }));
      writer.replaceDocument(
        {
          path: item.file.relative,
          root,
          kind: item.file.kind,
          title: item.title,
          contentHash: item.contentHash,
          size: item.file.size,
          mtimeMs: item.file.mtimeMs,
        },
        chunks,
      );
      if (item.isNew) summary.files.added++;
      else summary.files.changed++;
      summary.chunks.written += chunks.length;
      progress.chunksWritten += chunks.length;
    }
  });
}

/** A stored document whose file has a new size or mtime but the same bytes: only those are updated. */
export async function touchUnchanged(run: IngestRun, writer: DocumentWriter, documentId: number, file: FoundFile): Promise<void> {
  await run.lock.take();
  writer.touchDocument(documentId, file.size, file.mtimeMs);
  run.summary.files.unchanged++;
}

/**
 * After every file was written: removes the documents whose file is gone, brings the
 * record of skipped files up to date, and rewrites the keyword index if its totals drifted.
 */
export async function commitRemovals(run: IngestRun, writer: DocumentWriter, plan: IngestPlan): Promise<void> {
  const { db, root, summary, options } = run;
  const { stored, seen, skippedBefore, skippedFound, skippedNow } = plan;
  // With single files or folders named, only their documents can be gone: the others were not looked at.
  const asked = options.only ? askedBy(options.only) : undefined;
  const lookedAt = (path: string) => asked === undefined || asked(path);
  for (let i = 0; i < stored.count; i++) {
    if (seen[i] || !lookedAt(stored.paths[i]!)) continue;
    await run.lock.take();
    summary.chunks.removed += writer.deleteDocument(stored.ids[i]!);
    summary.files.removed++;
  }
  // A folder ingested on its own before, inside this one, is this one's now: its
  // documents that this ingest holds too are copies, and go.
  if (asked === undefined) {
    for (const copy of nestedCopies(db, root)) {
      await run.lock.take();
      summary.chunks.removed += writer.deleteDocument(copy);
      summary.files.merged = (summary.files.merged ?? 0) + 1;
    }
  }
  // Forget the skipped files that are gone and the ones read again and not skipped.
  const readAgain = new Set(plan.work.map((file) => file.relative));
  const forget = [...skippedBefore.keys()].filter((path) => (!skippedFound.has(path) && lookedAt(path)) || (readAgain.has(path) && !skippedNow.has(path)));
  if (skippedNow.size > 0 || forget.length > 0) {
    await run.lock.take();
    updateSkippedFiles(db, root, skippedNow, forget);
  }
  // The keyword index's totals still count the rows of every chunk replaced or
  // removed (see keywordsDrifted): past the bound they are written again, true.
  if (run.lock.taken && keywordsDrifted(db)) rewriteKeywordIndex(db, (await loadFileTools()).indexText, () => keywordsDrifted(db));
}

/** `stats` shows the last ingest that changed something. */
export function recordLastIngest(run: IngestRun): void {
  if (run.lock.taken) setLastIngest(run.db, run.summary);
}
