import { describe, expect, it } from 'vitest';
import { askingClause, THREE_WORDS } from '../src/text/clauses.js';

describe('the parts of a question', () => {
  it.each([
    ['run the tests', true],
    ['a-b c', true],
    ['é ü ö', true],
    ['two words', false],
    ['x; aaaa?', false],
    ['', false],
    ['...  ,,, !!', false],
  ])('"%s" has three words: %s', (text, expected) => {
    expect(THREE_WORDS.test(text)).toBe(expected);
  });

  it('the part that asks is the last clause or sentence ending in "?" with three words or more', () => {
    expect(askingClause('npm install fails with ERESOLVE; how do I make it ignore peer dependencies?')).toBe('how do I make it ignore peer dependencies?');
    expect(askingClause('My program is slow. How do I profile it? Thanks.')).toBe('How do I profile it?');
    expect(askingClause('How do I run Cachegrind on a program? Is it slow?')).toBe('Is it slow?');
    // One part, or no part that asks: the whole question.
    expect(askingClause('How do I run Cachegrind?')).toBe('How do I run Cachegrind?');
    expect(askingClause('It fails. Really, it does.')).toBe('It fails. Really, it does.');
    // "i.e." and "e.g." end no sentence.
    expect(askingClause('How do I get the path of the second relative to the first, i.e. ../assets/logo.png?')).toBe('How do I get the path of the second relative to the first, i.e. ../assets/logo.png?');
  });

  it('a long word is one word', () => {
    const question = `x; ${'a'.repeat(10_000)}?`;
    expect(askingClause(question)).toBe(question);
    expect(THREE_WORDS.test(question)).toBe(false);
  });
});
