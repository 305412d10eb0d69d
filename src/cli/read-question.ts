// Reads one REPL question from the terminal: line editing and history through
// readline, with the terminal's input passed through a PasteFilter first, so a
// pasted multi-line text (bracketed or not, with or without a final newline)
// becomes one editable question that only a typed Enter submits.

import readline from 'node:readline';
import { PassThrough } from 'node:stream';
import { BRACKETED_PASTE_OFF, BRACKETED_PASTE_ON, HOLD_MS, PasteFilter, fromEditLine, toEditLine } from './paste.js';

/** One key's escape sequence, a run of plain text (no control characters), else one character. */
const PIECES = /\u001b\[[\u0030-\u003f]*[\u0020-\u002f]*[\u0040-\u007e]|\u001bO[\s\S]|\u001b[\s\S]?|[^\u0000-\u001f\u007f]{2,}|[\s\S]/gu;
const PLAIN = /^[^\u0000-\u001f\u007f]+$/u;

export interface ReadQuestionOptions {
  /** Earlier questions, most recent first (as stored: pasted breaks are newlines); the read question is added. */
  history: string[];
  prompt: string;
  /** Tab completion, as readline's completer. */
  completer?: readline.Completer;
  /** The terminal: the run's stdin and stdout. */
  stdin: NodeJS.ReadStream;
  stdout: NodeJS.WriteStream;
}

/**
 * Resolves the question (pasted lines joined by newlines; a trailing backslash
 * continues on the next line), or null on Ctrl-D, or Ctrl-C on an empty line.
 */
export function readQuestion(options: ReadQuestionOptions): Promise<string | null> {
  const { history, prompt, stdin, stdout } = options;
  return new Promise((resolve) => {
    const filter = new PasteFilter();
    // readline reads the filtered input; raw mode is still set on the terminal itself.
    const input = Object.assign(new PassThrough({ encoding: 'utf8' }), {
      isTTY: true,
      setRawMode: (mode: boolean) => {
        if (stdin.isTTY) stdin.setRawMode(mode);
      },
    });
    let hold: NodeJS.Timeout | undefined;
    const onData = (data: Buffer | string) => {
      if (hold) clearTimeout(hold);
      hold = undefined;
      const passed = filter.push(typeof data === 'string' ? data : data.toString('utf8'));
      if (passed) forward(passed);
      if (filter.holding) {
        hold = setTimeout(() => {
          hold = undefined;
          const held = filter.flush();
          if (held) forward(held);
        }, HOLD_MS);
      }
    };
    const rl = readline.createInterface({
      input,
      output: stdout,
      terminal: true,
      history: history.map(toEditLine),
      historySize: 500,
      prompt,
      ...(options.completer ? { completer: options.completer } : {}),
    });
    // Node's readline misplaces what one read holds when the cursor is not at the
    // end of the line ("abc", Home, a paste of "XY" gives "aYbcX"), keys and text
    // alike. So keys go to it one at a time, as typed, and a run of plain text is
    // inserted at the cursor in one piece.
    // A Tab that has more text after it in the same read was pasted, and is kept as a
    // space (readline would take it for the completion key); one that ends a read
    // (typed, even after other keys) completes.
    const forward = (text: string) => {
      const keys = text.replace(/\t+(?=[^\t])/g, (tabs) => ' '.repeat(tabs.length));
      for (const piece of keys.match(PIECES) ?? []) {
        if (piece.length > 1 && PLAIN.test(piece)) rl.write(piece);
        else input.write(piece);
      }
    };
    stdin.on('data', onData);
    stdin.resume();
    stdout.write(BRACKETED_PASTE_ON);
    const parts: string[] = [];
    let settled = false;
    const finish = (value: string | null) => {
      if (settled) return;
      settled = true;
      if (hold) clearTimeout(hold);
      stdin.off('data', onData);
      rl.close();
      stdin.pause();
      if (stdin.isTTY) stdin.setRawMode(false);
      stdout.write(BRACKETED_PASTE_OFF);
      if (value && value.trim()) {
        history.unshift(value);
        if (history.length > 500) history.pop();
      }
      resolve(value);
    };
    rl.on('line', (line) => {
      const text = fromEditLine(line);
      if (text.endsWith('\\')) {
        parts.push(text.slice(0, -1));
        rl.setPrompt('  ');
        rl.prompt();
        return;
      }
      parts.push(text);
      finish(parts.join('\n'));
    });
    rl.on('SIGINT', () => {
      if (rl.line === '' && parts.length === 0) {
        stdout.write('\n');
        finish(null);
      } else {
        parts.length = 0;
        stdout.write('\n');
        rl.setPrompt(prompt);
        rl.write(null, { ctrl: true, name: 'u' });
        rl.prompt();
      }
    });
    rl.on('close', () => finish(parts.length ? parts.join('\n') : null));
    rl.prompt();
  });
}
