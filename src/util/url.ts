// A server's address as messages show it.

/** The base URL without any user:password part, for messages. */
export function displayURL(baseURL: string): string {
  try {
    const url = new URL(baseURL);
    url.username = '';
    url.password = '';
    return url.toString().replace(/\/$/, '');
  } catch {
    return baseURL;
  }
}
