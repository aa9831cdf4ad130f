/**
 * A small deterministic embedder with no model: feature hashing (Weinberger et al., 2009) of word stems,
 * exact words, word bigrams and character n-grams into a fixed number of signed buckets, log-scaled and unit-normalized.
 * Texts that share words, word pairs or spellings come out close, so it is a real lexical embedder: good for
 * tests and as a fallback where no model can be loaded, though it knows nothing of synonyms.
 */
import type { Embedder } from '../providers/types';
import { fnv1a } from './hash';
import { charNgrams, rawTokens, splitClitic } from './tokenize';
import { emptyTextVector, normalizeInPlace } from './vector-math';

export interface HashingEmbedderOptions {
  /** Number of buckets (default 256). */
  dimensions?: number;
  /** Relative weights of the feature kinds (defaults 1, 0.5, 0.5, 0.5; char n-grams share theirs per word). */
  stemWeight?: number;
  wordWeight?: number;
  bigramWeight?: number;
  ngramWeight?: number;
}

/** Frequent function words carry little meaning; they get a tenth of a content word's weight. */
const STOP = new Set(
  "a an the and or but if of to in on at by for with from as is are was were be been being am do does did have has had i me my we our you your he him his she her it its they them their this that these those what which who whom when where why how not no so than too very can will would should could may might must just about into over there here then also up out n't 's 'm 're 've 'll 'd".split(' '),
);

const SEED_STEM = 0x4b1d2e63;
const SEED_WORD = 0x1f3d5b79;

/** Strips the commonest English inflections ("paintings" → "paint", "tried" → "tri"), keeping 3+ letters. */
export function crudeStem(w: string): string {
  for (const [suffix, repl] of [['ings', ''], ['ing', ''], ['ies', 'i'], ['ied', 'i'], ['ed', ''], ['ly', ''], ['s', '']] as const) {
    if (w.length - suffix.length >= 3 && w.endsWith(suffix) && !w.endsWith('ss')) return w.slice(0, -suffix.length) + repl;
  }
  return w;
}
const SEED_BIGRAM = 0x2c9277b5;
const SEED_NGRAM = 0x3a8f05c5;

export class HashingEmbedder implements Embedder {
  readonly id: string;
  readonly dimensions: number;
  private readonly weights: { stem: number; word: number; bigram: number; ngram: number };

  constructor(options: HashingEmbedderOptions = {}) {
    const dims = options.dimensions ?? 256;
    if (!Number.isInteger(dims) || dims < 2) throw new RangeError(`HashingEmbedder: dimensions must be an integer >= 2, got ${dims}`);
    this.dimensions = dims;
    this.weights = { stem: options.stemWeight ?? 1, word: options.wordWeight ?? 0.5, bigram: options.bigramWeight ?? 0.5, ngram: options.ngramWeight ?? 0.5 };
    const w = this.weights;
    this.id = `hashing-v1:d=${dims}:w=${w.stem},${w.word},${w.bigram},${w.ngram}`;
  }

  embedOne(text: string): Float32Array {
    const words = rawTokens(text).flatMap(splitClitic).filter((w) => w.length > 0);
    if (words.length === 0) return emptyTextVector(this.dimensions);
    const features = new Map<string, { seed: number; weight: number; tf: number }>();
    const add = (key: string, seed: number, weight: number): void => {
      const f = features.get(key);
      if (f) f.tf++;
      else features.set(key, { seed, weight, tf: 1 });
    };
    for (let i = 0; i < words.length; i++) {
      const w = words[i];
      const stop = STOP.has(w);
      const k = stop ? 0.1 : 1;
      add(`s:${crudeStem(w)}`, SEED_STEM, this.weights.stem * k);
      add(`w:${w}`, SEED_WORD, this.weights.word * k);
      if (i > 0) add(`b:${words[i - 1]} ${w}`, SEED_BIGRAM, this.weights.bigram * (stop && STOP.has(words[i - 1]) ? 0.1 : 1));
      if (!stop) {
        const grams = charNgrams(w);
        for (const g of grams) add(`n:${g}`, SEED_NGRAM, (this.weights.ngram * k) / Math.sqrt(grams.length));
      }
    }
    const v = new Float32Array(this.dimensions);
    for (const [key, f] of features) {
      const h = fnv1a(key, f.seed);
      const bucket = h % this.dimensions;
      const sign = (fnv1a(key, f.seed ^ 0x9e3779b9) & 1) === 0 ? 1 : -1; // a second hash: collisions cancel on average
      v[bucket] += sign * f.weight * (1 + Math.log(f.tf));
    }
    return normalizeInPlace(v) ? v : emptyTextVector(this.dimensions);
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    return texts.map((t) => this.embedOne(t));
  }
}
