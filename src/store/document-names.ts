// The name a document is shown by (citations, search results, stored turns, MCP
// resources, judgments): its path relative to the folder it was ingested from, and,
// only when the index holds that path under more than one folder, the folder's name
// before it (`projA/README.md`, `projB/README.md`). A name given back (a stored
// turn's chunk, an MCP URI, a judged document) is resolved here too.

import path from 'node:path';
import type { Db } from './db.js';

/** A document with the name it is shown by. */
export interface NamedDocument {
  id: number;
  /** The folder it was ingested from (absolute). */
  root: string;
  /** Relative to `root`, '/'-separated. */
  path: string;
  /** `path`, or `<folder name>/<path>` when another folder holds the same path. */
  name: string;
  title: string | null;
  kind: string;
}

/** A document as the index lists it: its name, and what was ingested of it. */
export interface ListedDocument extends NamedDocument {
  /** Bytes of the file when it was ingested. */
  size: number;
  chunks: number;
  /** When its content was last ingested (ISO). */
  ingestedAt: string;
}

/**
 * Each folder's name: the last segment of its path, or as many more as tell it from
 * the other folders' (`/a/x/docs` and `/b/x/docs` are `a/x/docs` and `b/x/docs`).
 */
export function folderNames(roots: readonly string[]): Map<string, string> {
  const segments = roots.map((root) => root.split(path.sep).filter(Boolean));
  const tail = (parts: string[], n: number) => parts.slice(-n).join('/');
  const names = new Map<string, string>();
  roots.forEach((root, i) => {
    const own = segments[i]!;
    let n = 1;
    while (n < own.length && segments.some((other, j) => j !== i && tail(other, n) === tail(own, n))) n++;
    names.set(root, tail(own, n) || root);
  });
  return names;
}

function joined(folder: string, documentPath: string): string {
  return folder.endsWith('/') ? folder + documentPath : `${folder}/${documentPath}`;
}

type DocumentRow = Omit<NamedDocument, 'name'>;

/** A document row as the index lists it. */
export type ListedDocumentRow = Omit<ListedDocument, 'name'>;

/**
 * The reads DocumentNaming makes of the documents table: prepared statements on an
 * SQLite file (sqliteDocumentRows), or the rows read once from another store
 * (documentRowsOf, for Postgres, whose reads are asynchronous).
 */
export interface DocumentRows {
  /** The folders, in order. */
  roots(): string[];
  /** Whether `root` holds `path`. */
  held(root: string, path: string): boolean;
  /** The documents at `path` in any folder, in ingest order. */
  byPath(path: string): DocumentRow[];
  byRootAndPath(root: string, path: string): DocumentRow | undefined;
  /** Every document, in ingest order. */
  all(): ListedDocumentRow[];
  /** The documents whose path is `wanted` with an extension, or (`bare`) that end in `/wanted` with or without one, in ingest order. */
  withoutExtension(wanted: string, bare: boolean): { root: string; path: string }[];
}

export function sqliteDocumentRows(db: Db): DocumentRows {
  // One step of the (root, path) index per folder, however many documents there are.
  const rootsStatement = db
    .prepare(
      `WITH RECURSIVE folder(root) AS (
         SELECT min(root) FROM documents
         UNION ALL
         SELECT (SELECT min(root) FROM documents WHERE root > folder.root) FROM folder WHERE folder.root IS NOT NULL)
       SELECT root FROM folder WHERE root IS NOT NULL`,
    )
    .pluck();
  const held = db.prepare('SELECT 1 FROM documents WHERE root = ? AND path = ?').pluck();
  const columns = 'id, root, path, title, kind';
  const byPath = db.prepare(`SELECT ${columns} FROM documents WHERE path = ? ORDER BY id`);
  const byRootAndPath = db.prepare(`SELECT ${columns} FROM documents WHERE root = ? AND path = ?`);
  const everything = db.prepare(`SELECT ${columns}, size, chunk_count AS chunks, ingested_at AS ingestedAt FROM documents ORDER BY id`);
  const like = db.prepare(`SELECT root, path FROM documents WHERE path LIKE ? ESCAPE '\\' OR (? AND (path LIKE ? ESCAPE '\\' OR path LIKE ? ESCAPE '\\')) ORDER BY id`);
  return {
    roots: () => rootsStatement.all() as string[],
    held: (root, path) => held.get(root, path) !== undefined,
    byPath: (path) => byPath.all(path) as DocumentRow[],
    byRootAndPath: (root, path) => byRootAndPath.get(root, path) as DocumentRow | undefined,
    all: () => everything.all() as ListedDocumentRow[],
    withoutExtension: (wanted, bare) =>
      like.all(`${escapeLike(wanted)}.%`, bare ? 1 : 0, `%/${escapeLike(wanted)}.%`, `%/${escapeLike(wanted)}`) as { root: string; path: string }[],
  };
}

