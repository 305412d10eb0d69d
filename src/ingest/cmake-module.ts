// CMake's module pages are one line each (`.. cmake-module:: ../../Modules/FetchContent.cmake`):
// Sphinx renders them with the reStructuredText block at the top of the named
// .cmake file (`#[=[.rst: ... #]=]`, or `#.rst:` and `# `-led lines in older
// modules). What a reader of the page sees is that block, so it is read in where
// the directive stands, and its lines cite the directive's line (the page's own
// lines are the ones a citation can point at). Only a `.cmake` file is ever named
// here, and only its documentation block is taken. Pure: the caller reads the file.

import { nearPath } from './rst-include.js';

/** `.. cmake-module:: <file>.cmake` on a line of its own. */
const DIRECTIVE = /^\.\.[ \t]+cmake-module::[ \t]+(\S+\.cmake)[ \t]*\r?$/;
/** The directive stands in a page's first lines (after a comment such as `.. cmake-manual-description:`). */
const LOOK_LINES = 20;

/**
 * Whether a page may bring in `target`: as CMake's Help does it, a relative path up
 * at most three folders and down by name only (no `..` after a name), to a .cmake
 * file named as the page (`module/FetchContent.rst` -> `../../Modules/FetchContent.cmake`).
 * A document from elsewhere cannot make the ingest read any .cmake file it names.
 */
export function allowedModuleTarget(target: string, page: string): boolean {
  const stem = page.replace(/\\/g, '/').split('/').pop()!.replace(/\.rst(\.gz)?$/i, '');
  return nearPath(target) && target.split('/').at(-1) === `${stem}.cmake`;
}

/** The file a module page brings in, as written (relative to the page's folder), or undefined. */
export function cmakeModuleTarget(text: string): string | undefined {
  let start = 0;
  for (let i = 0; i < LOOK_LINES && start < text.length; i++) {
    const end = text.indexOf('\n', start);
    const line = text.slice(start, end === -1 ? text.length : end);
    const match = DIRECTIVE.exec(line);
    if (match) return match[1]!;
    if (end === -1) break;
    start = end + 1;
  }
  return undefined;
}

/**
 * The reStructuredText documentation block of a .cmake file: the bracket comment
 * opened by `#[[.rst:` (any number of `=`) up to its matching close, or the run of
 * `#` lines after a `#.rst:` line with the `# ` taken off. Undefined when there is none.
 */
export function cmakeDocBlock(cmake: string): string | undefined {
  const lines = cmake.replace(/\r\n?/g, '\n').split('\n');
  for (let i = 0; i < lines.length; i++) {
    const bracket = /^#\[(=*)\[\.rst:[ \t]*$/.exec(lines[i]!);
    if (bracket) {
      const close = `]${bracket[1]}]`;
      const body: string[] = [];
      for (let j = i + 1; j < lines.length; j++) {
        const at = lines[j]!.indexOf(close);
        if (at !== -1) {
          const before = lines[j]!.slice(0, at).replace(/#$/, '');
          if (before.trim()) body.push(before);
          return body.join('\n');
        }
        body.push(lines[j]!);
      }
      return undefined; // never closed: not a block CMake would read either
    }
    if (/^#\.rst:[ \t]*$/.test(lines[i]!)) {
      const body: string[] = [];
      for (let j = i + 1; j < lines.length && lines[j]!.startsWith('#'); j++) body.push(lines[j]!.replace(/^# ?/, ''));
      return body.join('\n');
    }
  }
  return undefined;
}

/** The line (0-based) of the page's cmake-module directive, or -1. */
export function cmakeModuleLine(page: string): number {
  return page.split('\n', LOOK_LINES).findIndex((line) => DIRECTIVE.test(line));
}
