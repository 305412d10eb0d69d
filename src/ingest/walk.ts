// Finds the files to ingest under a folder: skips hidden folders, .git and
// node_modules, honours .gitignore files at every level and the user's
// --include/--exclude globs, follows symlinks without looping, walks a folder
// reached both where it is and through a symlink once (where it is, unless the
// globs or .gitignore leave out every file of it there), and counts everything it
// skips by reason, once per file.

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
  /**
   * Told of every file the include and exclude globs leave out (it is counted as
   * excluded too), at every place the walk looks at it: a folder the filters leave out
   * whole where it is is looked at again where a symlink to it is. `again` then: the
   * file was told before, from the first place (and is counted once).
   */
  excluded?: (relative: string, again: boolean) => void;
}

export interface WalkResult {
  files: FoundFile[];
  skipped: Map<SkipReason, number>;
  /** The paths skipped for each reason, for --verbose and --json output. */
  skippedPaths: Map<SkipReason, string[]>;
}

/** path.join for a name inside an already normal directory path, without re-normalising. */
const childPath = (dir: string, name: string) => (dir.endsWith(path.sep) ? dir + name : dir + path.sep + name);

const ALWAYS_SKIPPED_DIRS = new Set(['.git', 'node_modules']);

/** What the walk does with a folder entry once the folder's entries are in name order; `linked` for a folder reached through a symlink. */
type Kept = { name: string; file?: FoundFile; folder?: string; linked?: boolean; skip?: SkipReason };

/** The real path of a folder, and of each folder the walk went through to reach it. */
type Trail = { real: string; up?: Trail };

/**
 * The files found in a folder and below it, in name order, and the folders among
 * them reached through a symlink, whose files are put in at `at` once they are walked.
 */
interface Listing {
  files: FoundFile[];
  linked: { at: number; listing: Listing }[];
}

/** A folder reached through a symlink, walked once every folder reached directly has been. */
interface LinkedFolder {
  dir: string;
  relativeDir: string;
  rules: { base: string; rules: Ignore }[];
  trail: Trail;
  listing: Listing;
}

