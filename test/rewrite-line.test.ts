import { describe, expect, it } from 'vitest';
import { rewriteLine, wholeWords, wrapWords } from '../src/cli/turn-view.js';

const plain = { magenta: (s: string) => s, yellow: (s: string) => s, dim: (s: string) => s } as never;

describe('the ↳ line', () => {
  it('cuts a long query at a space, never inside a word', () => {
    const cut = wholeWords('how much memory does bzip2 need when it recovers a damaged file', 30);
    expect(cut).toBe('how much memory does bzip2…');
    expect(cut.length).toBeLessThanOrEqual(30);
  });

  it('breaks at spaces to the terminal width, later lines indented', () => {
    const line = rewriteLine({ question: 'does it need much memory?', standaloneQuery: 'does it need much memory? (bzip2, damaged file)', decision: 'rewritten', reason: 'kept as typed, with context from the last answer' }, plain, 40);
    const lines = line.split('\n');
    expect(lines.length).toBeGreaterThan(1);
    for (const one of lines) expect(one.length).toBeLessThanOrEqual(40);
    expect(lines.slice(1).every((one) => one.startsWith('  '))).toBe(true);
    expect(lines.join(' ').replace(/\s+/g, ' ')).toBe('↳ searching for: does it need much memory? (bzip2, damaged file) (rewritten: kept as typed, with context from the last answer)');
  });

  it('is one line when the width is unknown', () => {
    expect(wrapWords(['↳ not rewritten', '(first turn: no history)'], undefined)).toBe('↳ not rewritten (first turn: no history)');
  });

  it('counts colours as no width', () => {
    const red = (s: string) => `\u001b[35m${s}\u001b[39m`;
    expect(wrapWords([red('↳ searching for:'), 'abc'], 21)).toBe(`${red('↳ searching for:')} abc`);
  });
});
