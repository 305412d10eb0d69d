// Finds the files to ingest under a folder: skips hidden folders, .git and
// node_modules, honours .gitignore files at every level and the user's
// --include/--exclude globs, follows symlinks without looping, and counts
// everything it skips by reason.

import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { isUtf8 } from 'node:buffer';
import { isMainThread } from 'node:worker_threads';
import type { Ignore } from 'ignore';
import type ignoreType from 'ignore';
import type picomatchType from 'picomatch';
import { kindOf, type DocumentKind } from './kinds.js';

// Loaded on first use: most folders have no .gitignore and most runs no globs,
// and a no-change re-ingest is mostly start-up.
const require = createRequire(import.meta.url);
const loadIgnore = () => require('ignore') as typeof ignoreType;
const loadPicomatch = () => require('picomatch') as typeof picomatchType;

export type SkipReason =
  | 'unsupported-type'
  | 'excluded'
  | 'gitignored'
  | 'too-large'
  | 'binary'
  | 'unreadable'
  /** A FIFO, socket or device: reading it could block forever or never end. */
  | 'not-a-file'
  /** A file or folder whose name is not valid UTF-8: Node lists it with U+FFFD in place of the bytes, a name no file has. */
  | 'name-not-utf8'
  | 'broken-symlink'
  | 'symlink-loop'
  | 'parse-error'
  | 'empty'
  /** A page that only sends its reader to another ("This page has moved"). */
  | 'redirect';

export interface FoundFile {
  /** Absolute path. */
  absolute: string;
  /** Path relative to the ingested folder, '/'-separated. */
  relative: string;
  kind: DocumentKind;
  size: number;
  mtimeMs: number;
}

export interface WalkOptions {
  include?: string[];
  /**
   * Only these files (paths relative to the root), and the whole of the folders among
   * them written with a trailing slash ("relnotes/"): the walk goes down only the
   * folders that lead to them and neither lists nor counts anything else.
   */
  only?: readonly string[];
  exclude?: string[];
  maxFileBytes: number;
  /**
   * Decides from a file's path, size and modification time whether it is listed;
   * every file is listed without it. A re-ingest leaves its unchanged files out
   * this way, so it builds no object for them. Called as files are found, in no
   * particular order.
   */
  select?: (relative: string, size: number, mtimeMs: number) => boolean;
  /** Told of every file the include and exclude globs leave out (it is counted as excluded too). */
  excluded?: (relative: string) => void;
}

export interface WalkResult {
  files: FoundFile[];
  skipped: Map<SkipReason, number>;
  /** Up to a few example paths per skip reason, for --verbose and --json output. */
  examples: Map<SkipReason, string[]>;
}

/** path.join for a name inside an already normal directory path, without re-normalising. */
const childPath = (dir: string, name: string) => (dir.endsWith(path.sep) ? dir + name : dir + path.sep + name);

const ALWAYS_SKIPPED_DIRS = new Set(['.git', 'node_modules']);

/** What the walk does with a folder entry once the folder's entries are in name order. */
type Kept = { name: string; file?: FoundFile; folder?: string; skip?: SkipReason };

