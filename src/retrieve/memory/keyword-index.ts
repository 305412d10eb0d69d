// An in-memory copy of the keyword index (chunks_fts), scored exactly as FTS5's bm25()
// scores it, for the queries ragline builds (fts-query.ts: quoted words and phrases
// joined with OR). FTS5 computes bm25 for every chunk that matches any query term and,
// at every query, counts each term's documents over the whole table: 13-15 ms of a
// 100k-chunk search (BENCHMARKS.md). The same work over postings in typed arrays takes
// a fraction of that.
//
// Exactness: the terms are the ones FTS5 stores (unicode61.ts, stem.ts: checked
// against SQLite itself), the document lengths, document frequencies and the score
// formula are FTS5's (fts5_aux.c: k1 = 1.2, b = 0.75, idf = log((N - n + 0.5) /
// (n + 0.5)) floored at 1e-6, column weights applied to each hit), summed in the same
// order, and ties go to the lower rowid as in `ORDER BY bm25, rowid`. N and the
// average length come from FTS5's own totals record, as bm25() takes them: on a
// contentless_delete table a delete leaves those totals as they were. The tests
// compare ranks and scores with FTS5's on the same tables.
//
// The database stays the source of truth. The copy is keyed by chunk id: ids are
// never reused (AUTOINCREMENT) and a changed chunk gets a new id, so a refresh only
// adds the chunks above the highest id held and drops the ones that are gone.
//
// A first load builds the whole copy at once (buildKeywordSnapshot: flat arrays of
// their final size, which a worker thread can build and hand over without a copy;
// keyword-worker.ts); later chunks are added one by one to per-term lists.

import type { Statement } from 'better-sqlite3';
import type { Db } from '../../store/db.js';
import { parseKeywordTotals } from '../../store/documents.js';
import { ftsStem } from '../../text/stem.js';
import { INDEX_TEXT_VERSION, keywordText } from '../../text/symbols.js';
import { unicode61Tokens } from '../../text/unicode61.js';
import type { RankedHit } from '../fuse.js';
import { keywordFileOf, readKeywordFile, writeKeywordFile } from './keyword-file.js';

const K1 = 1.2;
const B = 0.75;

/** One phrase's bm25 in one chunk: `freq` its weighted hits, `length` the chunk's tokens. */
function termScore(idf: number, freq: number, length: number, avgdl: number): number {
  return idf * ((freq * (K1 + 1.0)) / (freq + K1 * (1 - B + (B * length) / avgdl)));
}
/** A position is column x COLUMN_SPAN + token offset, so a phrase's next token is at +1 in the same column. */
const COLUMN_SPAN = 2 ** 24;
const COLUMNS = 2;

/**
 * Counts and token offsets, in the narrowest unsigned type that holds the largest
 * (a loaded copy: a chunk's column rarely has more than 65535 tokens, a title more
 * than 255); lists that grow after a load are widened to 32 bits first.
 */
export type Counts = Uint8Array | Uint16Array | Uint32Array;

/** The postings of one term, in chunk order; grown by doubling. */
class Postings {
  docs: Int32Array = new Int32Array(4);
  /** Hits per chunk in the title column and in the body column. */
  titleHits: Counts = new Uint32Array(4);
  bodyHits: Counts = new Uint32Array(4);
  /**
   * Every hit's token offset in its column, chunk after chunk, `titleHits + bodyHits`
   * per chunk: the title hits first, then the body hits, each in ascending order.
   */
  positions: Counts = new Uint32Array(8);
  count = 0;
  positionCount = 0;
  /** The chunk whose hits are being added (-1: none). */
  lastDoc = -1;

  /** Postings over existing arrays (views into a snapshot's buffers); `add` copies them out before it writes. */
  static over(docs: Int32Array, titleHits: Counts, bodyHits: Counts, positions: Counts): Postings {
    const p = new Postings();
    p.docs = docs;
    p.titleHits = titleHits;
    p.bodyHits = bodyHits;
    p.positions = positions;
    p.count = docs.length;
    p.positionCount = positions.length;
    p.lastDoc = docs.length > 0 ? docs[docs.length - 1]! : -1;
    return p;
  }

