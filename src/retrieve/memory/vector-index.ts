// An in-memory copy of the vec0 table, kept in step with the database, scanned
// exactly with the WebAssembly SIMD kernel. The database stays the single source
// of truth: before every search a cheap check (PRAGMA data_version, this
// connection's total_changes(), PRAGMA schema_version) says whether anything was
// written since the copy was taken; if so, the copy is brought up to date from
// vec0's own storage, in one read transaction, touching only the vec0 chunks
// whose slots changed.
//
// The copy mirrors vec0's layout: vec0 keeps vectors in chunks of `size` slots
// (`vec_chunks_chunks`: validity bitmap and rowid array; `vec_chunks_vector_chunks00`:
// the vectors of one chunk as one blob), so a chunk is loaded with one blob copy.
// Empty and deleted slots get an inverse norm of NaN and never rank.
// Limitation: an embedding updated in place (same rowid, same slot) is not
// noticed; ragline's writer never does that (a changed chunk gets a new id).

import type { Statement } from 'better-sqlite3';
import type { Db } from '../../store/db.js';
import { createKernelMemory, instantiateKernel, type Kernel } from './vector-kernel.js';
import type { VectorCandidate, VectorSearch } from '../interfaces.js';
import { ScanHelper } from './vector-worker.js';
import os from 'node:os';

interface ChunkSlots {
  /** First slot of this vec0 chunk in our arrays. */
  base: number;
  size: number;
  /** rowid per slot, 0 when the slot is empty or deleted. */
  rowids: Float64Array;
  /** vec0's validity and rowids blobs as last seen: when both are byte-equal nothing changed. */
  validity?: Buffer;
  rowidBytes?: Buffer;
}

interface ChunkRow {
  chunk_id: number;
  size: number;
  validity: Buffer;
}

const QUERY_BYTES_ALIGN = 64;
/** Stops a helper thread when its index is garbage-collected (its database was closed and dropped). */
const helpers = new FinalizationRegistry<ScanHelper>((helper) => helper.close());
/** Below this many slots one thread is as fast as two (the hand-off costs tens of microseconds). */
const SPLIT_MIN_SLOTS = 16384;

export class VectorIndex implements VectorSearch {
  readonly dimensions: number;
  /** Bytes per stored vector: dimensions rounded up to 16 floats. */
  readonly stride: number;
  private kernel: Kernel | undefined;
  private slotCount = 0;
  private slotCapacity = 0;
  private readonly chunks = new Map<number, ChunkSlots>();
  /** Per slot: chunk rowid (0 = empty). */
  private ids = new Float64Array(0);
  /** Per slot: 1/|v|, NaN for empty slots. */
  private invNorms = new Float32Array(0);
  private stamp: [number, number, number] = [-1, -1, -1];
  private readonly stmts: {
    dataVersion: Statement<unknown[]>;
    schemaVersion: Statement<unknown[]>;
    totalChanges: Statement<unknown[]>;
    chunkRows: Statement<unknown[]>;
    chunkRowids: Statement<unknown[]>;
    chunkIds: Statement<unknown[]>;
    slotTotal: Statement<unknown[]>;
    chunkRange: Statement<unknown[]>;
    vectorBlob: Statement<unknown[]>;
  };
  private helper: ScanHelper | undefined;
  private helperDisabled = false;
  /** Time spent in the last refresh, ms (for benchmarks). */
  lastRefreshMs = 0;

  /** `threads`: 1 keeps every scan on this thread; 2 (the default) splits large scans with a helper thread on 2+ cores. */
  constructor(
    private readonly db: Db,
    dimensions: number,
    private readonly options: { threads?: number } = {},
  ) {
    this.dimensions = dimensions;
    this.stride = Math.ceil((dimensions * 4) / QUERY_BYTES_ALIGN) * QUERY_BYTES_ALIGN;
    this.stmts = {
      dataVersion: db.prepare('PRAGMA data_version').pluck(),
      schemaVersion: db.prepare('PRAGMA schema_version').pluck(),
      totalChanges: db.prepare('SELECT total_changes()').pluck(),
      chunkRows: db.prepare('SELECT chunk_id, size, validity FROM vec_chunks_chunks ORDER BY chunk_id'),
      slotTotal: db.prepare('SELECT sum(size) FROM vec_chunks_chunks').pluck(),
      chunkIds: db.prepare('SELECT chunk_id FROM vec_chunks_chunks ORDER BY chunk_id').pluck(),
      chunkRange: db.prepare('SELECT chunk_id, size, validity FROM vec_chunks_chunks WHERE chunk_id BETWEEN ? AND ? ORDER BY chunk_id'),
      chunkRowids: db.prepare('SELECT rowids FROM vec_chunks_chunks WHERE chunk_id = ?').pluck(),
      vectorBlob: db.prepare('SELECT vectors FROM vec_chunks_vector_chunks00 WHERE rowid = ?').pluck(),
    };
  }