export function walk(root: string, options: WalkOptions): WalkResult {
  const includeMatch = options.include?.length ? loadPicomatch()(options.include.map(asInGitignore), { dot: true }) : undefined;
  const excludeMatch = options.exclude?.length ? loadPicomatch()(options.exclude.map(asInGitignore), { dot: true }) : undefined;
  const asked = options.only ? askedBy(options.only) : undefined;
  const onlyFolders = options.only ? new Set(options.only.flatMap((file) => file.split('/').slice(0, -1).map((_, i, parts) => parts.slice(0, i + 1).join('/')))) : undefined;
  const result: WalkResult = { files: [], skipped: new Map(), examples: new Map() };
  const skip = (reason: SkipReason, relative: string) => {
    result.skipped.set(reason, (result.skipped.get(reason) ?? 0) + 1);
    const examples = result.examples.get(reason) ?? [];
    if (examples.length < 5) examples.push(relative);
    result.examples.set(reason, examples);
  };
  const visitedDirs = new Set<string>();
  /** True while the walk stands in `root` (see below): files are then stat'ed by their relative paths. */
  let relativeStat = false;

  type Rules = { base: string; rules: Ignore }[];
  const visit = (dir: string, relativeDir: string, inherited: Rules) => {
    let real: string;
    try {
      real = fs.realpathSync(dir);
    } catch {
      skip('unreadable', relativeDir || '.');
      return;
    }
    if (visitedDirs.has(real)) {
      skip('symlink-loop', relativeDir);
      return;
    }
    visitedDirs.add(real);

    let listing: fs.Dir;
    try {
      listing = fs.opendirSync(dir);
    } catch {
      skip('unreadable', relativeDir || '.');
      return;
    }
    // The folder's .gitignore applies to every entry, so it is looked for first
    // (lstat, as the listing's own entry would tell: a symlink is not read).
    let rules = inherited;
    const gitignore = childPath(dir, '.gitignore');
    try {
      if (fs.lstatSync(gitignore, { throwIfNoEntry: false })?.isFile()) {
        rules = [...inherited, { base: relativeDir, rules: loadIgnore()().add(fs.readFileSync(gitignore, 'utf8')) }];
      }
    } catch {
      /* an unreadable .gitignore ignores nothing */
    }
    const ignored = (relative: string, isDir: boolean) =>
      rules.length > 0 &&
      rules.some(({ base, rules: r }) => {
        const local = base ? relative.slice(base.length + 1) : relative;
        return local !== '' && r.ignores(isDir ? local + '/' : local);
      });
    // Computed once per folder: the loop below runs for every file.
    const prefix = childPath(dir, '');
    const relativePrefix = relativeDir ? `${relativeDir}/` : '';

    // Entries are read one at a time, in the file system's order, and what the
    // loop keeps is put in name order after it: files are listed, folders visited
    // and skips recorded in an order that does not depend on the file system. The
    // files `select` leaves out (in a re-ingest nearly all) are neither kept nor
    // sorted, and no entry outlives its turn: the garbage collector has next to
    // nothing to copy.
    const kept: Kept[] = [];
    /** The names of this folder that are not valid UTF-8, as listed (see notUtf8Names), looked up only when a name has a U+FFFD. */
    let notUtf8: Map<string, number> | undefined;
    const nameNotUtf8 = (name: string): boolean => {
      if (!name.includes('\uFFFD')) return false;
      notUtf8 ??= notUtf8Names(dir);
      const left = notUtf8.get(name) ?? 0;
      if (left === 0) return false; // a name with a real U+FFFD in it
      notUtf8.set(name, left - 1);
      return true;
    };
    try {
      for (;;) {
        let entry: fs.Dirent | null;
        try {
          entry = listing.readSync();
        } catch {
          // The listing broke off: what was found before stays, the folder counts as unreadable.
          skip('unreadable', relativeDir || '.');
          break;
        }
        if (entry === null) break;
        const name = entry.name;
        const absolute = prefix + name;
        const relative = relativePrefix + name;
        let isDir = entry.isDirectory();
        let isFile = entry.isFile();
        let stat: fs.Stats | undefined;
        // Its listed name reaches no file: neither it nor where it points can be looked at.
        const badName = nameNotUtf8(name);
        if (entry.isSymbolicLink() && !badName) {
          try {
            stat = fs.statSync(relativeStat ? relative : absolute);
          } catch (err) {
            const code = (err as NodeJS.ErrnoException).code;
            kept.push({ name, skip: code === 'ELOOP' ? 'symlink-loop' : 'broken-symlink' });
            continue;
          }
          isDir = stat.isDirectory();
          isFile = stat.isFile();
        }
        if (asked && !asked(relative) && !(isDir && onlyFolders!.has(relative))) continue;
        if (isDir) {
          if (name.startsWith('.') || ALWAYS_SKIPPED_DIRS.has(name)) continue;
          if (ignored(relative, true)) continue;
          kept.push(badName ? { name, skip: 'name-not-utf8' } : { name, folder: absolute });
          continue;
        }
        if (name.startsWith('.')) continue;
        if (ignored(relative, false)) {
          kept.push({ name, skip: 'gitignored' });
          continue;
        }
        if (excludeMatch?.(relative) || (includeMatch && !includeMatch(relative))) {
          options.excluded?.(relative);
          kept.push({ name, skip: 'excluded' });
          continue;
        }
        if (badName) {
          kept.push({ name, skip: kindOf(name) ? 'name-not-utf8' : 'unsupported-type' });
          continue;
        }
        if (!isFile) {
          kept.push({ name, skip: 'not-a-file' }); // FIFOs, sockets, devices
          continue;
        }
        const kind = kindOf(name);
        if (!kind) {
          kept.push({ name, skip: 'unsupported-type' });
          continue;
        }
        try {
          stat ??= fs.statSync(relativeStat ? relative : absolute);
        } catch {
          kept.push({ name, skip: 'unreadable' });
          continue;
        }
        if (stat.size > options.maxFileBytes) {
          kept.push({ name, skip: 'too-large' });
          continue;
        }
        const mtimeMs = Math.trunc(stat.mtimeMs);
        if (options.select && !options.select(relative, stat.size, mtimeMs)) continue;
        kept.push({ name, file: { absolute, relative, kind, size: stat.size, mtimeMs } });
      }
    } finally {
      listing.closeSync();
    }

    kept.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const item of kept) {
      if (item.file) result.files.push(item.file);
      else if (item.folder) visit(item.folder, relativePrefix + item.name, rules);
      else skip(item.skip!, relativePrefix + item.name);
    }
  };
  // The walk is synchronous, so for its duration the process can stand in `root`
  // and stat each file by its path relative to it: the kernel then resolves one or
  // two components per file instead of the whole absolute path (13k files: 32 ->
  // 25 ms). Where the working directory cannot move (a worker thread, a directory
  // removed under us), files are stat'ed by their absolute paths.
  const home = standIn(root);
  relativeStat = home !== undefined;
  try {
    visit(root, '', []);
  } finally {
    if (home !== undefined) leave(home);
  }
  return result;
}

