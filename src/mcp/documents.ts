// The documents an MCP client can open: `ragline://doc/<path>`, optionally with a
// range `#L<from>-<to>` (or `#L<n>`) in the units results cite (lines; pages for a
// PDF). Text is served from the index, not read from the disk: a path names a
// document only if it was ingested, and the lines are those a citation refers to
// even when the file has changed since. Blank lines between chunks come back empty.

import type { ChunkSpan, Locator } from '../domain/index.js';
import type { Db } from '../store/db.js';

export const DOC_URI_PREFIX = 'ragline://doc/';

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

export interface IndexedDocument {
  path: string;
  title: string | null;
  kind: string;
}

/** `ragline://doc/guides/auth.md#L12-40` for a cited chunk (each path segment percent-encoded). */
export function documentUri(path: string, range?: DocumentRange): string {
  const encoded = path.split('/').map(encodeURIComponent).join('/');
  if (!range) return DOC_URI_PREFIX + encoded;
  return `${DOC_URI_PREFIX}${encoded}#L${range.from}${range.to !== range.from ? `-${range.to}` : ''}`;
}

/** The document path and range a `ragline://doc/...` URI names; undefined when it is not one. */
export function parseDocumentUri(uri: string): { path: string; range?: DocumentRange } | undefined {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'ragline:' || url.host !== 'doc') return undefined;
  let path: string;
  try {
    path = decodeURIComponent(url.pathname.replace(/^\//, ''));
  } catch {
    return undefined;
  }
  if (!path) return undefined;
  if (!url.hash) return { path };
  const match = /^#L(\d{1,9})(?:-L?(\d{1,9}))?$/.exec(url.hash);
  if (!match) return { path, range: { from: NaN, to: NaN } };
  const from = Number(match[1]);
  const to = match[2] === undefined ? from : Number(match[2]);
  return { path, range: { from, to } };
}

/** Every ingested document, by path. */
export function listIndexedDocuments(db: Db): IndexedDocument[] {
  return db.prepare('SELECT path, max(title) AS title, max(kind) AS kind FROM documents GROUP BY path ORDER BY path').all() as IndexedDocument[];
}

/**
 * The indexed text of `path` (the whole document, or `range`), or undefined when no
 * document with that path is in the index. A range outside the document is an Error.
 */
export function readIndexedDocument(db: Db, path: string, range?: DocumentRange): DocumentText | undefined {
  const doc = db
    .prepare('SELECT id, path, title, kind FROM documents WHERE path = ? ORDER BY ingested_at DESC, id DESC LIMIT 1')
    .get(path) as { id: number; path: string; title: string | null; kind: string } | undefined;
  if (!doc) return undefined;
  const chunks = db
    .prepare('SELECT text, start_line AS startLine, end_line AS endLine, locator FROM chunks WHERE document_id = ? ORDER BY ordinal')
    .all(doc.id) as (ChunkSpan & { text: string })[];
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
  const base = { path: doc.path, title: doc.title, kind: doc.kind, locator, from, to, last };
  if (locator === 'page') {
    const parts: string[] = [];
    for (const chunk of chunks) {
      if (chunk.endLine < from || chunk.startLine > to) continue;
      if (parts.at(-1) !== chunk.text) parts.push(chunk.text);
    }
    return { ...base, text: parts.join('\n\n') };
  }
  // Each line as the chunks hold it; overlapping chunks repeat lines, and a line split
  // between two chunks is kept in its longest piece.
  const lines = new Map<number, string>();
  for (const chunk of chunks) {
    if (chunk.endLine < from || chunk.startLine > to) continue;
    chunk.text.split('\n').forEach((line, i) => {
      const n = chunk.startLine + i;
      if ((lines.get(n)?.length ?? -1) < line.length) lines.set(n, line);
    });
  }
  const out: string[] = [];
  for (let n = from; n <= to; n++) out.push(lines.get(n) ?? '');
  return { ...base, text: out.join('\n') };
}
