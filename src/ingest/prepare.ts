// The second stage: read one file of the plan's work, and load and chunk it into a
// pending file, or say why it is not written (skipped, or the same bytes as stored).

import buffer from 'node:buffer';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import type { DocumentWriter } from '../store/documents.js';
import { hexDigest } from '../util/hash.js';
import { readRegularFile } from '../util/regular-file.js';
import { documentExtension, isGzipped } from './kinds.js';
import type { RelatedFile } from './load.js';
import type { IngestPlan } from './plan.js';
import { countDecoding, countSkipped, type IngestRun, type PendingFile } from './run.js';
import type { FoundFile } from './walk.js';

/** What reading, chunking and indexing a file takes. */
export type FileTools = Pick<typeof import('./load.js'), 'loadDocument' | 'looksBinary'> &
  Pick<typeof import('./chunk.js'), 'chunkDocument'> &
  Pick<typeof import('./index-text.js'), 'indexText'>;

/** Loaded with the first file that needs them: a re-ingest that finds nothing changed never compiles them. */
export async function loadFileTools(): Promise<FileTools> {
  const [{ loadDocument, looksBinary }, { chunkDocument }, { indexText }] = await Promise.all([
    import('./load.js'),
    import('./chunk.js'),
    import('./index-text.js'),
  ]);
  return { loadDocument, looksBinary, chunkDocument, indexText };
}

/** What became of a file: chunks to write, a stored document whose bytes did not change, or skipped (already counted). */
export type Prepared = { kind: 'write'; pending: PendingFile } | { kind: 'unchanged'; documentId: number } | { kind: 'skipped' };

/**
 * Reads `file` and chunks it. Skips are counted in the run's summary; one for what
 * the file holds is also remembered in the plan, and the document it was is then
 * no longer seen (it is removed at the end).
 */
export async function prepareFile(run: IngestRun, plan: IngestPlan, writer: DocumentWriter, tools: FileTools, file: FoundFile): Promise<Prepared> {
  const { options, summary } = run;
  const { loadDocument, looksBinary, chunkDocument, indexText } = tools;
  const at = plan.stored.indexOf(file.relative);
  const previousId = at === undefined ? undefined : plan.stored.ids[at]!;
  const read = readDocumentFile(file.absolute, options.maxFileBytes);
  if (typeof read === 'string') {
    countSkipped(summary, read, [file.relative]);
    return { kind: 'skipped' };
  }
  // A .gz document is read decompressed, as large as a file may be; its hash is of the file's own bytes.
  const bytes = isGzipped(file.relative) ? gunzipped(read, options.maxFileBytes) : read;
  if (bytes === 'too-large') {
    countSkipped(summary, 'too-large', [file.relative]);
    return { kind: 'skipped' };
  }
  const related = bytes === 'parse-error' ? [] : await relatedFiles(file, bytes, options.maxFileBytes);
  /** What the document is made of: its file's bytes, and those of the files it brings in. */
  const hashOf = (): string => hexDigest('sha256', related.length > 0 ? Buffer.concat([read, ...related.flatMap((file) => [Buffer.from([0]), file.bytes])]) : read);
  // A new file is hashed once it is known to be written: one that is skipped
  // (empty, binary) needs no hash.
  let contentHash: string | undefined;
  if (previousId !== undefined && !plan.reread) {
    contentHash = hashOf();
    if (writer.contentHash(previousId) === contentHash) return { kind: 'unchanged', documentId: previousId };
  }
  /** Skipped for what it holds: remembered, and a document it was is removed at the end. */
  const skipForContent = (reason: 'binary' | 'parse-error' | 'empty' | 'redirect'): Prepared => {
    countSkipped(summary, reason, [file.relative]);
    plan.skippedNow.set(file.relative, { size: file.size, mtimeMs: file.mtimeMs, reason });
    if (at !== undefined) plan.seen[at] = 0;
    return { kind: 'skipped' };
  };
  if (bytes === 'parse-error') return skipForContent('parse-error'); // not gzip after all, or cut short
  if (file.kind !== 'pdf' && looksBinary(bytes)) return skipForContent('binary');
  let loaded;
  try {
    loaded = await loadDocument(file.absolute, bytes, related);
  } catch {
    return skipForContent('parse-error');
  }
  if (loaded.redirect) return skipForContent('redirect');
  if (loaded.invalidUtf8) countDecoding(summary, 'invalidUtf8', file.relative);
  if (loaded.windows1252) countDecoding(summary, 'windows1252', file.relative);
  const chunks = chunkDocument(loaded, options.chunker);
  if (chunks.length === 0) return skipForContent('empty');
  const pending: PendingFile = {
    file,
    contentHash: contentHash ?? hashOf(),
    title: loaded.title,
    isNew: previousId === undefined,
    chunks: chunks.map((chunk) => {
      const indexed = indexText(loaded.title, chunk.headingPath, chunk.text);
      return {
        heading: indexed.heading,
        text: chunk.text,
        startLine: chunk.startLine,
        endLine: chunk.endLine,
        locator: chunk.locator,
        textHash: indexed.hash,
        fts: indexed.fts,
        embedText: indexed.embed,
      };
    }),
  };
  return { kind: 'write', pending };
}

