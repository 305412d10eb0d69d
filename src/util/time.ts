// How a stored ISO timestamp is shown to a person: "2026-11-24 08:02:29" (UTC, to the
// second). One function, so the CLI and the MCP server show times alike.

/** `2026-11-24T08:02:29.123Z` -> `2026-11-24 08:02:29`. */
export function stamp(iso: string): string {
  return iso.slice(0, 19).replace('T', ' ');
}
