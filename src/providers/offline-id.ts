// What an offline embedder is, apart from what it computes: its id (feature set
// and version), dimension and batch size. The threaded embedder says what it is
// from this alone, so the main thread loads the tokenizer and stemmer only when
// it embeds itself (an ingest that finds nothing to embed never does).

/** Which features are hashed and how much each weighs. */
export interface OfflineFeatureConfig {
  /** Weight of the lower-case word itself (0 = off). */
  word: number;
  /** Weight of the Porter stem (0 = off). */
  stem: number;
  /** Weight of consecutive content-stem pairs (0 = off). */
  bigram: number;
  /** Character n-gram sizes taken from `<word>` with boundary marks; empty = off. */
  charNgrams: readonly number[];
  /** Total weight of one word's character n-grams, spread over them. */
  charWeight: number;
  /** Multiplier for stopwords (a fixed IDF-like down-weighting). */
  stopwordWeight: number;
  /** Use 1 + ln(tf) instead of raw tf. */
  sublinearTf: boolean;
}

/** Options for an OfflineEmbedder (and the threaded one, which runs it). */
export interface OfflineEmbedderOptions {
  /** Vector length. Default 384. */
  dimensions?: number;
  /** Feature set; defaults to {@link DEFAULT_FEATURES}. Changing it changes `id`. */
  features?: Partial<OfflineFeatureConfig>;
  /** Characters of each text that are embedded; the rest is ignored. Default 16384. */
  maxChars?: number;
  /** Largest batch per `embed` call. Default 256. */
  maxBatch?: number;
}

/** Feature set measured best on the benchmark (bench/lab/RESULTS.md). */
export const DEFAULT_FEATURES: OfflineFeatureConfig = {
  word: 0,
  stem: 1,
  bigram: 0.5,
  charNgrams: [3],
  charWeight: 1,
  stopwordWeight: 0.1,
  sublinearTf: true,
};

/** hash-v2: names such as C++ and C# are spelled as words before tokenizing (hash-v1 read C++ as c). */
const FEATURE_VERSION = 'hash-v2';

function signature(f: OfflineFeatureConfig): string {
  return [
    `w${f.word}`,
    `s${f.stem}`,
    `b${f.bigram}`,
    `c${f.charNgrams.join('')}x${f.charWeight}`,
    `sw${f.stopwordWeight}`,
    f.sublinearTf ? 'log' : 'tf',
  ].join('-');
}

/** The id, dimension, batch size and features of an offline embedder made with `options`. */
export function offlineIdentity(options: OfflineEmbedderOptions = {}): {
  id: string;
  dimensions: number;
  maxBatch: number;
  features: OfflineFeatureConfig;
} {
  const dimensions = options.dimensions ?? 384;
  if (!Number.isInteger(dimensions) || dimensions < 8 || dimensions > 8192) {
    throw new RangeError(`OfflineEmbedder dimensions must be an integer in 8..8192, got ${dimensions}`);
  }
  const features = { ...DEFAULT_FEATURES, ...options.features };
  const sig = signature(features);
  const id = sig === signature(DEFAULT_FEATURES) ? `offline:${FEATURE_VERSION}-${dimensions}` : `offline:${FEATURE_VERSION}-${dimensions}+${sig}`;
  return { id, dimensions, maxBatch: options.maxBatch ?? 256, features };
}
