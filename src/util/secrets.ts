// Secrets this process knows (the API key) and the one function that removes
// them from text before it is printed: error messages, causes and stacks in
// debug output, and anything else the CLI writes.

const secrets = new Set<string>();

/** Very short values are placeholders, not secrets; replacing them would mangle text. */
const MIN_SECRET_LENGTH = 6;

/** Remembers `value` as a secret to remove from everything printed. */
export function registerSecret(value: string | undefined): void {
  if (value !== undefined && value.trim().length >= MIN_SECRET_LENGTH) secrets.add(value.trim());
}

/** `text` with every registered secret, and any `Bearer <token>`, replaced by `[redacted]`. */
export function redactSecrets(text: string): string {
  let result = text.includes('earer') ? text.replace(/Bearer\s+\S+/gi, 'Bearer [redacted]') : text;
  for (const secret of secrets) if (result.includes(secret)) result = result.split(secret).join('[redacted]');
  return result;
}
