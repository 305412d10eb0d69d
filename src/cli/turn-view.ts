// Renders a turn's events in the terminal: the standalone query (or why the
// question was not rewritten), the retrieved chunks, the streamed answer and its
// citations. Used by `chat`, `ask` and (for the rewrite and chunk lines) `replay`.

import type { TurnEvent } from '../chat/events.js';
import { EXTRACTIVE_LABEL } from '../chat/extractive.js';
import { sanitizeForTerminal, oneLine } from '../util/sanitize.js';
import type { Output } from './output.js';
import { chunkLine } from './render.js';
import { StreamWrapper } from './wrap.js';

export function rewriteLine(
  event: { question: string; standaloneQuery: string; decision: string; reason: string },
  color: Output['color'],
  width?: number,
): string {
  const reason = wholeWords(event.reason, 160);
  if (event.decision === 'rewritten') return wrapWords([color.magenta('↳ searching for:'), wholeWords(event.standaloneQuery, 400), color.dim(`(rewritten: ${reason})`)], width);
  if (event.decision === 'fallback') return wrapWords([color.yellow('↳ searching for the question as asked'), color.dim(`(rewrite fell back: ${reason})`)], width);
  if (event.decision === 'small_talk') return wrapWords([color.dim(`↳ no search (${reason})`)], width);
  return wrapWords([color.dim(`↳ not rewritten (${reason})`)], width);
}

/** One line of safe text cut to at most `max` characters at a space, never inside a word. */
export function wholeWords(text: string, max: number): string {
  const flat = oneLine(text);
  if (flat.length <= max) return flat;
  const space = flat.lastIndexOf(' ', max - 1);
  return `${flat.slice(0, space > 0 ? space : max - 1).trimEnd()}…`;
}

/**
 * The parts joined by spaces, broken at spaces into lines of at most `width` visible
 * columns (later lines indented two spaces); one line when the width is unknown. A word
 * longer than a line stands alone on its line.
 */
export function wrapWords(parts: readonly string[], width: number | undefined): string {
  const line = parts.join(' ');
  if (!width) return line;
  const lines: string[] = [];
  let current = '';
  let visible = 0;
  for (const word of line.split(' ')) {
    const length = [...word.replace(/\u001b\[[0-9;]*m/g, '')].length;
    if (current !== '' && visible + 1 + length > width) {
      lines.push(current);
      current = `  ${word}`;
      visible = 2 + length;
    } else {
      current = current === '' ? word : `${current} ${word}`;
      visible += (visible === 0 ? 0 : 1) + length;
    }
  }
  lines.push(current);
  return lines.join('\n');
}

/** Renders events as they arrive; returns the text of the last retrieval so /show can print chunks. */
export class TurnView {
  private streamed = false;
  /** Wraps the answer at the terminal's width (a TTY only). */
  private wrapper?: StreamWrapper;
  /** Off a terminal, the word in progress: written whole, so that a key the server echoes across two deltas is redacted. */
  private held = '';

  constructor(
    private readonly output: Output,
    /** showChunks: the retrieval table; quiet: the answer and its citations only (no rewrite line, no chunks). */
    private readonly options: { showChunks: boolean; quiet?: boolean; wrapWidth?: number } = { showChunks: true },
  ) {}

  render(event: TurnEvent): void {
    const { output } = this;
    const { color } = output;
    switch (event.type) {
      case 'start':
        if (event.removedSession) {
          const { id, name } = event.removedSession;
          output.err(output.errColor.yellow(`Session ${oneLine(name ?? id)} was removed by another process; this question starts a new session, ${event.sessionId}.`));
        }
        this.streamed = false;
        this.held = '';
        this.wrapper = this.options.wrapWidth && this.options.wrapWidth > 20 ? new StreamWrapper(this.options.wrapWidth, (text) => output.write(text)) : undefined;
        return;
      case 'rewrite':
        if (this.options.quiet) return;
        output.out(rewriteLine(event, color, output.columns));
        return;
      case 'retrieval': {
        if (!this.options.showChunks || this.options.quiet) return;
        if (event.chunks.length === 0) output.out(color.dim('   no chunks matched'));
        const width = output.columns ?? 100;
        for (const chunk of event.chunks) output.out(chunkLine(chunk, color, width, event.query));
        output.out();
        return;
      }
      case 'status':
        // Progress, not the answer: on stderr, so that a piped answer stays clean.
        if (!this.options.quiet) output.err(output.errColor.dim(oneLine(event.text)));
        return;
      case 'thinking':
        if (!this.options.quiet) output.err(output.errColor.dim('thinking …'));
        return;
      case 'retract':
        this.flush();
        if (this.streamed) output.out();
        this.streamed = false;
        output.err(output.errColor.yellow('(the text above was the model\'s reasoning, not its answer; it is not kept)'));
        return;
      case 'token': {
        // -q prints the answer alone: an offline answer's label (one token, the whole answer) goes.
        const answer = this.options.quiet && !this.streamed && event.text.startsWith(EXTRACTIVE_LABEL) ? event.text.slice(EXTRACTIVE_LABEL.length).trimStart() : event.text;
        // Model output is untrusted too (it may echo document text).
        if (this.wrapper) this.wrapper.push(sanitizeForTerminal(answer));
        else {
          const text = this.held + sanitizeForTerminal(answer);
          const wordStart = text.search(/\S*$/);
          output.write(text.slice(0, wordStart));
          this.held = text.slice(wordStart);
        }
        this.streamed = true;
        return;
      }
      case 'error':
        this.flush();
        if (this.streamed) output.out();
        this.streamed = false;
        // Messages quote the server's own words: one safe line each.
        output.err(`${output.errColor.red('error:')} ${oneLine(event.message)}`);
        if (event.hint) output.err(output.errColor.dim(oneLine(event.hint)));
        return;
      case 'done': {
        this.flush();
        if (this.streamed) output.out();
        if (event.status === 'interrupted') output.out(color.yellow('(answer interrupted; the turn is kept)'));
        if (event.citations.length > 0) {
          // One line, or on a terminal as many as its width needs, never cutting an entry.
          const entries = event.citations.map((c) => `[${c.n}] ${oneLine(c.location, 120)}`);
          const width = this.options.wrapWidth ?? Infinity;
          const lines: string[] = [];
          for (const entry of entries) {
            const last = lines.length - 1;
            if (last >= 0 && lines[last]!.length + 2 + entry.length <= width) lines[last] += `  ${entry}`;
            else lines.push(entry);
          }
          for (const line of lines) output.out(color.dim(line));
        }
        // A blank line parts one turn from the next; the answer alone (-q) ends with its last line.
        if (!this.options.quiet) output.out();
        return;
      }
    }
  }

  /** Writes what is held back of the answer (before anything else is printed). */
  private flush(): void {
    this.wrapper?.flush();
    if (this.held) this.output.write(this.held);
    this.held = '';
  }
}
