// Where a chunk recorded in a turn stands in the index today. Turns copy their
// chunks (path, lines, heading, text hash), never reference them, because chunk
// ids change when a document is re-ingested; so a stored chunk is matched to the
// current index by document name (its path, with its folder's name before it when
// folders share the path: store/document-names.ts) + text hash, and one that no
// longer matches is reported for what it is rather than treated as an error.

import type { Db } from '../store/db.js';
import { DocumentNaming, type NamedDocument } from '../store/document-names.js';

/**
 * `current`: the same text is still indexed under the same path.
 * `document_changed`: the document is still indexed, but re-ingested with different text here.
 * `removed`: no document with that path is indexed any more.
 */
export type ChunkIndexState = 'current' | 'document_changed' | 'removed';

/** A chunk's identity across re-ingestion: document path + text hash. */
export function chunkKey(chunk: { documentPath: string; textHash: string }): string {
  return `${chunk.documentPath}\u0000${chunk.textHash}`;
}

/** Human words for a state, for the terminal. */
export function describeIndexState(state: ChunkIndexState): string | undefined {
  if (state === 'removed') return 'no longer in the index';
  if (state === 'document_changed') return 'document changed since';
  return undefined;
}

/** Looks chunks up in the current index; statements prepared once, results cached per chunk identity. */
export class IndexStateLookup {
  private readonly chunkIndexed;
  private readonly names: DocumentNaming;
  private readonly named = new Map<string, NamedDocument[]>();
  private readonly cache = new Map<string, ChunkIndexState>();

  constructor(db: Db) {
    this.chunkIndexed = db.prepare('SELECT 1 FROM chunks WHERE text_hash = ? AND document_id = ? LIMIT 1').pluck();
    this.names = new DocumentNaming(db);
  }

  state(chunk: { documentPath: string; textHash: string }): ChunkIndexState {
    const key = chunkKey(chunk);
    let state = this.cache.get(key);
    if (state === undefined) {
      let documents = this.named.get(chunk.documentPath);
      if (documents === undefined) this.named.set(chunk.documentPath, (documents = this.names.find(chunk.documentPath)));
      if (documents.some((doc) => this.chunkIndexed.get(chunk.textHash, doc.id) !== undefined)) state = 'current';
      else if (documents.length > 0) state = 'document_changed';
      else state = 'removed';
      this.cache.set(key, state);
    }
    return state;
  }
}
