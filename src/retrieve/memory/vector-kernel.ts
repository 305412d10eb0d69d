// Scan kernels for the in-memory vector index, as a tiny WebAssembly module
// assembled here byte by byte (no toolchain, no dependency). The npm build of
// sqlite-vec has no SIMD and a plain JavaScript loop over a Float32Array runs
// far below memory bandwidth; 128-bit WebAssembly SIMD with four accumulators
// gets close to it. The memory is shared so a worker thread can scan half of it.
//
// Exports (all pointers are byte offsets into the shared memory):
//   dot(query, base, count, strideBytes, out)  out[i] = <query, vector i>   (f32)
//     strideBytes must be a multiple of 64 (vectors are zero-padded to 16 floats).
//   hamming(query, base, count, strideBytes, out)  out[i] = popcount(query ^ bits i)  (i32)
//     strideBytes must be a multiple of 16.
//   dotI8(query, base, count, strideBytes, out)  out[i] = <query, vector i>   (i32)
//     vectors of int8, the query of int16 (2 x strideBytes bytes); strideBytes must be
//     a multiple of 64. The sum must fit in an i32 (the caller scales the query so).

// tsconfig's lib (ES2023, no DOM) and @types/node 20 do not declare WebAssembly:
// the little used here is declared locally.
export interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
export type WasmModule = object;
declare const WebAssembly: {
  Module: new (bytes: Uint8Array) => WasmModule;
  Instance: new (module: WasmModule, imports: object) => { exports: Record<string, unknown> };
  Memory: new (descriptor: { initial: number; maximum: number; shared: boolean }) => WasmMemory;
};

const SIMD = 0xfd;
const op = {
  block: 0x02,
  loop: 0x03,
  end: 0x0b,
  br: 0x0c,
  brIf: 0x0d,
  get: 0x20,
  set: 0x21,
  tee: 0x22,
  i32Const: 0x41,
  i32Add: 0x6a,
  i32Mul: 0x6c,
  i32LtU: 0x49,
  i32GeU: 0x4f,
  f32Add: 0x92,
  f32Store: 0x38,
  i32Store: 0x36,
  i32Add2: 0x6a,
};

function uleb(n: number): number[] {
  const out: number[] = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n !== 0) byte |= 0x80;
    out.push(byte);
  } while (n !== 0);
  return out;
}

function sleb(n: number): number[] {
  const out: number[] = [];
  for (;;) {
    const byte = n & 0x7f;
    n >>= 7;
    if ((n === 0 && (byte & 0x40) === 0) || (n === -1 && (byte & 0x40) !== 0)) {
      out.push(byte);
      return out;
    }
    out.push(byte | 0x80);
  }
}

const simd = (code: number, ...rest: number[]) => [SIMD, ...uleb(code), ...rest];
const v128Load = (offset: number) => simd(0x00, 4, ...uleb(offset));
const v128Zero = () => simd(0x0c, ...new Array(16).fill(0));
const section = (id: number, body: number[]) => [id, ...uleb(body.length), ...body];
const vec = (items: number[][]) => [...uleb(items.length), ...items.flat()];
const name = (s: string) => [...uleb(s.length), ...Buffer.from(s, 'utf8')];

// Parameters of both functions.
const Q = 0, BASE = 1, COUNT = 2, STRIDE = 3, OUT = 4;

