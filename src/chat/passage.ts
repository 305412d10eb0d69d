// The offline answer: with no language model, quote the passage of the retrieved chunks
// that holds most of what was asked, as it stands in the document, under its citation and
// the title of its section. A chunk is read as units in their order: the sentences of its
// paragraphs and list items, and the lines of its code blocks (kept verbatim, with their
// indentation and prompts). A passage is a run of units of one section, up to
// MAX_PASSAGE_CHARS, that opens with prose (or code, for a question that asks how).
//
// Its score, in one line: the share of the question's words that its first two units hold
// and the share that its section's title holds, half each (two fields, as BM25F weighs a
// title beside a body), each word counted once and weighted by its rarity in the index
// (idf), a word the rewrite added as context counting ADDED_TERM_WEIGHT of one the user
// typed; minus RANK_STEP for each place its chunk ranks below the first. Ties go to the
// better-ranked chunk, then to the earlier passage. A second passage, from another chunk,
// is quoted when it holds a word the user typed that the first lacks and scores at least
// half as well. Measured against the sentence-picking answer it replaces:
// bench/results/offline-answers.md.
//
// Whether the documents cover the question at all (names no chunk holds, names few hold,
// the share of the asked words the best chunk carries) is extractive.ts's.

import type { RetrievedChunk } from '../retrieve/search.js';
import { ABBREVIATION, askingClause, indexedTokens, isStopword, stem } from '../text/index.js';
import { orList, plainQuestion } from '../util/words.js';
import { cleanInline, EXTRACTIVE_LABEL, MIN_CHUNK_COVERAGE, NOT_COVERED, questionTerms, termsIn, withoutEmphasis } from './extractive.js';

/** A passage is at most this long (it always holds its first unit whole). */
export const MAX_PASSAGE_CHARS = 550;
/** Score taken off a passage for each place its chunk ranks below the first. */
export const RANK_STEP = 0.05;
/** Weight of a word the rewrite added (context), relative to a word the user typed. */
export const ADDED_TERM_WEIGHT = 0.3;
/** Units a passage's opening is read over: the unit it opens with and the next. */
const OPEN_UNITS = 2;
/** A unit of prose with fewer words (a name alone in a list) opens no passage. */
const MIN_WORDS = 3;

/** One unit of a chunk: a sentence of prose, or a line of code as written. */
export interface Unit {
  text: string;
  code: boolean;
  /** Units of one paragraph, list item or code block share it. */
  block: number;
  /** Units under one heading share it: a passage does not cross a heading. */
  section: number;
  /** The heading of its section in the chunk's text; none before the chunk's first heading. */
  heading?: string;
}

export interface Passage {
  /** The passage as quoted. */
  text: string;
  /** Number of the chunk it is from (1-based position in the retrieved list). */
  n: number;
  score: number;
}

export interface PassageAnswer {
  /** The text to show and store. */
  text: string;
  /** False when the documents do not cover the question (text is the not-covered message). */
  covered: boolean;
  passages: Passage[];
}

/** How common a word is: the share of the index's chunks that hold it (0 when unknown). */
export type WordShare = (word: string) => number;

/** A fence of a Markdown code block. */
const FENCE = /^\s*(```|~~~)/;
/** A Markdown heading, or a numbered section title alone on its line ("4.2.8. Memory leak detection"). */
const HEADING = /^(?:#{1,6}\s|\d+\.\d+(?:\.\d+)*\.?\s+[^.!?]{1,100}$)/;
/** An RST adornment: a run of one punctuation character (under or over a title). */
const ADORNMENT = /^([-=~^"'`#*+_])\1{2,}\s*$/;
/** A table rule (`|---|---|`, `+----+`) or a run of rule characters. */
const RULE = /^[-=*_|:+\s]{3,}$/;
/** An RST directive: `.. name:: argument`. */
const DIRECTIVE = /^\.\.\s+([\w-]+)::\s*(.*)$/;
/** Directives whose body is code. */
const CODE_DIRECTIVES = new Set(['code-block', 'code', 'sourcecode', 'parsed-literal', 'productionlist', 'highlight']);
/** Directives whose argument is prose. */
const PROSE_DIRECTIVES = new Set(['note', 'warning', 'important', 'tip', 'hint', 'attention', 'caution', 'danger', 'seealso', 'admonition', 'deprecated']);
/** A Markdown link definition, or an RST comment or target (`.. _name:`). */
const DEFINITION = /^(?:\[[^\]]+\]:\s*\S|\.\.(?:\s|$))/;
/** A heading that names a part of a page rather than a subject. */
const PAGE_PART = /^(?:description|synopsis|overview|introduction|summary|details|usage|examples?|notes?|discussion|background)$/i;
/** The title of a section that only points elsewhere. */
const NAVIGATION = /^(?:see also|related(?: \w+)?|further reading|more information|links)$/i;
/** A list item's bullet or number. */
const LIST_ITEM = /^(?:[-*+•‣◦]|\d+[.)])\s+/;
/** A line typed at a prompt: a shell's, Python's, Node's. */
const PROMPT_LINE = /^(?:\$|>>>|\.\.\.|>|PS>|[A-Z]:\\[^>\s]*>)\s/;
/** Where a sentence ends in a paragraph: after `.`, `!` or `?` and before a capital or a digit, not after "i.e." or "e.g.". */
const SENTENCE_END = new RegExp(String.raw`(?<=[.!?])(?<!${ABBREVIATION}\.)\s+(?=["'\`(\[]?[A-Z0-9])`);