  add(doc: number, column: number, offset: number): void {
    if (doc !== this.lastDoc) {
      if (this.count === this.docs.length) {
        this.docs = grow(this.docs);
        this.titleHits = widened(this.titleHits);
        this.bodyHits = widened(this.bodyHits);
      }
      this.docs[this.count] = doc;
      this.titleHits[this.count] = 0;
      this.bodyHits[this.count] = 0;
      this.count++;
      this.lastDoc = doc;
    }
    if (column === 0) this.titleHits[this.count - 1]!++;
    else this.bodyHits[this.count - 1]!++;
    if (this.positionCount === this.positions.length) this.positions = widened(this.positions);
    this.positions[this.positionCount++] = offset;
  }

  /** Drops the room left by doubling. */
  trim(): void {
    if (this.docs.length > this.count * 1.25 + 4) {
      this.docs = this.docs.slice(0, this.count);
      this.titleHits = this.titleHits.slice(0, this.count);
      this.bodyHits = this.bodyHits.slice(0, this.count);
    }
    if (this.positions.length > this.positionCount * 1.25 + 8) this.positions = this.positions.slice(0, this.positionCount);
  }

  get bytes(): number {
    return this.docs.byteLength + this.titleHits.byteLength + this.bodyHits.byteLength + this.positions.byteLength;
  }
}

function grow<T extends Int32Array | Uint32Array>(array: T): T {
  const bigger = new (array.constructor as new (n: number) => T)(array.length * 2);
  bigger.set(array);
  return bigger;
}

/** `array` copied into a 32-bit array of twice its length (a list that grows may outgrow a narrow type). */
function widened(array: Counts): Uint32Array {
  const bigger = new Uint32Array(Math.max(4, array.length * 2));
  bigger.set(array);
  return bigger;
}

/** A new array of the narrowest unsigned type that holds values up to `max`. */
function countsFor(max: number, length: number): Counts {
  return max <= 0xff ? new Uint8Array(length) : max <= 0xffff ? new Uint16Array(length) : new Uint32Array(length);
}

/** One chunk row as the index reads it. */
interface ChunkText {
  id: number;
  title: string | null;
  heading: string;
  text: string;
}

const SQL = {
  /** Chunks with ids above ?, in id order, at most ? of them. */
  after: `
    SELECT c.id AS id, d.title AS title, c.heading AS heading, c.text AS text
    FROM chunks c JOIN documents d ON d.id = c.document_id
    WHERE c.id > ? ORDER BY c.id LIMIT ?`,
  /** Inserts raise the chunks sequence; any write to FTS5 rewrites its structure record. */
  fingerprint: `
    SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'chunks'), 0) || ':' ||
           coalesce((SELECT hex(block) FROM chunks_fts_data WHERE id = 10), '')`,
  totals: 'SELECT block FROM chunks_fts_data WHERE id = 1',
};

/** A parsed query: its phrases, each a list of terms (empty when the phrase has no token). */
type Phrases = string[][];

/**
 * A loaded copy in a few flat arrays, to move between threads without copying (the
 * arrays' buffers are transferable): the postings of term i are entries
 * `docStart[i] .. docStart[i+1]` of `docs`, `titleHits` and `bodyHits`, and positions
 * `positionStart[i] .. positionStart[i+1]` of `positions`.
 */
export interface KeywordSnapshot {
  fingerprint: string;
  rowCount: number;
  tokenTotal: number;
  /** Per slot. */
  rowids: Float64Array;
  lengths: Uint32Array;
  alive: Uint8Array;
  live: number;
  /** The terms joined with NUL (which no unicode61 token holds). */
  terms: string;
  docStart: Float64Array;
  positionStart: Float64Array;
  docs: Int32Array;
  titleHits: Counts;
  bodyHits: Counts;
  /** Token offsets in their column (see Postings.positions). */
  positions: Counts;
}

/** The buffers of a snapshot, for a postMessage transfer list. */
export function snapshotBuffers(snapshot: KeywordSnapshot): ArrayBuffer[] {
  const { rowids, lengths, alive, docStart, positionStart, docs, titleHits, bodyHits, positions } = snapshot;
  return [rowids, lengths, alive, docStart, positionStart, docs, titleHits, bodyHits, positions].map((array) => array.buffer as ArrayBuffer);
}

