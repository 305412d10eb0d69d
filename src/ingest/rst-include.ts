// reStructuredText pages that bring in other files, read as the rendered page shows
// them: `.. include:: XXX_OUTPUT_DIRECTORY.txt` puts that fragment's text where the
// directive stands (297 of CMake's Help pages hold their description so), and a CMake
// module page the block of its .cmake file (cmake-module.ts). The text read in is
// put after the directive's line, indented as the directive, and cites that line:
// the page's own lines are the ones a citation can point at. Only .txt and .rst
// fragments near the page are read (allowedInclude). Pure: the caller reads the files.

/** `.. include:: <file>` on a line of its own, indented or not. */
const INCLUDE = /^([ \t]*)\.\.[ \t]+include::[ \t]+(\S+)[ \t]*\r?$/;

/** The include directives of a page: the line each stands on (0-based), its indent and the file it names. */
export function rstIncludes(page: string): { line: number; indent: string; target: string }[] {
  const found: { line: number; indent: string; target: string }[] = [];
  if (!page.includes('include::')) return found;
  page.split('\n').forEach((line, index) => {
    const match = INCLUDE.exec(line);
    if (match) found.push({ line: index, indent: match[1]!, target: match[2]! });
  });
  return found;
}

/**
 * Whether a page may read `target` in: a .txt or .rst fragment, by a path relative to
 * the page's folder that goes up at most three folders and then down by name only,
 * or rooted at the documentation's top (`/include/X.txt`, looked for in the page's
 * folder and the three above it).
 */
export function allowedInclude(target: string): boolean {
  if (!/\.(txt|rst)$/i.test(target)) return false;
  return target.startsWith('/') ? nearPath(target.slice(1), 0) : nearPath(target);
}

/**
 * Whether a relative path stays near where it starts: up at most `ups` folders, then
 * down by name only (no `..`, `.` or empty part after a name). What a page may bring in.
 */
export function nearPath(target: string, ups = 3): boolean {
  const parts = target.split('/');
  const up = parts.findIndex((part) => part !== '..');
  return up >= 0 && up <= ups && !parts.slice(up).some((part) => part === '..' || part === '.' || part === '');
}

/** A text to put after a line of a page, indented. */
export interface LineInsert {
  /** The page line (0-based) it follows. */
  line: number;
  indent: string;
  text: string;
}

/**
 * The page with each insert's lines after the line it follows (indented as given),
 * and for each line of the result the 1-based page line it cites: its own, or the
 * line its insert follows.
 */
export function insertAfterLines(page: string, inserts: readonly LineInsert[]): { text: string; sourceLines: number[] } {
  const lines = page.split('\n');
  const after = new Map<number, LineInsert[]>();
  for (const insert of inserts) after.set(insert.line, [...(after.get(insert.line) ?? []), insert]);
  const out: string[] = [];
  const sourceLines: number[] = [];
  lines.forEach((line, index) => {
    out.push(line);
    sourceLines.push(index + 1);
    for (const insert of after.get(index) ?? []) {
      for (const added of insert.text.replace(/\r\n?/g, '\n').split('\n')) {
        out.push(added.trim() === '' ? '' : insert.indent + added);
        sourceLines.push(index + 1);
      }
    }
  });
  return { text: out.join('\n'), sourceLines };
}
