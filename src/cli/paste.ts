// Pasted text in the REPL: the line breaks of a paste must not submit it. Between
// the terminal and readline, this filter turns every line break that belongs to a
// paste into LINE_BREAK (shown as `↵` on the one editable line); only an Enter
// typed on its own submits. A paste is recognised two ways:
// - bracketed paste (the terminal wraps it in ESC[200~ ... ESC[201~ once the REPL
//   asks for it with ESC[?2004h): every break inside is the paste's;
// - otherwise, a break followed by more text in the same read is the paste's (a
//   person's Enter arrives alone), and a break that ends a read is held for
//   HOLD_MS: if more text follows at once, it was the paste's too.

import { sanitizeForTerminal } from '../util/sanitize.js';

/** Stands for a pasted line break inside the line being edited; turned back into `\n` on submit. */
export const LINE_BREAK = '↵';
/** A break that ends a read waits this long for the rest of a paste. */
export const HOLD_MS = 40;

export const PASTE_START = '\u001b[200~';
export const PASTE_END = '\u001b[201~';
/** Enables / disables bracketed paste on the terminal. */
export const BRACKETED_PASTE_ON = '\u001b[?2004h';
export const BRACKETED_PASTE_OFF = '\u001b[?2004l';

const BREAK = /\r\n|\r|\n/g;

/**
 * Splits input into what readline should see. `push` returns the text to pass on
 * now; when `holding` is true, call `flush` after HOLD_MS unless more input came.
 */
export class PasteFilter {
  private pasting = false;
  /** Part of a paste marker, or a break that ended a read, not passed on yet. */
  private carry = '';
  /** The carry starts with a break that ended the previous read. */
  private heldBreak = false;

  get holding(): boolean {
    return this.carry !== '';
  }

  push(chunk: string): string {
    let data = this.carry + chunk;
    this.carry = '';
    if (this.heldBreak && chunk.length > 0) {
      // The held break had more text right after it: it was part of a paste.
      data = LINE_BREAK + data.replace(/^(\r\n|\r|\n)/, '');
    }
    this.heldBreak = false;
    let out = '';
    while (data.length > 0) {
      const marker = this.pasting ? PASTE_END : PASTE_START;
      const at = data.indexOf(marker);
      if (at === -1) {
        // A marker cut at the end of this read waits for its end.
        const partial = partialMarkerAt(data);
        const body = partial === -1 ? data : data.slice(0, partial);
        out += this.pasting ? body.replace(BREAK, LINE_BREAK) : this.typed(body, partial === -1);
        if (partial !== -1) this.carry += data.slice(partial);
        break;
      }
      const body = data.slice(0, at);
      out += body.replace(BREAK, LINE_BREAK); // text follows: any break here is a paste's
      this.pasting = !this.pasting;
      data = data.slice(at + marker.length);
    }
    return out;
  }

  /** After HOLD_MS with no more input: what was held is passed on as it is (a held break is Enter). */
  flush(): string {
    const held = this.carry;
    this.carry = '';
    this.heldBreak = false;
    return held;
  }

  /** Text outside a bracketed paste: breaks with text after them are a paste's; a break that ends the read is held. */
  private typed(body: string, endsRead: boolean): string {
    const trailing = /(\r\n|\r|\n)$/.exec(body);
    if (!trailing || !endsRead) return body.replace(BREAK, LINE_BREAK);
    const head = body.slice(0, body.length - trailing[0].length);
    if (head === '' || !/[^\r\n]/.test(head)) return body; // an Enter (or Enters) alone: submit
    this.carry = trailing[0];
    this.heldBreak = true;
    return head.replace(BREAK, LINE_BREAK);
  }
}

/** Index where a proper prefix of a paste marker ends `data`, or -1. */
function partialMarkerAt(data: string): number {
  for (let length = Math.min(PASTE_START.length - 1, data.length); length > 0; length--) {
    const tail = data.slice(data.length - length);
    if (PASTE_START.startsWith(tail) || PASTE_END.startsWith(tail)) return data.length - length;
  }
  return -1;
}

/** The question as submitted: pasted breaks become newlines again. */
export function fromEditLine(line: string): string {
  return line.split(LINE_BREAK).join('\n');
}

/**
 * A stored multi-line question as one editable line (for the up-arrow history).
 * Read from the database and written by readline to the terminal as it is: sanitised.
 */
export function toEditLine(question: string): string {
  return sanitizeForTerminal(question.replace(BREAK, LINE_BREAK));
}