export class KeywordIndex {
  private readonly terms = new Map<string, Postings>();
  /** Each token seen, with its term's postings: one lookup per token while loading. */
  private readonly tokens = new Map<string, Postings>();
  /** Per chunk slot: chunk id. Slots follow chunk ids upwards. */
  private rowids = new Float64Array(1024);
  /** Per slot: tokens in the title and body together (FTS5's xColumnSize(-1)). */
  private lengths = new Uint32Array(1024);
  /** Per slot: 1 while the chunk exists. */
  private alive = new Uint8Array(1024);
  private slots = 0;
  private live = 0;
  private dead = 0;
  /** Scratch per slot for one query. */
  private scores = new Float64Array(1024);
  private seen = new Uint32Array(1024);
  private epoch = 0;
  /** True once every chunk is held (a search still refreshes first). */
  ready = false;
  private readonly stmts: {
    after: Statement<unknown[]>;
    ids: Statement<unknown[]>;
    fingerprint: Statement<unknown[]>;
    totals: Statement<unknown[]>;
  };
  private fingerprint = '';
  private readonly compactAfter: number;
  /** FTS5's row count and token total (all columns), from its totals record. */
  private rowCount = 0;
  private tokenTotal = 0;

  /** `compactAfter`: rewrite the postings once more than this many chunks were dropped and they are at least half as many as the live ones. */
  constructor(
    private readonly db: Db,
    options: { compactAfter?: number } = {},
  ) {
    this.compactAfter = options.compactAfter ?? 1024;
    this.stmts = {
      after: db.prepare(SQL.after),
      ids: db.prepare('SELECT id FROM chunks ORDER BY id').pluck(),
      fingerprint: db.prepare(SQL.fingerprint).pluck(),
      totals: db.prepare(SQL.totals).pluck(),
    };
  }

  /** Chunks held. */
  get size(): number {
    return this.live;
  }

  /** How many live chunks hold `term` (a term as the copy keys it: ftsStem of a token), as FTS5's vocabulary counts them. */
  holding(term: string): number {
    const p = this.terms.get(term);
    return p ? this.liveIn(p) : 0;
  }

  /** How many of `p`'s chunks are live (its document frequency). */
  private liveIn(p: Postings): number {
    if (this.dead === 0) return p.count;
    let n = 0;
    for (let i = 0; i < p.count; i++) if (this.alive[p.docs[i]!]) n++;
    return n;
  }

  /** bm25's idf of a phrase in `n` chunks, as FTS5 computes it (never below 1e-6). */
  private idf(n: number): number {
    const idf = Math.log((this.rowCount - n + 0.5) / (n + 0.5));
    return idf <= 0 ? 1e-6 : idf;
  }

  /** Bytes held in postings and per-chunk arrays, as of the last load or refresh that changed anything. */
  memoryBytes = 0;

  private measure(trim = false): void {
    if (trim) for (const postings of this.terms.values()) postings.trim();
    let bytes = this.rowids.byteLength + this.lengths.byteLength + this.alive.byteLength + this.scores.byteLength + this.seen.byteLength;
    for (const postings of this.terms.values()) bytes += postings.bytes;
    this.memoryBytes = bytes;
  }

  /**
   * Brings the copy in line with the database if its chunks changed: chunks above the
   * highest id held are added, chunks that are gone are dropped. Call inside the read
   * transaction the search reads in.
   */
  refresh(): void {
    if (!this.db.inTransaction) {
      this.db.transaction(() => this.refresh()).deferred();
      return;
    }
    const fingerprint = this.stmts.fingerprint.get() as string;
    if (this.ready && fingerprint === this.fingerprint) return;
    if (this.slots === 0) {
      // A first load: the copy kept beside the database, or built in one piece in the same read transaction.
      this.adopt(keptOrBuiltSnapshot(this.db)!);
      this.refresh(); // written to since the copy was kept: catch up
      return;
    }
    const ids = this.stmts.ids.all() as number[];
    const present = new Set(ids);
    for (let slot = 0; slot < this.slots; slot++) {
      if (this.alive[slot] && !present.has(this.rowids[slot]!)) this.drop(slot);
    }
    const added = this.loadAfter(this.slots > 0 ? this.rowids[this.slots - 1]! : 0, Infinity);
    if (this.dead > this.compactAfter && this.dead * 2 >= this.live) this.compact();
    this.readTotals();
    this.measure(added > this.live / 2);
    this.fingerprint = fingerprint;
    this.ready = true;
  }

