// The REPL's paste filter: which line breaks are a paste's (kept in the one
// editable line as LINE_BREAK) and which are a typed Enter (passed on).

import { describe, expect, it } from 'vitest';
import { LINE_BREAK, PASTE_END, PASTE_START, PasteFilter, fromEditLine, toEditLine } from '../src/cli/paste.js';

const B = LINE_BREAK;

describe('PasteFilter', () => {
  it('passes typed keys and an Enter alone through', () => {
    const filter = new PasteFilter();
    expect(filter.push('h')).toBe('h');
    expect(filter.push('\r')).toBe('\r');
    expect(filter.holding).toBe(false);
    expect(filter.push('\u001b[A')).toBe('\u001b[A'); // an arrow key
  });

  it('an unbracketed paste without a final newline is one line: no break reaches readline', () => {
    const filter = new PasteFilter();
    expect(filter.push('How do I list\rthe files in a directory\rrecursively?')).toBe(`How do I list${B}the files in a directory${B}recursively?`);
    expect(filter.holding).toBe(false);
  });

  it('a paste cut between reads after a break: the held break becomes the paste’s when more text follows', () => {
    const filter = new PasteFilter();
    expect(filter.push('How do I list\r\nthe files\r\n')).toBe(`How do I list${B}the files`);
    expect(filter.holding).toBe(true);
    expect(filter.push('recursively?')).toBe(`${B}recursively?`);
    expect(filter.holding).toBe(false);
  });

  it('a break that ends a read and is not followed is Enter after the hold', () => {
    const filter = new PasteFilter();
    expect(filter.push('a question\r')).toBe('a question');
    expect(filter.holding).toBe(true);
    expect(filter.flush()).toBe('\r');
  });

  it('a bracketed paste keeps every break, a final one too, even across reads and with cut markers', () => {
    const filter = new PasteFilter();
    const paste = `${PASTE_START}first line\rsecond line\r${PASTE_END}`;
    expect(filter.push(paste)).toBe(`first line${B}second line${B}`);
    const cut = new PasteFilter();
    let out = '';
    for (const piece of [PASTE_START.slice(0, 3), PASTE_START.slice(3) + 'one\r', 'two\r\n', 'three' + PASTE_END.slice(0, 4), PASTE_END.slice(4)]) {
      out += cut.push(piece);
    }
    out += cut.flush();
    expect(out).toBe(`one${B}two${B}three`);
    expect(cut.push('\r')).toBe('\r'); // after the paste, Enter submits
  });

  it('a lone Escape is held only until the hold ends', () => {
    const filter = new PasteFilter();
    expect(filter.push('\u001b')).toBe('');
    expect(filter.holding).toBe(true);
    expect(filter.flush()).toBe('\u001b');
  });

  it('edit lines and questions convert both ways', () => {
    expect(fromEditLine(`a${B}b`)).toBe('a\nb');
    expect(toEditLine('a\r\nb\nc')).toBe(`a${B}b${B}c`);
  });

  it('a stored question shown again by the up-arrow history carries no escape, control or bidi character', () => {
    expect(toEditLine('why\u001b]0;PWN\u0007 \u009b2J\u202eit\r\nfails\b')).toBe(`why it${B}fails`);
  });
});
