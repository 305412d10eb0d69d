// Ingest a folder into a workspace: the embedder the index needs (or, rebuilding,
// the configured one) and the chunker and size limit from the settings.

import fs from 'node:fs';
import path from 'node:path';
import { ingest, rebuildRemovalOf, RemovalRefused, type GlobRemoval, type IngestProgress, type IngestSummary } from '../ingest/ingest.js';
import { documentExtension, isGzipped, kindOf, READ_KINDS } from '../ingest/kinds.js';
import { asInGitignore, walk } from '../ingest/walk.js';
import { documentPathsByRoot, storedRoots } from '../store/documents.js';
import { assertNoIngestRunning, pendingRebuild, setLastIngest, setPendingRebuild } from '../store/meta.js';
import { UserError } from '../util/errors.js';
import { shellWord } from '../util/words.js';
import type { Workspace } from './workspace.js';

export { leftOutWords, MASS_REMOVAL_MIN, RemovalRefused, type GlobRemoval } from '../ingest/ingest.js';
export { READ_KINDS } from '../ingest/kinds.js';

export interface IngestFolderOptions {
  /** Only files matching these globs (relative to the folder). */
  include?: string[];
  /** Skip files matching these globs. */
  exclude?: string[];
  /**
   * Only these files of the folder (paths relative to it, not globs), and the whole of
   * the subfolders written with a trailing "/": they are added or updated (or their
   * document removed when they are gone or no longer indexed) and the folder's other
   * documents are kept as they are. Not with `reindex`, which rebuilds every folder.
   * `folderOfFile` and `folderOfFolder` say under which folder a path belongs.
   */
  only?: string[];
  /** Drop the index and rebuild it: this folder, then every other folder it held (sessions are kept). */
  reindex?: boolean;
  /** Hash every file, even when its size and modification time are unchanged. */
  checksum?: boolean;
  /**
   * Asked, before anything is written, when the globs would remove most or all of the
   * folder's stored documents while the ingest adds none (a mistyped `--include`):
   * every one it leaves out, or more than half and more than MASS_REMOVAL_MIN. True
   * goes on; without it, or on false, the ingest throws RemovalRefused (exit code 2)
   * with nothing written.
   */
  confirmRemoval?: (removal: GlobRemoval) => boolean | Promise<boolean>;
  /** Aborting stops the ingest; what was written is kept. */
  signal?: AbortSignal;
  onProgress?: (progress: IngestProgress) => void;
}

/**
 * Chunks, embeds and indexes `folder`; a second run only processes what changed. A
 * folder inside one already ingested is part of it: its files are that one's documents
 * (`folderOfFolder`), updated there and never indexed twice.
 */
export async function ingestFolder(workspace: Workspace, folder: string, options: IngestFolderOptions = {}): Promise<IngestSummary> {
  const { config } = workspace;
  if (options.only && options.reindex) throw new UserError('A rebuild (reindex) drops every folder\'s documents: it cannot be limited to some files.', { exitCode: 2 });
  if (!options.only) {
    const within = folderOfFolder(workspace, folder);
    if (within.relative !== undefined) {
      if (options.reindex) {
        throw new UserError(`--reindex rebuilds the whole index, of every folder; ${folder} is part of ${within.folder}, already ingested.`, {
          hint: `Give that folder (\`ragline ingest ${within.folder} --reindex\`), or this one without --reindex.`,
          exitCode: 2,
        });
      }
      return ingestFolder(workspace, within.folder, { ...options, only: [within.relative] });
    }
  }
  if (options.reindex) return rebuild(workspace, folder, options);
  return ingest({
    root: path.resolve(folder),
    db: workspace.db,
    embedder: await workspace.ingestEmbedder({ reindex: options.reindex }),
    chunker: config.chunk,
    // Globs are relative to the folder asked for: to a subfolder named whole, when that is all there is.
    include: options.only ? underSubfolder(options.only, options.include) : options.include,
    exclude: options.only ? underSubfolder(options.only, options.exclude) : options.exclude,
    only: options.only?.map((file) => file.split(path.sep).join('/')),
    maxFileBytes: config.ingest.maxFileBytes,
    reindex: options.reindex,
    checksum: options.checksum,
    confirmRemoval: options.confirmRemoval,
    signal: options.signal,
    onProgress: options.onProgress,
  });
}

