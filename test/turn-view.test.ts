// The streamed answer as TurnView prints it off a terminal: a key the server
// echoes split across two deltas is still redacted (words are written whole).

import { expect, test } from 'vitest';
import { createOutput } from '../src/cli/output.js';
import { TurnView } from '../src/cli/turn-view.js';
import type { TurnEvent } from '../src/chat/events.js';
import { registerSecret } from '../src/util/secrets.js';

const KEY = 'sk-test-SECRET-7d2e9a41c0b85f36';

function sink() {
  const stream = { text: '', isTTY: false, write(chunk: string) { stream.text += chunk; return true; } };
  return stream;
}

test('a key streamed across two deltas is redacted on stdout (not a terminal)', () => {
  registerSecret(KEY);
  const stdout = sink();
  const stderr = sink();
  const view = new TurnView(createOutput(stdout as unknown as NodeJS.WriteStream, stderr as unknown as NodeJS.WriteStream), { showChunks: false, quiet: true });
  view.render({ type: 'start' } as TurnEvent);
  for (const text of ['Your key is sk-test-SEC', 'RET-7d2e9a41', 'c0b85f36, and', ' more.\nNext line']) view.render({ type: 'token', text } as TurnEvent);
  view.render({ type: 'done', status: 'answered', citations: [], answer: '' } as unknown as TurnEvent);
  expect(stdout.text).not.toContain('7d2e9a41');
  expect(stdout.text).toBe('Your key is [redacted], and more.\nNext line\n');
});