/**
 * The names in `dir` that are not valid UTF-8, as a listing gives them (decoded with
 * U+FFFD for each bad sequence), with how many such entries have each: only their
 * bytes reach the file, and such a name would be stored and shown as something no
 * file is called (two names can even read alike: caf\xe9.md and caf\xe8.md).
 */
function notUtf8Names(dir: string): Map<string, number> {
  const names = new Map<string, number>();
  let raw: Buffer[];
  try {
    raw = fs.readdirSync(dir, { encoding: 'buffer' });
  } catch {
    return names;
  }
  for (const bytes of raw) {
    if (isUtf8(bytes)) continue;
    const name = bytes.toString('utf8');
    names.set(name, (names.get(name) ?? 0) + 1);
  }
  return names;
}

/** Moves into `root`; returns the directory to go back to, or undefined if it stayed. */
function standIn(root: string): string | undefined {
  if (!isMainThread) return undefined;
  try {
    const home = process.cwd();
    process.chdir(root);
    return home;
  } catch {
    return undefined;
  }
}

function leave(home: string): void {
  try {
    process.chdir(home);
  } catch {
    /* the old working directory is gone; relative paths were resolved before the walk */
  }
}

/**
 * A glob read as .gitignore reads a pattern: one without a "/" matches a file's name
 * at any depth (`*.rst` is every reStructuredText file of the folder, not only those
 * at its top), one ending in "/" the whole of such folders (`drafts/`); a leading "/"
 * or "./" anchors it to the folder, as does a "/" before its end (`guides/*.md`,
 * `sub/**`). A "!" before it is kept.
 */
export function asInGitignore(glob: string): string {
  const negated = glob.startsWith('!') ? '!' : '';
  let body = glob.slice(negated.length);
  const anchored = /^\.?\//.test(body);
  body = body.replace(/^(?:\.?\/)+/, '');
  const anywhere = !anchored && !body.replace(/\/$/, '').includes('/') && !body.startsWith('**');
  if (body.endsWith('/')) body += '**';
  return `${negated}${anywhere ? '**/' : ''}${body}`;
}

/**
 * Whether a path (relative to the root) is one that `only` asks for: a file it names,
 * or anything inside a folder it names whole ("relnotes/" holds "relnotes/1.5.txt"
 * and "relnotes/old/2.0.txt"). The walk reads only these; an ingest removes only
 * their documents.
 */
export function askedBy(only: readonly string[]): (relative: string) => boolean {
  const files = new Set(only);
  const folders = only.filter((entry) => entry.endsWith('/'));
  return (relative) => files.has(relative) || folders.some((folder) => relative.startsWith(folder));
}