function dotBody(): number[] {
  // locals: 5 k(i32), 6 end(i32), 7..10 acc(v128)
  const K = 5, END = 6, A = [7, 8, 9, 10];
  const code: number[] = [];
  const push = (...b: number[]) => code.push(...b);
  // end = out + count*4
  push(op.get, OUT, op.get, COUNT, op.i32Const, 4, op.i32Mul, op.i32Add, op.set, END);
  push(op.block, 0x40, op.loop, 0x40);
  push(op.get, OUT, op.get, END, op.i32GeU, op.brIf, 1);
  for (const a of A) push(...v128Zero(), op.set, a);
  push(op.i32Const, 0, op.set, K);
  push(op.loop, 0x40);
  for (let j = 0; j < 4; j++) {
    // acc_j += load(base+k+16j) * load(q+k+16j)
    push(op.get, A[j]!);
    push(op.get, BASE, op.get, K, op.i32Add, ...v128Load(16 * j));
    push(op.get, Q, op.get, K, op.i32Add, ...v128Load(16 * j));
    push(...simd(0xe6), ...simd(0xe4), op.set, A[j]!); // f32x4.mul, f32x4.add
  }
  push(op.get, K, op.i32Const, ...sleb(64), op.i32Add, op.tee, K, op.get, STRIDE, op.i32LtU, op.brIf, 0);
  push(op.end);
  // s = (a0+a1)+(a2+a3), horizontal
  push(op.get, A[0]!, op.get, A[1]!, ...simd(0xe4), op.get, A[2]!, op.get, A[3]!, ...simd(0xe4), ...simd(0xe4), op.set, A[0]!);
  push(op.get, OUT);
  push(op.get, A[0]!, ...simd(0x1f, 0), op.get, A[0]!, ...simd(0x1f, 1), op.f32Add);
  push(op.get, A[0]!, ...simd(0x1f, 2), op.get, A[0]!, ...simd(0x1f, 3), op.f32Add, op.f32Add);
  push(op.f32Store, 2, 0);
  push(op.get, OUT, op.i32Const, 4, op.i32Add, op.set, OUT);
  push(op.get, BASE, op.get, STRIDE, op.i32Add, op.set, BASE);
  push(op.br, 0, op.end, op.end, op.end);
  const locals = vec([[...uleb(2), 0x7f], [...uleb(4), 0x7b]]);
  const body = [...locals, ...code];
  return [...uleb(body.length), ...body];
}

function dotI8Body(): number[] {
  // locals: 5 k(i32), 6 end(i32), 7 qk(i32), 8..11 acc(v128 of i32x4), 12 v(v128)
  const K = 5, END = 6, QK = 7, A = [8, 9, 10, 11], V = 12;
  const code: number[] = [];
  const push = (...b: number[]) => code.push(...b);
  push(op.get, OUT, op.get, COUNT, op.i32Const, 4, op.i32Mul, op.i32Add, op.set, END);
  push(op.block, 0x40, op.loop, 0x40);
  push(op.get, OUT, op.get, END, op.i32GeU, op.brIf, 1);
  for (const a of A) push(...v128Zero(), op.set, a);
  push(op.i32Const, 0, op.set, K, op.get, Q, op.set, QK);
  push(op.loop, 0x40);
  for (let j = 0; j < 4; j++) {
    // v = 16 int8 of the vector; acc_j += dot(i16(v low), q) + dot(i16(v high), q + 16)
    push(op.get, A[j]!);
    push(op.get, BASE, op.get, K, op.i32Add, ...v128Load(16 * j), op.tee, V);
    push(...simd(0x87)); // i16x8.extend_low_i8x16_s
    push(op.get, QK, ...v128Load(32 * j));
    push(...simd(0xba), ...simd(0xae)); // i32x4.dot_i16x8_s, i32x4.add
    push(op.get, V, ...simd(0x88)); // i16x8.extend_high_i8x16_s
    push(op.get, QK, ...v128Load(32 * j + 16));
    push(...simd(0xba), ...simd(0xae), op.set, A[j]!);
  }
  push(op.get, QK, op.i32Const, ...sleb(128), op.i32Add, op.set, QK);
  push(op.get, K, op.i32Const, ...sleb(64), op.i32Add, op.tee, K, op.get, STRIDE, op.i32LtU, op.brIf, 0);
  push(op.end);
  push(op.get, A[0]!, op.get, A[1]!, ...simd(0xae), op.get, A[2]!, op.get, A[3]!, ...simd(0xae), ...simd(0xae), op.set, A[0]!);
  push(op.get, OUT);
  push(op.get, A[0]!, ...simd(0x1b, 0), op.get, A[0]!, ...simd(0x1b, 1), op.i32Add);
  push(op.get, A[0]!, ...simd(0x1b, 2), op.get, A[0]!, ...simd(0x1b, 3), op.i32Add, op.i32Add);
  push(op.i32Store, 2, 0);
  push(op.get, OUT, op.i32Const, 4, op.i32Add, op.set, OUT);
  push(op.get, BASE, op.get, STRIDE, op.i32Add, op.set, BASE);
  push(op.br, 0, op.end, op.end, op.end);
  const locals = vec([[...uleb(3), 0x7f], [...uleb(5), 0x7b]]);
  const body = [...locals, ...code];
  return [...uleb(body.length), ...body];
}

