// The streamed answer as TurnView prints it off a terminal: a key the server
// echoes split across two deltas is still redacted (words are written whole).

import { expect, test } from 'vitest';
import { createOutput } from '../src/cli/output.js';
import { TurnView } from '../src/cli/turn-view.js';
import type { TurnEvent } from '../src/chat/events.js';
import { registerSecret } from '../src/util/secrets.js';
import { runTurnWithOutput } from '../src/cli/chat-session.js';
import type { Chat } from '../src/app/index.js';

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

test('chat --json: a key streamed across token events is redacted whole; other events keep their pieces', async () => {
  registerSecret(KEY);
  const stdout = sink();
  const stderr = sink();
  const pieces = ['Create a key ', 'then: sk-test-SEC', 'RET-7d2e9a41', 'c0b85f36, and', ' more.'];
  const chat = {
    async *ask() {
      yield { type: 'start' } as TurnEvent;
      for (const text of pieces) yield { type: 'token', text } as TurnEvent;
      yield { type: 'done', status: 'answered', citations: [], answer: '' } as unknown as TurnEvent;
    },
  } as unknown as Chat;
  await runTurnWithOutput(chat, 'q', createOutput(stdout as unknown as NodeJS.WriteStream, stderr as unknown as NodeJS.WriteStream), { json: true });
  const events = stdout.text.trim().split('\n').map((line) => JSON.parse(line) as { type: string; text?: string });
  const tokens = events.filter((e) => e.type === 'token').map((e) => e.text);
  expect(tokens.join('')).toBe('Create a key then: [redacted], and more.');
  expect(stdout.text).not.toContain('7d2e9a41');
  expect(tokens[0]).toBe('Create a key '); // a piece that cannot end in a key's start goes out as it came
  expect(events.at(-1)!.type).toBe('done');
});
