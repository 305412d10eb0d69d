import { describe, expect, it } from 'vitest';
import { OfflineEmbedder } from '../src/providers/offline-embedder.js';

const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, v, i) => s + v * b[i], 0);

describe('OfflineEmbedder', () => {
  it('has an id encoding the feature version and dimensions', () => {
    expect(new OfflineEmbedder().id).toBe('offline:hash-v2-384');
    expect(new OfflineEmbedder({ dimensions: 768 }).id).toBe('offline:hash-v2-768');
    expect(new OfflineEmbedder({ features: { bigram: 0 } }).id).not.toBe('offline:hash-v2-384');
    expect(new OfflineEmbedder().dimensions).toBe(384);
  });

  it('returns L2-normalised vectors of the right length', async () => {
    const [v] = await new OfflineEmbedder().embed(['How do I install the mobile SDK with Carthage?']);
    expect(v).toBeInstanceOf(Float32Array);
    expect(v.length).toBe(384);
    expect(Math.sqrt(dot(v, v))).toBeCloseTo(1, 5);
  });

  it('gives the zero vector, not NaN, for text with no tokens', async () => {
    const out = await new OfflineEmbedder().embed(['', '   ', '🎉?!']);
    for (const v of out) {
      expect(v.every((x) => x === 0)).toBe(true);
    }
  });

  it('is deterministic across instances (pinned values)', async () => {
    const text = 'Resilient multi-region Kubernetes clusters';
    const [a] = await new OfflineEmbedder().embed([text]);
    const [b] = await new OfflineEmbedder().embed([text]);
    expect(Array.from(a)).toEqual(Array.from(b));
    // pinned so a change to hashing or features shows up as a failing test (and needs a new id)
    const nonZero = Array.from(a)
      .map((x, i) => [i, Math.round(x * 1e4) / 1e4] as const)
      .filter(([, x]) => x !== 0);
    expect(nonZero.slice(0, 4)).toMatchSnapshot();
  });

  it('puts related texts closer than unrelated ones', async () => {
    const e = new OfflineEmbedder();
    const [q, near, far] = await e.embed([
      'install the mobile SDK',
      'Installing the mobile SDKs with CocoaPods',
      'Dividend tax on foreign stocks',
    ]);
    expect(dot(q, near)).toBeGreaterThan(dot(q, far) + 0.2);
  });

  it('truncates very long texts instead of failing', async () => {
    const e = new OfflineEmbedder({ maxChars: 1000 });
    const long = 'alpha beta gamma '.repeat(100_000);
    const [v] = await e.embed([long]);
    const [w] = await e.embed([long.slice(0, 1000)]);
    expect(Array.from(v)).toEqual(Array.from(w));
  });

  it('honours an aborted signal', async () => {
    const ac = new AbortController();
    ac.abort();
    await expect(new OfflineEmbedder().embed(['x'], ac.signal)).rejects.toThrow();
  });
});
