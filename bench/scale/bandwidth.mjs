// This machine's sequential read bandwidth, and the floor it sets for one exact
// scan of N x 384 float32 vectors (bytes scanned / bandwidth).
//   node bench/scale/bandwidth.mjs [MB=1536] [reps=7]
// Three readers over the same bytes (a buffer far larger than the caches, touched
// once before timing so page faults are not counted):
//   js      a plain loop summing a Float32Array with 4 accumulators (what the issue asks for)
//   wasm    the 128-bit SIMD dot-product kernel ragline scans with, one thread
//   wasm2   the same, split with a helper thread (both cores)
//   memchr  Buffer.indexOf of a byte that is not there: glibc's vectorised memchr, one
//           thread, no arithmetic: the closest a node process gets to raw read bandwidth
// The floor is computed from the fastest of them.
import { createKernelMemory, instantiateKernel } from '../out/scale/lib/retrieve/memory/vector-kernel.js';
import { ScanHelper } from '../out/scale/lib/retrieve/memory/vector-worker.js';

const MB = Number(process.argv[2] ?? 1536);
const REPS = Number(process.argv[3] ?? 7);
const stride = 1536; // 384 float32
const count = Math.floor((MB * 1e6) / stride);
const bytes = count * stride;
const memory = createKernelMemory(stride + bytes + count * 4 + 64);
const kernel = instantiateKernel(memory);
const f32 = new Float32Array(memory.buffer);
for (let i = 0; i < (stride + bytes) / 4; i++) f32[i] = (i % 7) * 0.25; // no byte is 0x01
const out = stride + bytes;

function timeIt(fn) {
  const runs = [];
  for (let r = 0; r < REPS; r++) {
    const t = performance.now();
    fn();
    runs.push(performance.now() - t);
  }
  runs.sort((a, b) => a - b);
  return { bestMs: runs[0], medianMs: runs[runs.length >> 1] };
}

const data = new Float32Array(memory.buffer, stride, bytes / 4);
let sink = 0;
const results = {};
results.js = timeIt(() => {
  let a = 0, b = 0, c = 0, d = 0;
  for (let i = 0; i < data.length; i += 4) {
    a += data[i];
    b += data[i + 1];
    c += data[i + 2];
    d += data[i + 3];
  }
  sink += a + b + c + d;
});
const raw = Buffer.from(memory.buffer, stride, bytes);
results.memchr = timeIt(() => {
  sink += raw.indexOf(0x01);
});
results.wasm = timeIt(() => kernel.dot(0, stride, count, stride, out));
const helper = new ScanHelper(memory);
while (!helper.ready) await new Promise((r) => setTimeout(r, 5));
results.wasm2 = timeIt(() => helper.dot(kernel, 0, stride, count, stride, out));
helper.close();

const rows = Object.entries(results).map(([reader, r]) => ({
  reader,
  bestGBs: +(bytes / 1e9 / (r.bestMs / 1000)).toFixed(1),
  medianGBs: +(bytes / 1e9 / (r.medianMs / 1000)).toFixed(1),
}));
const best = Math.max(...rows.map((r) => r.bestGBs));
const floor = (n) => +(((n * stride) / 1e9 / best) * 1000).toFixed(1);
console.log(JSON.stringify({ mb: +(bytes / 1e6).toFixed(0), readers: rows, floorMs: { '100k': floor(1e5), '1M': floor(1e6) }, sink: sink > 0 }));