  /**
   * Takes a snapshot packed by another copy of the same database (on a worker thread)
   * as this copy's contents; its postings stay views into the snapshot's arrays. For a
   * copy that has loaded nothing yet. The next refresh() brings it up to date with
   * whatever was written since the snapshot was read.
   */
  adopt(snapshot: KeywordSnapshot): void {
    if (this.slots > 0) throw new Error('adopt() is for an empty copy');
    this.terms.clear();
    this.tokens.clear();
    const slots = snapshot.rowids.length;
    const capacity = Math.max(1024, slots);
    this.rowids = new Float64Array(capacity);
    this.rowids.set(snapshot.rowids);
    this.lengths = new Uint32Array(capacity);
    this.lengths.set(snapshot.lengths);
    this.alive = new Uint8Array(capacity);
    this.alive.set(snapshot.alive);
    this.scores = new Float64Array(capacity);
    this.seen = new Uint32Array(capacity);
    this.epoch = 0;
    this.slots = slots;
    this.live = snapshot.live;
    this.dead = slots - snapshot.live;
    const { docStart, positionStart, docs, titleHits, bodyHits, positions } = snapshot;
    const terms = snapshot.terms === '' ? [] : snapshot.terms.split('\0');
    terms.forEach((term, i) => {
      const from = docStart[i]!, to = docStart[i + 1]!;
      this.terms.set(
        term,
        Postings.over(docs.subarray(from, to), titleHits.subarray(from, to), bodyHits.subarray(from, to), positions.subarray(positionStart[i]!, positionStart[i + 1]!)),
      );
    });
    this.rowCount = snapshot.rowCount;
    this.tokenTotal = snapshot.tokenTotal;
    this.fingerprint = snapshot.fingerprint;
    this.measure();
    this.ready = true;
  }

  private readTotals(): void {
    [this.rowCount, this.tokenTotal] = parseKeywordTotals(this.stmts.totals.get() as Buffer | undefined);
  }

  /**
   * Loads every chunk in slices, each in its own read transaction, yielding to the event
   * loop between them (unref'd timers: it never keeps a process alive), so a REPL stays
   * responsive while a large index loads. What is written meanwhile is caught by the
   * next refresh(). Returns early if `cancelled()` turns true or a refresh took over.
   */
  async warm(cancelled: () => boolean = () => false, sliceChunks = 500): Promise<void> {
    const fingerprint = this.stmts.fingerprint.get() as string;
    for (;;) {
      await new Promise<void>((resolve) => setTimeout(resolve, 0).unref());
      if (this.ready || cancelled() || !this.db.open) return;
      const last = this.slots > 0 ? this.rowids[this.slots - 1]! : 0;
      let loaded = 0;
      this.db.transaction(() => (loaded = this.loadAfter(last, sliceChunks))).deferred();
      this.measure();
      if (loaded < sliceChunks) break;
    }
    if (this.ready) return;
    if (fingerprint !== (this.stmts.fingerprint.get() as string)) {
      this.refresh(); // written to while loading: reconcile now
      return;
    }
    this.readTotals();
    this.measure(true);
    this.fingerprint = fingerprint;
    this.ready = true;
  }

  /**
   * The best `limit` chunks for an FTS5 MATCH expression of quoted strings joined with
   * OR, with FTS5's bm25 under `weights` (title, body): lower is better. Undefined for
   * any other expression (the caller asks FTS5).
   */
  search(match: string, weights: readonly number[], limit: number): RankedHit<number>[] | undefined {
    const phrases = parseOrQuery(match);
    if (!phrases) return undefined;
    if (limit <= 0 || this.live === 0 || this.rowCount === 0) return [];
    const epoch = this.nextEpoch();
    const touched: number[] = [];
    const avgdl = this.tokenTotal / this.rowCount;
    const wTitle = weights[0] ?? 1;
    const wBody = weights[1] ?? 1;
    // Phrase by phrase, in query order, as bm25() sums them.
    for (const phrase of phrases) {
      if (phrase.length === 1) {
        this.addTermScores(phrase[0]!, wTitle, wBody, avgdl, epoch, touched);
        continue;
      }
      const hits = this.phraseHits(phrase, wTitle, wBody);
      if (hits.docs.length === 0) continue;
      const n = hits.docs.length;
      const idf = this.idf(n);
      for (let i = 0; i < n; i++) {
        const doc = hits.docs[i]!;
        const part = termScore(idf, hits.freqs[i]!, this.lengths[doc]!, avgdl);
        if (this.seen[doc] !== epoch) {
          this.seen[doc] = epoch;
          this.scores[doc] = part;
          touched.push(doc);
        } else this.scores[doc] = this.scores[doc]! + part;
      }
    }
    return this.best(touched, limit);
  }