/** DocumentRows over rows read already (in ingest order). */
export function documentRowsOf(rows: readonly ListedDocumentRow[]): DocumentRows {
  const byKey = new Map(rows.map((row) => [`${row.root}\u0000${row.path}`, row]));
  const roots = [...new Set(rows.map((row) => row.root))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const brief = (row: ListedDocumentRow): DocumentRow => ({ id: row.id, root: row.root, path: row.path, title: row.title, kind: row.kind });
  return {
    roots: () => roots,
    held: (root, path) => byKey.has(`${root}\u0000${path}`),
    byPath: (path) => rows.filter((row) => row.path === path).map(brief),
    byRootAndPath: (root, path) => {
      const row = byKey.get(`${root}\u0000${path}`);
      return row && brief(row);
    },
    all: () => [...rows],
    withoutExtension: (wanted, bare) =>
      rows.filter((row) => row.path.startsWith(`${wanted}.`) || (bare && (row.path.includes(`/${wanted}.`) || row.path.endsWith(`/${wanted}`)))),
  };
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** Names documents as they are shown, and resolves a name back; the folders read at each call. */
export class DocumentNaming {
  readonly rows: DocumentRows;

  constructor(source: Db | DocumentRows) {
    this.rows = 'prepare' in source ? sqliteDocumentRows(source) : source;
  }

  /** The folders documents were ingested from, in order. */
  roots(): string[] {
    return this.rows.roots();
  }

  /** The names of documents given by folder and path (a search's results), in order. */
  namesOf(documents: readonly { root: string; path: string }[]): string[] {
    const roots = this.roots();
    if (roots.length < 2) return documents.map((doc) => doc.path);
    const folders = folderNames(roots);
    return documents.map((doc) => {
      const shared = roots.some((root) => root !== doc.root && this.rows.held(root, doc.path));
      return shared ? joined(folders.get(doc.root) ?? doc.root, doc.path) : doc.path;
    });
  }

  /** Every document with its name, in the order they were first ingested. */
  all(): ListedDocument[] {
    const rows = this.rows.all();
    const folders = new Map<string, Set<string>>();
    for (const row of rows) folders.set(row.path, (folders.get(row.path) ?? new Set()).add(row.root));
    const names = folderNames([...new Set(rows.map((row) => row.root))]);
    return rows.map((row) => ({ ...row, name: folders.get(row.path)!.size > 1 ? joined(names.get(row.root)!, row.path) : row.path }));
  }

  /**
   * The documents `name` names: the one shown by that name; else every document whose
   * path it is (two or more when folders share the path), or whose path it is with
   * its folder's name, or the end of its folder's path, before it (a name given when
   * the folders were others).
   */
  find(name: string): NamedDocument[] {
    const found = new Map<number, DocumentRow>();
    for (const row of this.rows.byPath(name)) found.set(row.id, row);
    for (const root of this.roots()) {
      const parts = root.split(path.sep).filter(Boolean);
      for (let n = 1; n <= parts.length; n++) {
        const folder = parts.slice(-n).join('/');
        if (!name.startsWith(folder + '/')) continue;
        const row = this.rows.byRootAndPath(root, name.slice(folder.length + 1));
        if (row) found.set(row.id, row);
      }
    }
    const rows = [...found.values()].sort((a, b) => a.id - b.id);
    const named = this.namesOf(rows).map((shown, i) => ({ ...rows[i]!, name: shown }));
    const exact = named.filter((doc) => doc.name === name);
    return exact.length > 0 ? exact : named;
  }
}