  /** Vectors currently held (live slots). */
  get size(): number {
    let live = 0;
    for (const chunk of this.chunks.values()) for (const id of chunk.rowids) if (id !== 0) live++;
    return live;
  }

  /** Bytes of vector memory held. */
  get memoryBytes(): number {
    return this.kernel ? this.kernel.memory.buffer.byteLength : 0;
  }

  /** Brings the copy up to date if anything was written since; cheap when nothing was. */
  refresh(): void {
    const stamp = this.readStamp();
    if (stamp[0] === this.stamp[0] && stamp[1] === this.stamp[1] && stamp[2] === this.stamp[2]) return;
    const started = performance.now();
    this.epoch++; // a background warm in progress stops: this takes over
    if (stamp[1] !== this.stamp[1]) this.reset();
    // One read transaction: chunk rows and vector blobs from the same snapshot.
    const sync = () => this.sync();
    if (this.db.inTransaction) sync();
    else this.db.transaction(sync).deferred();
    this.stamp = stamp;
    this.ready = true;
    this.lastRefreshMs = performance.now() - started;
  }

  /**
   * Loads the copy in slices of vec0 chunks, yielding to the event loop between
   * slices (unref'd timers: a pending warm never keeps the process alive), so a REPL
   * stays responsive while a large index loads. Each slice is read in its own
   * transaction; the change stamp is taken before the first, so anything committed
   * meanwhile is caught by the next refresh(). A synchronous refresh() meanwhile
   * takes over and this returns.
   */
  async warm(sliceChunks = 16): Promise<void> {
    if (this.ready) return;
    const epoch = ++this.epoch;
    const stamp = this.readStamp();
    if (stamp[1] !== this.stamp[1]) this.reset();
    const ids = this.stmts.chunkIds.all() as number[];
    this.reserve(this.slotCount + (this.stmts.slotTotal.get() as number | null ?? 0));
    for (let i = 0; i < ids.length; i += sliceChunks) {
      await new Promise<void>((resolve) => setTimeout(resolve, 0).unref());
      if (this.epoch !== epoch) return;
      const lo = ids[i]!, hi = ids[Math.min(i + sliceChunks, ids.length) - 1]!;
      this.db.transaction(() => this.syncRows(this.stmts.chunkRange.all(lo, hi) as ChunkRow[], -1)).deferred();
    }
    if (this.epoch !== epoch) return;
    this.stamp = stamp;
    this.ready = true;
  }

  /** True once a full copy has been taken (searches still refresh it first). */
  ready = false;
  private epoch = 0;

  private readStamp(): [number, number, number] {
    return [
      this.stmts.dataVersion.get() as number,
      this.stmts.schemaVersion.get() as number,
      this.stmts.totalChanges.get() as number,
    ];
  }

  /** The `n` nearest live vectors to `query` by cosine distance, nearest first. */
  search(query: Float32Array, n: number): VectorCandidate[] {
    return this.begin(query, n)();
  }

  /**
   * Starts a search and returns the function that completes it. With the helper
   * thread running, the helper scans while the caller does other synchronous work
   * (hybrid search runs FTS5 there), and the completion joins the scan; without it,
   * the whole scan happens in the completion. Nothing else may search this index
   * between the two calls.
   */
  begin(query: Float32Array, n: number): () => VectorCandidate[] {
    this.refresh();
    const kernel = this.kernel;
    if (!kernel || n <= 0 || this.slotCount === 0) return () => [];
    if (query.length !== this.dimensions) {
      throw new Error(`query vector has ${query.length} dimensions, the index ${this.dimensions}`);
    }
    let qNorm = 0;
    for (let i = 0; i < query.length; i++) qNorm += query[i]! * query[i]!;
    const invQ = qNorm > 0 ? 1 / Math.sqrt(qNorm) : 0;
    const layout = this.layout();
    const f32 = new Float32Array(kernel.memory.buffer);
    f32.fill(0, layout.query / 4, (layout.query + this.stride) / 4);
    f32.set(query, layout.query / 4);
    const count = this.slotCount;
    const helper = count >= SPLIT_MIN_SLOTS ? this.scanHelper(kernel) : undefined;
    const split = helper?.ready === true;
    if (split) helper.start(layout.query, layout.vectors, count, this.stride, layout.scores);
    return () => {
      if (!split) kernel.dot(layout.query, layout.vectors, count, this.stride, layout.scores);
      else if (!helper.finish(kernel)) this.helper = undefined;
      return selectNearest(new Float32Array(kernel.memory.buffer), layout.scores / 4, this.invNorms, this.ids, count, n, invQ);
    };
  }

