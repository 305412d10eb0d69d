// How retrieved chunks, rewrites and citations look in the terminal. Shared by
// `search`, `chat`, `ask` and `replay`, so all four show chunks the same way.
// Every piece of document text passes through sanitizeForTerminal.

import type { PruneReport } from '../app/index.js';
import { plainHeading } from '../ingest/chunk.js';
import { formatLocation } from '../retrieve/search.js';
import type { ChunkLocation, Topic } from '../domain/index.js';
import { rankTopics, rankTopicsForDisplay } from '../rewrite/index.js';
import { isStopword, stem, tokenize } from '../text/index.js';
import { oneLine } from '../util/sanitize.js';
import { count } from '../util/words.js';
import type { Colors } from './output.js';

export interface ChunkLine extends ChunkLocation {
  rank: number;
  score: number;
  heading: string;
  text?: string;
  vectorRank?: number | null;
  keywordRank?: number | null;
}

/** Fewer columns than this left for the snippet on the chunk's line, and it goes on a line of its own under it. */
const SNIPPET_MIN = 30;
/** The indent of a snippet on a line of its own: under the location. */
const SNIPPET_INDENT = '     ';

/**
 * `  1  0.0325  docs/auth.md:12-40  Authentication > API keys  v1 k2  "Create a key with…"`, fitted to `width` columns.
 * With the `query` it was found for, the snippet starts at the line of the chunk that holds most of its words.
 * In a narrow terminal, where the heading leaves the snippet too little room, the snippet is a second line under it.
 */
export function chunkLine(chunk: ChunkLine, color: Colors, width = 100, query?: string): string {
  const rank = String(chunk.rank).padStart(3);
  const score = chunk.score.toFixed(4);
  const parts = `${chunk.vectorRank ? `v${chunk.vectorRank}` : 'v-'} ${chunk.keywordRank ? `k${chunk.keywordRank}` : 'k-'}`;
  const location = oneLine(formatLocation(chunk), Math.max(24, Math.min(80, width - 20)));
  // columns: rank, score, location, heading, parts, snippet, two spaces apart
  const fixed = rank.length + 2 + score.length + 2 + location.length + 2 + parts.length;
  const headingRoom = width - 1 - fixed - 2;
  const shown = chunk.text ? shownHeading(chunk.heading, chunk.text) : chunk.heading;
  // A third of a wide terminal, at least 50 columns, and the rest for the snippet.
  const heading = shown && headingRoom > 12 ? fitHeading(shown, Math.min(Math.max(50, Math.floor(width / 3)), headingRoom)) : '';
  const snippetRoom = width - 1 - fixed - (heading ? heading.length + 2 : 0) - 2 - 2; // join, quotes
  const below = snippetRoom < SNIPPET_MIN;
  const room = below ? width - 1 - SNIPPET_INDENT.length - 2 : snippetRoom;
  const snippet = chunk.text && room > 12 ? oneLine(snippetSource(chunk.text, shown.replace(/ \(\+\d+\)$/, ''), query), room) : '';
  const line = [`${rank}  ${color.dim(score)}  ${color.cyan(location)}`, heading ? color.bold(heading) : '', color.dim(parts), snippet && !below ? color.dim(`“${snippet}”`) : '']
    .filter(Boolean)
    .join('  ');
  return snippet && below ? `${line}\n${SNIPPET_INDENT}${color.dim(`“${snippet}”`)}` : line;
}

/**
 * The heading to show for a chunk: its heading path, and when the chunk is small
 * sections under it (merged, so the path is their parent's: "Path") and starts with
 * the first of them, that one's title and how many more (`Path > path.join([...paths])
 * (+3)`).
 */