  /**
   * Adds one term's bm25 to the scores of the live chunks holding it, as search() does
   * for a phrase (the same sums in the same order), without listing them first: a
   * common term at a million chunks is in hundreds of thousands.
   */
  private addTermScores(term: string, wTitle: number, wBody: number, avgdl: number, epoch: number, touched: number[]): void {
    const p = this.terms.get(term);
    if (!p) return;
    const n = this.liveIn(p);
    if (n === 0) return;
    const idf = this.idf(n);
    const { docs, titleHits, bodyHits, count } = p;
    const alive = this.alive;
    const lengths = this.lengths;
    const scores = this.scores;
    const seen = this.seen;
    for (let i = 0; i < count; i++) {
      const doc = docs[i]!;
      if (!alive[doc]) continue;
      const part = termScore(idf, wTitle * titleHits[i]! + wBody * bodyHits[i]!, lengths[doc]!, avgdl);
      if (seen[doc] !== epoch) {
        seen[doc] = epoch;
        scores[doc] = part;
        touched.push(doc);
      } else scores[doc] = scores[doc]! + part;
    }
  }

  /** The live chunks holding `phrase` with their weighted hit counts; document frequency = docs.length. */
  private phraseHits(phrase: string[], wTitle: number, wBody: number): { docs: number[]; freqs: number[] } {
    const docs: number[] = [];
    const freqs: number[] = [];
    const lists = phrase.map((term) => this.terms.get(term));
    if (phrase.length === 0 || lists.some((list) => !list)) return { docs, freqs };
    const postings = lists as Postings[];
    // Walk all lists together by chunk; where every term is present, count the places
    // where they stand one after the other in one column.
    const at = new Int32Array(postings.length);
    const positionAt = new Int32Array(postings.length);
    const first = postings[0]!;
    for (; at[0]! < first.count; positionAt[0] += first.titleHits[at[0]!]! + first.bodyHits[at[0]!]!, at[0]++) {
      const doc = first.docs[at[0]!]!;
      let all = true;
      for (let t = 1; t < postings.length; t++) {
        const p = postings[t]!;
        while (at[t]! < p.count && p.docs[at[t]!]! < doc) {
          positionAt[t] += p.titleHits[at[t]!]! + p.bodyHits[at[t]!]!;
          at[t]++;
        }
        if (at[t]! >= p.count) return { docs, freqs };
        if (p.docs[at[t]!] !== doc) all = false;
      }
      if (!all || !this.alive[doc]) continue;
      let titleHits = 0;
      let bodyHits = 0;
      const start = positionAt[0]!;
      const bodyFrom = start + first.titleHits[at[0]!]!;
      const end = bodyFrom + first.bodyHits[at[0]!]!;
      for (let k = start; k < end; k++) {
        const position = k < bodyFrom ? first.positions[k]! : COLUMN_SPAN + first.positions[k]!;
        let follows = true;
        for (let t = 1; t < postings.length && follows; t++) follows = hasPosition(postings[t]!, at[t]!, positionAt[t]!, position + t);
        if (!follows) continue;
        if (position < COLUMN_SPAN) titleHits++;
        else bodyHits++;
      }
      if (titleHits + bodyHits === 0) continue;
      docs.push(doc);
      freqs.push(wTitle * titleHits + wBody * bodyHits);
    }
    return { docs, freqs };
  }

