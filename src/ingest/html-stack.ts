// htmlparser2's Parser keeps the elements open at the current point innermost
// first, in an array it grows with unshift and shrinks with shift, and looks a
// closing tag up with indexOf. unshift and shift move every element of the array,
// so a page nested n deep costs n² (a file of 200,000 nested <div>s took over 40 s
// to ingest); its latest release (12.0.0) does the same. The parser is given this
// stack instead: the same reads and writes (stack[0] is the innermost element,
// indexOf counts from it), each in constant time but indexOf of an element that is
// open, which scans down to it: the parser then closes every element it passed,
// so each element is scanned past at most once. A name not open is answered from
// a count, without a scan.

import type { Parser } from 'htmlparser2';

/** What the parser does with its stacks: anything else on one is a parser this module does not know. */
const METHODS = new Set(['unshift', 'shift', 'indexOf', 'includes']);

/**
 * An array-like stack, top first (`stack[0]` is the last item unshifted), with
 * unshift, shift, indexOf, includes, length and `length = 0` in constant time.
 * Any other use throws: it would mean the parser changed how it uses its stack.
 */
export function topFirstStack<T>(initial: readonly T[] = []): T[] {
  const items: T[] = []; // bottom first: the top is the last item
  const counts = new Map<T, number>();
  const push = (item: T): void => {
    items.push(item);
    counts.set(item, (counts.get(item) ?? 0) + 1);
  };
  for (let i = initial.length - 1; i >= 0; i--) push(initial[i]!);
  const methods = {
    unshift(...added: T[]): number {
      for (let i = added.length - 1; i >= 0; i--) push(added[i]!);
      return items.length;
    },
    shift(): T | undefined {
      if (items.length === 0) return undefined;
      const item = items.pop()!;
      const count = counts.get(item)!;
      if (count === 1) counts.delete(item);
      else counts.set(item, count - 1);
      return item;
    },
    indexOf(item: T): number {
      if (!counts.has(item)) return -1;
      let i = items.length - 1;
      while (items[i] !== item) i--;
      return items.length - 1 - i;
    },
    includes(item: T): boolean {
      return counts.has(item);
    },
  };
  return new Proxy(items, {
    get(_target, key) {
      if (key === 'length') return items.length;
      if (typeof key === 'string') {
        if (METHODS.has(key)) return methods[key as keyof typeof methods];
        const index = arrayIndex(key);
        if (index !== undefined) return items[items.length - 1 - index];
      }
      throw new Error(`htmlparser2's parser used its stack in a way ragline does not know (${String(key)})`);
    },
    set(_target, key, value) {
      if (key !== 'length' || value !== 0) throw new Error(`htmlparser2's parser wrote to its stack in a way ragline does not know (${String(key)})`);
      items.length = 0;
      counts.clear();
      return true;
    },
  });
}

/** `key` as an array index ("0", "17"), or undefined. */
function arrayIndex(key: string): number | undefined {
  if (key.length === 0 || key.length > 10) return undefined;
  for (let i = 0; i < key.length; i++) {
    const digit = key.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9 || (digit === 0 && i === 0 && key.length > 1)) return undefined;
  }
  return Number(key);
}

/**
 * Gives a new parser stacks in constant time (see the module header): its open
 * elements and its foreign-content (SVG, MathML) context. A parser whose stacks
 * are not the arrays this module expects is left as it is.
 */
export function useTopFirstStacks(parser: Parser): void {
  const internals = parser as unknown as { stack?: unknown; foreignContext?: unknown };
  if (!Array.isArray(internals.stack) || !Array.isArray(internals.foreignContext)) return;
  internals.stack = topFirstStack(internals.stack as string[]);
  internals.foreignContext = topFirstStack(internals.foreignContext as boolean[]);
}
