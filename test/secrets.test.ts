// The one redaction: a registered key is removed from printed text, and a
// placeholder key that local servers document is not taken for a secret (it is a
// word that documents and model names hold).

import { expect, test } from 'vitest';
import { redactSecrets, registerSecret } from '../src/util/secrets.js';

test('a registered key and any Bearer token are redacted', () => {
  registerSecret('sk-test-SECRET-4e1c7a9b3d5f2086');
  registerSecret('token-abc123');
  expect(redactSecrets('key sk-test-SECRET-4e1c7a9b3d5f2086 and token-abc123')).toBe('key [redacted] and [redacted]');
  expect(redactSecrets('Authorization: Bearer xyz.abc')).toBe('Authorization: Bearer [redacted]');
  // What follows the token is kept: a snippet's closing ellipsis and quote, a header's closing quote.
  expect(redactSecrets('“-H "Authorization: Bearer orb_live_8f3K+/a1==…”')).toBe('“-H "Authorization: Bearer [redacted]…”');
  expect(redactSecrets('-H "Authorization: Bearer sk-abc_DEF.123"')).toBe('-H "Authorization: Bearer [redacted]"');
  expect(redactSecrets('Send the key as a Bearer token in the header.')).toBe('Send the key as a Bearer token in the header.');
});

test('placeholder keys (ollama, lm-studio, not-needed, EMPTY) leave text that holds those words alone', () => {
  for (const placeholder of ['ollama', 'lm-studio', 'not-needed', 'EMPTY', 'none']) registerSecret(placeholder);
  const text = 'Start ollama serve; LM Studio takes lm-studio as its key; EMPTY means not-needed, none.';
  expect(redactSecrets(text)).toBe(text);
});
