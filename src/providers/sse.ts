// Server-sent events read from a chat completion's response body, with limits on
// silence: the SDK's timeout covers only the wait for response headers, so a stream
// that stalls after them would hang a turn. We read the body ourselves (rather than
// through the SDK's Stream) because servers report errors inside a 200 stream in
// shapes the SDK drops: older llama.cpp writes an `error:` field line, others an
// `event: error`, LM Studio a `data: {"error": ...}` event.

/** One dispatched event: its data lines joined, or the text of an `error` field. */
export interface ServerSentEvent {
  event?: string;
  data?: string;
  error?: string;
}

/** No byte arrived for `ms` while a stream was open. */
export class StreamStalledError extends Error {
  constructor(
    readonly ms: number,
    readonly beforeFirstToken: boolean,
  ) {
    super(`No data for ${Math.round(ms / 1000)} s.`);
    this.name = 'StreamStalledError';
  }
}

/** A streamed reply still going when its total limit (request.totalMs) passed. */
export class StreamOverranError extends Error {
  constructor(readonly ms: number) {
    super(`The reply took longer than ${Math.round(ms / 1000)} s.`);
    this.name = 'StreamOverranError';
  }
}

/** An error the server reported inside a stream that had started with HTTP 200. */
export class ServerStreamError extends Error {
  constructor(
    message: string,
    readonly body?: unknown,
  ) {
    super(message);
    this.name = 'ServerStreamError';
  }
}

export interface ReadLimits {
  /** Longest wait for the first byte of the body. */
  firstByteMs: number;
  /** Longest silence between two reads after that. */
  idleMs: number;
  signal?: AbortSignal;
}

/**
 * The events of `body`, in order. Throws StreamStalledError when a limit passes (and
 * cancels the body, which closes the connection), an AbortError-like error when
 * `signal` aborts, and whatever the body's reader throws when the connection drops.
 */
export async function* readEvents(body: ReadableStream<Uint8Array>, limits: ReadLimits): AsyncGenerator<ServerSentEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let pending = '';
  let event: ServerSentEvent = {};
  let first = true;
  try {
    while (true) {
      const chunk = await readWithin(reader, first ? limits.firstByteMs : limits.idleMs, first, limits.signal);
      if (chunk.done) break;
      first = false;
      pending += decoder.decode(chunk.value, { stream: true });
      const lines = pending.split(/\r\n|\r|\n/);
      pending = lines.pop() ?? '';
      for (const line of lines) {
        if (line === '') {
          if (event.data !== undefined || event.error !== undefined) yield event;
          event = {};
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon === -1 ? line : line.slice(0, colon);
        const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'data') event.data = event.data === undefined ? value : `${event.data}\n${value}`;
        else if (field === 'error') event.error = value;
        else if (field === 'event') event.event = value;
      }
    }
    pending += decoder.decode();
    if (pending.startsWith('data:')) event.data = (event.data ? `${event.data}\n` : '') + pending.slice(5).replace(/^ /, '');
    else if (pending.startsWith('error:')) event.error = pending.slice(6).trim();
    if (event.data !== undefined || event.error !== undefined) yield event;
  } finally {
    await reader.cancel().catch(() => {});
  }
}

type ReadResult = Awaited<ReturnType<ReadableStreamDefaultReader<Uint8Array>['read']>>;

function readWithin(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  ms: number,
  beforeFirst: boolean,
  signal: AbortSignal | undefined,
): Promise<ReadResult> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      cleanup();
      const error = new Error('The request was aborted.');
      error.name = 'AbortError';
      reject(error);
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new StreamStalledError(ms, beforeFirst));
    }, ms);
    const cleanup = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    reader.read().then(
      (result) => {
        cleanup();
        resolve(result);
      },
      (error: unknown) => {
        cleanup();
        reject(error);
      },
    );
  });
}
