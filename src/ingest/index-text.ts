// What of a chunk goes into each index. One function, so the ingest, the
// benchmark and the tests agree on it. Measured on bench/mtrag: putting the
// document title and heading path in a separate, up-weighted FTS column and in
// front of the embedded text lifts keyword R@5 on Cloud from 0.242 to 0.261. The
// FTS5 columns get names such as C++ spelled as words (symbols.ts); the embedded text
// keeps them, and the offline embedder spells them itself.

import { keywordText } from '../text/symbols.js';
import { hexDigest } from '../util/hash.js';

export interface IndexedText {
  /** Heading path joined with ' > ' (stored and shown). */
  heading: string;
  /** Text given to the embedder: the title line, then the body. */
  embed: string;
  /** Hash of `embed`: equal hashes share one stored vector. */
  hash: string;
  /** Per-column text for the FTS5 table, with C++, C#, .NET spelled as words (symbols.ts). */
  fts: { title: string; body: string };
}

export function indexText(title: string | undefined, headingPath: string[], body: string): IndexedText {
  const heading = headingPath.join(' > ');
  // The heading path usually starts with the document's H1, which is its title.
  const titleParts = title && headingPath[0] !== title ? [title, ...headingPath] : headingPath;
  const titleLine = titleParts.join(' > ');
  const embed = titleLine ? `${titleLine}\n${body}` : body;
  return {
    heading,
    embed,
    hash: hexDigest('sha1', embed),
    fts: { title: keywordText(titleLine), body: keywordText(body) },
  };
}
