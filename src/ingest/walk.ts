// Finds the files to ingest under a folder: skips hidden folders, .git and
// node_modules, honours .gitignore files at every level and the user's
// --include/--exclude globs, follows symlinks without looping, and counts
// everything it skips by reason.

import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Ignore } from 'ignore';
import type ignoreType from 'ignore';
import type picomatchType from 'picomatch';
import { kindOf, type DocumentKind } from './load.js';

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
  | 'broken-symlink'
  | 'symlink-loop'
  | 'parse-error'
  | 'empty';

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
  exclude?: string[];
  maxFileBytes: number;
  /**
   * Decides from a file's path, size and modification time whether it is listed;
   * every file is listed without it. A re-ingest leaves its unchanged files out
   * this way, so it builds no object for them.
   */
  select?: (relative: string, size: number, mtimeMs: number) => boolean;
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

export function walk(root: string, options: WalkOptions): WalkResult {
  const includeMatch = options.include?.length ? loadPicomatch()(options.include, { dot: true }) : undefined;
  const excludeMatch = options.exclude?.length ? loadPicomatch()(options.exclude, { dot: true }) : undefined;
  const result: WalkResult = { files: [], skipped: new Map(), examples: new Map() };
  const skip = (reason: SkipReason, relative: string) => {
    result.skipped.set(reason, (result.skipped.get(reason) ?? 0) + 1);
    const examples = result.examples.get(reason) ?? [];
    if (examples.length < 5) examples.push(relative);
    result.examples.set(reason, examples);
  };
  const visitedDirs = new Set<string>();

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

    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      skip('unreadable', relativeDir || '.');
      return;
    }
    let rules = inherited;
    for (const entry of entries) {
      if (entry.name !== '.gitignore') continue;
      if (entry.isFile()) {
        try {
          const own = loadIgnore()().add(fs.readFileSync(childPath(dir, '.gitignore'), 'utf8'));
          rules = [...inherited, { base: relativeDir, rules: own }];
        } catch {
          /* an unreadable .gitignore ignores nothing */
        }
      }
      break;
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

    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const absolute = prefix + entry.name;
      const relative = relativePrefix + entry.name;
      let isDir = entry.isDirectory();
      let isFile = entry.isFile();
      let stat: fs.Stats | undefined;
      if (entry.isSymbolicLink()) {
        try {
          stat = fs.statSync(absolute);
        } catch (err) {
          const code = (err as NodeJS.ErrnoException).code;
          skip(code === 'ELOOP' ? 'symlink-loop' : 'broken-symlink', relative);
          continue;
        }
        isDir = stat.isDirectory();
        isFile = stat.isFile();
      }
      if (isDir) {
        if (entry.name.startsWith('.') || ALWAYS_SKIPPED_DIRS.has(entry.name)) continue;
        if (ignored(relative, true)) continue;
        visit(absolute, relative, rules);
        continue;
      }
      if (!isFile) continue; // sockets, fifos, devices
      if (entry.name.startsWith('.')) continue;
      if (ignored(relative, false)) {
        skip('gitignored', relative);
        continue;
      }
      if (excludeMatch?.(relative) || (includeMatch && !includeMatch(relative))) {
        skip('excluded', relative);
        continue;
      }
      const kind = kindOf(entry.name);
      if (!kind) {
        skip('unsupported-type', relative);
        continue;
      }
      try {
        stat ??= fs.statSync(absolute);
      } catch {
        skip('unreadable', relative);
        continue;
      }
      if (stat.size > options.maxFileBytes) {
        skip('too-large', relative);
        continue;
      }
      const mtimeMs = Math.trunc(stat.mtimeMs);
      if (options.select && !options.select(relative, stat.size, mtimeMs)) continue;
      result.files.push({ absolute, relative, kind, size: stat.size, mtimeMs });
    }
  };
  visit(root, '', []);
  return result;
}
