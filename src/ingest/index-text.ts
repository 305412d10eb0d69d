// What of a chunk goes into each index. One function, so the ingest, the
// benchmark and the tests agree on it.

import { createHash } from 'node:crypto';

export interface IndexedText {
  /** Text given to the embedder. */
  embed: string;
  /** Hash of `embed`: equal hashes share one stored vector. */
  hash: string;
  /** Per-column text for the FTS5 table. */
  fts: { title: string; heading: string; body: string };
}

export function indexText(title: string | undefined, headingPath: string[], body: string): IndexedText {
  const heading = headingPath.join(' > ');
  const parts: string[] = [];
  // The heading path usually starts with the document's H1, which is its title.
  if (title && headingPath[0] !== title && !body.startsWith(title)) parts.push(title);
  if (heading) parts.push(heading);
  parts.push(body);
  const embed = parts.join('\n');
  return {
    embed,
    hash: createHash('sha1').update(embed).digest('hex'),
    fts: { title: title ?? '', heading, body },
  };
}
