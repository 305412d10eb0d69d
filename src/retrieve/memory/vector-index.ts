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
//
// Precision int8 holds each vector as 8-bit integers with one scale
// per vector, a quarter of the memory, and keeps the answers exact: the scan
// (int8 vectors against a 16-bit query) ranks every vector approximately, the best
// candidates are scored again from the float vectors vec0 stores, and every vector
// whose approximate score plus its error bound could still reach the n-th exact
// score is scored again too. The bound is per vector and proven, not estimated:
// with v = s q + e (e its rounding error) and the query x = t p + f,
//   <x, v> - s t <p, q> = <x, e> + s <f, q>,  so  |error| <= |x| |e| + |f| |s q|,
// both norms known when the vector is loaded (Cauchy-Schwarz). So the n nearest,
// and their distances, are the float32 copy's. The float vectors of a database file
// are kept for that in a file of this process beside it (written as the copy loads,
// removed from the folder at once), one positioned read per candidate: ~140 reads of
// vec0 instead cost 3-7 ms a search, walking its 1.5 MB blobs through the map and
// leaving their pages in the process (bench/results/million.md). Precision float32
// (the constructor's default; vector-copy.ts asks for int8) keeps vec0's floats in
// memory and scans them as they are.

import type BetterSqlite3 from 'better-sqlite3';
import type { Statement } from 'better-sqlite3';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import type { Db } from '../../store/db.js';
import { createKernelMemory, instantiateKernel, type Kernel } from './vector-kernel.js';
import type { VectorCandidate, VectorSearch } from '../interfaces.js';
import { ScanHelper } from './vector-worker.js';
import { openVectorFloats, readVectorFile, vectorFileOf, writeVectorFile, type VectorFileState } from './vector-file.js';
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

const require = createRequire(import.meta.url);

/** The statements a load reads vec0's storage with. */
interface Reader {
  chunkIds: Statement<unknown[]>;
  slotTotal: Statement<unknown[]>;
  chunkRange: Statement<unknown[]>;
  chunkRowids: Statement<unknown[]>;
  vectorBlob: Statement<unknown[]>;
}

function readerOf(db: BetterSqlite3.Database): Reader {
  return {
    slotTotal: db.prepare('SELECT sum(size) FROM vec_chunks_chunks').pluck(),
    chunkIds: db.prepare('SELECT chunk_id FROM vec_chunks_chunks ORDER BY chunk_id').pluck(),
    chunkRange: db.prepare('SELECT chunk_id, size, validity FROM vec_chunks_chunks WHERE chunk_id BETWEEN ? AND ? ORDER BY chunk_id'),
    chunkRowids: db.prepare('SELECT rowids FROM vec_chunks_chunks WHERE chunk_id = ?').pluck(),
    vectorBlob: db.prepare('SELECT vectors FROM vec_chunks_vector_chunks00 WHERE rowid = ?').pluck(),
  };
}

const QUERY_BYTES_ALIGN = 64;
/** How the copy holds each vector. */
export type VectorPrecision = 'float32' | 'int8';
/** Added to every int8 error bound: float32 rounding in the approximate score. */
const BOUND_SLACK = 1e-5;
/** Stops a helper thread when its index is garbage-collected (its database was closed and dropped). */
const helpers = new FinalizationRegistry<ScanHelper>((helper) => helper.close());
/** Below this many slots one thread is as fast as two (the hand-off costs tens of microseconds). */
const SPLIT_MIN_SLOTS = 16384;
/** Below this many slots a copy loads from vec0 in well under a second and is not kept in a file. */
const KEEP_MIN_SLOTS = 10_000;
/**
 * What a kept copy must have been taken at: the chunks' id sequence (every ingest that
 * adds chunks, and every rebuild, moves it; deletions show in vec0's validity blobs,
 * which a refresh compares) and vec0's declaration.
 */
const FINGERPRINT = `
  SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'chunks'), 0) || ':' ||
         coalesce((SELECT sql FROM sqlite_master WHERE name = 'vec_chunks'), '')`;

