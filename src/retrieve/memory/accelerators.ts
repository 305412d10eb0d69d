// The in-memory copies of one database's search indexes, and their load state: made
// once per database by whoever opens it (a chat, the MCP server, a benchmark), given
// to the Retriever, and closed by its maker. A Retriever given none makes its own.

import { DEFAULT_SEARCH_PATHS, type SearchPaths } from '../../config/index.js';
import type { Db } from '../../store/db.js';
import type { KeywordSearch, VectorSearch } from '../interfaces.js';
import { KeywordCopy } from './keyword-copy.js';
import { VectorCopy, type VectorPaths } from './vector-copy.js';

export class SearchAccelerators {
  readonly vectors: VectorCopy;
  readonly keywords: KeywordCopy;

  constructor(db: Db) {
    this.vectors = new VectorCopy(db);
    this.keywords = new KeywordCopy(db);
  }

  /**
   * What answers the next vector search under `paths`: the vector copy when it is
   * loaded (or must load now), else `reference` (vec0). Call once per search.
   */
  vectorSearch(paths: VectorPaths, reference: VectorSearch): VectorSearch {
    return this.vectors.searchFor(paths) ?? reference;
  }

  /**
   * What answers the next search's keyword queries under `paths`: the keyword copy
   * (with `reference` for the expressions it does not read) when it is loaded, else
   * `reference` (FTS5). Call once per search, inside its read transaction.
   */
  keywordSearch(paths: Pick<SearchPaths, 'keyword'>, reference: KeywordSearch): KeywordSearch {
    return this.keywords.searchFor(paths.keyword, reference) ?? reference;
  }

  /** Loads (or refreshes) both copies now (benchmarks). */
  warm(paths: SearchPaths = DEFAULT_SEARCH_PATHS): void {
    this.vectors.warm(paths);
    this.keywords.warm(paths.keyword);
  }

  /** Loads both copies in the background, the keyword copy on a worker thread where it can (a chat, a server). */
  warmInBackground(paths: SearchPaths = DEFAULT_SEARCH_PATHS): Promise<void> {
    return Promise.all([this.vectors.warmInBackground(paths), this.keywords.warmInBackground(paths.keyword)]).then(() => {});
  }

  /** Stops the vector copy's helper thread and drops both copies; searches answer from SQLite from then on. */
  close(): void {
    this.vectors.close();
    this.keywords.close();
  }
}