  /** The `limit` best of the touched slots: highest score first (bm25 = -score), then lower rowid. */
  private best(touched: number[], limit: number): RankedHit<number>[] {
    const better = (a: number, b: number) => this.scores[a]! > this.scores[b]! || (this.scores[a] === this.scores[b] && this.rowids[a]! < this.rowids[b]!);
    // A bounded heap whose root is the worst kept.
    const heap: number[] = [];
    const siftUp = (i: number) => {
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!better(heap[parent]!, heap[i]!)) break;
        [heap[parent], heap[i]] = [heap[i]!, heap[parent]!];
        i = parent;
      }
    };
    const siftDown = (i: number) => {
      for (;;) {
        const l = 2 * i + 1, r = l + 1;
        let worst = i;
        if (l < heap.length && better(heap[worst]!, heap[l]!)) worst = l;
        if (r < heap.length && better(heap[worst]!, heap[r]!)) worst = r;
        if (worst === i) return;
        [heap[worst], heap[i]] = [heap[i]!, heap[worst]!];
        i = worst;
      }
    };
    for (const slot of touched) {
      if (heap.length < limit) {
        heap.push(slot);
        siftUp(heap.length - 1);
      } else if (better(slot, heap[0]!)) {
        heap[0] = slot;
        siftDown(0);
      }
    }
    heap.sort((a, b) => (better(a, b) ? -1 : better(b, a) ? 1 : 0));
    return heap.map((slot, i) => ({ id: this.rowids[slot]!, rank: i + 1, score: -this.scores[slot]! }));
  }

  /** Loads up to `max` chunks with ids above `after`; returns how many. */
  private loadAfter(after: number, max: number): number {
    let loaded = 0;
    let last = after;
    const slice = Number.isFinite(max) ? max : 2000;
    for (;;) {
      const rows = this.stmts.after.all(last, Math.min(slice, max - loaded)) as ChunkText[];
      for (const row of rows) this.add(row);
      loaded += rows.length;
      if (rows.length === 0 || loaded >= max || rows.length < slice) return loaded;
      last = rows[rows.length - 1]!.id;
    }
  }

  private add(row: ChunkText): void {
    const slot = this.slots;
    if (slot === this.rowids.length) this.growSlots();
    this.slots++;
    this.rowids[slot] = row.id;
    this.alive[slot] = 1;
    this.lengths[slot] = forEachToken(row, (word, column, offset) => {
      let postings = this.tokens.get(word);
      if (!postings) {
        const term = ftsStem(word);
        postings = this.terms.get(term);
        if (!postings) this.terms.set(term, (postings = new Postings()));
        this.tokens.set(word, postings);
      }
      postings.add(slot, column, offset);
    });
    this.live++;
  }

  private drop(slot: number): void {
    this.alive[slot] = 0;
    this.live--;
    this.dead++;
  }

  /** Rewrites the postings without the dropped chunks (slots are renumbered). */
  private compact(): void {
    const newSlot = new Int32Array(this.slots).fill(-1);
    let next = 0;
    for (let slot = 0; slot < this.slots; slot++) {
      if (!this.alive[slot]) continue;
      newSlot[slot] = next;
      this.rowids[next] = this.rowids[slot]!;
      this.lengths[next] = this.lengths[slot]!;
      this.alive[next] = 1;
      next++;
    }
    this.alive.fill(0, next);
    for (const [term, p] of this.terms) {
      const kept = new Postings();
      let position = 0;
      for (let i = 0; i < p.count; i++) {
        const title = p.titleHits[i]!;
        const hits = title + p.bodyHits[i]!;
        const slot = newSlot[p.docs[i]!]!;
        if (slot >= 0) {
          for (let k = position; k < position + hits; k++) kept.add(slot, k < position + title ? 0 : 1, p.positions[k]!);
        }
        position += hits;
      }
      if (kept.count === 0) this.terms.delete(term);
      else this.terms.set(term, kept);
    }
    this.tokens.clear();
    this.slots = next;
    this.dead = 0;
  }

  private growSlots(): void {
    const size = this.rowids.length * 2;
    const rowids = new Float64Array(size);
    rowids.set(this.rowids);
    this.rowids = rowids;
    const lengths = new Uint32Array(size);
    lengths.set(this.lengths);
    this.lengths = lengths;
    const alive = new Uint8Array(size);
    alive.set(this.alive);
    this.alive = alive;
    this.scores = new Float64Array(size);
    this.seen = new Uint32Array(size);
    this.epoch = 0;
  }

  private nextEpoch(): number {
    if (++this.epoch === 0xffffffff) {
      this.seen.fill(0);
      this.epoch = 1;
    }
    return this.epoch;
  }
}

/** Below this many chunks a copy is built in well under a second and not kept in a file. */
const KEEP_MIN_CHUNKS = 10_000;