export function walk(root: string, options: WalkOptions): WalkResult {
  const includeMatch = options.include?.length ? globMatcher(options.include, true) : undefined;
  const excludeMatch = options.exclude?.length ? globMatcher(options.exclude, false) : undefined;
  const asked = options.only ? askedBy(options.only) : undefined;
  const onlyFolders = options.only ? new Set(options.only.flatMap((file) => file.split('/').slice(0, -1).map((_, i, parts) => parts.slice(0, i + 1).join('/')))) : undefined;
  const result: WalkResult = { files: [], skipped: new Map(), skippedPaths: new Map() };
  const skip = (reason: SkipReason, relative: string) => {
    result.skipped.set(reason, (result.skipped.get(reason) ?? 0) + 1);
    const paths = result.skippedPaths.get(reason);
    if (paths) paths.push(relative);
    else result.skippedPaths.set(reason, [relative]);
  };
  /**
   * Real paths of the folders walked: the .gitignore files and globs let some of their
   * files through where the walk looked at them. A folder reached again (through a
   * symlink, or inside a symlinked folder) is left to the place it was walked at.
   */
  const walkedDirs = new Set<string>();
  /**
   * Real paths of the folders looked at where the .gitignore files and globs let none
   * of their files through: such a folder is looked at again where a symlink to it is.
   */
  const leftOutDirs = new Set<string>();
  /**
   * What those folders skipped where they were first looked at, in the walk's order:
   * counted at the end, but for a folder that a symlink's place walked after all (which
   * counted its own).
   */
  const leftOutSkips: { real: string; reason: SkipReason; relative: string }[] = [];
  /** Symlinks to folders followed, as the real path of their folder and their name: each is followed once, from the first place the walk reaches it. */
  const followedLinks = new Set<string>();
  /** Symlinked folders, in the order the walk met them. */
  const linkedFolders: LinkedFolder[] = [];
  /** True while the walk stands in `root` (see below): files are then stat'ed by their relative paths. */
  let relativeStat = false;

  type Rules = LinkedFolder['rules'];
  type Note = (reason: SkipReason, relative: string) => void;
  /** Walks `dir`, whose real path is `trail.real`, into `out`. */
  const visit = (dir: string, relativeDir: string, inherited: Rules, trail: Trail, out: Listing) => {
    // Walked already: where it is, or inside a symlinked folder walked before it (x/sub
    // when x/ is a link to ../ext and another, walked first, to ../ext/sub).
    if (walkedDirs.has(trail.real)) return;
    /** Looked at before, at a place where the filters let none of its files through: what this place skips was counted there. */
    const again = leftOutDirs.has(trail.real);

    let listing: fs.Dir;
    try {
      listing = fs.opendirSync(dir);
    } catch {
      if (!again) {
        leftOutDirs.add(trail.real);
        leftOutSkips.push({ real: trail.real, reason: 'unreadable', relative: relativeDir || '.' });
      }
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
    /** A file got past the .gitignore files and the globs: the folder is walked here. */
    let through = false;
    let brokeOff = false;
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
          brokeOff = true;
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
            // (Only a link the ingest asks for is reported: ingesting one file of a folder says nothing of its neighbours.)
            if (asked && !asked(relative) && !onlyFolders!.has(relative)) continue;
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
          kept.push(badName ? { name, skip: 'name-not-utf8' } : { name, folder: absolute, linked: stat !== undefined });
          continue;
        }
        if (name.startsWith('.')) continue;
        if (ignored(relative, false)) {
          kept.push({ name, skip: 'gitignored' });
          continue;
        }
        if (excludeMatch?.(relative) || (includeMatch && !includeMatch(relative))) {
          options.excluded?.(relative, again);
          kept.push({ name, skip: 'excluded' });
          continue;
        }
        through = true;
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

    // What this place skips is counted now if the folder is walked here; kept for the
    // end if this is the first place it is looked at; else it was counted there.
    let note: Note = skip;
    if (through) walkedDirs.add(trail.real);
    else if (!again) {
      leftOutDirs.add(trail.real);
      note = (reason, relative) => leftOutSkips.push({ real: trail.real, reason, relative });
    } else note = () => {};
    if (brokeOff) note('unreadable', relativeDir || '.');
    kept.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const item of kept) {
      if (item.file) out.files.push(item.file);
      else if (item.linked) followLater(item.folder!, relativePrefix + item.name, rules, trail, out, note);
      else if (item.folder) visit(item.folder, relativePrefix + item.name, rules, { real: childPath(trail.real, item.name), up: trail }, out);
      else note(item.skip!, relativePrefix + item.name);
    }
  };
  /**
   * Keeps a folder reached through a symlink in `out` at its place, to be walked once
   * every folder reached directly has been (see below); a link to a folder the walk
   * went through to reach it, or to one holding such a folder, is a loop. `trail` is
   * the link's folder's; `note` counts what is skipped.
   */
  const followLater = (dir: string, relativeDir: string, rules: Rules, trail: Trail, out: Listing, note: Note) => {
    let real: string;
    try {
      real = fs.realpathSync(dir);
    } catch {
      note('unreadable', relativeDir);
      return;
    }
    const holding = childPath(real, '');
    for (let at: Trail | undefined = trail; at; at = at.up) {
      if (at.real === real || at.real.startsWith(holding)) {
        note('symlink-loop', relativeDir);
        return;
      }
    }
    // A link in a folder looked at from two places (two links to it) is followed from
    // the first: from each, a chain of such folders would be walked once per path to it.
    const link = childPath(trail.real, path.basename(dir));
    if (followedLinks.has(link)) return;
    followedLinks.add(link);
    const listing: Listing = { files: [], linked: [] };
    out.linked.push({ at: out.files.length, listing });
    linkedFolders.push({ dir, relativeDir, rules, trail: { real, up: trail }, listing });
  };
  // The walk is synchronous, so for its duration the process can stand in `root`
  // and stat each file by its path relative to it: the kernel then resolves one or
  // two components per file instead of the whole absolute path (13k files: 32 ->
  // 25 ms). Where the working directory cannot move (a worker thread, a directory
  // removed under us), files are stat'ed by their absolute paths.
  //
  // A folder reached through a symlink is walked after every folder reached
  // directly, and only if none of them is it: a link to a folder of the root is
  // then left to the folder itself, which is walked once, where it is, whichever
  // comes first in name order (/usr/share/doc/libffi-dev -> libffi8). A folder
  // only reached through links (outside the root, or hidden) is walked where the
  // first of them is linked. Its files are put in at the link's place. A folder
  // counts as walked only where the .gitignore files and globs let some of its
  // files through: one they leave out whole where it is (`--exclude libffi8/`) is
  // looked at where the next link to it is (libffi-dev/), as if it were not there.
  let realRoot: string;
  try {
    realRoot = fs.realpathSync(root);
  } catch {
    skip('unreadable', '.');
    return result;
  }
  const top: Listing = { files: result.files, linked: [] };
  const home = standIn(root);
  relativeStat = home !== undefined;
  try {
    visit(root, '', [], { real: realRoot }, top);
    // Grows while it is read: links inside linked folders are followed in turn.
    for (const linked of linkedFolders) visit(linked.dir, linked.relativeDir, linked.rules, linked.trail, linked.listing);
  } finally {
    if (home !== undefined) leave(home);
  }
  // Folders no place let any file of through: what they skipped where first looked at.
  for (const { real, reason, relative } of leftOutSkips) if (!walkedDirs.has(real)) skip(reason, relative);
  if (top.linked.length > 0) result.files = inOrder(top, []);
  return result;
}

/** The files of a listing with those of its linked folders put in at their places. */
function inOrder(listing: Listing, into: FoundFile[]): FoundFile[] {
  let from = 0;
  for (const { at, listing: linked } of listing.linked) {
    for (; from < at; from++) into.push(listing.files[from]!);
    inOrder(linked, into);
  }
  for (; from < listing.files.length; from++) into.push(listing.files[from]!);
  return into;
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
 * Whether a path matches `globs` as a list of .gitignore patterns: one of those without
 * "!", and none of those with "!" ("*.md" and "!drafts/**" is the Markdown outside
 * drafts/). When all have "!", any path but theirs for an include list, and none for an
 * exclude list (a lone "!" pattern in .gitignore ignores nothing). Given to picomatch
 * as one list, a negated glob matched every other path, so it widened the list instead
 * of narrowing it.
 */
function globMatcher(globs: readonly string[], include: boolean): (path: string) => boolean {
  const read = globs.map(asInGitignore);
  const positive = read.filter((glob) => !glob.startsWith('!'));
  const negative = read.filter((glob) => glob.startsWith('!')).map((glob) => glob.slice(1));
  const picomatch = loadPicomatch();
  const any = positive.length > 0 ? picomatch(positive, { dot: true }) : () => include;
  const but = negative.length > 0 ? picomatch(negative, { dot: true }) : () => false;
  return (path) => any(path) && !but(path);
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
