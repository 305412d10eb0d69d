// Ingest a folder into a workspace: the embedder the index needs (or, rebuilding,
// the configured one) and the chunker and size limit from the settings.

import fs from 'node:fs';
import path from 'node:path';
import { emptySummary, waitForOtherIngest } from '../ingest/run.js';
export { DEFAULT_INGEST_WAIT_MS, formatWait } from '../ingest/run.js';
import { ingest, rebuildRemovalOf, RemovalRefused, type GlobRemoval, type IngestProgress, type IngestSummary, type IngestWait } from '../ingest/ingest.js';
import { documentExtension, isGzipped, kindOf, READ_KINDS } from '../ingest/kinds.js';
import { looksBinary } from '../ingest/load.js';
import { asInGitignore, walk, type SkipReason } from '../ingest/walk.js';
import { documentPathsByRoot, storedRoots } from '../store/documents.js';
import { pendingRebuild, setLastIngest, setPendingRebuild } from '../store/meta.js';
import { UserError } from '../util/errors.js';
import { fewOf, shellWord } from '../util/words.js';
import { notOnPostgres, type Workspace } from './workspace.js';

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
  /**
   * How long to wait for another ingest writing to the database (of any folder: one
   * ingest writes at a time), saying so once through `onWait`; 0 refuses at once.
   * Default DEFAULT_INGEST_WAIT_MS (10 minutes).
   */
  wait?: IngestWait;
}

/**
 * Chunks, embeds and indexes `folder`; a second run only processes what changed. A
 * folder inside one already ingested is part of it: its files are that one's documents
 * (`folderOfFolder`), updated there and never indexed twice.
 */
export async function ingestFolder(workspace: Workspace, folder: string, options: IngestFolderOptions = {}): Promise<IngestSummary> {
  if (workspace.postgres) return ingestFolderIntoPostgres(workspace, folder, options);
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
      return ingestFolder(workspace, within.folder, { ...options, only: within.relative });
    }
  }
  if (options.reindex) return rebuild(workspace, folder, options);
  return ingest({
    ...folderOptions(workspace, folder, options),
    db: workspace.db,
    embedder: await workspace.ingestEmbedder({ reindex: options.reindex }),
    reindex: options.reindex,
    confirmRemoval: options.confirmRemoval,
    wait: options.wait,
  });
}

/** What an ingest of `folder` is given on either store: the folder, the chunker, the file selection and limits, progress. */
function folderOptions(workspace: Workspace, folder: string, options: IngestFolderOptions) {
  const { config } = workspace;
  return {
    root: path.resolve(folder),
    chunker: config.chunk,
    // Globs are relative to the folder asked for: to a subfolder named whole (at each of its places), when that is all there is.
    include: options.only ? underSubfolder(options.only, options.include) : options.include,
    exclude: options.only ? underSubfolder(options.only, options.exclude) : options.exclude,
    only: options.only?.map((file) => file.split(path.sep).join('/')),
    maxFileBytes: config.ingest.maxFileBytes,
    checksum: options.checksum,
    signal: options.signal,
    onProgress: options.onProgress,
  };
}

/** ingestFolder on Postgres: the folder (or the files of it in `only`) in one transaction. */
async function ingestFolderIntoPostgres(workspace: Workspace, folder: string, options: IngestFolderOptions): Promise<IngestSummary> {
  if (options.reindex) throw notOnPostgres('A rebuild (--reindex)');
  const { ingestIntoPostgres } = await import('../ingest/postgres.js');
  return ingestIntoPostgres({ ...folderOptions(workspace, folder, options), store: workspace.postgres!, embedder: await workspace.ingestEmbedder() });
}

/** A path given to ingest, checked: it exists and is a folder or one file of a kind ragline reads (or, among several, one to skip). */
export interface GivenPath {
  /** As given (what messages quote). */
  path: string;
  /** Read against the working directory. */
  absolute: string;
  /** One file rather than a folder. */
  file: boolean;
  /**
   * A file of a kind no ingest reads, given among several paths (the Makefile of
   * `ragline ingest docs/*`): not read, but named and counted as skipped
   * (unsupported-type), as a folder's walk counts such a file.
   */
  unsupported?: boolean;
}

/** What `checkIngestPaths` and `planIngestPaths` need of the ingest's options. */
export interface IngestPathsCheck {
  /** Relative paths are read against this folder (default: the process's working directory). */
  cwd?: string;
  include?: string[];
  exclude?: string[];
  reindex?: boolean;
}