/**
 * The copy of `db` kept beside it (keyword-file.ts) when it was built at the
 * database's current fingerprint; else the copy built now (buildKeywordSnapshot), and
 * kept for the next process when the database is a file of at least `keepMinChunks`
 * chunks. Undefined when the copy would take more than `budgetBytes`.
 */
export function keptOrBuiltSnapshot(db: Db, budgetBytes = Infinity, options: { keepMinChunks?: number } = {}): KeywordSnapshot | undefined {
  const file = db.memory || !db.name ? undefined : keywordFileOf(db.name);
  if (file) {
    const fingerprint = db.prepare(SQL.fingerprint).pluck().get() as string;
    const kept = readKeywordFile(file, fingerprint, INDEX_TEXT_VERSION, budgetBytes);
    if (kept) return kept;
  }
  const built = buildKeywordSnapshot(db, budgetBytes);
  if (built && file && built.live >= (options.keepMinChunks ?? KEEP_MIN_CHUNKS)) writeKeywordFile(file, built, INDEX_TEXT_VERSION);
  return built;
}

/**
 * The copy of `db`'s chunks as a KeywordSnapshot, read in one read transaction (what
 * a worker thread builds; KeywordIndex.adopt takes it). Two passes over the chunks'
 * tokens: the first gives every term an id, keeps each chunk's term ids and counts
 * each term's chunks and hits; the second writes the postings straight into arrays
 * of their final size. Nothing grows by doubling but the list of term ids, so the
 * thread that builds it leaves little behind. Undefined when the copy would take more
 * than `budgetBytes`.
 */
export function buildKeywordSnapshot(db: Db, budgetBytes = Infinity, sliceChunks = 2000): KeywordSnapshot | undefined {
  const after = db.prepare(SQL.after);
  const build = db.transaction((): KeywordSnapshot | undefined => {
    const fingerprint = db.prepare(SQL.fingerprint).pluck().get() as string;
    const termIds = new Map<string, number>();
    const tokenIds = new Map<string, number>();
    const terms: string[] = [];
    /** The term id of every token, chunk after chunk, title line first. */
    let stream = new Int32Array(1 << 20);
    let streamLength = 0;
    const rowids: number[] = [];
    const lengths: number[] = [];
    const titleLengths: number[] = [];
    for (let last = 0; ; ) {
      const rows = after.all(last, sliceChunks) as ChunkText[];
      for (const row of rows) {
        let titleTokens = 0;
        lengths.push(
          forEachToken(row, (word, column) => {
            let id = tokenIds.get(word);
            if (id === undefined) {
              const term = ftsStem(word);
              id = termIds.get(term);
              if (id === undefined) {
                id = terms.length;
                terms.push(term);
                termIds.set(term, id);
              }
              tokenIds.set(word, id);
            }
            if (streamLength === stream.length) stream = grow(stream);
            stream[streamLength++] = id;
            if (column === 0) titleTokens++;
          }),
        );
        titleLengths.push(titleTokens);
        rowids.push(row.id);
      }
      if (streamLength * 4 > budgetBytes) return undefined;
      if (rows.length < sliceChunks) break;
      last = rows[rows.length - 1]!.id;
    }

    // Chunks and hits per term, then where each term's postings start.
    const slots = rowids.length;
    const lastSlot = new Int32Array(terms.length).fill(-1);
    const docStart = new Float64Array(terms.length + 1);
    const positionStart = new Float64Array(terms.length + 1);
    for (let slot = 0, at = 0; slot < slots; slot++) {
      for (const end = at + lengths[slot]!; at < end; at++) {
        const term = stream[at]!;
        positionStart[term + 1]++;
        if (lastSlot[term] !== slot) {
          lastSlot[term] = slot;
          docStart[term + 1]++;
        }
      }
    }
    for (let term = 0; term < terms.length; term++) {
      docStart[term + 1] += docStart[term]!;
      positionStart[term + 1] += positionStart[term]!;
    }
    const docCount = docStart[terms.length]!;
    const positionCount = positionStart[terms.length]!;
    // A hit count or an offset never exceeds its column's length.
    let longestTitle = 0;
    let longestBody = 0;
    for (let slot = 0; slot < slots; slot++) {
      longestTitle = Math.max(longestTitle, titleLengths[slot]!);
      longestBody = Math.max(longestBody, lengths[slot]! - titleLengths[slot]!);
    }
    const titleHits = countsFor(longestTitle, docCount);
    const bodyHits = countsFor(longestBody, docCount);
    const positions = countsFor(Math.max(longestTitle, longestBody), positionCount);
    if (docCount * (4 + titleHits.BYTES_PER_ELEMENT + bodyHits.BYTES_PER_ELEMENT) + positionCount * positions.BYTES_PER_ELEMENT + slots * 13 > budgetBytes) return undefined;

    const docs = new Int32Array(docCount);
    const nextDoc = docStart.slice(0, terms.length);
    const nextPosition = positionStart.slice(0, terms.length);
    lastSlot.fill(-1);
    for (let slot = 0, at = 0; slot < slots; slot++) {
      const start = at;
      const titleLength = titleLengths[slot]!;
      for (const end = at + lengths[slot]!; at < end; at++) {
        const term = stream[at]!;
        if (lastSlot[term] !== slot) {
          lastSlot[term] = slot;
          docs[nextDoc[term]!++] = slot;
        }
        const k = at - start;
        const doc = nextDoc[term]! - 1;
        if (k < titleLength) {
          titleHits[doc]++;
          positions[nextPosition[term]!++] = k;
        } else {
          bodyHits[doc]++;
          positions[nextPosition[term]!++] = k - titleLength;
        }
      }
    }
    const [rowCount, tokenTotal] = parseKeywordTotals(db.prepare(SQL.totals).pluck().get() as Buffer | undefined);
    return {
      fingerprint,
      rowCount,
      tokenTotal,
      rowids: Float64Array.from(rowids),
      lengths: Uint32Array.from(lengths),
      alive: new Uint8Array(slots).fill(1),
      live: slots,
      terms: terms.join('\0'),
      docStart,
      positionStart,
      docs,
      titleHits,
      bodyHits,
      positions,
    };
  });
  return build.deferred();
}

