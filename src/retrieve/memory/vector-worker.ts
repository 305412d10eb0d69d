// A helper thread that scans part of the shared vector memory, so both cores of a
// small machine read vectors at once. The search stays synchronous; start() and
// finish() let the caller run the keyword search on its own thread in between. The scan is cut
// into blocks; the main thread posts a job in a shared control block, wakes the
// helper (Atomics.notify) and both threads claim blocks from one atomic counter
// until none are left. If the helper is slow to wake (the machine is busy with other
// work), the main thread simply claims more blocks itself, so a split scan is never
// much slower than a single-threaded one. The main thread then waits only for blocks
// the helper has already claimed.
// The helper is created from an inline script and handed the compiled kernel module
// and the memory, so it needs no file of its own (works from dist/ and from sources
// under test alike). It is unref'd: it never keeps a process alive.

import { Worker } from 'node:worker_threads';
import { kernelModule, type Kernel, type WasmMemory } from './vector-kernel.js';

// Control block (Int32Array over a SharedArrayBuffer).
const READY = 0, SEQ = 1, NEXT = 2, COMPLETED = 3, BLOCKS = 4, BLOCK = 5, QUERY = 6, BASE = 7, COUNT = 8, STRIDE = 9, OUT = 10, KIND = 11;

/** Which kernel a scan runs: float32 vectors (dot) or int8 vectors with an int16 query (dotI8). */
export type ScanKind = 'dot' | 'dotI8';

const SOURCE = `
const { workerData } = require('node:worker_threads');
const { module, memory, control } = workerData;
const ctrl = new Int32Array(control);
const { dot, dotI8 } = new WebAssembly.Instance(module, { env: { memory } }).exports;
Atomics.store(ctrl, ${READY}, 1);
let seen = Atomics.load(ctrl, ${SEQ});
for (;;) {
  Atomics.wait(ctrl, ${SEQ}, seen);
  seen = Atomics.load(ctrl, ${SEQ});
  if (seen < 0) break;
  for (;;) {
    const b = Atomics.add(ctrl, ${NEXT}, 1);
    const blocks = ctrl[${BLOCKS}];
    if (b >= blocks) break;
    const block = ctrl[${BLOCK}], count = ctrl[${COUNT}], stride = ctrl[${STRIDE}];
    const first = b * block;
    (ctrl[${KIND}] === 1 ? dotI8 : dot)(ctrl[${QUERY}], ctrl[${BASE}] + first * stride, Math.min(block, count - first), stride, ctrl[${OUT}] + first * 4);
    if (Atomics.add(ctrl, ${COMPLETED}, 1) + 1 === blocks) Atomics.notify(ctrl, ${COMPLETED});
  }
}
`;

/** Vectors per claimed block (6 MB at 384 dimensions). */
const BLOCK_VECTORS = 4096;
/** How long the main thread waits for a block the helper claimed before giving up on it. */
const HELPER_TIMEOUT_MS = 2000;

export class ScanHelper {
  private readonly worker: Worker;
  private readonly ctrl = new Int32Array(new SharedArrayBuffer(16 * 4));
  private seq = 0;
  private broken = false;

  constructor(memory: WasmMemory) {
    this.worker = new Worker(SOURCE, {
      eval: true,
      workerData: { module: kernelModule(), memory, control: this.ctrl.buffer },
    });
    this.worker.unref();
    this.worker.on('error', () => {
      this.broken = true;
    });
  }

  /** True once the helper has started and is waiting for work. */
  get ready(): boolean {
    return !this.broken && Atomics.load(this.ctrl, READY) === 1;
  }

  /**
   * out[i] = <query, vector i> for `count` vectors, shared with the helper.
   * Returns false (having done the whole scan itself) if the helper stopped responding;
   * the helper is then retired.
   */
  dot(kernel: Kernel, query: number, base: number, count: number, stride: number, out: number, kind: ScanKind = 'dot'): boolean {
    this.start(query, base, count, stride, out, kind);
    return this.finish(kernel);
  }

  /**
   * Hands a scan to the helper and returns at once: the helper claims blocks alone
   * while the caller does other work (the keyword search), and finish() joins in.
   * Until finish() returns, the query and output memory belong to the scan.
   */
  start(query: number, base: number, count: number, stride: number, out: number, kind: ScanKind = 'dot'): void {
    const c = this.ctrl;
    c[KIND] = kind === 'dotI8' ? 1 : 0;
    c[BLOCK] = BLOCK_VECTORS;
    c[BLOCKS] = Math.ceil(count / BLOCK_VECTORS);
    c[QUERY] = query;
    c[BASE] = base;
    c[COUNT] = count;
    c[STRIDE] = stride;
    c[OUT] = out;
    Atomics.store(c, COMPLETED, 0);
    Atomics.store(c, NEXT, 0);
    this.seq = this.seq >= 0x3fffffff ? 1 : this.seq + 1;
    Atomics.store(c, SEQ, this.seq);
    Atomics.notify(c, SEQ);
  }

  /** Scans the blocks the helper has not claimed, then waits for the ones it has (see dot()). */
  finish(kernel: Kernel): boolean {
    const c = this.ctrl;
    const blocks = c[BLOCKS]!, query = c[QUERY]!, base = c[BASE]!, count = c[COUNT]!, stride = c[STRIDE]!, out = c[OUT]!;
    const scan = c[KIND] === 1 ? kernel.dotI8 : kernel.dot;
    for (;;) {
      const b = Atomics.add(c, NEXT, 1);
      if (b >= blocks) break;
      const first = b * BLOCK_VECTORS;
      scan(query, base + first * stride, Math.min(BLOCK_VECTORS, count - first), stride, out + first * 4);
      Atomics.add(c, COMPLETED, 1);
    }
    const deadline = performance.now() + HELPER_TIMEOUT_MS;
    for (;;) {
      const completed = Atomics.load(c, COMPLETED);
      if (completed >= blocks) return true;
      const left = deadline - performance.now();
      if (left <= 0 || this.broken) {
        this.close();
        scan(query, base, count, stride, out);
        return false;
      }
      Atomics.wait(c, COMPLETED, completed, left);
    }
  }

  close(): void {
    this.broken = true;
    Atomics.store(this.ctrl, SEQ, -1);
    Atomics.notify(this.ctrl, SEQ);
    void this.worker.terminate();
  }
}