/**
 * Checks every path before anything is read or written, and throws a UserError (exit
 * code 2) for the first problem: every missing path at once, then one that is neither a
 * file nor a folder, a file with globs or with `reindex` (which choose among, or
 * rebuild, folders), or a file of a kind no ingest reads given alone (or with only
 * such files). Among several paths such a file is `unsupported`: skipped, as a
 * folder's walk skips it (`ragline ingest docs/*` with a Makefile in docs). A mistyped
 * third path thus stops the command before the first is ingested.
 */
export function checkIngestPaths(paths: readonly string[], options: IngestPathsCheck = {}): GivenPath[] {
  if (paths.length === 0) throw new UserError('No folder or file to ingest was given.', { hint: 'Give one or more, e.g. `ragline ingest ./docs ./notes`.', exitCode: 2 });
  const stats = paths.map((given) => {
    const absolute = path.resolve(options.cwd ?? '.', given);
    try {
      return { path: given, absolute, stat: fs.statSync(absolute) };
    } catch {
      return { path: given, absolute, stat: undefined };
    }
  });
  const missing = stats.filter((entry) => entry.stat === undefined).map((entry) => entry.path);
  if (missing.length > 0) {
    throw new UserError(`No such file or folder: ${fewOf(missing)}`, {
      hint:
        paths.length === 1
          ? 'Give the path of a folder of documents, e.g. `ragline ingest ./docs`, or of one file.'
          : 'Nothing was ingested: give each path as a folder of documents or one file, e.g. `ragline ingest ./docs ./notes/faq.md`.',
      exitCode: 2,
    });
  }
  const several = paths.length > 1;
  const checked = stats.map(({ path: given, absolute, stat }): GivenPath => {
    // One file: it is added or updated as a document of its folder, whose other documents stay.
    const file = stat!.isFile();
    if (!file && !stat!.isDirectory()) throw new UserError(`${given} is neither a file nor a folder.`, { exitCode: 2 });
    const unreadable = file ? unreadableFile(given) : undefined;
    if (unreadable && several) return { path: given, absolute, file, unsupported: true };
    // What the file is, said as the command was given: alone, or among several paths.
    const theFile = several ? `${given} is a file` : 'a single file was given';
    if (file && (options.include || options.exclude)) {
      throw new UserError(`--include and --exclude choose among the files of a folder; ${theFile}.`, {
        hint: `Give its folder with the globs, e.g. \`ragline ingest ${path.dirname(given) || '.'} --include "${path.basename(given)}"\` (the folder's files the globs leave out are then removed from the index), or the file ${several ? 'in a command of its own, without them' : 'alone'}.`,
        exitCode: 2,
      });
    }
    if (unreadable) throw unreadable;
    if (file && options.reindex) {
      throw new UserError(`--reindex rebuilds the whole index, of every folder; ${theFile}.`, {
        hint: several
          ? 'Give only folders with --reindex (`ragline ingest <folder> --reindex`), then ingest the files without it.'
          : 'Give the folder (`ragline ingest <folder> --reindex`), or the file alone without --reindex.',
        exitCode: 2,
      });
    }
    return { path: given, absolute, file };
  });
  // Nothing but files no ingest reads: refused, as one is alone.
  if (checked.every((entry) => entry.unsupported)) throw unreadableFile(checked[0]!.path)!;
  return checked;
}

/** One path an ingest of several reads, in its turn. */
export interface IngestTarget extends GivenPath {
  /** For a file: the folder it is a document of and its path there (see folderOfFile). */
  document?: { folder: string; relative: string };
}

/** The paths an ingest of several reads, in order, and those it reads as part of another. */
export interface IngestPathsPlan {
  targets: IngestTarget[];
  /**
   * Paths given that another path's ingest reads anyway: the same folder or file given
   * again (also through a symlink; the first is kept), or one inside a folder given
   * (ingested as part of it, with the globs read from it, as `ragline ingest <folder>`
   * reads its subfolders; a hidden one or one in node_modules, which that ingest never
   * reads, is not inside it).
   */
  covered: { path: string; by: string; reason: 'same' | 'inside' }[];
  /** Files given that are of a kind no ingest reads (GivenPath's `unsupported`): not read, counted in the total as skipped. */
  skipped: { path: string; reason: Extract<SkipReason, 'unsupported-type'> }[];
}

