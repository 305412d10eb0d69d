// Deeply nested HTML is read in time linear in its size: htmlparser2's stack of
// open elements moved every element at each tag (n² for n nested elements), as did
// a look through the open elements at each tag in html.ts. Work is counted, not
// timed: the array elements that array methods move or scan while a page is read.

import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { htmlToUnit } from '../src/ingest/html.js';
import { topFirstStack } from '../src/ingest/html-stack.js';

/** Methods whose cost grows with the array's length (taken at its whole length: an upper bound). */
const LENGTH_BOUND = ['unshift', 'shift', 'splice', 'indexOf', 'lastIndexOf', 'includes', 'some', 'every', 'find', 'findIndex', 'findLast', 'findLastIndex'] as const;

/** The array elements that `run` moves or scans through those methods. */
function arrayWork(run: () => void): number {
  const proto = Array.prototype as unknown as Record<string, (...args: unknown[]) => unknown>;
  const originals = LENGTH_BOUND.map((name) => proto[name]!);
  let work = 0;
  LENGTH_BOUND.forEach((name, i) => {
    const original = originals[i]!;
    proto[name] = function (this: unknown[], ...args: unknown[]) {
      work += this.length;
      return original.apply(this, args);
    };
  });
  try {
    run();
  } finally {
    LENGTH_BOUND.forEach((name, i) => (proto[name] = originals[i]!));
  }
  return work;
}

const DEPTH = 20_000;
const pages: Record<string, string> = {
  'nested divs': `${'<div>'.repeat(DEPTH)}x${'</div>'.repeat(DEPTH)}`,
  'nested sections (content containers)': `${'<section>'.repeat(DEPTH)}<header>h</header>x${'</section>'.repeat(DEPTH)}`,
  'nested svg (foreign content)': `${'<svg>'.repeat(DEPTH)}x${'</svg>'.repeat(DEPTH)}`,
  'closing tags of elements not open': `${'<div>'.repeat(DEPTH)}x${'</span>'.repeat(DEPTH)}${'</div>'.repeat(DEPTH)}`,
  'never closed': `${'<ul><li>'.repeat(DEPTH)}x`,
};

describe('deeply nested HTML', () => {
  for (const [shape, html] of Object.entries(pages)) {
    test(`${shape}: reading ${DEPTH} levels moves or scans a number of array elements linear in the depth`, () => {
      let text = '';
      const work = arrayWork(() => (text = htmlToUnit(html).unit.text));
      expect(text).toMatch(/x$/);
      // n² / 2 would be 2e8.
      expect(work).toBeLessThan(10 * DEPTH);
    });
  }

  test('the text of nested elements is read as before', () => {
    expect(htmlToUnit(`${'<div>'.repeat(500)}<h2>Title</h2><p>Body</p>${'</div>'.repeat(500)}`).unit).toMatchObject({
      text: 'Title\n\nBody',
      headings: [{ line: 0, level: 2, text: 'Title' }],
    });
    // A header inside a section is content; one outside every section is page furniture.
    expect(htmlToUnit('<header>site</header><section><div><header>kept</header></div></section><header>site</header>').unit.text).toBe('kept');
    expect(htmlToUnit('<section><div>a</div></section><div><header>dropped</header>b</div>').unit.text).toBe('a\n\nb');
  });
});

describe('topFirstStack', () => {
  test('answers every read and write the parser makes as an array unshifted and shifted does', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('unshift' as const), item: fc.constantFrom('div', 'p', 'li', 'svg') }),
      fc.record({ kind: fc.constant('shift' as const) }),
      fc.record({ kind: fc.constant('clear' as const) }),
    );
    fc.assert(
      fc.property(fc.array(fc.constantFrom('a', 'b')), fc.array(op, { maxLength: 60 }), (initial, ops) => {
        const reference: string[] = [...initial];
        const stack = topFirstStack<string>(initial);
        const same = (): void => {
          expect(stack.length).toBe(reference.length);
          for (let i = 0; i <= reference.length; i++) expect(stack[i]).toBe(reference[i]);
          for (const item of ['a', 'b', 'div', 'p', 'li', 'svg', 'td']) {
            expect(stack.indexOf(item)).toBe(reference.indexOf(item));
            expect(stack.includes(item)).toBe(reference.includes(item));
          }
        };
        same();
        for (const step of ops) {
          if (step.kind === 'unshift') expect(stack.unshift(step.item)).toBe(reference.unshift(step.item));
          else if (step.kind === 'shift') expect(stack.shift()).toBe(reference.shift());
          else stack.length = reference.length = 0;
          same();
        }
      }),
    );
  });

  test('any other use throws, so that a parser using its stack differently is noticed', () => {
    const stack = topFirstStack(['a']);
    expect(() => stack.push('b')).toThrow(/ragline does not know \(push\)/);
    expect(() => {
      stack.length = 3;
    }).toThrow(/ragline does not know/);
  });
});
