// Where a chunk recorded in a turn stands in the index today. Turns copy their
// chunks (path, lines, heading, text hash), never reference them, because chunk
// ids change when a document is re-ingested; so a stored chunk is matched to the
// current index by document name (its path, with its folder's name before it when
// folders share the path: store/document-names.ts) + text hash, and one that no
// longer matches is reported for what it is rather than treated as an error. A
// document can change its name without changing: when its folder is merged into
// the folder holding it (`a.md` of docs/sub is `sub/a.md` of docs), or when another
// folder comes to hold its path; its chunks are found by their text in the file
// the stored name ends, and compared under the name they have now.

import path from 'node:path';
import type { Db } from '../store/db.js';
import { sqliteChunkHashes, type ChunkHashes } from '../store/chunk-hashes.js';
import { DocumentNaming, type NamedDocument } from '../store/document-names.js';

export type { ChunkHashes } from '../store/chunk-hashes.js';

/**
 * `current`: the same text is still indexed under the same document.
 * `document_changed`: the document is still indexed, but re-ingested with different text here.
 * `removed`: no document with that name is indexed any more.
 */
export type ChunkIndexState = 'current' | 'document_changed' | 'removed';

/** Where a stored chunk stands in the index now. */
export interface ChunkPlace {
  indexState: ChunkIndexState;
  /**
   * The name its document has now, when the text is indexed under another name than
   * the stored one (its folder merged into the one holding it, or named now).
   */
  indexedAs?: string;
}

/** A chunk's identity across re-ingestion: document name (the one it has now, when it was renamed) + text hash. */
export function chunkKey(chunk: { documentPath: string; textHash: string; indexedAs?: string }): string {
  return `${chunk.indexedAs ?? chunk.documentPath}\u0000${chunk.textHash}`;
}

/** Human words for a state, for the terminal. */
export function describeIndexState(state: ChunkIndexState): string | undefined {
  if (state === 'removed') return 'no longer in the index';
  if (state === 'document_changed') return 'document changed since';
  return undefined;
}

/** Looks chunks up in the current index; statements prepared once, results cached per chunk identity. */
export class IndexStateLookup {
  private readonly chunks: ChunkHashes;
  private readonly names: DocumentNaming;
  private readonly named = new Map<string, NamedDocument[]>();
  private readonly cache = new Map<string, ChunkPlace>();

  /** On an SQLite file, or on the names and chunk rows of another store. */
  constructor(source: Db | { names: DocumentNaming; chunks: ChunkHashes }) {
    if ('prepare' in source) {
      this.chunks = sqliteChunkHashes(source);
      this.names = new DocumentNaming(source);
    } else {
      this.chunks = source.chunks;
      this.names = source.names;
    }
  }

  state(chunk: { documentPath: string; textHash: string }): ChunkIndexState {
    return this.locate(chunk).indexState;
  }

  locate(chunk: { documentPath: string; textHash: string }): ChunkPlace {
    const key = chunkKey(chunk);
    let place = this.cache.get(key);
    if (place === undefined) {
      place = this.find(chunk);
      this.cache.set(key, place);
    }
    return place;
  }

  private find(chunk: { documentPath: string; textHash: string }): ChunkPlace {
    let documents = this.named.get(chunk.documentPath);
    if (documents === undefined) this.named.set(chunk.documentPath, (documents = this.names.find(chunk.documentPath)));
    const same = documents.find((doc) => this.chunks.indexed(chunk.textHash, doc.id));
    if (same) return same.name === chunk.documentPath ? { indexState: 'current' } : { indexState: 'current', indexedAs: same.name };
    // A document still named so has changed; a copy of the old text elsewhere (a vendored
    // README) is not it.
    if (documents.length > 0) return { indexState: 'document_changed' };
    // No document is named so now: the same text in the same file under another name,
    // a file whose folder and path end as the stored name does (a folder merged into the one holding it).
    const wanted = chunk.documentPath.split('/');
    const holders = this.chunks.holders(chunk.textHash);
    const moved = holders.find((doc) => endsWith([...doc.root.split(path.sep), ...doc.path.split('/')], wanted));
    if (moved) return { indexState: 'current', indexedAs: this.names.namesOf([moved])[0]! };
    return { indexState: 'removed' };
  }
}

function endsWith(parts: readonly string[], tail: readonly string[]): boolean {
  return tail.length <= parts.length && tail.every((part, i) => parts[parts.length - tail.length + i] === part);
}