/**
 * Checks every path (checkIngestPaths), drops those another one covers, and finds the
 * folder each file is a document of, as running `ragline ingest <path>` for each in
 * turn would: a file under a folder an earlier path ingests is a document of it. A file
 * that folder's ingest never reads (hidden, or in node_modules) is refused here, before
 * anything is written, as it is on its own.
 */
export function planIngestPaths(workspace: Workspace, paths: readonly string[], options: IngestPathsCheck = {}): IngestPathsPlan {
  return planCheckedPaths(workspace, checkIngestPaths(paths, options));
}

/** planIngestPaths of paths checkIngestPaths has checked (a caller that checked them before opening the database). */
export function planCheckedPaths(workspace: Workspace, checked: readonly GivenPath[]): IngestPathsPlan {
  const skipped: IngestPathsPlan['skipped'] = checked.filter((entry) => entry.unsupported).map((entry) => ({ path: entry.path, reason: 'unsupported-type' }));
  const given = checked.filter((entry) => !entry.unsupported);
  const forms = given.map((entry) => {
    const linked = realPath(entry.absolute);
    // A folder is read where it is linked and where it points; a file where it is linked (realPath).
    return { key: entry.file ? linked : fs.realpathSync(entry.absolute), paths: entry.file ? [linked] : [linked, fs.realpathSync(entry.absolute)] };
  });
  const inside = (inner: number, outer: number) =>
    !given[outer]!.file &&
    forms[inner]!.paths.some((candidate) => {
      const holder = forms[outer]!.key;
      if (!candidate.startsWith(holder.endsWith(path.sep) ? holder : holder + path.sep)) return false;
      return !path.relative(holder, candidate).split(path.sep).some(unreadPart);
    });
  // The earlier of two paths to the same folder or file is kept; of two paths each inside the other (symlinks), the earlier.
  const covers = (outer: number, inner: number): 'same' | 'inside' | undefined => {
    if (outer === inner) return undefined;
    if (forms[outer]!.key === forms[inner]!.key) return outer < inner ? 'same' : undefined;
    return inside(inner, outer) && !(inside(outer, inner) && outer > inner) ? 'inside' : undefined;
  };
  const coveredBy = given.map((_, inner) => given.findIndex((_, outer) => covers(outer, inner) !== undefined));
  /** The path that is ingested in place of `index`: its coverer's, when that one is covered in turn. */
  const keptFor = (index: number): number | undefined => {
    const seen = new Set<number>();
    for (let at = coveredBy[index]!; at !== -1; at = coveredBy[at]!) {
      if (seen.has(at)) return undefined; // covered in a circle (symlinks): kept after all
      seen.add(at);
      if (coveredBy[at] === -1) return at;
    }
    return undefined;
  };
  const covered: IngestPathsPlan['covered'] = [];
  const targets: IngestTarget[] = [];
  // On Postgres a file is read as part of its own folder (folders ingested before are not looked up yet).
  const roots = workspace.postgres ? [] : storedRoots(workspace.db);
  for (const [index, entry] of given.entries()) {
    const by = keptFor(index);
    if (by !== undefined) {
      covered.push({ path: entry.path, by: given[by]!.path, reason: forms[index]!.key === forms[by]!.key ? 'same' : 'inside' });
      continue;
    }
    if (!entry.file) {
      targets.push(entry);
      roots.push(forms[index]!.key); // a file given after it, inside it, is one of its documents
      continue;
    }
    const document = folderOfFileIn(roots, entry.absolute);
    // A folder ingest never reads hidden files or folders or node_modules: one named here would be removed by the next.
    const hidden = document.relative.split(path.sep).find(unreadPart);
    if (hidden) {
      throw new UserError(`${entry.path} is ${hidden === path.basename(document.relative) ? 'a hidden file' : `inside ${hidden}`}, which an ingest of ${document.folder} leaves out.`, {
        hint: 'Copy or move it to a folder of documents and ingest it there.',
        exitCode: 2,
      });
    }
    targets.push({ ...entry, document });
    roots.push(document.folder);
  }
  return { targets, covered, skipped };
}

/** A path's ingest as part of several: the path as given and its ingest's summary. */
export interface PathIngested {
  path: string;
  summary: IngestSummary;
}

