// The stdio transport of `ragline mcp` (src/mcp/stdio.ts) on its own: messages cut
// anywhere by the pipe, and a message over the size limit skipped and answered with
// a JSON-RPC error while the next ones are read as usual.

import { PassThrough } from 'node:stream';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, test } from 'vitest';
import { LineTransport, requestIdOf } from '../src/mcp/stdio.js';

async function started(maxMessageBytes = 1000) {
  const input = new PassThrough();
  const output = new PassThrough();
  const logged: string[] = [];
  const transport = new LineTransport(input, output, { maxMessageBytes, log: (line) => logged.push(line) });
  const received: JSONRPCMessage[] = [];
  const errors: Error[] = [];
  transport.onmessage = (message) => received.push(message);
  transport.onerror = (error) => errors.push(error);
  await transport.start();
  let written = '';
  output.on('data', (chunk: Buffer) => (written += chunk.toString()));
  const sent = () => written.split('\n').filter(Boolean).map((line) => JSON.parse(line) as { id: unknown; error?: { code: number; message: string } });
  /** Writes `text` to the transport in pieces of `size` bytes. */
  const write = async (text: string, size = 7) => {
    const bytes = Buffer.from(text);
    for (let at = 0; at < bytes.length; at += size) input.write(bytes.subarray(at, at + size));
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { transport, received, errors, logged, sent, write };
}

const ping = (id: number) => JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' });

describe('LineTransport', () => {
  test('reads messages however the pipe cuts them, with CRLF line ends and blank lines between', async () => {
    const { received, errors, write } = await started();
    await write(`${ping(1)}\n\r\n${ping(2)}\r\n${ping(3)}\n`);
    expect(received.map((m) => (m as { id: number }).id)).toEqual([1, 2, 3]);
    expect(errors).toEqual([]);
  });

  test('a line that is not JSON-RPC is reported as an error and the next message is read', async () => {
    const { received, errors, write } = await started();
    await write(`not json-rpc\n${ping(4)}\n`);
    expect(errors).toHaveLength(1);
    expect(received).toHaveLength(1);
  });

  test.each([
    ['last, as the SDK client writes it', (big: string) => JSON.stringify({ method: 'tools/call', params: { name: 'search', arguments: { query: big, id: 99 } }, jsonrpc: '2.0', id: 7 })],
    ['first, as most clients write it', (big: string) => JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'search', arguments: { query: big } } })],
  ])('a request over the limit with its id %s is answered with an error, and the next message is read', async (_name, request) => {
    const { received, sent, logged, write } = await started();
    await write(`${request('x'.repeat(5000))}\n${ping(8)}\n`, 300);
    expect(sent()).toEqual([{ jsonrpc: '2.0', id: 7, error: { code: -32600, message: expect.stringContaining('reads messages of at most') } }]);
    expect(received.map((m) => (m as { id: number }).id)).toEqual([8]);
    expect(logged).toEqual([expect.stringContaining('request 7 was answered with an error')]);
  });

  test('a notification over the limit is skipped, said on stderr, and nothing is sent back', async () => {
    const { received, sent, logged, write } = await started();
    await write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { data: 'x'.repeat(5000) } })}\n${ping(9)}\n`);
    expect(sent()).toEqual([]);
    expect(logged).toEqual([expect.stringContaining('no request id found in it')]);
    expect(received.map((m) => (m as { id: number }).id)).toEqual([9]);
  });

  test('requestIdOf reads only a top-level id at either end', () => {
    expect(requestIdOf('{"jsonrpc":"2.0","id":"a-1","method":"x"', '')).toBe('a-1');
    expect(requestIdOf('{"method":"x","params":{', '"x"}},"jsonrpc":"2.0","id":12}')).toBe(12);
    expect(requestIdOf('{"method":"x","params":{', '"arguments":{"id":3}}}')).toBeUndefined();
    expect(requestIdOf('{"method":"x","params":{"id":3,', '"y"}}')).toBeUndefined();
  });
});
