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

/**
 * `text` with every registered secret, and any `Bearer <token>`, replaced by `[redacted]`.
 * The token is read as RFC 6750 writes it (letters, digits, `-._~+/`, then `=`), so a
 * quote or ellipsis right after it stays (`“... Bearer orb_live_x…”` keeps its `…”`),
 * and a word of letters shorter than 8 is not one: "send it as a Bearer token" is prose.
 */
export function redactSecrets(text: string): string {
  let result = text.includes('earer')
    ? text.replace(/Bearer(\s+)([A-Za-z0-9\-._~+/]+=*)/gi, (whole, space: string, token: string) => (/^[A-Za-z]{1,7}$/.test(token) ? whole : `${whole.slice(0, 6)}${space}[redacted]`))
    : text;
  for (const secret of secrets) if (result.includes(secret)) result = result.split(secret).join('[redacted]');
  return result;
}