/** An ingest of several paths, summed: every folder read, the other folders of a rebuild too. */
export interface IngestTotal {
  /** The paths ingested (the one interrupted included). */
  paths: number;
  files: Omit<IngestSummary['files'], 'merged'> & { merged: number };
  chunks: IngestSummary['chunks'];
  invalidUtf8: number;
  windows1252: number;
  bytes: number;
  seconds: number;
  interrupted: boolean;
  /** Chunks embedded only in part, summed (IngestSummary.truncated); absent when none. */
  truncated?: NonNullable<IngestSummary['truncated']>;
}

export interface IngestPathsSummary {
  /** One per path ingested, in the order given. */
  paths: PathIngested[];
  /** The paths given that another one's ingest read (IngestPathsPlan). */
  covered: IngestPathsPlan['covered'];
  /** The files given that no ingest reads, skipped (IngestPathsPlan); counted in the total. */
  skipped: IngestPathsPlan['skipped'];
  /** The paths not ingested because the run stopped before them (interrupted). */
  notIngested: string[];
  total: IngestTotal;
}

export interface IngestPathsOptions extends Omit<IngestFolderOptions, 'only'>, IngestPathsCheck {
  /** Called before each path's ingest starts, with its place in the plan. */
  onPathStart?: (target: IngestTarget, index: number, plan: IngestPathsPlan) => void;
  /** Called when a path's ingest has returned (interrupted or not), before the next starts. */
  onPathDone?: (done: PathIngested, index: number, plan: IngestPathsPlan) => void;
}

/**
 * Ingests several folders or files in turn, in the order given, as `ingestFolder` (or,
 * for a file, `ingestFolder` with `only`) does each: the same options for each, the globs
 * read from each folder. Every path is checked first (planIngestPaths: a missing one is
 * refused with nothing written, a file of a kind no ingest reads skipped and counted),
 * and one given twice or inside another is read once.
 * With `reindex` the first path rebuilds the index (every other folder it held too) and
 * the others are then ingested into it. Each path's ingest takes the ingest lock at its
 * first write and releases it at its end. Aborting stops at the path being read: what
 * was written is kept, the paths after it are named in `notIngested`. A path's ingest
 * that fails (RemovalRefused, another ingest running) rejects with its error; the paths
 * before it stay ingested and were handed to `onPathDone`.
 */
export async function ingestPaths(workspace: Workspace, paths: readonly string[] | IngestPathsPlan, options: IngestPathsOptions = {}): Promise<IngestPathsSummary> {
  const plan = 'targets' in paths ? paths : planIngestPaths(workspace, paths, options);
  // Another ingest writing: waited for before the first path is read, as an ingest of one does.
  if (!workspace.postgres && !(await waitForOtherIngest(workspace.db, options))) return pathsIngested(plan, [], options.signal);
  await workspace.ingestEmbedder({ reindex: options.reindex });
  const { onPathStart, onPathDone, ...folderOptions } = options;
  const done: PathIngested[] = [];
  for (const [index, target] of plan.targets.entries()) {
    // Checked between paths; the first is started as an ingest of one is (it sees the abort itself).
    if (index > 0 && options.signal?.aborted) break;
    onPathStart?.(target, index, plan);
    const summary = await ingestFolder(workspace, target.document?.folder ?? target.absolute, {
      ...folderOptions,
      only: target.document ? [target.document.relative] : undefined,
      // One rebuild: the first path's; the others are ingested into the rebuilt index.
      reindex: options.reindex && index === 0,
    });
    const ingested = { path: target.path, summary };
    done.push(ingested);
    onPathDone?.(ingested, index, plan);
    if (summary.interrupted) break;
  }
  return pathsIngested(plan, done, options.signal);
}

/**
 * What an ingest of several paths did, having ingested `done` (the plan's first paths,
 * in order) when it ended, stopped or failed: the plan's paths after them are not
 * ingested. Its total is interrupted when a path's ingest was, or when the abort
 * signal (Ctrl-C) stopped the run before the paths not ingested; a failure is not an
 * interruption. The one place that says so, for the summary returned and for what a
 * caller reports after a failure.
 */
export function pathsIngested(plan: IngestPathsPlan, done: readonly PathIngested[], signal?: AbortSignal): IngestPathsSummary {
  const notIngested = plan.targets.slice(done.length).map((target) => target.path);
  const total = ingestTotal(done);
  total.interrupted ||= notIngested.length > 0 && signal?.aborted === true;
  for (const { reason } of plan.skipped) total.files.skipped[reason] = (total.files.skipped[reason] ?? 0) + 1;
  return { paths: [...done], covered: plan.covered, skipped: plan.skipped, notIngested, total };
}