  /** The helper thread, started on first need (2+ cores, not disabled by `threads: 1`). */
  private scanHelper(kernel: Kernel): ScanHelper | undefined {
    if (this.helper) return this.helper;
    if (this.helperDisabled) return undefined;
    this.helperDisabled = true; // one attempt per index
    if (this.options.threads === 1 || os.availableParallelism() < 2) return undefined;
    try {
      this.helper = new ScanHelper(kernel.memory);
      helpers.register(this, this.helper, this);
    } catch {
      return undefined;
    }
    return this.helper;
  }

  /** Stops the helper thread (it never keeps the process alive, but tests tidy up). */
  close(): void {
    helpers.unregister(this);
    this.helper?.close();
    this.helper = undefined;
  }

  /** Byte offsets in kernel memory: [query | vectors (capacity) | scores]; growing never moves vectors. */
  private layout() {
    const query = 0;
    const vectors = this.stride;
    const scores = vectors + this.slotCapacity * this.stride;
    return { query, scores, vectors };
  }

  private reset(): void {
    this.chunks.clear();
    this.slotCount = 0;
    this.ids.fill(0);
    this.invNorms.fill(Number.NaN);
  }

  private sync(): void {
    const rows = this.stmts.chunkRows.all() as ChunkRow[];
    const latest = rows.length > 0 ? rows[rows.length - 1]!.chunk_id : -1;
    this.syncRows(rows, latest);
    const seen = new Set(rows.map((row) => row.chunk_id));
    for (const [chunkId, chunk] of this.chunks) {
      if (seen.has(chunkId)) continue;
      for (let slot = 0; slot < chunk.size; slot++) this.clearSlot(chunk.base + slot);
      this.chunks.delete(chunkId); // its slots stay allocated but empty
    }
  }

  /** Brings the given vec0 chunks up to date; `latest` is the chunk new vectors go to (-1: read every rowid blob). */
  private syncRows(rows: ChunkRow[], latest: number): void {
    let newSlots = 0;
    for (const row of rows) if (this.chunks.get(row.chunk_id)?.size !== row.size) newSlots += row.size;
    this.reserve(this.slotCount + newSlots);
    for (const row of rows) {
      let chunk = this.chunks.get(row.chunk_id);
      if (!chunk || chunk.size !== row.size) {
        chunk = { base: this.allocate(row.size), size: row.size, rowids: new Float64Array(row.size) };
        this.chunks.set(row.chunk_id, chunk);
      }
      // sqlite-vec writes new vectors only into free slots of its latest chunk; an
      // older chunk changes only by deletions, which show in its validity bitmap.
      // So the rowids blob (8 KB per chunk) is read only where something may have moved.
      const validityChanged = !chunk.validity?.equals(row.validity);
      if (!validityChanged && row.chunk_id !== latest) continue;
      const rowidBlob = this.stmts.chunkRowids.get(row.chunk_id) as Buffer;
      if (!validityChanged && chunk.rowidBytes?.equals(rowidBlob)) continue;
      chunk.validity = Buffer.from(row.validity);
      chunk.rowidBytes = Buffer.alloc(rowidBlob.byteLength); // unpooled: 8-byte aligned
      rowidBlob.copy(chunk.rowidBytes);
      const rowids = new BigInt64Array(chunk.rowidBytes.buffer, chunk.rowidBytes.byteOffset, row.size);
      const changed: number[] = [];
      let added = false;
      for (let slot = 0; slot < row.size; slot++) {
        const valid = (row.validity[slot >> 3]! >> (slot & 7)) & 1;
        const id = valid ? Number(rowids[slot]) : 0;
        if (id !== chunk.rowids[slot]) {
          changed.push(slot);
          if (valid) added = true;
        }
      }
      if (changed.length > 0) this.loadSlots(row, chunk, rowids, changed, added);
    }
  }

