// HTML comments in Markdown are not shown by any renderer, so they are not
// indexed: the Node.js API docs put a `<!-- YAML added: ... -->` block under
// every heading, and those came first in chunks, snippets and answers. Line for
// line: a comment leaves its line breaks, so chunks still cite the file's lines.
// Comments inside fenced code blocks and inline code spans are code, and stay.

import { lineStartsOf, scanMarkdown, withLineFeeds } from './chunk.js';

/** `text` without its HTML comments (outside code), line for line; the same string when it has none. */
export function markdownWithoutComments(rawText: string): string {
  if (!rawText.includes('<!--')) return rawText;
  const text = withLineFeeds(rawText);
  const starts = lineStartsOf(text);
  const inFence = new Uint8Array(starts.length);
  for (const [first, last] of scanMarkdown(text, starts).fences) inFence.fill(1, first, last + 1);
  let out = '';
  let copied = 0;
  let line = 0;
  for (let at = text.indexOf('<!--'); at !== -1; at = text.indexOf('<!--', at + 4)) {
    while (line + 1 < starts.length && starts[line + 1]! <= at) line++;
    if (inFence[line] || insideCodeSpan(text.slice(starts[line]!, at))) continue;
    const close = text.indexOf('-->', at + 4);
    const end = close === -1 ? text.length : close + 3;
    out += text.slice(copied, at) + text.slice(at, end).replace(/[^\n]/g, '');
    copied = end;
    at = end - 4;
  }
  return copied === 0 ? text : out + text.slice(copied);
}

/** Whether a position after `before` (the start of its line) is inside a backquoted code span. */
function insideCodeSpan(before: string): boolean {
  return (before.match(/`/g)?.length ?? 0) % 2 === 1;
}
