// Indexed documents as the index holds them: the list of paths, and the text of
// one (or a range of its lines, or pages for a PDF) put together from its chunks.
// Served from the index, not read from the disk: a path names a document only if
// it was ingested, and the lines are those a citation refers to even when the file
// has changed since. Blank lines between chunks come back empty.

import type { Locator } from '../domain/index.js';
import { DocumentNaming } from '../store/document-names.js';
import { documentChunks } from '../store/inspect.js';
import type { Workspace } from './workspace.js';

/** A document of the index, by the name results cite it by. */
export interface IndexedDocument {
  /** Its path, with its folder's name before it when another folder holds the same path (`projA/README.md`). */
  path: string;
  title: string | null;
  kind: string;
  /** The folder it was ingested from (absolute). */
  folder: string;
  /** Bytes of the file when it was ingested. */
  size: number;
  chunks: number;
  /** When its content was last ingested (ISO). */
  ingestedAt: string;
}

/** Lines (or pages), 1-based and inclusive. */
export interface DocumentRange {
  from: number;
  to: number;
}

export interface DocumentText {
  path: string;
  title: string | null;
  kind: string;
  locator: Locator;
  /** The range served (clamped to the document). */
  from: number;
  to: number;
  /** Last line (or page) of the document. */
  last: number;
  text: string;
}

/** Every ingested document, by name. */
export function listIndexedDocuments(workspace: Workspace): IndexedDocument[] {
  return new DocumentNaming(workspace.db)
    .all()
    .map((doc) => ({ path: doc.name, title: doc.title, kind: doc.kind, folder: doc.root, size: doc.size, chunks: doc.chunks, ingestedAt: doc.ingestedAt }))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/**
 * The indexed text of `path` (the whole document, or `range`), or undefined when no
 * document by that name is in the index. A range outside the document, or a path
 * that more than one folder holds, named without the folder, is an Error.
 */
export function readIndexedDocument(workspace: Workspace, path: string, range?: DocumentRange): DocumentText | undefined {
  const named = new DocumentNaming(workspace.db).find(path);
  if (named.length > 1) {
    throw new Error(`${path} is in ${named.length} folders; name one of them: ${named.map((doc) => doc.name).join(', ')}.`);
  }
  const doc = named[0];
  if (!doc) return undefined;
  const chunks = documentChunks(workspace.db, doc.id);
  const locator = chunks[0]?.locator ?? 'line';
  const last = chunks.reduce((max, chunk) => Math.max(max, chunk.endLine), 0);
  const unit = locator === 'page' ? 'page' : 'line';
  if (range && (!Number.isInteger(range.from) || !Number.isInteger(range.to) || range.from < 1 || range.to < range.from)) {
    throw new Error(`Bad range in the URI: use #L<from>-<to> with 1 <= from <= to (${unit}s), e.g. #L10-20.`);
  }
  if (range && range.from > last) {
    throw new Error(`${path} has ${last} ${unit}${last === 1 ? '' : 's'}; ${unit} ${range.from} is past its end.`);
  }
  const from = range?.from ?? 1;
  const to = Math.min(range?.to ?? last, last);
  const base = { path: doc.name, title: doc.title, kind: doc.kind, locator, from, to, last };
  // Pages, and text whose chunks hold more lines than they cite (HTML whose text is
  // laid out otherwise than its source, a CMake module page's block read in at its
  // directive): each chunk whole, in order, without the start it repeats of the one before.
  const laidOut = locator === 'page' || chunks.some((chunk) => chunk.text.split('\n').length > chunk.endLine - chunk.startLine + 1);
  if (laidOut) {
    const parts: string[] = [];
    for (const chunk of chunks) {
      if (chunk.endLine < from || chunk.startLine > to) continue;
      const text = withoutRepeat(parts.at(-1), chunk.text);
      if (text !== '' && parts.at(-1) !== chunk.text) parts.push(text);
    }
    return { ...base, text: parts.join(locator === 'page' ? '\n\n' : '\n') };
  }
  // Each line as the chunks hold it; overlapping chunks repeat lines, and a line split
  // between two chunks is kept in its longest piece.
  const lines = new Map<number, string>();
  for (const chunk of chunks) {
    if (chunk.endLine < from || chunk.startLine > to) continue;
    chunk.text.split('\n').forEach((line, k) => {
      const n = chunk.startLine + k;
      if ((lines.get(n)?.length ?? -1) < line.length) lines.set(n, line);
    });
  }
  const out: string[] = [];
  for (let n = from; n <= to; n++) out.push(lines.get(n) ?? '');
  return { ...base, text: out.join('\n') };
}

/** `text` without the start it repeats of `previous` (the chunker's overlap), when the repeat is found. */
function withoutRepeat(previous: string | undefined, text: string): string {
  if (!previous) return text;
  const newline = text.indexOf('\n');
  const head = newline === -1 ? text : text.slice(0, newline);
  const at = head.trim() ? previous.lastIndexOf(head) : -1;
  return at !== -1 && text.startsWith(previous.slice(at)) ? text.slice(previous.length - at).replace(/^\n/, '') : text;
}