  private loadSlots(row: ChunkRow, chunk: ChunkSlots, rowids: BigInt64Array, changed: number[], added: boolean): void {
    const kernel = this.kernel!;
    // only deletions: no need to read the chunk's vectors
    const blob = added ? (this.stmts.vectorBlob.get(row.chunk_id) as Buffer | undefined) : undefined;
    const vectorBytes = this.dimensions * 4;
    const u8 = new Uint8Array(kernel.memory.buffer);
    const f32 = new Float32Array(kernel.memory.buffer);
    const { vectors, scores } = this.layout();
    const wholeChunk = blob !== undefined && this.stride === vectorBytes && changed.length === row.size && blob.byteLength >= row.size * vectorBytes;
    if (wholeChunk) u8.set(blob.subarray(0, row.size * vectorBytes), vectors + chunk.base * this.stride);
    for (const slot of changed) {
      const global = chunk.base + slot;
      const valid = (row.validity[slot >> 3]! >> (slot & 7)) & 1;
      if (!valid || !blob || blob.byteLength < (slot + 1) * vectorBytes) {
        chunk.rowids[slot] = 0;
        this.clearSlot(global);
        continue;
      }
      const at = vectors + global * this.stride;
      if (!wholeChunk) {
        u8.set(blob.subarray(slot * vectorBytes, (slot + 1) * vectorBytes), at);
        if (this.stride > vectorBytes) u8.fill(0, at + vectorBytes, at + this.stride);
      }
      kernel.dot(at, at, 1, this.stride, scores);
      const norm2 = f32[scores / 4]!;
      const id = Number(rowids[slot]);
      chunk.rowids[slot] = id;
      this.ids[global] = id;
      this.invNorms[global] = norm2 > 0 ? 1 / Math.sqrt(norm2) : 0;
    }
  }

  private clearSlot(global: number): void {
    this.ids[global] = 0;
    this.invNorms[global] = Number.NaN;
  }

  /** Makes room for `slots` slots in all arrays (one growth, with headroom for later inserts). */
  private reserve(slots: number): void {
    if (slots <= this.slotCapacity) return;
    const capacity = Math.max(slots + (this.slotCapacity > 0 ? slots >> 3 : 0), 1024);
    this.slotCapacity = capacity;
    const bytes = this.layout().scores + capacity * 4 + QUERY_BYTES_ALIGN;
    if (!this.kernel) {
      this.kernel = instantiateKernel(createKernelMemory(bytes));
    } else {
      const have = this.kernel.memory.buffer.byteLength;
      if (bytes > have) this.kernel.memory.grow(Math.ceil((bytes - have) / 65536));
    }
    const ids = new Float64Array(capacity);
    ids.set(this.ids.subarray(0, this.slotCount));
    this.ids = ids;
    const invNorms = new Float32Array(capacity).fill(Number.NaN);
    invNorms.set(this.invNorms.subarray(0, this.slotCount));
    this.invNorms = invNorms;
  }

  /** Takes `size` slots at the end. */
  private allocate(size: number): number {
    const base = this.slotCount;
    this.reserve(base + size);
    this.slotCount = base + size;
    for (let i = base; i < this.slotCount; i++) this.clearSlot(i);
    return base;
  }
}

/**
 * Top-n by cosine similarity from raw dot products: sim = dot * invNorm * invQ.
 * Keeps a small sorted buffer; most slots fail the threshold test.
 */
function selectNearest(
  f32: Float32Array,
  scoresAt: number,
  invNorms: Float32Array,
  ids: Float64Array,
  count: number,
  n: number,
  invQ: number,
): VectorCandidate[] {
  const topSim = new Float64Array(n);
  const topSlot = new Int32Array(n);
  let filled = 0;
  let worst = -Infinity;
  for (let i = 0; i < count; i++) {
    const sim = f32[scoresAt + i]! * invNorms[i]!;
    if (!(sim > worst) && filled === n) continue;
    if (sim !== sim) continue; // NaN: empty slot
    // insert into the descending buffer
    let j = filled < n ? filled++ : n - 1;
    while (j > 0 && topSim[j - 1]! < sim) {
      topSim[j] = topSim[j - 1]!;
      topSlot[j] = topSlot[j - 1]!;
      j--;
    }
    topSim[j] = sim;
    topSlot[j] = i;
    if (filled === n) worst = topSim[n - 1]!;
  }
  const out: VectorCandidate[] = [];
  for (let j = 0; j < filled; j++) {
    out.push({ id: ids[topSlot[j]!]!, distance: 1 - topSim[j]! * invQ });
  }
  return out;
}
