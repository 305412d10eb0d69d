// A helper thread that scans part of the shared vector memory, so both cores of a
// small machine read vectors at once. The search stays synchronous: the main thread
// writes a job into a shared control block, wakes the helper with Atomics.notify,
// scans its own part, then waits (Atomics.wait, with a timeout) for the helper's.
// The helper is created from an inline script and handed the compiled kernel
// module and the memory, so it needs no file of its own (works from dist/ and
// from sources under test alike). It is unref'd: it never keeps a process alive.

import { Worker } from 'node:worker_threads';
import { kernelModule, type WasmMemory } from './vector-kernel.js';

// Control block (Int32Array over a SharedArrayBuffer).
const READY = 0, SEQ = 1, DONE = 2, QUERY = 3, BASE = 4, COUNT = 5, STRIDE = 6, OUT = 7;

const SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { module, memory, control } = workerData;
const ctrl = new Int32Array(control);
const { dot } = new WebAssembly.Instance(module, { env: { memory } }).exports;
Atomics.store(ctrl, ${READY}, 1);
let seen = Atomics.load(ctrl, ${SEQ});
for (;;) {
  Atomics.wait(ctrl, ${SEQ}, seen);
  seen = Atomics.load(ctrl, ${SEQ});
  if (seen < 0) break;
  dot(ctrl[${QUERY}], ctrl[${BASE}], ctrl[${COUNT}], ctrl[${STRIDE}], ctrl[${OUT}]);
  Atomics.store(ctrl, ${DONE}, seen);
  Atomics.notify(ctrl, ${DONE});
}
`;

/** How long the main thread waits for the helper before doing its part itself. */
const HELPER_TIMEOUT_MS = 2000;

export class ScanHelper {
  private readonly worker: Worker;
  private readonly ctrl = new Int32Array(new SharedArrayBuffer(8 * 4));
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

  /** Starts a dot-product scan on the helper; call `wait` after doing the main thread's share. */
  start(query: number, base: number, count: number, stride: number, out: number): void {
    const c = this.ctrl;
    c[QUERY] = query;
    c[BASE] = base;
    c[COUNT] = count;
    c[STRIDE] = stride;
    c[OUT] = out;
    this.seq = this.seq >= 0x3fffffff ? 1 : this.seq + 1;
    Atomics.store(c, SEQ, this.seq);
    Atomics.notify(c, SEQ);
  }

  /** Waits for the job started last; false if the helper did not finish (it is then retired). */
  wait(): boolean {
    const deadline = performance.now() + HELPER_TIMEOUT_MS;
    for (;;) {
      const done = Atomics.load(this.ctrl, DONE);
      if (done === this.seq) return true;
      const left = deadline - performance.now();
      if (left <= 0 || this.broken) {
        this.close();
        return false;
      }
      Atomics.wait(this.ctrl, DONE, done, left);
    }
  }

  close(): void {
    this.broken = true;
    Atomics.store(this.ctrl, SEQ, -1);
    Atomics.notify(this.ctrl, SEQ);
    void this.worker.terminate();
  }
}
