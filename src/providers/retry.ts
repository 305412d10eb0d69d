// The one retry policy for provider calls. The SDK's own retries are switched off
// (maxRetries: 0) so that waits are bounded, visible to tests through an injected
// sleep, abortable, and the same for embeddings and chat. Exponential backoff with
// full jitter; a server's Retry-After / retry-after-ms is obeyed when it is within
// the cap, and when it asks for longer we stop instead of retrying too early.
// A refused connection is retried once (a server restarting) and an unknown host
// not at all: backing off for seconds against a stopped server helps nobody.

import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai/error';
import { isPermanent } from './server-errors.js';

export interface RetryPolicy {
  /** Retries after the first attempt. Default 4. */
  maxRetries?: number;
  /** Ceiling of the first backoff; doubles on each retry. Default 500 ms. */
  baseDelayMs?: number;
  /** Longest single wait, whether computed or asked for by the server. Default 30 s. */
  maxDelayMs?: number;
  /** Waits `ms`, rejecting if `signal` aborts. Injected by tests to record waits. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Current time in ms, for Retry-After given as an HTTP date. Default `Date.now`. */
  now?: () => number;
  /** Uniform number in [0, 1) for the jitter. Default `Math.random`. */
  random?: () => number;
}

export interface RetryOptions extends RetryPolicy {
  signal?: AbortSignal;
  /** Called before each wait; `attempt` is the number of the retry about to happen (1-based). */
  onRetry?: (info: { attempt: number; delayMs: number; error: unknown }) => void;
}

/** What the retry loop did before giving up on an error, read by `describeProviderError`. */
export interface RetryRecord {
  /** Retries made before this error ended the call. */
  retries: number;
  /** Set when the server asked to wait longer than the cap, so we stopped early. */
  serverAskedMs?: number;
}

export const DEFAULT_MAX_RETRIES = 4;
export const DEFAULT_BASE_DELAY_MS = 500;
export const DEFAULT_MAX_DELAY_MS = 30_000;

/**
 * A streamed answer that ended without a finish reason: the connection dropped or the
 * server closed the stream early. Retried only while no token has been passed on.
 */
export class StreamInterruptedError extends Error {
  constructor(message = 'The stream ended before the model finished.', options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StreamInterruptedError';
  }
}

const records = new WeakMap<object, RetryRecord>();

/** How many retries preceded `error`, if it came out of `withRetry`. */
export function retryRecordOf(error: unknown): RetryRecord | undefined {
  return typeof error === 'object' && error !== null ? records.get(error) : undefined;
}

/**
 * 429, 408 and 5xx answers (but 501, "not implemented"), dropped connections and
 * interrupted streams. Not timeouts, stalls, aborts, other 4xx, nor errors that say
 * the request itself cannot succeed (a prompt over the context, no embeddings).
 */
export function isRetryable(error: unknown): boolean {
  if (error instanceof APIUserAbortError) return false;
  if (isPermanent(error)) return false;
  // A timed-out request already cost the whole timeout; repeating it multiplies the wait.
  if (error instanceof APIConnectionTimeoutError) return false;
  if (error instanceof APIConnectionError) return true;
  if (error instanceof StreamInterruptedError) return true;
  if (error instanceof APIError && typeof error.status === 'number') {
    return error.status === 429 || error.status === 408 || (error.status >= 500 && error.status !== 501);
  }
  return false;
}

/** The first `code` along the `cause` chain (undici nests the system error under "fetch failed"). */
export function causeCode(error: unknown): string | undefined {
  for (let current: any = error, depth = 0; current && depth < 6; current = current.cause, depth++) {
    if (typeof current.code === 'string') return current.code;
    if (Array.isArray(current.errors)) {
      // AggregateError from happy-eyeballs: IPv4 and IPv6 attempts both failed.
      const inner = current.errors.find((item: any) => typeof item?.code === 'string');
      if (inner) return inner.code;
    }
  }
  return undefined;
}

