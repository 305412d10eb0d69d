// The documents an MCP client can open: `ragline://doc/<path>`, optionally with a
// range `#L<from>-<to>` (or `#L<n>`) in the units results cite (lines; pages for a
// PDF). The text is served from the index (src/app/documents.ts).

import type { DocumentRange } from '../app/index.js';

export const DOC_URI_PREFIX = 'ragline://doc/';

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