export function shownHeading(heading: string, text: string): string {
  const inPath = new Set(heading.split(' > ').map(headingKey));
  const inner: string[] = [];
  let opened = false;
  for (const line of textLines(text, 400)) {
    if (!opened && line.text !== '' && !line.markup && line.title === undefined) {
      // The chunk opens with text of its own section: it is that section, not small ones merged.
      if (inner.length === 0) return heading;
      opened = true;
    }
    if (line.title && !inPath.has(headingKey(line.title))) inner.push(line.title.replace(/`/g, ''));
  }
  if (inner.length === 0) return heading;
  const first = `${heading ? `${heading} > ` : ''}${inner[0]}`;
  return inner.length > 1 ? `${first} (+${inner.length - 1})` : first;
}

interface TextLine {
  /** The line, trimmed. */
  text: string;
  /** Its title when it is a heading outside code: a Markdown `#` line ('' when it has none), or a title over its underline. */
  title?: string;
  /** Only marks up structure: an underline, a rule, a code fence. */
  markup: boolean;
}

/** An underline or overline: one punctuation character, three times or more. */
const ADORNMENT = /^([=\-`:'"~^_*+#<>.])\1{2,}$/;

/** The first `max` lines of a chunk's text, read once, in linear time, with code fences followed (a `#` line in one is code). */
function textLines(text: string, max: number): TextLine[] {
  const lines = text.split('\n', max).map((line) => line.trim());
  const out: TextLine[] = [];
  let fence: string | undefined; // the fence character while inside a fenced block
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const opener = /^(?:`{3,}|~{3,})/.exec(line)?.[0];
    if (opener !== undefined && (fence === undefined || opener[0] === fence)) {
      fence = fence === undefined ? opener[0] : undefined;
      out.push({ text: line, markup: true });
      continue;
    }
    if (fence !== undefined) {
      out.push({ text: line, markup: false });
      continue;
    }
    const next = lines[i + 1] ?? '';
    let title: string | undefined;
    const atx = /^#{1,6}(?=\s|$)/.exec(line);
    // As the heading path holds it: "Frobnicator", not "Frobnicator [![Build Status](...)](...)".
    if (atx) title = plainHeading(withoutClosingHashes(line.slice(atx[0].length)));
    else if (line !== '' && ADORNMENT.test(next) && line.length <= next.length && !ADORNMENT.test(line)) title = line;
    out.push({ text: line, markup: title === undefined && (ADORNMENT.test(line) || FENCE.test(line)), ...(title !== undefined ? { title } : {}) });
  }
  return out;
}

/** The text of an ATX heading after its `#`s, without a closing run of `#` (no backtracking: a long line stays linear). */
function withoutClosingHashes(rest: string): string {
  let end = rest.length;
  while (end > 0 && rest[end - 1] === '#') end--;
  // A closing run counts only after a space ("# C#" keeps its #).
  if (end < rest.length && end > 0 && !/\s/.test(rest[end - 1]!)) end = rest.length;
  return rest.slice(0, end).trim();
}

/**
 * A heading path in `max` columns, shortened from the front: its last part names the
 * section (`child_process.spawn(command[, args][, options])`), so the first parts give
 * way to `…` before it is cut (`Child process > … > child_process.spawn(…)`).
 */
export function fitHeading(heading: string, max: number): string {
  const flat = oneLine(heading);
  if (flat.length <= max) return flat;
  const parts = flat.split(' > ');
  const last = parts.pop()!;
  if (parts.length === 0 || last.length + 4 > max) return oneLine(last, max);
  const withFirst = `${parts[0]} > … > ${last}`;
  return parts.length > 1 && withFirst.length <= max ? withFirst : `… > ${last}`;
}

/** A code fence, with its language (an underline, overline or rule is an ADORNMENT: both only mark up structure). */
const FENCE = /^(?:`{3,}|~{3,})[\w+-]*$/;

/** A heading as compared with the chunk's heading path: no Markdown marks, one case, single spaces. */
const headingKey = (text: string) => text.replace(/[`*_]/g, '').replace(/\s+/g, ' ').trim().toLowerCase();

/**
 * The start of a chunk's text as a snippet: without the heading lines the heading
 * column shows (a Markdown `#` line, or a title over its underline, that is a part of
 * `heading`, the chunk's heading path) and the lines that only mark up structure. The
 * titles of the small sections a chunk holds under their parent's path
 * (`process.cwd()` under "Process") are not in its path: they stay, without their
 * marks. Without `heading`, every heading line is left out. Reads only as far as a
 * snippet can show.
 */
export function snippetSource(text: string, heading?: string, query?: string): string {
  const shown = heading === undefined ? undefined : new Set(heading.split(' > ').map(headingKey));
  const inColumn = (title: string) => shown === undefined || shown.has(headingKey(title));
  const wanted = query === undefined ? undefined : queryStems(query);
  const lines: string[] = [];
  let length = 0;
  // The line holding most of the query's words; a later one only when it holds more than the first.
  let best = { at: 0, found: 0 };
  for (const line of textLines(text, wanted ? 400 : 60)) {
    // Without a query only the start is shown; with one, the lines are read on to find its words.
    if (length >= (wanted ? SNIPPET_SEARCH_CHARS : 400)) break;
    if (line.text === '' || line.markup) continue;
    if (line.title !== undefined && (line.title === '' || inColumn(line.title))) continue;
    const shownText = line.title !== undefined ? line.title.replace(/`/g, '') : line.text;
    if (wanted && wanted.size > 0) {
      const found = stemsOf(shownText, wanted);
      if (found > best.found) best = { at: lines.length, found };
    }
    lines.push(shownText);
    length += shownText.length + 1;
  }
  // The start, unless a later line holds more of the query's words: then from there, marked as cut.
  if (best.at > 0) return `…${lines.slice(best.at).join(' ')}`;
  return lines.join(' ');
}

/** How far into a chunk a snippet looks for the query's words. */
const SNIPPET_SEARCH_CHARS = 4000;

/** Stems of the query's content words. */
function queryStems(query: string): Set<string> {
  return new Set(tokenize(query).filter((word) => !isStopword(word)).map(stem));
}

/** How many of `wanted` (stems) `text` holds. */
function stemsOf(text: string, wanted: Set<string>): number {
  const found = new Set<string>();
  for (const word of tokenize(text)) {
    if (isStopword(word)) continue;
    const stemmed = stem(word);
    if (wanted.has(stemmed)) found.add(stemmed);
  }
  return found.size;
}

/**
 * Tracked topics, the active one (what "it" most likely means) first and marked; with
 * the index's term statistics the others follow by how specific they are in it.
 */
export function topicList(topics: readonly Topic[], color: Colors, termShare?: (word: string) => number): string {
  return (termShare ? rankTopicsForDisplay(topics, termShare) : rankTopics(topics))
    .map((topic, i) => (i === 0 ? color.bold(`${oneLine(topic.term, 60)} (active)`) : oneLine(topic.term, 60)))
    .join(', ');
}

/** `Removed 3 turns (12 retrieval rows) and 1 emptied session older than <cutoff>.` (`Would remove` on a dry run). */
export function describePrune(report: PruneReport): string {
  const verb = report.dryRun ? 'Would remove' : 'Removed';
  return `${verb} ${count(report.turns, 'turn')} (${count(report.retrievalRows, 'retrieval row')}) and ${count(report.sessions, 'emptied session')} older than ${report.cutoff}.`;
}
