// The fake OpenAI server speaks the wire format the provider tests rely on. Checked
// here with plain fetch, so a bug in the helper cannot hide behind the SDK.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hashVector, startOpenAIServer, type FakeOpenAI } from './helpers/openai-server.js';

let server: FakeOpenAI;
beforeEach(async () => {
  server = await startOpenAIServer({ embeddingDimensions: 4, models: ['chat-a', 'embed-b'] });
});
afterEach(() => server.close());

function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${server.baseURL}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

const ask = { model: 'chat-a', messages: [{ role: 'user', content: 'hello there' }] };

describe('fake OpenAI server', () => {
  it('listens on 127.0.0.1 under /v1 and logs method, path, headers and parsed body', async () => {
    expect(server.baseURL).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    await post('/chat/completions', ask, { authorization: 'Bearer k-1' });
    expect(server.requests).toEqual([
      expect.objectContaining({ method: 'POST', path: '/v1/chat/completions', route: 'chat', body: ask }),
    ]);
    expect(server.requests[0]!.headers.authorization).toBe('Bearer k-1');
  });

  it('serves queued replies in order, then the default responder', async () => {
    server.queueChat('first');
    server.queueChat({ content: 'second', usage: { prompt_tokens: 7, completion_tokens: 1 } });
    const contents = [];
    for (let i = 0; i < 3; i++) {
      const json: any = await (await post('/chat/completions', ask)).json();
      contents.push(json.choices[0].message.content);
      if (i === 1) expect(json.usage).toEqual({ prompt_tokens: 7, completion_tokens: 1, total_tokens: 8 });
    }
    expect(contents).toEqual(['first', 'second', 'Echo: hello there']);
    server.onChat((body) => `custom for ${body.model}`);
    const json: any = await (await post('/chat/completions', ask)).json();
    expect(json.choices[0].message.content).toBe('custom for chat-a');
  });

  it('streams server-sent events ending in [DONE], with a usage chunk only when asked', async () => {
    server.queueChat({ chunks: ['Hel', 'lo'] });
    server.queueChat({ chunks: ['Hel', 'lo'] });
    const plain = await (await post('/chat/completions', { ...ask, stream: true })).text();
    const withUsage = await (
      await post('/chat/completions', { ...ask, stream: true, stream_options: { include_usage: true } })
    ).text();

    for (const text of [plain, withUsage]) {
      const events = text.split('\n\n').filter(Boolean);
      expect(events.every((event) => event.startsWith('data: '))).toBe(true);
      expect(events.at(-1)).toBe('data: [DONE]');
      const chunks = events.slice(0, -1).map((event) => JSON.parse(event.slice(6)));
      expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).toBe('Hello');
      expect(chunks.some((chunk) => chunk.choices[0]?.finish_reason === 'stop')).toBe(true);
    }
    expect(plain).not.toContain('"usage"');
    const usageChunk = JSON.parse(withUsage.split('\n\n').at(-3)!.slice(6));
    expect(usageChunk).toMatchObject({ choices: [], usage: { completion_tokens: 2, prompt_tokens: 3 } }); // 'hello there': 11 characters, 4 a token
  });

  it('applies queued failures to the next N requests of their route only', async () => {
    server.queueFailure({ route: 'embeddings', status: 429, headers: { 'retry-after': '3' }, count: 2 });
    expect((await post('/chat/completions', ask)).status).toBe(200);
    const first = await post('/embeddings', { model: 'e', input: ['x'] });
    expect(first.status).toBe(429);
    expect(first.headers.get('retry-after')).toBe('3');
    expect(((await first.json()) as any).error.code).toBe('rate_limit_exceeded');
    expect((await post('/embeddings', { model: 'e', input: ['x'] })).status).toBe(429);
    expect((await post('/embeddings', { model: 'e', input: ['x'] })).status).toBe(200);
  });

  it('sends a text body when the failure body is a string', async () => {
    server.queueFailure({ status: 502, body: 'Bad gateway' });
    const response = await fetch(`${server.baseURL}/models`);
    expect(response.status).toBe(502);
    expect(await response.text()).toBe('Bad gateway');
  });

  it('cuts a stream after N chunks without finish_reason or [DONE], leaving the queued reply', async () => {
    server.queueChat({ chunks: ['a', 'b', 'c'] });
    server.queueFailure({ route: 'chat', cutStreamAfterChunks: 2 });
    const response = await post('/chat/completions', { ...ask, stream: true });
    let received = '';
    const decoder = new TextDecoder();
    await expect(
      (async () => {
        for await (const bytes of response.body!) received += decoder.decode(bytes as Uint8Array);
      })(),
    ).rejects.toThrow();
    expect(received).toContain('"content":"a"');
    expect(received).toContain('"content":"b"');
    expect(received).not.toContain('"content":"c"');
    expect(received).not.toContain('[DONE]');
    // The reply was not consumed by the failure.
    const json: any = await (await post('/chat/completions', ask)).json();
    expect(json.choices[0].message.content).toBe('abc');
  });

  it('embeds deterministically by default, as floats or base64, or with a custom handler', async () => {
    const floats: any = await (await post('/embeddings', { model: 'e', input: ['x', 'y'] })).json();
    expect(floats.data.map((item: any) => item.index)).toEqual([0, 1]);
    expect(floats.data[0].embedding).toEqual(hashVector('x', 4));
    expect(floats.data[1].embedding).toHaveLength(4);

    const base64: any = await (await post('/embeddings', { model: 'e', input: 'x', encoding_format: 'base64' })).json();
    const bytes = Buffer.from(base64.data[0].embedding, 'base64');
    expect(Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, 4))).toEqual(
      Array.from(new Float32Array(hashVector('x', 4))),
    );

    server.onEmbeddings((input) => input.map((text) => [text.length, 0]));
    const custom: any = await (await post('/embeddings', { model: 'e', input: ['abc'] })).json();
    expect(custom.data[0].embedding).toEqual([3, 0]);
  });

  it('lists the configured models and answers 404 for unknown paths', async () => {
    const listed: any = await (await fetch(`${server.baseURL}/models`)).json();
    expect(listed.data.map((model: any) => model.id)).toEqual(['chat-a', 'embed-b']);
    server.setModels(['only']);
    const relisted: any = await (await fetch(`${server.baseURL}/models`)).json();
    expect(relisted.data.map((model: any) => model.id)).toEqual(['only']);
    expect((await fetch(`${server.baseURL.replace('/v1', '')}/chat/completions`, { method: 'POST' })).status).toBe(404);
  });
});
