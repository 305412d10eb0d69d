import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../src/store/db.js';
import { createVectorTable, dropVectorTable, vectorBytes } from '../src/store/vectors.js';
import { DEFAULT_SEARCH_PATHS } from '../src/config/index.js';
import { nearest, type VectorCandidate } from '../src/retrieve/interfaces.js';
import { SearchAccelerators } from '../src/retrieve/memory/accelerators.js';
import type { VectorPaths } from '../src/retrieve/memory/vector-copy.js';
import { VectorIndex } from '../src/retrieve/memory/vector-index.js';
import { createKernelMemory, instantiateKernel } from '../src/retrieve/memory/vector-kernel.js';
import { Vec0Search } from '../src/retrieve/vec0.js';
import { prng } from './helpers/prng.js';

function randomVector(next: () => number, dim: number): Float32Array {
  // not normalised on purpose: cosine must not depend on stored norms
  return Float32Array.from({ length: dim }, () => (next() - 0.5) * (1 + next()));
}

function cosineDistance(a: Float32Array, b: Float32Array): number {
  let dot = 0, na = 0, nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return 1 - dot / Math.sqrt(na * nb);
}

function bruteForce(vectors: Map<number, Float32Array>, query: Float32Array, n: number): VectorCandidate[] {
  return [...vectors]
    .map(([id, v]) => ({ id, distance: cosineDistance(query, v) }))
    .sort((a, b) => a.distance - b.distance)
    .slice(0, n);
}

function insert(db: Db, vectors: Map<number, Float32Array>, id: number, v: Float32Array) {
  db.prepare('INSERT INTO vec_chunks (rowid, embedding) VALUES (?, ?)').run(BigInt(id), vectorBytes(v));
  vectors.set(id, v);
}

function remove(db: Db, vectors: Map<number, Float32Array>, id: number) {
  db.prepare('DELETE FROM vec_chunks WHERE rowid = ?').run(BigInt(id));
  vectors.delete(id);
}

/** Same ids in the same order, up to swaps of (near-)equal distances; distances within float error. */
function expectSameNeighbours(got: VectorCandidate[], want: VectorCandidate[]) {
  expect(got.length).toBe(want.length);
  for (let i = 0; i < want.length; i++) {
    expect(got[i]!.distance).toBeCloseTo(want[i]!.distance, 5);
    if (got[i]!.id !== want[i]!.id) {
      // a tie within float error may be ordered either way
      expect(Math.abs(got[i]!.distance - want[i]!.distance)).toBeLessThan(1e-5);
    }
  }
  expect(new Set(got.map((c) => c.id))).toEqual(new Set(want.map((c) => c.id)));
}

let dir: string;
/** Each open database with its reference search and its in-memory copies, as a retriever holds them. */
let opened: Map<Db, { vec0: Vec0Search; accelerators: SearchAccelerators }>;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ragline-knn-'));
  opened = new Map();
});
afterEach(() => {
  for (const [db, { accelerators }] of opened) {
    accelerators.close();
    db.close();
  }
  fs.rmSync(dir, { recursive: true, force: true });
});

function open(file = path.join(dir, 'test.db')): Db {
  const db = openDatabase(file, { create: true });
  opened.set(db, { vec0: new Vec0Search(db), accelerators: new SearchAccelerators(db) });
  return db;
}

const copyOf = (db: Db) => opened.get(db)!.accelerators.vectors;

/** One vector search as the retriever runs it: on the copy when it answers, else vec0. */
function vectorCandidates(db: Db, query: Float32Array, n: number, paths: VectorPaths = DEFAULT_SEARCH_PATHS): VectorCandidate[] {
  const { vec0, accelerators } = opened.get(db)!;
  return nearest(accelerators.vectorSearch(paths, vec0), query, n);
}

function fill(db: Db, count: number, dim: number, seed: number): Map<number, Float32Array> {
  createVectorTable(db, dim);
  const next = prng(seed);
  const vectors = new Map<number, Float32Array>();
  db.transaction(() => {
    for (let id = 1; id <= count; id++) insert(db, vectors, id * 3, randomVector(next, dim));
  })();
  return vectors;
}