export class VectorIndex implements VectorSearch {
  readonly dimensions: number;
  readonly precision: VectorPrecision;
  /** Bytes per stored vector: dimensions rounded up to 16 floats (float32) or to 64 bytes (int8). */
  readonly stride: number;
  /** Bytes of the query in kernel memory: float32 as the vectors, int8's query is int16. */
  private readonly queryBytes: number;
  /** int8, per slot: |e| / |v| and |s q| / |v| (see the header), for the error bound. */
  private errors = new Float32Array(0);
  private roundedNorms = new Float32Array(0);
  /** The largest of each over the slots loaded since the last reset (bounds the unscored slots at once). */
  private maxError = 0;
  private maxRoundedNorm = 0;
  /** int8: the float vector of one chunk, for scoring candidates again. */
  private exactVector: Statement<unknown[]> | undefined;
  /**
   * int8, a database file: the float vectors by slot, in a file of this process beside
   * the database (removed as soon as it is open), read back one candidate at a time with
   * positioned reads; undefined: candidates are read from vec0.
   */
  private spill: { fd: number; file?: string } | undefined;
  private spillTried = false;
  /**
   * int8, a database file: the copy kept beside it (vector-file.ts), open for the float
   * vectors of the slots it holds (`sharedSlots`); slots loaded since go to the spill.
   */
  private kept: { fd: number; floatsAt: number } | undefined;
  private sharedSlots = new Uint8Array(0);
  private readonly exactFloats: Float32Array;
  /** int8: vectors scored again from vec0 by the last search (benchmarks). */
  lastRescored = 0;
  private kernel: Kernel | undefined;
  private slotCount = 0;
  private slotCapacity = 0;
  private readonly chunks = new Map<number, ChunkSlots>();
  /** Per slot: chunk rowid (0 = empty). */
  private ids = new Float64Array(0);
  /** Per slot: 1/|v| (int8: s/|v|, s the vector's scale), NaN for empty slots. */
  private invNorms = new Float32Array(0);
  private stamp: [number, number, number] = [-1, -1, -1];
  private readonly stmts: Reader & {
    dataVersion: Statement<unknown[]>;
    schemaVersion: Statement<unknown[]>;
    totalChanges: Statement<unknown[]>;
    chunkRows: Statement<unknown[]>;
    fingerprint: Statement<unknown[]>;
  };
  private helper: ScanHelper | undefined;
  private helperDisabled = false;
  /** Time spent in the last refresh, ms (for benchmarks). */
  lastRefreshMs = 0;