/** The sums of `done`'s summaries, and of the other folders their rebuilds read (interrupted: as pathsIngested says it). */
function ingestTotal(done: readonly PathIngested[]): IngestTotal {
  const total: IngestTotal = {
    paths: done.length,
    files: { added: 0, changed: 0, unchanged: 0, removed: 0, merged: 0, skipped: {} },
    chunks: { written: 0, embedded: 0, reused: 0, removed: 0 },
    invalidUtf8: 0,
    windows1252: 0,
    bytes: 0,
    seconds: 0,
    interrupted: false,
  };
  const add = (summary: IngestSummary) => {
    const { files, chunks } = summary;
    for (const key of ['added', 'changed', 'unchanged', 'removed'] as const) total.files[key] += files[key];
    total.files.merged += files.merged ?? 0;
    for (const [reason, n] of Object.entries(files.skipped) as [keyof typeof files.skipped, number][]) total.files.skipped[reason] = (total.files.skipped[reason] ?? 0) + n;
    for (const key of ['written', 'embedded', 'reused', 'removed'] as const) total.chunks[key] += chunks[key];
    total.invalidUtf8 += summary.invalidUtf8;
    total.windows1252 += summary.windows1252;
    total.bytes += summary.bytes;
    total.seconds += summary.seconds;
    total.interrupted ||= summary.interrupted;
    if (summary.truncated) total.truncated = sumTruncated(total.truncated, summary.truncated);
  };
  for (const { summary } of done) {
    add(summary);
    for (const other of summary.others ?? []) if (other.summary) add(other.summary);
  }
  return total;
}

/**
 * A file named on its own that no ingest reads (a Makefile, a
 * .json file), as an error saying which files are read; undefined for one that is.
 * A gzipped one (`bc.info.gz`) copied to a name ending .txt would still be gzip: the
 * hint decompresses it (a .tar.gz is unpacked instead).
 */
export function unreadableFile(file: string): UserError | undefined {
  if (kindOf(file) !== undefined) return undefined;
  const name = path.basename(file);
  const hint = !isGzipped(file)
    ? startsBinary(file)
      ? 'It is a binary file (a program, an image, an archive), not text: it holds nothing to read under any name.'
      : `Copy it to a name with one of them (e.g. ${name}.txt) in a folder of documents and ingest that.`
    : documentExtension(file) === 'tar'
      ? `It is a compressed tar archive: unpack it (tar -xzf ${shellWord(file)}) and ingest the folder it holds.`
      : `It is compressed with gzip: decompress it to a text file in a folder of documents and ingest that, e.g. zcat ${shellWord(file)} > ${shellWord(`${name.slice(0, -'.gz'.length)}.txt`)}`;
  return new UserError(`${file} is not a kind of file ragline reads: ${READ_KINDS}, each also gzipped (.md.gz, NEWS.gz), told by its name.`, { hint, exitCode: 2 });
}

