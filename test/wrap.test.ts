// Answers wrapped at the terminal's width as they stream: at spaces, words never cut,
// list items continued under their text.

import { describe, expect, it } from 'vitest';
import { StreamWrapper } from '../src/cli/wrap.js';
import { completeSlashCommand } from '../src/cli/commands/chat.js';

function wrap(width: number, pieces: string[]): string {
  let out = '';
  const wrapper = new StreamWrapper(width, (text) => (out += text));
  for (const piece of pieces) wrapper.push(piece);
  wrapper.flush();
  return out;
}

describe('StreamWrapper', () => {
  it('breaks at spaces within the width, whatever the token boundaries', () => {
    const text = 'Create a key from the dashboard under Workspace settings, or with the CLI.';
    const whole = wrap(30, [text]);
    expect(whole.split('\n')).toEqual(['Create a key from the', 'dashboard under Workspace', 'settings, or with the CLI.']);
    // Streamed in odd pieces (words cut across tokens), the result is the same.
    const pieces = text.match(/.{1,7}/g)!;
    expect(wrap(30, pieces)).toBe(whole);
    for (const line of whole.split('\n')) expect(line.length).toBeLessThanOrEqual(30);
  });

  it('keeps newlines and indentation, continues list items under their text, never cuts a long word', () => {
    const out = wrap(24, ['- API keys expire after 90 days by default.\n', '    code stays indented\n', 'averyveryveryverylongwordthatdoesnotfit ok']);
    expect(out.split('\n')).toEqual([
      '- API keys expire after',
      '  90 days by default.',
      '    code stays indented',
      'averyveryveryverylongwordthatdoesnotfit',
      'ok',
    ]);
  });
});

describe('slash command completion', () => {
  it('completes a unique prefix, lists an ambiguous one, and leaves questions alone', () => {
    expect(completeSlashCommand('/his')).toEqual([['/history '], '/his']);
    expect(completeSlashCommand('/s')).toEqual([['/sessions', '/show'], '/s']);
    expect(completeSlashCommand('/e')).toEqual([['/expect', '/edit'], '/e']);
    expect(completeSlashCommand('/ed')).toEqual([['/edit '], '/ed']);
    expect(completeSlashCommand('how do I')).toEqual([[], 'how do I']);
    expect(completeSlashCommand('/k 3')).toEqual([[], '/k 3']);
  });
});
