// Renders a turn's events in the terminal: the standalone query (or why the
// question was not rewritten), the retrieved chunks, the streamed answer and its
// citations. Used by `chat`, `ask` and (for the rewrite and chunk lines) `replay`.

import type { TurnEvent } from '../chat/events.js';
import { sanitizeForTerminal, oneLine } from '../util/sanitize.js';
import type { Output } from './output.js';
import { chunkLine } from './render.js';

export function rewriteLine(
  event: { question: string; standaloneQuery: string; decision: string; reason: string },
  color: Output['color'],
): string {
  const reason = oneLine(event.reason, 100);
  if (event.decision === 'rewritten') return `${color.magenta('↳ searching for:')} ${oneLine(event.standaloneQuery, 300)} ${color.dim(`(rewritten: ${reason})`)}`;
  if (event.decision === 'fallback') return `${color.yellow('↳ searching for the question as asked')} ${color.dim(`(rewrite fell back: ${reason})`)}`;
  if (event.decision === 'small_talk') return color.dim(`↳ no search (${reason})`);
  return color.dim(`↳ not rewritten (${reason})`);
}

/** Renders events as they arrive; returns the text of the last retrieval so /show can print chunks. */
export class TurnView {
  private streamed = false;

  constructor(
    private readonly output: Output,
    /** showChunks: the retrieval table; quiet: the answer and its citations only (no rewrite line, no chunks). */
    private readonly options: { showChunks: boolean; quiet?: boolean } = { showChunks: true },
  ) {}

  render(event: TurnEvent): void {
    const { output } = this;
    const { color } = output;
    switch (event.type) {
      case 'start':
        this.streamed = false;
        return;
      case 'rewrite':
        if (this.options.quiet) return;
        output.out(rewriteLine(event, color));
        return;
      case 'retrieval': {
        if (!this.options.showChunks || this.options.quiet) return;
        if (event.chunks.length === 0) output.out(color.dim('   no chunks matched'));
        const width = process.stdout.columns ?? 100;
        for (const chunk of event.chunks) output.out(chunkLine(chunk, color, width));
        output.out();
        return;
      }
      case 'token':
        // Model output is untrusted too (it may echo document text).
        output.write(sanitizeForTerminal(event.text));
        this.streamed = true;
        return;
      case 'error':
        if (this.streamed) output.out();
        this.streamed = false;
        output.err(`${output.errColor.red('error:')} ${event.message}`);
        if (event.hint) output.err(output.errColor.dim(event.hint));
        return;
      case 'done': {
        if (this.streamed) output.out();
        if (event.status === 'interrupted') output.out(color.yellow('(answer interrupted; the turn is kept)'));
        if (event.citations.length > 0) {
          output.out(color.dim(event.citations.map((c) => `[${c.n}] ${oneLine(c.location, 120)}`).join('  ')));
        }
        output.out();
        return;
      }
    }
  }
}