/**
 * A file named on its own that no ingest reads (a README without an extension, a
 * .json file), as an error saying which files are read; undefined for one that is.
 * A gzipped one (`bc.info.gz`) copied to a name ending .txt would still be gzip: the
 * hint decompresses it (a .tar.gz is unpacked instead).
 */
export function unreadableFile(file: string): UserError | undefined {
  if (kindOf(file) !== undefined) return undefined;
  const name = path.basename(file);
  const hint = !isGzipped(file)
    ? `Copy it to a name with one of them (e.g. ${name}.txt) in a folder of documents and ingest that.`
    : documentExtension(file) === 'tar'
      ? `It is a compressed tar archive: unpack it (tar -xzf ${shellWord(file)}) and ingest the folder it holds.`
      : `It is compressed with gzip: decompress it to a text file in a folder of documents and ingest that, e.g. zcat ${shellWord(file)} > ${shellWord(`${name.slice(0, -'.gz'.length)}.txt`)}`;
  return new UserError(`${file} is not a kind of file ragline reads: ${READ_KINDS}, told by the extension.`, { hint, exitCode: 2 });
}

/**
 * The files an ingest of `folder` looks at (not hidden, not gitignored: as the walk
 * finds them; with `only`, those of them it names, as in IngestFolderOptions) counted
 * by type, the end of their name (`.info.gz`, `.png`; '' for a name without an
 * extension), most files first. What a folder holds, for saying so when none of its
 * files is of a kind ragline reads.
 */
export function fileTypesIn(folder: string, only?: readonly string[]): { type: string; files: number }[] {
  const types = new Map<string, number>();
  // Every file the walk would go on to check the kind of is left out by the glob, and told.
  walk(path.resolve(folder), {
    exclude: ['*'],
    only,
    maxFileBytes: Number.POSITIVE_INFINITY,
    excluded: (relative) => {
      const type = fileType(path.posix.basename(relative));
      types.set(type, (types.get(type) ?? 0) + 1);
    },
  });
  const withoutExtension = (type: string) => (type === '' ? 1 : 0); // last of as many files
  return [...types].map(([type, files]) => ({ type, files })).sort((a, b) => b.files - a.files || withoutExtension(a.type) - withoutExtension(b.type) || a.type.localeCompare(b.type));
}

/** `.info.gz` for `bc.info.gz`, `.gz` for `x.gz`, `.png`; '' without an extension. */
function fileType(name: string): string {
  const extension = documentExtension(name);
  if (!isGzipped(name)) return extension === undefined ? '' : `.${extension}`;
  return extension === undefined ? '.gz' : `.${extension}.gz`;
}

/**
 * A rebuild drops the whole index: `folder` is read again with the globs given, then
 * every other folder the index held with exactly the files it held (the globs it was
 * ingested with chose them). The list is kept in the database until each is done, so
 * a rebuild interrupted and run again still rebuilds them. A folder inside `folder` is
 * part of it now; one gone from the disk is reported, its documents dropped.
 */
async function rebuild(workspace: Workspace, folder: string, options: IngestFolderOptions): Promise<IngestSummary> {
  const { db, config } = workspace;
  assertNoIngestRunning(db);
  const held = documentPathsByRoot(db);
  for (const [root, paths] of Object.entries(pendingRebuild(db))) held.set(root, [...new Set([...(held.get(root) ?? []), ...paths])].sort());
  const embedder = await workspace.ingestEmbedder({ reindex: true });
  const base = { db, embedder, chunker: config.chunk, maxFileBytes: config.ingest.maxFileBytes, checksum: options.checksum, signal: options.signal, onProgress: options.onProgress };
  const root = path.resolve(folder);
  const real = fs.existsSync(root) ? fs.realpathSync(root) : root;
  const inside = (other: string) => [root, real].some((folder) => other === folder || other.startsWith(folder + path.sep));
  const others = [...held].filter(([other]) => !inside(other));
  const remember = (left: typeof others) => setPendingRebuild(db, Object.fromEntries(left));
  const first = { ...base, root, include: options.include, exclude: options.exclude, reindex: true };
  // Globs that would empty the folder are asked about before anything is written.
  const removal = rebuildRemovalOf(first);
  if (removal && !(await options.confirmRemoval?.(removal))) throw new RemovalRefused(removal);
  remember(others);
  const summary = await ingest(first);
  summary.others = [];
  for (const [index, [other, paths]] of others.entries()) {
    if (summary.interrupted || options.signal?.aborted) {
      summary.interrupted = true;
      summary.others.push({ root: other, state: 'pending', documents: paths.length });
      continue;
    }
    if (!fs.existsSync(other)) {
      summary.others.push({ root: other, state: 'missing', documents: paths.length });
    } else {
      const done = await ingest({ ...base, root: other, only: paths });
      summary.others.push({ root: other, state: done.interrupted ? 'pending' : 'rebuilt', documents: paths.length, summary: done });
      if (done.interrupted) {
        summary.interrupted = true;
        continue;
      }
    }
    remember(others.slice(index + 1));
  }
  // What `stats` shows as the last ingest is the rebuild, not its last folder.
  if (summary.others.length > 0) setLastIngest(db, summary);
  return summary;
}

