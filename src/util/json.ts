// JSON that is safe to print to a terminal.

import { jsonSafe } from './sanitize.js';

/** JSON.stringify, with terminal-active characters written as \u escapes (still the same JSON value). */
export function toJson(value: unknown, indent?: number): string {
  return jsonSafe(JSON.stringify(value, null, indent));
}
