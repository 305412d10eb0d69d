// The built-in offline embedder: deterministic signed feature hashing, no weights, no
// network. Each text becomes a bag of hashed features (words, Porter stems, stem bigrams,
// character n-grams of words), each weighted by sublinear term frequency and a fixed
// down-weighting of stopwords, projected into `dimensions` with a hash sign, and
// L2-normalised. It is a lexical model: it adds fuzzy word matching (stems, sub-words,
// identifiers split into parts) to hybrid search, not semantics. Names such as C++,
// C# and .NET are spelled as words first (symbols.ts), as the keyword index spells them.

import type { Embedder } from './types.js';
import { offlineIdentity, type OfflineEmbedderOptions, type OfflineFeatureConfig } from './offline-id.js';
import { indexedTokens } from '../text/symbols.js';
import { stem } from '../text/stem.js';
import { STOPWORDS } from '../text/stopwords.js';

export { DEFAULT_FEATURES, type OfflineEmbedderOptions, type OfflineFeatureConfig } from './offline-id.js';

/** 32-bit FNV-1a over UTF-16 code units, seeded per feature class. Platform independent. */
function fnv1a(s: string, seed: number): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  // final avalanche (murmur3 fmix32) so low and high bits are both usable
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

const SEED_WORD = 1;
const SEED_STEM = 2;
const SEED_BIGRAM = 3;
const SEED_CHAR = 4;

interface WordFeatures {
  /** The word's own features (stem, word, char n-grams) already projected: dims and signed weights. */
  dims: Uint32Array;
  values: Float32Array;
  /** Hash of the stem used for bigrams; 0 for stopwords (skipped when pairing). */
  stemHash: number;
  /** Occurrences in the text being embedded, valid while `generation` matches. */
  count: number;
  generation: number;
}

/** Order-dependent combination of two 32-bit hashes (for stem pairs), never 0 in practice. */
function pairHash(a: number, b: number): number {
  let h = Math.imul(a ^ SEED_BIGRAM, 0x9e3779b1) ^ b;
  h ^= h >>> 15;
  h = Math.imul(h, 0x2c1b3c6d);
  h ^= h >>> 12;
  h = Math.imul(h, 0x297a2d39);
  h ^= h >>> 15;
  return h >>> 0;
}

const SCRATCH_BITS = 18;
const SCRATCH_SIZE = 1 << SCRATCH_BITS;

/** Deterministic in-process embedder; see the module header. */
export class OfflineEmbedder implements Embedder {
  readonly id: string;
  readonly dimensions: number;
  readonly maxBatch: number;
  readonly features: OfflineFeatureConfig;
  readonly maxChars: number;

  private readonly wordCache = new Map<string, WordFeatures>();
  // Per-text feature table: slot -> summed tf and per-occurrence weight.
  // Per-text stem-pair table: slot -> tf, plus the list of slots touched.
  private readonly tf = new Float32Array(SCRATCH_SIZE);
  private readonly touched = new Uint32Array(SCRATCH_SIZE);
  private generation = 0;

  constructor(options: OfflineEmbedderOptions = {}) {
    ({ id: this.id, dimensions: this.dimensions, maxBatch: this.maxBatch, features: this.features } = offlineIdentity(options));
    this.maxChars = options.maxChars ?? 16384;
  }

