// The one redaction: a registered key is removed from printed text, and a
// placeholder key that local servers document is not taken for a secret (it is a
// word that documents and model names hold).

import { expect, test } from 'vitest';
import { redactSecrets, registerSecret, registerURLCredentials } from '../src/util/secrets.js';

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

test('the password inside any URL is redacted, in prose and in JSON; the rest of the URL stays', () => {
  expect(redactSecrets('base http://admin:Pa55w0rd@host:8080/v1 ok')).toBe('base http://admin:[redacted]@host:8080/v1 ok');
  expect(redactSecrets('{"baseURL": "https://u:p%40ss@api.example/v1"}')).toBe('{"baseURL": "https://u:[redacted]@api.example/v1"}');
  // An unescaped @ in the password: up to the last @ before the host.
  expect(redactSecrets('postgres://app:se@cr@t@db.internal/ragline')).toBe('postgres://app:[redacted]@db.internal/ragline');
  // No user information: nothing to redact (a port, an @ in the path, an e-mail address).
  for (const text of ['http://localhost:11434/v1', 'https://host:443/users/@me', 'mail admin@example.com', 'ssh://git@github.com/x.git']) expect(redactSecrets(text)).toBe(text);
});

test('the credentials of a configured URL are redacted wherever a server echoes them', () => {
  registerURLCredentials('http://svc-user-2291:Pa55w0rd%21x@host/v1');
  expect(redactSecrets('login failed for svc-user-2291 with Pa55w0rd!x')).toBe('login failed for [redacted] with [redacted]');
  registerURLCredentials('not a url @ all');
  registerURLCredentials(undefined);
});

test('a long line of URL-like text is redacted in linear time', () => {
  const started = performance.now();
  for (const unit of ['a.', 'x://y:', 'h://u:p', 'a+b-c.d:/']) redactSecrets(unit.repeat(200_000) + ' http://u:p@h');
  expect(performance.now() - started).toBeLessThan(10_000); // quadratic would take hours
});