describe('vectorCandidates', () => {
  it('returns the exact nearest neighbours, before (vec0) and after (in-memory copy) the background load', async () => {
    const db = open();
    const vectors = fill(db, 3000, 50, 1); // 50: not a multiple of 16, exercises padding
    const next = prng(99);
    const queries = Array.from({ length: 20 }, () => randomVector(next, 50));
    for (const query of queries.slice(0, 2)) expectSameNeighbours(vectorCandidates(db, query, 25), bruteForce(vectors, query, 25));
    expect(copyOf(db).index?.ready).toBe(false); // two searches from vec0; the load was only scheduled
    await copyOf(db).warmInBackground();
    expect(copyOf(db).index?.ready).toBe(true);
    for (const query of queries) expectSameNeighbours(vectorCandidates(db, query, 25), bruteForce(vectors, query, 25));
  });

  it('loads the copy synchronously on the third search when the event loop never idles', () => {
    const db = open();
    const vectors = fill(db, 2000, 24, 21);
    const next = prng(22);
    for (let q = 0; q < 3; q++) {
      const query = randomVector(next, 24);
      expectSameNeighbours(vectorCandidates(db, query, 10), bruteForce(vectors, query, 10));
      expect(copyOf(db).index?.ready).toBe(q === 2);
    }
  });

  it('never loads the copy synchronously while a background load is under way (a server keeps answering from vec0)', async () => {
    const db = open();
    const vectors = fill(db, 2000, 24, 31);
    const next = prng(32);
    const warming = copyOf(db).warmInBackground();
    for (let q = 0; q < 5; q++) {
      const query = randomVector(next, 24);
      expectSameNeighbours(vectorCandidates(db, query, 10), bruteForce(vectors, query, 10));
      expect(copyOf(db).index?.ready).toBe(false); // past the third search: still vec0
    }
    await warming;
    expect(copyOf(db).index?.ready).toBe(true);
  });

  it('search.vector = vec0 (RAGLINE_VECTOR_SEARCH=vec0) never copies the vectors', () => {
    const paths = { vector: 'vec0', vectorThreads: 2 } as const;
    const db = open();
    const vectors = fill(db, 500, 8, 23);
    const query = randomVector(prng(24), 8);
    for (let q = 0; q < 4; q++) expectSameNeighbours(vectorCandidates(db, query, 10, paths), bruteForce(vectors, query, 10));
    expect(copyOf(db).index).toBeUndefined();
  });

  it('a background load that races with writes from another connection ends up exact', async () => {
    const file = path.join(dir, 'race.db');
    const reader = open(file);
    const vectors = fill(reader, 6000, 16, 12);
    const writer = open(file);
    const next = prng(13);
    const index = new VectorIndex(reader, 16);
    const warming = index.warm(1); // one vec0 chunk per slice: the writes land between slices
    let id = 500_000;
    for (let round = 0; round < 5; round++) {
      await new Promise((resolve) => setTimeout(resolve, 0));
      writer.transaction(() => {
        for (let i = 0; i < 50; i++) insert(writer, vectors, ++id, randomVector(next, 16));
        for (let i = 1; i <= 30; i++) remove(writer, vectors, (round * 30 + i) * 3);
      })();
    }
    await warming;
    expect(index.ready).toBe(true);
    try {
      for (let q = 0; q < 10; q++) {
        const query = randomVector(next, 16);
        expectSameNeighbours(index.search(query, 15), bruteForce(vectors, query, 15));
      }
    } finally {
      index.close();
    }
  });

  it('int8 and float32 copies give the exact nearest, where quantization alone would misorder near ties', () => {
    const db = open();
    const dim = 96;
    createVectorTable(db, dim);
    const vectors = new Map<number, Float32Array>();
    const next = prng(21);
    // Clusters of near-duplicates: neighbours differ by less than the int8 rounding.
    const centres = Array.from({ length: 8 }, () => randomVector(next, dim));
    let id = 1;
    for (let i = 0; i < 3000; i++) {
      const centre = centres[i % centres.length]!;
      insert(db, vectors, id++, Float32Array.from(centre, (x) => x + (next() - 0.5) * 0.02));
    }
    insert(db, vectors, id, new Float32Array(dim)); // a zero vector ranks as cosine 0
    const int8 = new VectorIndex(db, dim, { precision: 'int8', threads: 1 });
    const float32 = new VectorIndex(db, dim, { precision: 'float32', threads: 1 });
    let extra = 0;
    for (let q = 0; q < 12; q++) {
      const query = q % 2 === 0 ? randomVector(next, dim) : Float32Array.from(centres[q % centres.length]!, (x) => x + (next() - 0.5) * 0.01);
      const want = bruteForce(vectors, query, 100);
      for (const got of [int8.search(query, 100), float32.search(query, 100)]) {
        // Near-duplicates tie within float error at the cut-off: either may be kept.
        expect(got.map((c) => c.distance)).toEqual(want.map((c) => expect.closeTo(c.distance, 6)));
        const ids = new Set(want.map((c) => c.id));
        for (const c of got) if (!ids.has(c.id)) expect(Math.abs(c.distance - want[99]!.distance)).toBeLessThan(1e-6);
      }
      extra = Math.max(extra, int8.lastRescored - (100 + 25));
    }
    expect(extra).toBeGreaterThan(0); // the error bound brought in vectors beyond the first candidates
    expect(int8.memoryBytes).toBeLessThan(float32.memoryBytes / 2);
    // The float vectors it rescores from are in a file of its own that is already gone from the folder.
    expect((int8 as unknown as { spill?: object }).spill).toBeDefined();
    expect(fs.readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    int8.close();
    float32.close();
  });

  it('an int8 copy is kept beside its database, read back by the next process, and brought up to date from vec0', async () => {
    const db = open();
    const dim = 48;
    const vectors = fill(db, 3000, dim, 31);
    const options = { precision: 'int8' as const, threads: 1, keepMinSlots: 1000 };
    const file = path.join(dir, 'test.db.vector-copy');
    const next = prng(32);
    const queries = Array.from({ length: 6 }, () => randomVector(next, dim));
    const exact = (index: VectorIndex) => {
      for (const query of queries) expectSameNeighbours(index.search(query, 50), bruteForce(vectors, query, 50));
    };

    const first = new VectorIndex(db, dim, options);
    await first.warm();
    expect(fs.existsSync(file)).toBe(true);
    expect(fs.readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    // Once the file is written, candidates are scored from it and the process's own spill is gone.
    expect((first as unknown as { spill?: object }).spill).toBeUndefined();
    exact(first);
    first.close();

    // Another process: deletions since the file was written show in vec0's validity.
    for (const id of [3, 300, 3000, 6000]) remove(db, vectors, id);
    const second = new VectorIndex(open(path.join(dir, 'test.db')), dim, options);
    await second.warm();
    expect((second as unknown as { kept?: object }).kept).toBeDefined();
    exact(second);
    // An addition lands in vec0's latest chunk: a refresh loads it, its floats in a spill of its own.
    insert(db, vectors, 9001, queries[0]!);
    exact(second);
    expect(second.search(queries[0]!, 1)[0]!.id).toBe(9001);
    second.close();

    // A damaged file is not used: the copy is loaded from vec0 and the file written again.
    fs.truncateSync(file, fs.statSync(file).size - 100);
    const third = new VectorIndex(open(path.join(dir, 'test.db')), dim, options);
    await third.warm();
    expect((third as unknown as { kept?: object }).kept).toBeDefined();
    exact(third);
    const size = fs.statSync(file).size;
    third.close();
    const fourth = new VectorIndex(open(path.join(dir, 'test.db')), dim, options);
    await fourth.warm();
    expect(fs.statSync(file).size).toBe(size);
    exact(fourth);
    fourth.close();
  });

  it('gives the same answers with the scan split across a helper thread', async () => {
    const db = open();
    const vectors = fill(db, 20_000, 16, 7); // above the split threshold
    const index = new VectorIndex(db, 16);
    try {
      const next = prng(8);
      index.search(randomVector(next, 16), 10); // starts the helper
      const started = Date.now();
      while (!(index as unknown as { helper?: { ready: boolean } }).helper?.ready && Date.now() - started < 5000) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect((index as unknown as { helper?: { ready: boolean } }).helper?.ready).toBe(true);
      for (let q = 0; q < 10; q++) {
        const query = randomVector(next, 16);
        expectSameNeighbours(index.search(query, 20), bruteForce(vectors, query, 20));
      }
      // begin() hands the scan to the helper; work done before the completion (the
      // hybrid search runs FTS5 there) does not change the answer.
      for (let q = 0; q < 5; q++) {
        const query = randomVector(next, 16);
        const finish = index.begin(query, 20);
        const expected = bruteForce(vectors, query, 20);
        expectSameNeighbours(finish(), expected);
      }
    } finally {
      index.close();
    }
  });
});

// The contract of a vector search: both implementations, vec0 (the reference) and
// the in-memory copy, give the exact nearest neighbours and follow every write.
const implementations: [string, VectorPaths][] = [
  ['vec0 (the reference)', { vector: 'vec0', vectorThreads: 2 }],
  ['the in-memory copy', { vector: 'memory', vectorThreads: 2 }],
];

describe.each(implementations)('VectorSearch: %s', (_name, paths) => {
  const search = (db: Db, query: Float32Array, n: number) => vectorCandidates(db, query, n, paths);

  it('nearest first, with cosine distances, and fewer than n when the index is small', () => {
    const db = open();
    createVectorTable(db, 4);
    const vectors = new Map<number, Float32Array>();
    insert(db, vectors, 1, new Float32Array([1, 0, 0, 0]));
    insert(db, vectors, 2, new Float32Array([1, 1, 0, 0]));
    insert(db, vectors, 3, new Float32Array([0, 0, 5, 0]));
    const got = search(db, new Float32Array([2, 0, 0, 0]), 10);
    expect(got.map((c) => c.id)).toEqual([1, 2, 3]);
    expect(got[0]!.distance).toBeCloseTo(0, 6);
    expect(got[1]!.distance).toBeCloseTo(1 - Math.SQRT1_2, 6);
    expect(got[2]!.distance).toBeCloseTo(1, 6);
    expect(search(db, new Float32Array([2, 0, 0, 0]), 0)).toEqual([]);
  });

  it('returns nothing when there is no vector table, and finds one created later', () => {
    const db = open();
    expect(search(db, new Float32Array([1, 0]), 5)).toEqual([]);
    createVectorTable(db, 2);
    db.prepare('INSERT INTO vec_chunks (rowid, embedding) VALUES (?, ?)').run(7n, vectorBytes(new Float32Array([1, 0])));
    expect(search(db, new Float32Array([1, 0]), 5).map((c) => c.id)).toEqual([7]);
  });

  it('sees deletions and insertions committed by another connection', () => {
    const file = path.join(dir, 'shared.db');
    const reader = open(file);
    const vectors = fill(reader, 2500, 32, 2);
    const writer = open(file);
    const next = prng(5);
    const query = randomVector(next, 32);
    expectSameNeighbours(search(reader, query, 10), bruteForce(vectors, query, 10));

    // the writer deletes the current nearest five and adds a vector equal to the query
    const nearest = bruteForce(vectors, query, 5).map((c) => c.id);
    writer.transaction(() => {
      for (const id of nearest) remove(writer, vectors, id);
      insert(writer, vectors, 100_000, Float32Array.from(query, (x) => x * 3));
    })();
    const after = search(reader, query, 10);
    expect(after[0]!.id).toBe(100_000);
    expect(after[0]!.distance).toBeCloseTo(0, 5);
    for (const id of nearest) expect(after.map((c) => c.id)).not.toContain(id);
    expectSameNeighbours(after, bruteForce(vectors, query, 10));

    // many inserts (new vec0 chunks) and a reindex (table dropped and rebuilt)
    writer.transaction(() => {
      for (let i = 0; i < 2000; i++) insert(writer, vectors, 200_000 + i, randomVector(next, 32));
    })();
    expectSameNeighbours(search(reader, query, 10), bruteForce(vectors, query, 10));
    dropVectorTable(writer);
    const rebuilt = fill(writer, 500, 32, 3);
    expectSameNeighbours(search(reader, query, 10), bruteForce(rebuilt, query, 10));
  });

  it('sees writes made on its own connection', () => {
    const db = open();
    const vectors = fill(db, 1500, 16, 4);
    const query = randomVector(prng(6), 16);
    const top = search(db, query, 3)[0]!.id;
    remove(db, vectors, top);
    insert(db, vectors, 9_999_999, query);
    const got = search(db, query, 10);
    expect(got[0]!.id).toBe(9_999_999);
    expect(got.map((c) => c.id)).not.toContain(top);
    expectSameNeighbours(got, bruteForce(vectors, query, 10));
  });

});

describe('search paths', () => {
  it('search.vector = memory with search.vectorThreads = 1 scans on one thread from the first search', () => {
    const db = open();
    const vectors = fill(db, 20_000, 16, 31); // above the split threshold
    const next = prng(32);
    for (let q = 0; q < 3; q++) {
      const query = randomVector(next, 16);
      expectSameNeighbours(vectorCandidates(db, query, 10, { vector: 'memory', vectorThreads: 1 }), bruteForce(vectors, query, 10));
      expect(copyOf(db).index?.ready).toBe(true);
    }
    expect((copyOf(db).index as unknown as { helper?: unknown }).helper).toBeUndefined();
  });
});

describe('vector kernel', () => {
  it('computes dot products (float32, int8) and hamming distances like plain JavaScript', () => {
    const dim = 32, count = 40, stride = 128;
    const kernel = instantiateKernel(createKernelMemory(1 << 20));
    const f32 = new Float32Array(kernel.memory.buffer);
    const next = prng(11);
    for (let i = 0; i < (count + 1) * dim; i++) f32[i] = next() - 0.5;
    const out = 1 << 19;
    kernel.dot(0, stride, count, stride, out);
    for (let i = 0; i < count; i++) {
      let want = 0;
      for (let j = 0; j < dim; j++) want += f32[j]! * f32[(i + 1) * dim + j]!;
      expect(f32[out / 4 + i]).toBeCloseTo(want, 5);
    }
    // int8 vectors against an int16 query
    const i8 = new Int8Array(kernel.memory.buffer);
    const i16 = new Int16Array(kernel.memory.buffer);
    const i8Stride = 64;
    for (let j = 0; j < i8Stride; j++) i16[j] = Math.round((next() - 0.5) * 65000);
    for (let i = 0; i < count * i8Stride; i++) i8[2 * i8Stride + i] = Math.round((next() - 0.5) * 254);
    kernel.dotI8(0, 2 * i8Stride, count, i8Stride, out);
    for (let i = 0; i < count; i++) {
      let want = 0;
      for (let j = 0; j < i8Stride; j++) want += i16[j]! * i8[2 * i8Stride + i * i8Stride + j]!;
      expect(new Int32Array(kernel.memory.buffer)[out / 4 + i]).toBe(want);
    }
    const u8 = new Uint8Array(kernel.memory.buffer);
    kernel.hamming(0, 32, count, 32, out);
    const i32 = new Int32Array(kernel.memory.buffer);
    for (let i = 0; i < count; i++) {
      let want = 0;
      for (let j = 0; j < 32; j++) {
        let x = u8[j]! ^ u8[32 + i * 32 + j]!;
        for (; x; x >>= 1) want += x & 1;
      }
      expect(i32[out / 4 + i]).toBe(want);
    }
  });
});
