// The stdio transport of `ragline mcp`: newline-delimited JSON-RPC on the client's
// pipes, as the SDK's StdioServerTransport speaks it, with one difference. The SDK's
// transport closes for good when a message is longer than its read buffer (10 MB),
// and the server then runs on deaf: it answers nothing, and the client waits for
// ever. Here a message over the limit is skipped up to its newline, answered with a
// JSON-RPC error when its id can be read (an SDK client writes the id last, so the
// end of the message is kept as well as its start), and the next message is read as
// usual. Only the start and end of a long line are held, never the whole of it.

import type { Readable, Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { deserializeMessage, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/sdk/types.js';

/** The longest message read, in bytes (the SDK's own read buffer's size). */
export const MAX_MESSAGE_BYTES = 10 * 1024 * 1024;
/** JSON-RPC 2.0: "The JSON sent is not a valid Request object." */
const INVALID_REQUEST = -32600;
/** Bytes kept of the start and of the end of a message over the limit, to find its id. */
const KEPT_BYTES = 4096;

export interface LineTransportOptions {
  maxMessageBytes?: number;
  /** Said when a message over the limit is skipped (on stderr). */
  log?: (message: string) => void;
}

export class LineTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onerror?: (error: Error) => void;
  onclose?: () => void;
  private readonly maxBytes: number;
  /** The current line's pieces, while it is within the limit. */
  private pieces: Buffer[] = [];
  private length = 0;
  /** Set while skipping a line over the limit: its start, its latest end, its size. */
  private skipping?: { head: Buffer; tail: Buffer; bytes: number };
  private closed = false;

  constructor(
    private readonly input: Readable,
    private readonly output: Writable,
    private readonly options: LineTransportOptions = {},
  ) {
    this.maxBytes = options.maxMessageBytes ?? MAX_MESSAGE_BYTES;
  }

  private readonly onData = (chunk: Buffer) => {
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(0x0a, start);
      const end = newline === -1 ? chunk.length : newline;
      this.take(chunk.subarray(start, end));
      if (newline === -1) break;
      this.endLine();
      start = newline + 1;
    }
  };

  private readonly onError = (error: Error) => this.onerror?.(error);

  async start(): Promise<void> {
    this.input.on('data', this.onData);
    this.input.on('error', this.onError);
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) return;
    if (!this.output.write(serializeMessage(message))) await new Promise<void>((resolve) => this.output.once('drain', resolve));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.input.off('data', this.onData);
    this.input.off('error', this.onError);
    this.pieces = [];
    this.skipping = undefined;
    this.onclose?.();
  }

  /** A piece of the current line (no newline in it). */
  private take(piece: Buffer): void {
    if (piece.length === 0) return;
    if (this.skipping) {
      this.skipping.bytes += piece.length;
      this.skipping.tail = lastBytes(Buffer.concat([this.skipping.tail, piece]), KEPT_BYTES);
      return;
    }
    if (this.length + piece.length > this.maxBytes) {
      const held = Buffer.concat([...this.pieces, piece]);
      this.skipping = { head: held.subarray(0, KEPT_BYTES), tail: lastBytes(held, KEPT_BYTES), bytes: held.length };
      this.pieces = [];
      this.length = 0;
      return;
    }
    this.pieces.push(piece);
    this.length += piece.length;
  }

  private endLine(): void {
    if (this.skipping) {
      const skipped = this.skipping;
      this.skipping = undefined;
      this.refuse(skipped);
      return;
    }
    const line = Buffer.concat(this.pieces).toString('utf8').replace(/\r$/, '');
    this.pieces = [];
    this.length = 0;
    if (line.trim() === '') return;
    let message: JSONRPCMessage;
    try {
      message = deserializeMessage(line);
    } catch (error) {
      this.onerror?.(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    this.onmessage?.(message);
  }

  /** A message over the limit: an error for its request (when its id can be read), and a line on stderr. */
  private refuse(skipped: { head: Buffer; tail: Buffer; bytes: number }): void {
    const id = requestIdOf(skipped.head.toString('utf8'), skipped.tail.toString('utf8'));
    const size = `${(skipped.bytes / 1024 / 1024).toFixed(1)} MB`;
    const limit = `${Math.round(this.maxBytes / 1024 / 1024)} MB`;
    this.options.log?.(
      `skipped a message of ${size}, over the ${limit} a message may have${id === undefined ? ' (no request id found in it, so no error was sent back)' : `; request ${JSON.stringify(id)} was answered with an error`}`,
    );
    if (id === undefined) return;
    void this.send({
      jsonrpc: '2.0',
      id,
      error: { code: INVALID_REQUEST, message: `The request is ${size}; ragline mcp reads messages of at most ${limit}. It was not run. Send a shorter query or question.` },
    }).catch((error: unknown) => this.onerror?.(error instanceof Error ? error : new Error(String(error))));
  }
}

function lastBytes(buffer: Buffer, count: number): Buffer {
  return buffer.length <= count ? buffer : buffer.subarray(buffer.length - count);
}

/**
 * The id of a request from the start and end of its JSON: a top-level `"id"` is the
 * object's first member (`{"jsonrpc":"2.0","id":7,...` as most clients write it) or its
 * last (`...,"jsonrpc":"2.0","id":7}` as the SDK's client writes it). Undefined for a
 * notification, or when neither end says.
 */
export function requestIdOf(head: string, tail: string): RequestId | undefined {
  const value = String.raw`(-?\d+|"(?:[^"\\]|\\.)*")`;
  const first = new RegExp(String.raw`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*${value}\s*[,}]`).exec(head);
  const last = new RegExp(String.raw`[,{]\s*"id"\s*:\s*${value}\s*\}\s*$`).exec(tail.replace(/\r$/, ''));
  const raw = first?.[1] ?? last?.[1];
  if (raw === undefined) return undefined;
  try {
    const parsed: unknown = JSON.parse(raw);
    return typeof parsed === 'number' || typeof parsed === 'string' ? parsed : undefined;
  } catch {
    return undefined;
  }
}
