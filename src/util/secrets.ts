// Secrets this process knows (the API key) and the one function that removes
// them from text before it is printed: error messages, causes and stacks in
// debug output, and anything else the CLI writes.

const secrets = new Set<string>();

/**
 * Whether `value` can be a secret rather than a placeholder: local servers take any
 * key, and the ones their docs give ("ollama", "lm-studio", "not-needed") are words
 * that documents and model names hold, which replacing would mangle. A key is
 * random: it has a digit, or it is long.
 */
function looksSecret(value: string): boolean {
  return (value.length >= 6 && /\d/.test(value)) || value.length >= 16;
}

/** Remembers `value` as a secret to remove from everything printed. */
export function registerSecret(value: string | undefined): void {
  const trimmed = value?.trim();
  if (trimmed && looksSecret(trimmed)) secrets.add(trimmed);
}

/** `text` with every registered secret, and any `Bearer <token>`, replaced by `[redacted]`. */
export function redactSecrets(text: string): string {
  let result = text.includes('earer') ? text.replace(/Bearer\s+\S+/gi, 'Bearer [redacted]') : text;
  for (const secret of secrets) if (result.includes(secret)) result = result.split(secret).join('[redacted]');
  return result;
}