  async embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    for (const text of texts) {
      signal?.throwIfAborted();
      out.push(this.embedOne(text));
    }
    return out;
  }

  /**
   * Embeds one text synchronously. Empty or token-less text gives the zero vector.
   * Sublinear tf is applied per distinct word (its stem and n-grams together) and per
   * distinct stem pair, which keeps the hot loop to one cache lookup per token.
   */
  embedOne(text: string): Float32Array {
    const f = this.features;
    const tokens = indexedTokens(text.length > this.maxChars ? text.slice(0, this.maxChars) : text);
    const generation = ++this.generation;
    const distinct: WordFeatures[] = [];
    let nTouched = 0;
    let prevStem = 0;
    for (const token of tokens) {
      const wf = this.wordFeatures(token);
      if (wf.generation !== generation) {
        wf.generation = generation;
        wf.count = 0;
        distinct.push(wf);
      }
      wf.count++;
      if (f.bigram > 0 && wf.stemHash !== 0) {
        if (prevStem !== 0) {
          const slot = pairHash(prevStem, wf.stemHash) >>> (32 - SCRATCH_BITS);
          if (this.tf[slot] === 0) this.touched[nTouched++] = slot;
          this.tf[slot] += 1;
        }
        prevStem = wf.stemHash;
      }
    }

    const dims = this.dimensions;
    const vec = new Float32Array(dims);
    const sublinear = f.sublinearTf;
    for (const wf of distinct) {
      const m = sublinear ? 1 + Math.log(wf.count) : wf.count;
      const wd = wf.dims;
      const wv = wf.values;
      for (let i = 0; i < wd.length; i++) vec[wd[i]] += wv[i] * m;
    }
    for (let i = 0; i < nTouched; i++) {
      const slot = this.touched[i];
      const count = this.tf[slot];
      const value = f.bigram * (sublinear ? 1 + Math.log(count) : count);
      const mixed = Math.imul(slot ^ 0x9e3779b9, 0x85ebca6b) >>> 0; // same spread as project()
      vec[mixed % dims] += (mixed & 0x80000000) !== 0 ? -value : value;
      this.tf[slot] = 0;
    }
    let norm = 0;
    for (let i = 0; i < dims; i++) norm += vec[i] * vec[i];
    if (norm > 0) {
      const inv = 1 / Math.sqrt(norm);
      for (let i = 0; i < dims; i++) vec[i] *= inv;
    }
    return vec;
  }

  /** Dimension and sign of a feature slot (top 18 bits of its hash), spread by a second mix. */
  private project(slot: number): [number, number] {
    const mixed = Math.imul(slot ^ 0x9e3779b9, 0x85ebca6b) >>> 0;
    return [mixed % this.dimensions, (mixed & 0x80000000) !== 0 ? -1 : 1];
  }

  private wordFeatures(token: string): WordFeatures {
    const cached = this.wordCache.get(token);
    if (cached) return cached;
    const f = this.features;
    const isStop = STOPWORDS.has(token);
    const scale = isStop ? f.stopwordWeight : 1;
    const hashes: number[] = [];
    const weights: number[] = [];
    if (f.word > 0) {
      hashes.push(fnv1a(token, SEED_WORD));
      weights.push(f.word * scale);
    }
    const s = stem(token);
    const stemHash = fnv1a(s, SEED_STEM) || 1;
    if (f.stem > 0) {
      hashes.push(stemHash);
      weights.push(f.stem * scale);
    }
    if (f.charNgrams.length > 0 && f.charWeight > 0) {
      const marked = `<${token}>`;
      const grams: string[] = [];
      for (const n of f.charNgrams) {
        for (let i = 0; i + n <= marked.length; i++) grams.push(marked.slice(i, i + n));
      }
      const w = grams.length > 0 ? (f.charWeight * scale) / Math.sqrt(grams.length) : 0;
      for (const g of grams) {
        hashes.push(fnv1a(g, SEED_CHAR));
        weights.push(w);
      }
    }
    // project once: merge features that land on the same dimension
    const merged = new Map<number, number>();
    for (let i = 0; i < hashes.length; i++) {
      const [dim, sign] = this.project(hashes[i] >>> (32 - SCRATCH_BITS));
      merged.set(dim, (merged.get(dim) ?? 0) + sign * weights[i]);
    }
    const wf: WordFeatures = {
      dims: Uint32Array.from(merged.keys()),
      values: Float32Array.from(merged.values()),
      stemHash: isStop ? 0 : stemHash,
      count: 0,
      generation: 0,
    };
    if (this.wordCache.size >= 100_000) this.wordCache.clear();
    this.wordCache.set(token, wf);
    return wf;
  }
}
