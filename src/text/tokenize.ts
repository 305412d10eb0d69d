// Word tokenizer shared by the offline embedder, query building and the lab's BM25.
// It follows SQLite FTS5's `unicode61` idea of a token (runs of Unicode letters, digits
// and combining marks, lower-cased, diacritics removed like `remove_diacritics 2`) so
// what JS counts and what FTS5 indexes agree, and optionally keeps identifiers such as
// `ibm-cloud`, `max_connections` or `v1.2.3` whole. A hand-written scanner with an ASCII
// fast path: the embedder's throughput depends on it.

/** Options for {@link tokenize}. */
export interface TokenizeOptions {
  /**
   * Keep `_`, `-`, `.` between letters/digits inside one token, so `max_connections`
   * stays one token. Default false: split like FTS5 unicode61.
   */
  identifiers?: boolean;
  /** Strip diacritics (é -> e), as unicode61 `remove_diacritics 2` does. Default true. */
  removeDiacritics?: boolean;
}

const WORD_CHAR = /[\p{L}\p{N}\p{M}]/u;
const MARKS = /\p{M}+/gu;

// 1 = word character, 2 = identifier joiner, 0 = separator (ASCII only).
const ASCII_CLASS = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const ch = String.fromCharCode(c);
  if (/[a-z0-9]/.test(ch)) ASCII_CLASS[c] = 1;
  else if (ch === '_' || ch === '-' || ch === '.') ASCII_CLASS[c] = 2;
}
const nonAsciiCache = new Map<number, boolean>();

function isWordCodePoint(cp: number): boolean {
  let v = nonAsciiCache.get(cp);
  if (v === undefined) {
    v = WORD_CHAR.test(String.fromCodePoint(cp));
    if (nonAsciiCache.size < 65536) nonAsciiCache.set(cp, v);
  }
  return v;
}

function cleanNonAscii(token: string, removeDiacritics: boolean): string {
  if (!removeDiacritics) return token;
  return token.normalize('NFD').replace(MARKS, '').normalize('NFC');
}

/**
 * Splits `text` into lower-case tokens of Unicode letters, digits and marks. A run of CJK
 * characters is one token (as in unicode61). Never returns empty strings.
 */
export function tokenize(text: string, options: TokenizeOptions = {}): string[] {
  const removeDiacritics = options.removeDiacritics ?? true;
  const identifiers = options.identifiers ?? false;
  const s = text.toLowerCase();
  const out: string[] = [];
  const n = s.length;
  let start = -1; // start of the current token, -1 when between tokens
  let nonAscii = false;
  let i = 0;
  while (i <= n) {
    let kind = 0;
    let width = 1;
    if (i < n) {
      const code = s.charCodeAt(i);
      if (code < 128) {
        kind = ASCII_CLASS[code];
      } else {
        const cp = s.codePointAt(i)!;
        width = cp > 0xffff ? 2 : 1;
        kind = isWordCodePoint(cp) ? 1 : 0;
        if (kind === 1) nonAscii = true;
      }
    }
    if (kind === 2) {
      // a joiner stays inside an identifier only when a word character follows it
      const next = i + 1 < n ? s.charCodeAt(i + 1) : 0;
      const nextIsWord = next < 128 ? ASCII_CLASS[next] === 1 : isWordCodePoint(s.codePointAt(i + 1)!);
      if (identifiers && start >= 0 && nextIsWord) {
        i += 1;
        continue;
      }
      kind = 0;
    }
    if (kind === 1) {
      if (start < 0) start = i;
    } else if (start >= 0) {
      const tok = s.slice(start, i);
      if (nonAscii) {
        const t = cleanNonAscii(tok, removeDiacritics);
        if (t.length > 0) out.push(t);
      } else {
        out.push(tok);
      }
      start = -1;
      nonAscii = false;
    }
    i += width;
  }
  return out;
}

/** Splits an identifier token (`max_connections`, `v1.2`) into its word parts. */
export function identifierParts(token: string): string[] {
  return token.split(/[_.\-]+/).filter((p) => p.length > 0);
}
