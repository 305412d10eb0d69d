// The offline embedder on a worker thread, for bulk work: ingest embeds one
// batch there while the main thread writes the previous batch to SQLite, so a
// 2-core machine does both at once. Same vectors and id as OfflineEmbedder (the
// worker runs that very class). Where the compiled module is not beside this one
// (sources run under a test runner) or a worker cannot start, it embeds in-process.

import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Worker } from 'node:worker_threads';
import type { OfflineEmbedder } from './offline-embedder.js';
import { offlineIdentity, type OfflineEmbedderOptions } from './offline-id.js';
import type { Embedder } from './types.js';

// Imported with the first batch: an ingest that finds nothing to embed never loads it.
let workerThreads: Promise<typeof import('node:worker_threads')> | undefined;

const SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
import(workerData.url).then(({ OfflineEmbedder }) => {
  const embedder = new OfflineEmbedder(workerData.options);
  parentPort.on('message', ({ id, texts }) => {
    const dims = embedder.dimensions;
    const out = new Float32Array(texts.length * dims);
    for (let i = 0; i < texts.length; i++) out.set(embedder.embedOne(texts[i]), i * dims);
    parentPort.postMessage({ id, buffer: out.buffer }, [out.buffer]);
  });
});
`;

/** How long close() waits for the worker thread to stop. */
const CLOSE_TIMEOUT_MS = 2000;

export class ThreadedOfflineEmbedder implements Embedder {
  readonly id: string;
  readonly dimensions: number;
  readonly maxBatch: number;
  /** The embedder used in-process when no worker can start, loaded then. */
  private inline: Promise<OfflineEmbedder> | undefined;
  private worker: Worker | undefined;
  private readonly pending = new Map<number, { resolve: (v: Float32Array[]) => void; reject: (e: unknown) => void; count: number }>();
  private nextId = 0;

  constructor(private readonly options: OfflineEmbedderOptions = {}) {
    ({ id: this.id, dimensions: this.dimensions, maxBatch: this.maxBatch } = offlineIdentity(options));
  }

  async embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    signal?.throwIfAborted();
    if (texts.length === 0) return [];
    const worker = this.start((await (workerThreads ??= import('node:worker_threads'))).Worker);
    if (!worker) {
      this.inline ??= import('./offline-embedder.js').then(({ OfflineEmbedder }) => new OfflineEmbedder(this.options));
      return (await this.inline).embed(texts, signal);
    }
    const id = this.nextId++;
    return new Promise<Float32Array[]>((resolve, reject) => {
      this.pending.set(id, { resolve, reject, count: texts.length });
      worker.ref(); // keep the process alive while a batch is out
      worker.postMessage({ id, texts });
    });
  }

  /**
   * Stops the worker; a later call starts a new one. Batches still out are
   * rejected. Bounded: it settles within `timeoutMs` even if the thread does not
   * stop, and a timer keeps the process alive until then. (A batch that came
   * back while the worker was stopping once unref'd it: the event loop emptied
   * before the exit event, and Node quit with code 13 before any error was printed.)
   */
  async close(timeoutMs = CLOSE_TIMEOUT_MS): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    if (!worker) return;
    worker.removeAllListeners('message');
    const stopped = new Error('The embedder was closed.');
    for (const job of this.pending.values()) job.reject(stopped);
    this.pending.clear();
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
    try {
      await Promise.race([worker.terminate().then(() => undefined, () => undefined), bound]);
    } finally {
      clearTimeout(timer);
      worker.unref(); // a thread that never stopped does not hold the process either
    }
  }

  private start(WorkerThread: typeof Worker): Worker | undefined {
    if (this.worker) return this.worker;
    const url = new URL('./offline-embedder.js', import.meta.url);
    if (url.protocol !== 'file:' || !fs.existsSync(fileURLToPath(url))) return undefined;
    try {
      const worker = new WorkerThread(SOURCE, { eval: true, workerData: { url: url.href, options: this.options } });
      worker.unref();
      worker.on('message', ({ id, buffer }: { id: number; buffer: ArrayBuffer }) => {
        const job = this.pending.get(id);
        if (!job) return;
        this.pending.delete(id);
        if (this.pending.size === 0) worker.unref();
        const all = new Float32Array(buffer);
        const vectors: Float32Array[] = [];
        for (let i = 0; i < job.count; i++) vectors.push(all.subarray(i * this.dimensions, (i + 1) * this.dimensions));
        job.resolve(vectors);
      });
      worker.on('error', (error) => {
        this.worker = undefined;
        for (const job of this.pending.values()) job.reject(error);
        this.pending.clear();
      });
      this.worker = worker;
      return worker;
    } catch {
      return undefined;
    }
  }
}