/**
 * The files a reStructuredText page brings in, found from the page's real folder as
 * Sphinx finds them (a page read through a link to the Help folder still finds
 * ../../Modules): the .cmake file of a CMake module page, named as the page at most
 * three folders up (allowedModuleTarget), and the .txt or .rst fragments of its
 * `include` directives, near the page (allowedInclude; `/include/X.txt` is looked
 * for in the page's folder and the three above it). A file missing or unreadable is
 * left out: the page is then read without it.
 */
async function relatedFiles(file: FoundFile, bytes: Buffer, maxBytes: number): Promise<RelatedFile[]> {
  if (documentExtension(file.relative) !== 'rst') return [];
  const { allowedModuleTarget, cmakeModuleTarget } = await import('./cmake-module.js');
  const { allowedInclude, rstIncludes } = await import('./rst-include.js');
  const text = bytes.toString('utf8');
  const module = cmakeModuleTarget(text.slice(0, 4096)); // the directive is in the first lines
  const includes = rstIncludes(text).map((include) => include.target);
  const targets = [...new Set([...(module && allowedModuleTarget(module, file.relative) ? [module] : []), ...includes.filter(allowedInclude)])];
  if (targets.length === 0) return [];
  let folder: string;
  try {
    folder = fs.realpathSync(path.dirname(file.absolute));
  } catch {
    return [];
  }
  const found: RelatedFile[] = [];
  for (const target of targets) {
    const candidates = target.startsWith('/')
      ? [0, 1, 2, 3].map((up) => path.join(folder, ...Array<string>(up).fill('..'), target.slice(1)))
      : [path.resolve(folder, target)];
    for (const candidate of candidates) {
      const read = readDocumentFile(candidate, maxBytes);
      if (typeof read === 'string') continue;
      found.push({ target, bytes: read });
      break;
    }
  }
  return found;
}

/** The decompressed bytes of a gzip file, or why not: larger than `maxBytes` decompressed, or not gzip. */
function gunzipped(compressed: Buffer, maxBytes: number): Buffer | 'too-large' | 'parse-error' {
  try {
    return zlib.gunzipSync(compressed, { maxOutputLength: Math.max(1, Math.min(maxBytes, buffer.constants.MAX_LENGTH)) });
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' ? 'too-large' : 'parse-error';
  }
}

/**
 * The bytes of the file at `absolute` if it is still a regular file, checked on
 * the opened descriptor (util/regular-file.ts): a FIFO or device put in its place
 * after the listing is never read, so it cannot hang the ingest (a blocked read
 * would not even let Ctrl-C through).
 */
function readDocumentFile(absolute: string, maxBytes: number): Buffer | 'unreadable' | 'not-a-file' | 'too-large' {
  try {
    const read = readRegularFile(absolute, maxBytes);
    return Buffer.isBuffer(read) ? read : read.reason;
  } catch {
    return 'unreadable';
  }
}
