/** What a chunk's line numbers count: source lines, or pages of a PDF. */
export type Locator = 'line' | 'page';

/** The lines (or pages) a chunk covers within its document. */
export interface ChunkSpan {
  /** 1-based first line (or page). */
  startLine: number;
  /** 1-based last line (or page), inclusive. */
  endLine: number;
  locator: Locator;
}

/** Where a chunk sits: enough to cite it as `path:12-40` or `path:p.3`. */
export interface ChunkLocation extends ChunkSpan {
  /**
   * Path relative to the ingested folder; when the index holds the same path under
   * more than one folder, with the folder's name before it (`projA/README.md`).
   */
  documentPath: string;
}
