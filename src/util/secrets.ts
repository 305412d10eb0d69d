// Secrets this process knows (the API keys, the credentials inside configured
// URLs) and the one function that removes them, and any password written inside a
// URL, from text before it is printed: error messages, causes and stacks in debug
// output, `--json`, and anything else the CLI writes.

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
 * Remembers the user name and password inside `url` (`http://admin:Pa55w0rd@host/v1`,
 * `postgres://app:s3cret@db/ragline`) as secrets, as written and decoded, so that a
 * server echoing one elsewhere is redacted too. A value that is not a URL is ignored.
 */
export function registerURLCredentials(url: string | undefined): void {
  if (!url || !url.includes('@')) return;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return;
  }
  for (const part of [parsed.username, parsed.password]) {
    if (!part) continue;
    registerSecret(part);
    try {
      registerSecret(decodeURIComponent(part));
    } catch {
      // not valid percent-encoding: the part as written is registered
    }
  }
}

/**
 * The password of a URL's user information: `scheme://user:` then the password up to
 * the last `@` before the host (a password may hold an unescaped `@`). Stops at
 * whitespace, quotes and angle brackets, so a URL inside JSON or prose is read alone.
 * The scheme is at most 32 characters: text of any length is read in linear time.
 */
const URL_PASSWORD = /\b([a-z][a-z0-9+.-]{0,31}:\/\/[^\s/?#@:"'<>\\]*:)([^\s/?#"'<>\\]+)@/gi;

/**
 * `text` with every registered secret, any `Bearer <token>` and the password in any
 * `scheme://user:password@host` replaced by `[redacted]`.
 * The token is read as RFC 6750 writes it (letters, digits, `-._~+/`, then `=`), so a
 * quote or ellipsis right after it stays (`“... Bearer orb_live_x…”` keeps its `…”`),
 * and a word of letters shorter than 8 is not one: "send it as a Bearer token" is prose.
 */
export function redactSecrets(text: string): string {
  let result = text.includes('://') ? text.replace(URL_PASSWORD, '$1[redacted]@') : text;
  result = result.includes('earer')
    ? result.replace(/Bearer(\s+)([A-Za-z0-9\-._~+/]+=*)/gi, (whole, space: string, token: string) => (/^[A-Za-z]{1,7}$/.test(token) ? whole : `${whole.slice(0, 6)}${space}[redacted]`))
    : result;
  for (const secret of secrets) if (result.includes(secret)) result = result.split(secret).join('[redacted]');
  return result;
}

/**
 * Redaction for text that arrives in pieces (a streamed answer's token events): a
 * registered secret split across pieces is found whole. Each piece is given back
 * redacted as soon as it is written, but for its end when that end could be the start
 * of a secret (a random key seldom is): that part is held and goes out with the next
 * piece, or with `flush()`. Pieces that end in anything else go out as they came.
 */
export class SecretStream {
  private held = '';

  /** The part of `held + piece` that can go out now, redacted. */
  push(piece: string): string {
    const text = redactSecrets(this.held + piece);
    const hold = heldLength(text);
    this.held = text.slice(text.length - hold);
    return text.slice(0, text.length - hold);
  }

  /** Whatever is still held (the stream ended), redacted. */
  flush(): string {
    const rest = redactSecrets(this.held);
    this.held = '';
    return rest;
  }
}

/** The length of the longest end of `text` that a registered secret begins with (not the whole secret). */
function heldLength(text: string): number {
  let longest = 0;
  for (const secret of secrets) {
    for (let n = Math.min(secret.length - 1, text.length); n > longest; n--) {
      if (text.endsWith(secret.slice(0, n))) {
        longest = n;
        break;
      }
    }
  }
  return longest;
}
