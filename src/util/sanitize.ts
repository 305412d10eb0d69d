// Everything shown that came from outside the program is untrusted: document
// text, file and folder names, paths, model ids, server messages, session names.
// Before it reaches a terminal it loses every escape sequence (ANSI/CSI, OSC
// such as "set title"), other control characters and bidirectional overrides,
// so it cannot recolour, retitle or hide text in the user's terminal. This is
// the one place that defines what is safe: `sanitizeForTerminal` for text,
// `oneLine` for names and messages, `jsonSafe` for JSON that may be printed, and
// `sanitizeStyled` for a line the CLI has coloured (what its writer applies to
// everything it prints, whatever the call site did).

// CSI (ESC [ ... final), OSC (ESC ] ... BEL or ESC \), other ESC-introduced sequences, C1 CSI/OSC.
const ESCAPES = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|\u001b[P^_X][^\u001b]*(?:\u001b\\)?|\u001b[@-Z\\-_]?|\u009b[0-?]*[ -/]*[@-~]|\u009d[^\u0007\u009c]*[\u0007\u009c]?/g;
// C0 controls except tab and newline, DEL, C1 controls.
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;
// Bidi embeddings, overrides and isolates; zero-width characters that can hide text
// (including the word joiner and invisible operators U+2060-U+2064). The zero-width
// non-joiner and joiner (U+200C, U+200D) stay: they are part of the text in Persian,
// Indic scripts and emoji sequences (👩‍💻), and act on nothing but the glyphs beside them.
const INVISIBLE = /[\u202a-\u202e\u2066-\u2069\u200b\u200e\u200f\u2060-\u2064\u2028\u2029\u061c\ufeff]/g;

/** Text safe to print: escapes and controls removed; newlines and tabs kept. */
export function sanitizeForTerminal(text: string): string {
  return text.replace(ESCAPES, '').replace(/\r\n?/g, '\n').replace(CONTROLS, '').replace(INVISIBLE, '');
}

/**
 * The styles the CLI's own colours write (chalk's bold, dim, red, green, yellow,
 * magenta and cyan, and their resets): plain SGR with one parameter. None of them
 * hides, moves or retitles anything.
 */
const OWN_STYLE = /\u001b\[(?:1|2|22|3[1-3]|3[5-6]|39)m/g;

/**
 * A coloured line made safe: sanitizeForTerminal on everything between the CLI's
 * own style sequences, which are kept. Text from a file that holds one of those
 * sequences can at most colour itself; an OSC, a cursor move, a C1 or a bidi control
 * never survives, and the pieces cannot join into a new escape (each piece is
 * sanitised alone, and every kept sequence is whole).
 */
export function sanitizeStyled(text: string): string {
  if (!text.includes('\u001b')) return sanitizeForTerminal(text);
  let safe = '';
  let from = 0;
  for (const style of text.matchAll(OWN_STYLE)) {
    safe += sanitizeForTerminal(text.slice(from, style.index)) + style[0];
    from = style.index + style[0].length;
  }
  return safe + sanitizeForTerminal(text.slice(from));
}

/**
 * One line of safe text: whitespace runs (newlines in a file name too) collapsed,
 * cut to `max` characters with an ellipsis. For names, paths, ids and messages.
 */
export function oneLine(text: string, max = Infinity): string {
  const flat = sanitizeForTerminal(text).replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : flat.slice(0, Math.max(0, max - 1)).trimEnd() + '…';
}

// Characters that are valid inside JSON strings but act on a terminal when the
// JSON is printed: escapes, other controls, bidi overrides, zero-width marks.
// (JSON.stringify already writes C0 controls, ESC included, as \u escapes.)
const TERMINAL_ACTIVE = /[\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2028\u2029\u2060-\u2069\u061c\ufeff]/g;

/** JSON text with terminal-active characters written as \u escapes: the same JSON value, safe to print. */
export function jsonSafe(json: string): string {
  return json.replace(TERMINAL_ACTIVE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