/**
 * Whether fetch refused the URL's port before connecting: the Fetch standard's "bad
 * ports" (9, 6000, 10080...), which undici reports as "fetch failed" caused by "bad port".
 */
export function isBadPort(error: unknown): boolean {
  for (let current: any = error, depth = 0; current && depth < 6; current = current.cause, depth++) {
    if (current instanceof Error && current.message === 'bad port') return true;
  }
  return false;
}

/** Retries at most, whatever maxRetries says: 1 for a refused connection, 0 for an unknown host or a bad port, else no limit. */
export function retryLimitFor(error: unknown): number {
  if (!(error instanceof APIConnectionError) || error instanceof APIConnectionTimeoutError) return Infinity;
  const code = causeCode(error);
  if (code === 'ECONNREFUSED' || code === 'EAI_AGAIN') return 1;
  if (code === 'ENOTFOUND' || isBadPort(error)) return 0;
  return Infinity;
}

/**
 * The wait a server asked for through `retry-after-ms` (milliseconds) or `Retry-After`
 * (seconds or an HTTP date), or `undefined` when it asked for nothing readable.
 */
export function retryAfterMs(headers: Headers | undefined, now: number = Date.now()): number | undefined {
  const milliseconds = headers?.get('retry-after-ms');
  if (milliseconds && Number.isFinite(Number(milliseconds))) return Math.max(0, Number(milliseconds));
  const value = headers?.get('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Full jitter: uniform in [0, min(maxDelay, base * 2^(attempt-1))). `attempt` is 1-based. */
export function backoffDelayMs(attempt: number, policy: RetryPolicy = {}): number {
  const base = policy.baseDelayMs ?? DEFAULT_BASE_DELAY_MS;
  const ceiling = Math.min(policy.maxDelayMs ?? DEFAULT_MAX_DELAY_MS, base * 2 ** (attempt - 1));
  return Math.floor((policy.random ?? Math.random)() * ceiling);
}

/** Waits `ms`; rejects with the SDK's `APIUserAbortError` when `signal` aborts. */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new APIUserAbortError());
    const onAbort = () => {
      clearTimeout(timer);
      reject(new APIUserAbortError());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Runs `attempt` until it succeeds, fails with something not worth retrying, or the
 * retries run out. The error that ends the call is thrown unchanged (so `instanceof`
 * checks on SDK errors still work), with a `RetryRecord` readable via `retryRecordOf`.
 */
export async function withRetry<T>(attempt: (attemptNumber: number) => Promise<T>, options: RetryOptions = {}): Promise<T> {
  const maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
  const maxDelayMs = options.maxDelayMs ?? DEFAULT_MAX_DELAY_MS;
  const sleep = options.sleep ?? abortableSleep;
  const now = options.now ?? Date.now;

  let previous: string | undefined;
  for (let retries = 0; ; retries++) {
    if (options.signal?.aborted) throw new APIUserAbortError();
    try {
      return await attempt(retries);
    } catch (error) {
      if (options.signal?.aborted) throw new APIUserAbortError();
      const giveUp = (record: RetryRecord) => {
        if (typeof error === 'object' && error !== null) records.set(error, record);
        return error;
      };
      if (!isRetryable(error) || retries >= Math.min(maxRetries, retryLimitFor(error))) throw giveUp({ retries });
      // The same 500 twice is the server's answer, not a passing fault.
      const signature = error instanceof APIError && error.status === 500 ? serverSaid(error) : undefined;
      if (signature !== undefined && signature === previous) throw giveUp({ retries });
      previous = signature;

      const asked = error instanceof APIError ? retryAfterMs(error.headers, now()) : undefined;
      if (asked !== undefined && asked > maxDelayMs) throw giveUp({ retries, serverAskedMs: asked });
      const delayMs = asked ?? backoffDelayMs(retries + 1, options);

      options.onRetry?.({ attempt: retries + 1, delayMs, error });
      await sleep(delayMs, options.signal);
    }
  }
}

function serverSaid(error: APIError): string {
  const body = error.error as { message?: unknown } | undefined;
  return typeof body?.message === 'string' ? body.message : error.message;
}