function hammingBody(): number[] {
  // locals: 5 k(i32), 6 end(i32), 7 acc(v128 of i16x8)
  const K = 5, END = 6, ACC = 7;
  const code: number[] = [];
  const push = (...b: number[]) => code.push(...b);
  push(op.get, OUT, op.get, COUNT, op.i32Const, 4, op.i32Mul, op.i32Add, op.set, END);
  push(op.block, 0x40, op.loop, 0x40);
  push(op.get, OUT, op.get, END, op.i32GeU, op.brIf, 1);
  push(...v128Zero(), op.set, ACC, op.i32Const, 0, op.set, K);
  push(op.loop, 0x40);
  push(op.get, ACC);
  push(op.get, BASE, op.get, K, op.i32Add, ...v128Load(0));
  push(op.get, Q, op.get, K, op.i32Add, ...v128Load(0));
  // v128.xor, i8x16.popcnt, i16x8.extadd_pairwise_i8x16_u, i16x8.add
  push(...simd(0x51), ...simd(0x62), ...simd(0x7d), ...simd(0x8e), op.set, ACC);
  push(op.get, K, op.i32Const, 16, op.i32Add, op.tee, K, op.get, STRIDE, op.i32LtU, op.brIf, 0);
  push(op.end);
  // i32x4.extadd_pairwise_i16x8_u then sum lanes
  push(op.get, ACC, ...simd(0x7f), op.set, ACC);
  push(op.get, OUT);
  push(op.get, ACC, ...simd(0x1b, 0), op.get, ACC, ...simd(0x1b, 1), op.i32Add);
  push(op.get, ACC, ...simd(0x1b, 2), op.get, ACC, ...simd(0x1b, 3), op.i32Add, op.i32Add);
  push(op.i32Store, 2, 0);
  push(op.get, OUT, op.i32Const, 4, op.i32Add, op.set, OUT);
  push(op.get, BASE, op.get, STRIDE, op.i32Add, op.set, BASE);
  push(op.br, 0, op.end, op.end, op.end);
  const locals = vec([[...uleb(2), 0x7f], [...uleb(1), 0x7b]]);
  const body = [...locals, ...code];
  return [...uleb(body.length), ...body];
}

let compiled: WasmModule | undefined;

/** The compiled kernel module (compiled once per thread; it is small). */
export function kernelModule(): WasmModule {
  if (compiled) return compiled;
  const i32 = 0x7f;
  const bytes = [
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, vec([[0x60, ...vec([[i32], [i32], [i32], [i32], [i32]]), 0x00]])),
    // import env.memory: shared, min 1 page, max 65536 pages (4 GiB)
    ...section(2, vec([[...name('env'), ...name('memory'), 0x02, 0x03, ...uleb(1), ...uleb(65536)]])),
    ...section(3, vec([[0x00], [0x00], [0x00]])),
    ...section(7, vec([[...name('dot'), 0x00, 0x00], [...name('hamming'), 0x00, 0x01], [...name('dotI8'), 0x00, 0x02]])),
    ...section(10, vec([dotBody(), hammingBody(), dotI8Body()])),
  ];
  compiled = new WebAssembly.Module(new Uint8Array(bytes));
  return compiled;
}

export interface Kernel {
  memory: WasmMemory;
  dot(query: number, base: number, count: number, strideBytes: number, out: number): void;
  hamming(query: number, base: number, count: number, strideBytes: number, out: number): void;
  dotI8(query: number, base: number, count: number, strideBytes: number, out: number): void;
}

/** Shared memory of at least `bytes` (WebAssembly pages are 64 KiB). */
export function createKernelMemory(bytes: number): WasmMemory {
  const pages = Math.max(1, Math.ceil(bytes / 65536));
  if (pages > 65536) throw new Error(`vector index of ${bytes} bytes exceeds the 4 GiB WebAssembly memory`);
  return new WebAssembly.Memory({ initial: pages, maximum: 65536, shared: true });
}

export function instantiateKernel(memory: WasmMemory): Kernel {
  const instance = new WebAssembly.Instance(kernelModule(), { env: { memory } });
  const exports = instance.exports as unknown as Omit<Kernel, 'memory'>;
  return { memory, dot: exports.dot, hamming: exports.hamming, dotI8: exports.dotI8 };
}