/** Whether the file's first bytes are binary (looksBinary); false when it cannot be read. */
function startsBinary(file: string): boolean {
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, 'r');
    const bytes = Buffer.alloc(8192);
    return looksBinary(bytes.subarray(0, fs.readSync(fd, bytes, 0, bytes.length, 0)));
  } catch {
    return false;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
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
  // Every file the walk would go on to check the kind of is left out by the glob, and
  // told: once, from the first place its folder is looked at (not again through a symlink).
  walk(path.resolve(folder), {
    exclude: ['*'],
    only,
    maxFileBytes: Number.POSITIVE_INFINITY,
    excluded: (relative, again) => {
      if (again) return;
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
  if (!(await waitForOtherIngest(db, options))) {
    return { ...emptySummary(path.resolve(folder), undefined, (await workspace.ingestEmbedder({ reindex: true })).id), interrupted: true };
  }
  const held = documentPathsByRoot(db);
  for (const [root, paths] of Object.entries(pendingRebuild(db))) held.set(root, [...new Set([...(held.get(root) ?? []), ...paths])].sort());
  const embedder = await workspace.ingestEmbedder({ reindex: true });
  const base = { db, embedder, chunker: config.chunk, maxFileBytes: config.ingest.maxFileBytes, checksum: options.checksum, signal: options.signal, onProgress: options.onProgress, wait: options.wait };
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
  return folderOfFileIn(storedRoots(workspace.db), file);
}

/** folderOfFile with the folders ingested given (those stored, and those an ingest of several reads before). */
function folderOfFileIn(roots: readonly string[], file: string): { folder: string; relative: string } {
  const real = realPath(file);
  const folder = deepestHolder(roots, real) ?? path.dirname(real);
  return { folder, relative: path.relative(folder, real) };
}

/**
 * The folder a folder is ingested under: the deepest folder already ingested that
 * holds it (so `docs/relnotes` after `docs` updates the documents `relnotes/...` of
 * `docs` instead of adding a second copy under `docs/relnotes`), with its path relative
 * to that folder ending in "/" (`only` entries for the whole of it: two for a symlink
 * to another folder of the holder); else itself. A folder ingested on its own before
 * stays so (its documents are under it), and so does one that the holder's ingest
 * never reads (hidden, or in node_modules).
 */
export function folderOfFolder(workspace: Workspace, folder: string): { folder: string; relative?: string[] } {
  if (!fs.existsSync(folder)) return { folder: path.resolve(folder) }; // the ingest says it is missing
  const real = fs.realpathSync(path.resolve(folder));
  const stored = storedRoots(workspace.db);
  if (stored.includes(real)) return { folder: real };
  const within = (candidate: string) => {
    const holder = deepestHolder(stored, candidate);
    return holder === undefined ? undefined : { holder, parts: path.relative(holder, candidate).split(path.sep) };
  };
  const unread = (parts: string[]) => parts.some(unreadPart);
  const linked = within(realPath(folder));
  const target = within(real);
  // A symlinked folder is read where it is linked ("docs/linked" is the documents
  // linked/... of docs), else where it points; but one linked to another folder of
  // the same folder is read as the holder's ingest reads it: where that one is
  // ("docs/alias" -> "docs/real" is the documents real/... of docs), or where it is
  // linked when .gitignore or the globs leave out every file of it there (the walk
  // decides, given both).
  const sameHolder = linked !== undefined && target !== undefined && linked.holder === target.holder && !unread(target.parts);
  if (sameHolder) {
    const places = [target, linked].filter((found) => !unread(found.parts)).map((found) => `${found.parts.join('/')}/`);
    return { folder: target.holder, relative: [...new Set(places)] };
  }
  for (const found of [linked, target]) {
    if (found === undefined) continue;
    if (unread(found.parts)) return { folder: real };
    return { folder: found.holder, relative: [`${found.parts.join('/')}/`] };
  }
  return { folder: real };
}

/** A name a folder's ingest never reads below it: hidden, or node_modules. */
function unreadPart(part: string): boolean {
  return part.startsWith('.') || part === 'node_modules';
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
 * Globs given for one subfolder (`only` = ["relnotes/"], or its places: ["real/",
 * "alias/"] for a symlink to it), made relative to the folder it is ingested under: the
 * subfolder's path put before them, its glob characters escaped ("a(b)/", "x{1,2}/" are
 * names), and a leading "./" read as the subfolder itself. A glob becomes one per place,
 * a negated one a single glob for them all.
 */
function underSubfolder(only: readonly string[], globs: string[] | undefined): string[] | undefined {
  if (!globs?.length || only.length === 0 || !only.every((entry) => entry.endsWith('/'))) return undefined;
  const prefixes = only.map((folder) => folder.replace(/[\\()[\]{}*?!+@|^$]/g, '\\$&'));
  const anyPrefix = prefixes.length === 1 ? prefixes[0]! : `@(${prefixes.map((prefix) => prefix.slice(0, -1)).join('|')})/`;
  return globs.flatMap((glob) => {
    const read = asInGitignore(glob);
    return read.startsWith('!') ? [`!${anyPrefix}${read.slice(1)}`] : prefixes.map((prefix) => prefix + read);
  });
}

/** Chunks embedded only in part, added up: the count summed, the shortest length kept. */
export function sumTruncated(
  sum: IngestSummary['truncated'],
  more: NonNullable<IngestSummary['truncated']>,
): NonNullable<IngestSummary['truncated']> {
  return sum ? { chunks: sum.chunks + more.chunks, toChars: Math.min(sum.toChars, more.toChars) } : { ...more };
}