/** Whether `p`'s chunk at `index` (its positions starting at `from`) has a hit at `position` (column x COLUMN_SPAN + offset). */
function hasPosition(p: Postings, index: number, from: number, position: number): boolean {
  // The title's offsets, then the body's: search the run of the position's column.
  const title = p.titleHits[index]!;
  let lo = from;
  let hi = from + title - 1;
  if (position >= COLUMN_SPAN) {
    position -= COLUMN_SPAN;
    lo = from + title;
    hi = lo + p.bodyHits[index]! - 1;
  }
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const value = p.positions[mid]!;
    if (value === position) return true;
    if (value < position) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}

/**
 * Calls `hit` for each token FTS5 makes of the chunk's columns (title line, then
 * text, as ingest writes them: names such as C++ spelled as words), in order, with
 * its column and offset; returns the number of tokens.
 */
function forEachToken(row: ChunkText, hit: (word: string, column: number, offset: number) => void): number {
  let tokens = 0;
  const columns = [titleLine(row.title, row.heading), row.text];
  for (let column = 0; column < COLUMNS; column++) {
    const words = unicode61Tokens(keywordText(columns[column]!));
    for (let offset = 0; offset < words.length; offset++) hit(words[offset]!, column, offset);
    tokens += words.length;
  }
  return tokens;
}

/**
 * The title column's text, as ingest writes it (index-text.ts): the document title and
 * the heading path joined with ' > ', the title left out when the path starts with it.
 */
export function titleLine(title: string | null, heading: string): string {
  if (!title) return heading;
  if (!heading) return title;
  return heading === title || heading.startsWith(`${title} > `) ? heading : `${title} > ${heading}`;
}

/**
 * The phrases of `"a" OR "b c"`, each as the terms FTS5 makes of it, or undefined when
 * the expression is anything else (other operators, bare words, column filters).
 */
export function parseOrQuery(match: string): Phrases | undefined {
  const phrases: Phrases = [];
  let i = 0;
  for (;;) {
    if (match[i] !== '"') return undefined;
    let text = '';
    i++;
    for (;;) {
      const close = match.indexOf('"', i);
      if (close < 0) return undefined;
      text += match.slice(i, close);
      i = close + 1;
      if (match[i] !== '"') break;
      text += '"'; // a doubled quote
      i++;
    }
    phrases.push(unicode61Tokens(text).map(ftsStem));
    if (i === match.length) return phrases;
    if (!match.startsWith(' OR ', i)) return undefined;
    i += 4;
  }
}