/**
 * The units of a chunk's text (see the module header), in order. Headings, rules,
 * link definitions, directives and HTML comments are no units; a code block (fenced, an
 * RST literal block, a block indented more than the prose before it, or lines typed at a
 * prompt) is kept line by line as written.
 */
export function passageUnits(rawText: string): Unit[] {
  const lines = rawText.replace(/<!--[\s\S]*?(?:-->|$)/g, '').split(/\r?\n/);
  const units: Unit[] = [];
  let block = 0;
  let section = 0;
  let paragraph: string[] = [];
  let inFence = false;
  let literal = -1; // inside an indented literal block: the indent its lines exceed
  let literalNext = false; // the next indented block is code (after `::` or a code directive)
  let proseIndent = 0; // the indent of the last prose line
  let bodyNext = false; // an indented block next is the body of the directive or list item before it: prose
  let heading: string | undefined;
  const push = (text: string, code: boolean) => NAVIGATION.test(heading ?? '') || units.push({ text, code, block, section, ...(heading === undefined ? {} : { heading }) });
  const flush = () => {
    if (paragraph.length === 0) return;
    const text = withoutEmphasis(cleanInline(paragraph.join(' ')));
    paragraph = [];
    block++;
    for (const sentence of text.split(SENTENCE_END)) {
      const trimmed = sentence.replace(/\s+/g, ' ').trim();
      if (/[\p{L}\p{N}]/u.test(trimmed)) push(trimmed, false);
    }
  };
  const code = (line: string) => {
    if (line.trim() !== '') push(line.replace(/\s+$/, ''), true);
  };
  const newSection = (title?: string) => {
    flush();
    // (A heading that names a part of a page, "Description", leaves its text in the section it is in.)
    // (Shown as read: without its marks and inline markup, `<a name="x"></a>` anchors included.)
    const shown = title === undefined ? undefined : withoutEmphasis(cleanInline(title.replace(/^#{1,6}\s+/, '').replace(/\s+#+$/, '')));
    if (shown !== undefined && shown !== '' && !PAGE_PART.test(shown)) heading = shown;
    section++;
    block++;
  };
  lines.forEach((line, index) => {
    const trimmed = line.trim();
    const indent = line.length - line.trimStart().length;
    if (FENCE.test(line)) {
      flush();
      inFence = !inFence;
      block++;
      return;
    }
    if (inFence) return code(line);
    if (literal >= 0) {
      if (trimmed === '' || indent > literal) return code(line);
      literal = -1;
      block++;
    }
    if (trimmed === '') {
      flush();
      return;
    }
    const next = (lines[index + 1] ?? '').trim();
    // An indented block after a blank line: code after `::` or a code directive, or typed at a prompt, or indented past
    // the prose before it (a <pre> block of an HTML page as read), unless that was a directive or a list item whose body it is.
    const afterBlank = paragraph.length === 0 && (lines[index - 1] ?? '').trim() === '';
    if (afterBlank && indent > 0 && (literalNext || PROMPT_LINE.test(trimmed) || (indent >= proseIndent + 2 && !bodyNext))) {
      literalNext = false;
      literal = indent - 1;
      block++;
      return code(line);
    }
    if (paragraph.length === 0 && PROMPT_LINE.test(trimmed) && trimmed.startsWith('>>>')) {
      block++;
      return code(line);
    }
    literalNext = false;
    if (ADORNMENT.test(trimmed)) {
      // An RST title's adornment: the title before it (a paragraph of one line) is no unit.
      const title = paragraph.length === 1 ? paragraph[0] : undefined;
      if (title !== undefined) paragraph = [];
      bodyNext = false;
      return newSection(title);
    }
    if (HEADING.test(trimmed) || (paragraph.length === 0 && ADORNMENT.test(next))) {
      bodyNext = false;
      return newSection(trimmed);
    }
    if (RULE.test(trimmed)) return flush();
    const directive = DIRECTIVE.exec(trimmed);
    if (directive) {
      flush();
      const name = directive[1]!.toLowerCase();
      if (CODE_DIRECTIVES.has(name)) literalNext = true;
      else {
        bodyNext = true;
        if (PROSE_DIRECTIVES.has(name) && directive[2]) paragraph.push(directive[2]);
      }
      return;
    }
    if (DEFINITION.test(trimmed) || /^:[\w-]+:(?:\s|$)/.test(trimmed)) {
      if (trimmed.startsWith(':')) bodyNext = true; // a directive's option: its body follows
      return flush();
    }
    if (LIST_ITEM.test(trimmed) || trimmed.startsWith('|')) {
      flush();
      bodyNext = true;
    } else if (indent === 0) bodyNext = false;
    proseIndent = indent;
    paragraph.push(trimmed.startsWith('|') ? trimmed.replace(/\|/g, ' ') : trimmed.replace(/^>\s?/, ''));
    if (trimmed.endsWith('::')) {
      // "... as follows::" introduces a literal block; the colons read as one.
      paragraph[paragraph.length - 1] = paragraph[paragraph.length - 1]!.replace(/::$/, ':');
      flush();
      literalNext = true;
    }
  });
  flush();
  return units;
}

/** Units as quoted: sentences of one block joined by a space, blocks and code lines each on a line of their own. */
function quote(units: readonly Unit[]): string {
  let text = '';
  units.forEach((unit, i) => {
    const previous = units[i - 1];
    if (previous === undefined) text = unit.text;
    else text += !unit.code && !previous.code && previous.block === unit.block ? ` ${unit.text}` : `\n${unit.text}`;
  });
  return text;
}

/** Stems of the content words of `text` (indexed tokens, stopwords left out). */
function stems(text: string): Set<string> {
  const out = new Set<string>();
  for (const token of indexedTokens(text)) if (!isStopword(token)) out.add(stem(token));
  return out;
}

/**
 * The passage answer. `query` is the standalone query; `question`, when given, the
 * user's own words (their words weigh most). `unknown`: names the user typed that no
 * document holds; `required`: names few chunks hold, which a quoted chunk must
 * mention (extractive.ts: namesAgainstIndex). `share` tells how common a word is in
 * the index (its rarity weighs it); without it every word weighs the same.
 */
export function passageAnswer(
  typedQuery: string,
  chunks: readonly RetrievedChunk[],
  typedQuestion?: string,
  unknown: readonly string[] = [],
  required: readonly string[] = [],
  share?: WordShare,
): PassageAnswer {
  const query = plainQuestion(typedQuery);
  const question = typedQuestion === undefined ? undefined : plainQuestion(typedQuestion);
  const uncovered = (why?: string): PassageAnswer => ({ text: `${EXTRACTIVE_LABEL} ${NOT_COVERED}${why ? ` ${why}` : ''}`, covered: false, passages: [] });
  const quoted = (word: string) => `\u201c${word}\u201d`;
  if (unknown.length > 0) return uncovered(`No document mentions ${orList(unknown.map(quoted))}.`);
  const requiredTerms = required.map((name) => [...stems(name)]);
  const mentions = (chunk: RetrievedChunk) => {
    const terms = stems(`${chunk.title ?? ''}\n${chunk.heading}\n${chunk.text}`);
    return requiredTerms.every((parts) => parts.every((part) => terms.has(part)));
  };
  if (required.length > 0 && !chunks.some(mentions)) return uncovered(`None of the passages found mentions ${orList(required.map(quoted))}.`);

  const queryTerms = [...questionTerms(query)];
  const typed = question === undefined ? new Set<string>() : questionTerms(question);
  if (queryTerms.length === 0 || chunks.length === 0) return uncovered();
  // Coverage is judged on what the user typed (a rewrite's context must not make a relevant chunk look off-topic), or on
  // the part that asks when a question sets a scene first and that part has two words or more.
  const judged = typed.size > 0 ? [...typed] : queryTerms;
  const asking = askingClause(question ?? query);
  const askingWords = asking === (question ?? query) ? [] : [...questionTerms(asking)].filter((term) => judged.includes(term));
  const askingTerms = askingWords.length >= 2 ? askingWords : [];
  const coverage = (terms: readonly string[], context: Set<string>, inChunk: Set<string>) =>
    terms.length === 0 ? 0 : terms.filter((term) => context.has(term) || inChunk.has(term)).length / terms.length;

  // Each word's weight: its idf in the index, times ADDED_TERM_WEIGHT when the rewrite added it.
  const weights = new Map<string, number>();
  for (const term of new Set([...queryTerms, ...typed])) {
    const idf = share === undefined ? 1 : Math.log(1 + 1 / Math.max(share(term), 1e-6));
    weights.set(term, idf * (typed.size > 0 && !typed.has(term) ? ADDED_TERM_WEIGHT : 1));
  }
  const total = [...weights.values()].reduce((sum, weight) => sum + weight, 0);
  const weightOf = (terms: Set<string>) => {
    let sum = 0;
    for (const [term, weight] of weights) if (terms.has(term)) sum += weight;
    return sum / total;
  };

  // "How ..." questions are answered by code as well; others by prose: a code line may open a passage only for them.
  const asksHow = /^\W*(?:and\s+|so\s+|but\s+)?how\b/i.test(asking) || /^\W*how\s+(?:do|can|to|should)\b/i.test(question ?? query);
  type Candidate = Passage & { title: string; position: number; terms: Set<string> };
  const candidates: Candidate[] = [];
  for (const [index, chunk] of chunks.entries()) {
    if (required.length > 0 && !mentions(chunk)) continue;
    const context = stems(`${chunk.title ?? ''}\n${chunk.heading}`);
    const inChunk = termsIn(chunk.text, judged);
    if (Math.max(coverage(judged, context, inChunk), coverage(askingTerms, context, inChunk)) < MIN_CHUNK_COVERAGE) continue;
    const units = passageUnits(chunk.text);
    // The section's title: the heading before the unit in the chunk's text, else the chunk's own heading and title.
    const titles = new Map<number, Set<string>>();
    const titleOf = (unit: Unit) => {
      let terms = titles.get(unit.section);
      if (terms === undefined) titles.set(unit.section, (terms = unit.heading === undefined ? context : stems(unit.heading)));
      return terms;
    };
    const unitTerms = units.map((unit) => stems(unit.text));
    units.forEach((unit, start) => {
      if (unit.code ? !asksHow : (unit.text.match(/[\p{L}\p{N}]+/gu) ?? []).length < MIN_WORDS) return;
      // The passage opens where the words asked are densest: this unit and the next of its section.
      const opening = new Set(unitTerms[start]);
      for (let i = start + 1; i < start + OPEN_UNITS && i < units.length && units[i]!.section === unit.section; i++) for (const term of unitTerms[i]!) opening.add(term);
      if (weightOf(opening) === 0) return;
      const held = (weightOf(opening) + weightOf(titleOf(unit))) / 2;
      let end = start + 1;
      let length = unit.text.length;
      while (end < units.length && units[end]!.section === unit.section && length + units[end]!.text.length <= MAX_PASSAGE_CHARS) length += units[end++]!.text.length + 1;
      const terms = new Set<string>();
      for (let i = start; i < end; i++) for (const term of unitTerms[i]!) terms.add(term);
      const title = unit.heading ?? (chunk.heading.split(' > ').pop() || chunk.title || '');
      candidates.push({ text: quote(units.slice(start, end)), title, n: index + 1, score: held - RANK_STEP * index, position: start, terms });
    });
  }
  if (candidates.length === 0) return uncovered();
  candidates.sort((a, b) => b.score - a.score || a.n - b.n || a.position - b.position);
  const best = candidates[0]!;
  const passages: Candidate[] = [best];
  // A second passage, from another chunk, when it holds a word the user typed that the first lacks.
  const missing = [...typed].filter((term) => !best.terms.has(term));
  const second = candidates.find((c) => c.n !== best.n && c.score >= best.score / 2 && missing.some((term) => c.terms.has(term)));
  if (second) passages.push(second);
  // Each passage under its citation and the title of the section it is from, which often names what it describes.
  const shown = passages.map(({ text, n, title }) => `[${n}]${title ? ` ${title}` : ''}\n${text}`);
  return { text: `${EXTRACTIVE_LABEL}\n${shown.join('\n\n')}`, covered: true, passages: passages.map(({ text, n, score }) => ({ text, n, score })) };
}