  /**
   * `threads`: 1 keeps every scan on this thread; 2 (the default) splits large scans with a helper thread on 2+ cores.
   * `precision`: float32 (the default) or int8, see the header.
   * `keepMinSlots`: an int8 copy of at least this many slots is kept beside its database file (vector-file.ts).
   */
  constructor(
    private readonly db: Db,
    dimensions: number,
    private readonly options: { threads?: number; precision?: VectorPrecision; keepMinSlots?: number } = {},
  ) {
    this.dimensions = dimensions;
    this.precision = options.precision ?? 'float32';
    this.stride = Math.ceil((dimensions * (this.precision === 'int8' ? 1 : 4)) / QUERY_BYTES_ALIGN) * QUERY_BYTES_ALIGN;
    this.queryBytes = this.precision === 'int8' ? this.stride * 2 : this.stride;
    this.exactFloats = new Float32Array(this.precision === 'int8' ? dimensions : 0);
    this.stmts = {
      ...readerOf(db),
      dataVersion: db.prepare('PRAGMA data_version').pluck(),
      schemaVersion: db.prepare('PRAGMA schema_version').pluck(),
      totalChanges: db.prepare('SELECT total_changes()').pluck(),
      chunkRows: db.prepare('SELECT chunk_id, size, validity FROM vec_chunks_chunks ORDER BY chunk_id'),
      fingerprint: db.prepare(FINGERPRINT).pluck(),
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
    if (this.adoptedKept(stamp)) return;
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
   * A database file is read through a connection of its own without memory-mapped
   * I/O: read through the search connection's map, every vector page would stay
   * resident in this process (1.5 GB at a million 384-dimension vectors) after the
   * copy no longer needs it.
   */
  async warm(sliceChunks = 16): Promise<void> {
    if (this.ready) return;
    const epoch = ++this.epoch;
    const stamp = this.readStamp();
    if (stamp[1] !== this.stamp[1]) this.reset();
    if (this.adoptedKept(stamp)) return;
    const fingerprint = this.keepable() ? this.readFingerprint() : undefined;
    const loader = this.openLoader();
    try {
      const source = loader ?? this.db;
      const reader = loader ? readerOf(loader) : this.stmts;
      const ids = reader.chunkIds.all() as number[];
      this.reserve(this.slotCount + (reader.slotTotal.get() as number | null ?? 0));
      for (let i = 0; i < ids.length; i += sliceChunks) {
        await new Promise<void>((resolve) => setTimeout(resolve, 0).unref());
        if (this.epoch !== epoch || !this.db.open) return;
        const lo = ids[i]!, hi = ids[Math.min(i + sliceChunks, ids.length) - 1]!;
        source.transaction(() => this.syncRows(reader.chunkRange.all(lo, hi) as ChunkRow[], -1, reader)).deferred();
      }
    } finally {
      loader?.close();
    }
    if (this.epoch !== epoch) return;
    this.stamp = stamp;
    this.ready = true;
    if (fingerprint !== undefined && this.slotCount >= (this.options.keepMinSlots ?? KEEP_MIN_SLOTS) && this.readFingerprint() === fingerprint) await this.keep(fingerprint, epoch);
  }

  /** The copy can be kept beside its database: int8, of a database file. */
  private keepable(): boolean {
    return this.precision === 'int8' && !this.db.memory && Boolean(this.db.name);
  }

  private readFingerprint(): string {
    return this.stmts.fingerprint.get() as string;
  }

  /**
   * At a first load, takes the copy kept beside the database when it was taken at the
   * database's fingerprint, and brings it up to date from vec0 (what was deleted since).
   * False when this is no first load or there is no such copy.
   */
  private adoptedKept(stamp: [number, number, number]): boolean {
    if (this.ready || this.slotCount > 0 || !this.keepable()) return false;
    const kept = readVectorFile(vectorFileOf(this.db.name), this.readFingerprint(), this.dimensions, this.stride, (slots) => {
      this.reserve(slots);
      return new Uint8Array(this.kernel!.memory.buffer, this.layout().vectors, slots * this.stride);
    });
    if (!kept) return false;
    const { state } = kept;
    this.slotCount = state.slotCount;
    this.ids.set(state.ids);
    this.invNorms.set(state.invNorms);
    this.errors.set(state.errors);
    this.roundedNorms.set(state.roundedNorms);
    this.maxError = state.maxError;
    this.maxRoundedNorm = state.maxRoundedNorm;
    for (const chunk of state.chunks) {
      const rowids = new BigInt64Array(chunk.rowidBytes.buffer, chunk.rowidBytes.byteOffset, chunk.size);
      const slots = new Float64Array(chunk.size);
      for (let slot = 0; slot < chunk.size; slot++) slots[slot] = (chunk.validity[slot >> 3]! >> (slot & 7)) & 1 ? Number(rowids[slot]) : 0;
      this.chunks.set(chunk.chunkId, { base: chunk.base, size: chunk.size, rowids: slots, validity: chunk.validity, rowidBytes: chunk.rowidBytes });
    }
    this.kept = { fd: kept.fd, floatsAt: kept.floatsAt };
    this.sharedSlots.fill(1, 0, this.slotCount);
    // The same schema: a refresh compares vec0's chunks with the kept ones and loads what differs.
    this.stamp = [Number.NaN, stamp[1], Number.NaN];
    this.refresh();
    return true;
  }

  /**
   * Writes the copy beside the database for the next process, and scores candidates
   * from that file from then on (its own spill file is closed). Given up when anything
   * is written to the database meanwhile.
   */
  private async keep(fingerprint: string, epoch: number): Promise<void> {
    const spill = this.spill;
    if (!spill || !this.kernel) return;
    const state: VectorFileState = {
      fingerprint,
      dimensions: this.dimensions,
      stride: this.stride,
      slotCount: this.slotCount,
      maxError: this.maxError,
      maxRoundedNorm: this.maxRoundedNorm,
      chunks: [...this.chunks].map(([chunkId, chunk]) => ({ chunkId, base: chunk.base, size: chunk.size, validity: chunk.validity ?? Buffer.alloc(0), rowidBytes: chunk.rowidBytes ?? Buffer.alloc(chunk.size * 8) })),
      ids: this.ids,
      invNorms: this.invNorms,
      errors: this.errors,
      roundedNorms: this.roundedNorms,
      vectors: new Uint8Array(this.kernel.memory.buffer, this.layout().vectors, this.slotCount * this.stride),
    };
    const file = vectorFileOf(this.db.name);
    const unchanged = () => this.epoch === epoch && this.db.open && this.spill === spill && this.readFingerprint() === fingerprint;
    if (!(await writeVectorFile(file, state, spill.fd, unchanged)) || !unchanged()) return;
    const kept = openVectorFloats(file, fingerprint, this.dimensions, this.stride);
    if (!kept) return;
    this.closeKept();
    this.kept = { fd: kept.fd, floatsAt: kept.floatsAt };
    this.sharedSlots.fill(1, 0, state.slotCount);
    this.closeSpill();
    this.spillTried = false;
  }

  /** A read-only connection to the database file without memory-mapped I/O; undefined for an in-memory database or if it cannot be opened. */
  private openLoader(): BetterSqlite3.Database | undefined {
    if (this.db.memory || !this.db.name) return undefined;
    try {
      const Database = require('better-sqlite3') as typeof BetterSqlite3;
      const loader = new Database(this.db.name, { readonly: true, fileMustExist: true });
      loader.pragma('busy_timeout = 10000');
      return loader;
    } catch {
      return undefined;
    }
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
    if (this.precision === 'int8') return this.beginInt8(kernel, query, n, invQ);
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

  private beginInt8(kernel: Kernel, query: Float32Array, n: number, invQ: number): () => VectorCandidate[] {
    const layout = this.layout();
    // The query as int16, scaled so that a sum of products always fits in an i32.
    let maxAbs = 0;
    for (let i = 0; i < query.length; i++) maxAbs = Math.max(maxAbs, Math.abs(query[i]!));
    const levels = Math.min(32767, Math.floor(0x7fffffff / (this.dimensions * 127)));
    const scale = maxAbs > 0 ? maxAbs / levels : 1;
    const q16 = new Int16Array(kernel.memory.buffer, layout.query, this.queryBytes / 2);
    q16.fill(0);
    let queryError2 = 0;
    for (let i = 0; i < query.length; i++) {
      const q = Math.round(query[i]! / scale);
      q16[i] = q;
      const e = query[i]! - q * scale;
      queryError2 += e * e;
    }
    const count = this.slotCount;
    const helper = count >= SPLIT_MIN_SLOTS ? this.scanHelper(kernel) : undefined;
    const split = helper?.ready === true;
    if (split) helper.start(layout.query, layout.vectors, count, this.stride, layout.scores, 'dotI8');
    return () => {
      if (!split) kernel.dotI8(layout.query, layout.vectors, count, this.stride, layout.scores);
      else if (!helper.finish(kernel)) this.helper = undefined;
      const dots = new Int32Array(kernel.memory.buffer, layout.scores, count);
      return this.rescore(dots, query, n, invQ, scale * invQ, Math.sqrt(queryError2) * invQ);
    };
  }

  /**
   * The exact n nearest from int8 dot products: the best candidates by approximate
   * similarity (dots[i] x invNorms[i] x `approx`) are scored from vec0's floats, then
   * any other vector whose bound reaches the n-th exact similarity. `queryError`:
   * |f| / |x| (see the header).
   */
  private rescore(dots: Int32Array, query: Float32Array, n: number, invQ: number, approx: number, queryError: number): VectorCandidate[] {
    const count = dots.length;
    const want = n + Math.max(16, n >> 2);
    const top = selectTop(dots, this.invNorms, count, want);
    const scored: { slot: number; sim: number }[] = [];
    const score = (slot: number) => {
      const sim = this.exactSimilarity(slot, query, invQ);
      if (sim !== undefined) scored.push({ slot, sim });
    };
    for (const slot of top.slots) score(slot);
    const order = (a: { slot: number; sim: number }, b: { slot: number; sim: number }) => b.sim - a.sim || a.slot - b.slot;
    scored.sort(order);
    let rescored = top.slots.length;
    if (top.slots.length === want && scored.length >= n) {
      // A vector left out could still beat the n-th exact similarity only if its bound reaches it.
      const nth = scored[n - 1]!.sim;
      const worstKept = top.worst * approx;
      const widest = this.maxError + queryError * this.maxRoundedNorm + BOUND_SLACK;
      if (worstKept + widest >= nth) {
        const taken = new Set(top.slots);
        // No slot whose approximate score is below this can reach nth even with the widest bound:
        // one multiplication and a comparison per slot, the exact bound only past it.
        const floor = approx > 0 ? (nth - widest - 1e-9) / approx : -Infinity;
        const invNorms = this.invNorms;
        for (let slot = 0; slot < count; slot++) {
          if (!(dots[slot]! * invNorms[slot]! >= floor)) continue; // NaN (an empty slot) fails too
          if (taken.has(slot)) continue;
          const bound = dots[slot]! * invNorms[slot]! * approx + this.errors[slot]! + queryError * this.roundedNorms[slot]! + BOUND_SLACK;
          if (bound < nth) continue;
          score(slot);
          rescored++;
        }
        scored.sort(order);
      }
    }
    this.lastRescored = rescored;
    return scored.slice(0, n).map(({ slot, sim }) => ({ id: this.ids[slot]!, distance: 1 - sim }));
  }

  /** The cosine similarity of `slot`'s float vector and `query`; undefined when there is none. */
  private exactSimilarity(slot: number, query: Float32Array, invQ: number): number | undefined {
    const v = this.floatsAt(slot);
    if (!v) return undefined;
    let dot = 0;
    let norm = 0;
    for (let i = 0; i < this.dimensions; i++) {
      const x = v[i]!;
      dot += x * query[i]!;
      norm += x * x;
    }
    return norm > 0 ? (dot / Math.sqrt(norm)) * invQ : 0;
  }

  /** `slot`'s float vector: from the spill file, else from vec0 (walking its blob costs tens of microseconds). */
  private floatsAt(slot: number): Float32Array | undefined {
    const bytes = this.dimensions * 4;
    if (this.kept && this.sharedSlots[slot] && this.readFloats(this.kept.fd, this.kept.floatsAt + slot * bytes, () => this.closeKept())) return this.exactFloats;
    if (this.spill && this.readFloats(this.spill.fd, slot * bytes, () => this.closeSpill())) return this.exactFloats;
    this.exactVector ??= this.db.prepare('SELECT embedding FROM vec_chunks WHERE rowid = ?').pluck();
    const blob = this.exactVector.get(this.ids[slot]!) as Buffer | undefined;
    if (!blob || blob.byteLength < bytes) return undefined;
    new Uint8Array(this.exactFloats.buffer).set(blob.subarray(0, bytes));
    return this.exactFloats;
  }

  /** Reads one float vector at `position` of `fd` into exactFloats; false (and `onError` on a failed read) when it is not there. */
  private readFloats(fd: number, position: number, onError: () => void): boolean {
    const bytes = this.dimensions * 4;
    try {
      return fs.readSync(fd, new Uint8Array(this.exactFloats.buffer), 0, bytes, position) === bytes;
    } catch {
      onError();
      return false;
    }
  }

  /** Writes `count` float vectors from `blob` (at byte `from`) to the spill file at `slot`; on failure candidates are read from vec0. */
  private spillWrite(blob: Buffer, from: number, slot: number, count: number): void {
    this.sharedSlots.fill(0, slot, slot + count);
    if (!this.spillTried) {
      this.spillTried = true;
      this.spill = this.openSpill();
    }
    if (!this.spill) return;
    const bytes = this.dimensions * 4;
    try {
      fs.writeSync(this.spill.fd, blob, from, count * bytes, slot * bytes);
    } catch {
      this.closeSpill();
    }
  }

  private openSpill(): { fd: number; file?: string } | undefined {
    if (this.db.memory || !this.db.name) return undefined;
    const file = `${this.db.name}.vectors-${process.pid}-${Math.random().toString(36).slice(2, 10)}.tmp`;
    try {
      const fd = fs.openSync(file, 'wx+', 0o600);
      try {
        fs.unlinkSync(file); // gone from the folder at once; the space is freed when it is closed
        return { fd };
      } catch {
        return { fd, file }; // removed at close (a system that cannot remove an open file)
      }
    } catch {
      return undefined;
    }
  }

  private closeKept(): void {
    const kept = this.kept;
    this.kept = undefined;
    this.sharedSlots.fill(0);
    if (!kept) return;
    try {
      fs.closeSync(kept.fd);
    } catch {
      // nothing left to do
    }
  }

  private closeSpill(): void {
    const spill = this.spill;
    this.spill = undefined;
    if (!spill) return;
    try {
      fs.closeSync(spill.fd);
      if (spill.file) fs.rmSync(spill.file, { force: true });
    } catch {
      // nothing left to do
    }
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
    this.closeSpill();
    this.closeKept();
    helpers.unregister(this);
    this.helper?.close();
    this.helper = undefined;
  }

  /** Byte offsets in kernel memory: [query | vectors (capacity) | scores]; growing never moves vectors. */
  private layout() {
    const query = 0;
    const vectors = this.queryBytes;
    const scores = vectors + this.slotCapacity * this.stride;
    return { query, scores, vectors };
  }

  private reset(): void {
    this.closeKept();
    this.chunks.clear();
    this.slotCount = 0;
    this.ids.fill(0);
    this.invNorms.fill(Number.NaN);
    this.maxError = 0;
    this.maxRoundedNorm = 0;
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
  private syncRows(rows: ChunkRow[], latest: number, reader: Reader = this.stmts): void {
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
      const rowidBlob = reader.chunkRowids.get(row.chunk_id) as Buffer;
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
      if (changed.length > 0) this.loadSlots(row, chunk, rowids, changed, added, reader);
    }
  }

  private loadSlots(row: ChunkRow, chunk: ChunkSlots, rowids: BigInt64Array, changed: number[], added: boolean, reader: Reader): void {
    const kernel = this.kernel!;
    // only deletions: no need to read the chunk's vectors
    const blob = added ? (reader.vectorBlob.get(row.chunk_id) as Buffer | undefined) : undefined;
    const vectorBytes = this.dimensions * 4;
    const u8 = new Uint8Array(kernel.memory.buffer);
    const f32 = new Float32Array(kernel.memory.buffer);
    const { vectors, scores } = this.layout();
    const int8 = this.precision === 'int8';
    const floats = int8 && blob ? floatsOf(blob) : undefined;
    const wholeChunk = !int8 && blob !== undefined && this.stride === vectorBytes && changed.length === row.size && blob.byteLength >= row.size * vectorBytes;
    const spillWhole = int8 && blob !== undefined && changed.length === row.size && blob.byteLength >= row.size * vectorBytes;
    if (spillWhole) this.spillWrite(blob, 0, chunk.base, row.size);
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
      if (floats) {
        this.quantize(kernel, global, at, floats, slot * this.dimensions);
        if (!spillWhole) this.spillWrite(blob, slot * vectorBytes, global, 1);
        const id = Number(rowids[slot]);
        chunk.rowids[slot] = id;
        this.ids[global] = id;
        continue;
      }
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

  /** Stores the float vector at `floats[from..]` as int8 at byte `at`, with its scale and error bound. */
  private quantize(kernel: Kernel, global: number, at: number, floats: Float32Array, from: number): void {
    const d = this.dimensions;
    let maxAbs = 0;
    let norm2 = 0;
    for (let i = from; i < from + d; i++) {
      const x = floats[i]!;
      norm2 += x * x;
      if (Math.abs(x) > maxAbs) maxAbs = Math.abs(x);
    }
    const i8 = new Int8Array(kernel.memory.buffer, at, this.stride);
    i8.fill(0);
    if (!(norm2 > 0) || !(maxAbs > 0)) {
      // A zero vector: similarity 0 to anything, as the float32 copy scores it.
      this.invNorms[global] = 0;
      this.errors[global] = 0;
      this.roundedNorms[global] = 0;
      return;
    }
    const scale = maxAbs / 127;
    let error2 = 0;
    let rounded2 = 0;
    for (let i = 0; i < d; i++) {
      const x = floats[from + i]!;
      const q = Math.max(-127, Math.min(127, Math.round(x / scale)));
      i8[i] = q;
      const r = q * scale;
      rounded2 += r * r;
      error2 += (x - r) * (x - r);
    }
    const invNorm = 1 / Math.sqrt(norm2);
    this.invNorms[global] = scale * invNorm;
    // Rounded up a little: float32 storage must not make the bound smaller than the error.
    this.errors[global] = Math.sqrt(error2) * invNorm * (1 + 1e-6);
    this.roundedNorms[global] = Math.sqrt(rounded2) * invNorm * (1 + 1e-6);
    this.maxError = Math.max(this.maxError, this.errors[global]!);
    this.maxRoundedNorm = Math.max(this.maxRoundedNorm, this.roundedNorms[global]!);
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
    if (this.precision === 'int8') {
      const sharedSlots = new Uint8Array(capacity);
      sharedSlots.set(this.sharedSlots.subarray(0, this.slotCount));
      this.sharedSlots = sharedSlots;
      const errors = new Float32Array(capacity);
      errors.set(this.errors.subarray(0, this.slotCount));
      this.errors = errors;
      const roundedNorms = new Float32Array(capacity);
      roundedNorms.set(this.roundedNorms.subarray(0, this.slotCount));
      this.roundedNorms = roundedNorms;
    }
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

/** `blob`'s float32 values (copied when the blob is not 4-byte aligned). */
function floatsOf(blob: Buffer): Float32Array {
  if (blob.byteOffset % 4 === 0) return new Float32Array(blob.buffer, blob.byteOffset, blob.byteLength >> 2);
  const copy = new Float32Array(blob.byteLength >> 2);
  new Uint8Array(copy.buffer).set(blob.subarray(0, copy.length * 4));
  return copy;
}

/**
 * The `n` slots with the highest dots[i] x factors[i] (NaN: empty), best first, and
 * the lowest of those values (the n-th best, when there are n).
 */
function selectTop(dots: Int32Array, factors: Float32Array, count: number, n: number): { slots: number[]; worst: number } {
  const topValue = new Float64Array(n);
  const topSlot = new Int32Array(n);
  let filled = 0;
  let worst = -Infinity;
  for (let i = 0; i < count; i++) {
    const value = dots[i]! * factors[i]!;
    if (!(value > worst) && filled === n) continue;
    if (value !== value) continue;
    let j = filled < n ? filled++ : n - 1;
    while (j > 0 && topValue[j - 1]! < value) {
      topValue[j] = topValue[j - 1]!;
      topSlot[j] = topSlot[j - 1]!;
      j--;
    }
    topValue[j] = value;
    topSlot[j] = i;
    if (filled === n) worst = topValue[n - 1]!;
  }
  return { slots: Array.from(topSlot.subarray(0, filled)), worst: filled > 0 ? topValue[filled - 1]! : -Infinity };
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
