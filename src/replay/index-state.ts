// Where a chunk recorded in a turn stands in the index today. Turns copy their
// chunks (path, lines, heading, text hash), never reference them, because chunk
// ids change when a document is re-ingested; so a stored chunk is matched to the
// current index by document path + text hash, and one that no longer matches is
// reported for what it is rather than treated as an error.

import type { Db } from '../store/db.js';

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
  private readonly documentIndexed;
  private readonly cache = new Map<string, ChunkIndexState>();

  constructor(db: Db) {
    this.chunkIndexed = db
      .prepare('SELECT 1 FROM chunks c JOIN documents d ON d.id = c.document_id WHERE c.text_hash = ? AND d.path = ? LIMIT 1')
      .pluck();
    this.documentIndexed = db.prepare('SELECT 1 FROM documents WHERE path = ? LIMIT 1').pluck();
  }

  state(chunk: { documentPath: string; textHash: string }): ChunkIndexState {
    const key = chunkKey(chunk);
    let state = this.cache.get(key);
    if (state === undefined) {
      if (this.chunkIndexed.get(chunk.textHash, chunk.documentPath) !== undefined) state = 'current';
      else if (this.documentIndexed.get(chunk.documentPath) !== undefined) state = 'document_changed';
      else state = 'removed';
      this.cache.set(key, state);
    }
    return state;
  }
}