/**
 * The folder a single file is ingested under: the deepest folder already ingested that
 * holds it (so `docs/sub/c.md` stays the document `sub/c.md` of `docs`, not a second
 * copy under `docs/sub`), else its own folder; with the file's path relative to it.
 */
export function folderOfFile(workspace: Workspace, file: string): { folder: string; relative: string } {
  const real = realPath(file);
  const folder = deepestHolder(storedRoots(workspace.db), real) ?? path.dirname(real);
  return { folder, relative: path.relative(folder, real) };
}

/**
 * The folder a folder is ingested under: the deepest folder already ingested that
 * holds it (so `docs/relnotes` after `docs` updates the documents `relnotes/...` of
 * `docs` instead of adding a second copy under `docs/relnotes`), with its path relative
 * to that folder ending in "/" (an `only` entry for the whole of it); else itself. A
 * folder ingested on its own before stays so (its documents are under it), and so does
 * one that the holder's ingest never reads (hidden, or in node_modules).
 */
export function folderOfFolder(workspace: Workspace, folder: string): { folder: string; relative?: string } {
  if (!fs.existsSync(folder)) return { folder: path.resolve(folder) }; // the ingest says it is missing
  const real = fs.realpathSync(path.resolve(folder));
  const stored = storedRoots(workspace.db);
  if (stored.includes(real)) return { folder: real };
  const within = (candidate: string) => {
    const holder = deepestHolder(stored, candidate);
    return holder === undefined ? undefined : { holder, parts: path.relative(holder, candidate).split(path.sep) };
  };
  const unread = (parts: string[]) => parts.some((part) => part.startsWith('.') || part === 'node_modules');
  const linked = within(realPath(folder));
  const target = within(real);
  // A symlinked folder is read where it is linked ("docs/linked" is the documents
  // linked/... of docs), else where it points; but one linked to another folder of
  // the same folder is read where that one is, as the holder's ingest reads it
  // ("docs/alias" -> "docs/real" is the documents real/... of docs).
  const sameHolder = linked !== undefined && target !== undefined && linked.holder === target.holder && !unread(target.parts);
  for (const found of sameHolder ? [target] : [linked, target]) {
    if (found === undefined) continue;
    if (unread(found.parts)) return { folder: real };
    return { folder: found.holder, relative: `${found.parts.join('/')}/` };
  }
  return { folder: real };
}

/** The deepest of `roots` that holds `target` (inside it, not it). */
function deepestHolder(roots: readonly string[], target: string): string | undefined {
  return roots.filter((root) => target.startsWith(root.endsWith(path.sep) ? root : root + path.sep)).sort((a, b) => b.length - a.length)[0];
}

function realPath(file: string): string {
  // The folder is resolved, not the file: a symlinked file is a document of the folder it is linked in.
  return path.join(fs.realpathSync(path.dirname(path.resolve(file))), path.basename(file));
}

/**
 * Globs given for one subfolder (`only` = ["relnotes/"]), made relative to the folder it
 * is ingested under: the subfolder's path put before them, its glob characters escaped
 * ("a(b)/", "x{1,2}/" are names), and a leading "./" read as the subfolder itself.
 */
function underSubfolder(only: readonly string[], globs: string[] | undefined): string[] | undefined {
  if (!globs?.length || only.length !== 1 || !only[0]!.endsWith('/')) return undefined;
  const prefix = only[0]!.replace(/[\\()[\]{}*?!+@|^$]/g, '\\$&');
  return globs.map((glob) => {
    const read = asInGitignore(glob);
    const negated = read.startsWith('!');
    return `${negated ? '!' : ''}${prefix}${negated ? read.slice(1) : read}`;
  });
}
