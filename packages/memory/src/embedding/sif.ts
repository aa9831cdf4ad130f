/**
 * Smooth-inverse-frequency sentence embedding (Arora, Liang, Ma, "A Simple but Tough-to-Beat Baseline for
 * Sentence Embeddings", ICLR 2017): the sum of word vectors weighted by a/(a+p(w)), minus the projection on a
 * common-discourse direction, unit-normalized. Words missing from the vocabulary get a vector made from
 * hashed character n-grams, so a name or a rare word still matches itself (and its spelling variants).
 * Pure: a table and a text in, a vector out.
 */
import { fnv1a, mulberry32 } from './hash';
import { charNgrams, lookupUnits } from './tokenize';
import { emptyTextVector, normalizeInPlace, removeProjections } from './vector-math';

/** What SIF needs from a vocabulary (the loaded binary table implements it; tests pass a small fake). */
export interface WordVectors {
  readonly dims: number;
  lookup(word: string): number;
  /** out += weight * vector(row). */
  addScaled(row: number, weight: number, out: Float32Array): void;
  readonly probs: ArrayLike<number>;
}

export interface SifParams {
  /** SIF smoothing `a`: smaller discounts frequent words more. */
  a: number;
  /** Directions projected out of every sentence vector (empty = no removal). */
  commonComponents: readonly Float32Array[];
  /** Probability assumed for out-of-vocabulary words (a rare word's). */
  oovProb: number;
  /** Length given to a fallback vector (a typical word vector's), 0 to ignore unknown words. */
  oovNorm: number;
}

const NGRAM_SEED = 0x5eed0f11;

/**
 * A deterministic pseudo-random vector for an unknown word: the sum over its character n-grams of a ±1
 * vector seeded by the n-gram's hash, scaled to `norm`. Words sharing most n-grams get similar vectors.
 */
export function fallbackWordVector(word: string, dims: number, norm: number): Float32Array {
  const v = new Float32Array(dims);
  for (const g of charNgrams(word)) {
    const rnd = mulberry32(fnv1a(g, NGRAM_SEED));
    for (let d = 0; d < dims; d++) v[d] += rnd() < 0.5 ? -1 : 1;
  }
  if (!normalizeInPlace(v)) return v;
  for (let d = 0; d < dims; d++) v[d] *= norm;
  return v;
}

/**
 * Tokens the source vocabulary dropped on purpose (it has no "a", "i", "'s", "n't" nor single letters):
 * they are function words, so they are skipped rather than given a fallback vector.
 */
export function isFunctionToken(unit: string): boolean {
  return unit.length === 1 || unit.startsWith("'") || unit === "n't";
}

export function sifEmbed(text: string, table: WordVectors, params: SifParams): Float32Array {
  const dims = table.dims;
  const out = new Float32Array(dims);
  const rows = new Map<string, number>();
  const rowOf = (w: string): number => {
    let r = rows.get(w);
    if (r === undefined) {
      r = table.lookup(w);
      rows.set(w, r);
    }
    return r;
  };
  let used = 0;
  for (const unit of lookupUnits(text, (w) => rowOf(w) >= 0)) {
    const row = rowOf(unit);
    if (row >= 0) {
      table.addScaled(row, params.a / (params.a + table.probs[row]), out);
      used++;
    } else if (params.oovNorm > 0 && !isFunctionToken(unit)) {
      const fb = fallbackWordVector(unit, dims, params.oovNorm);
      const w = params.a / (params.a + params.oovProb);
      for (let d = 0; d < dims; d++) out[d] += w * fb[d];
      used++;
    }
  }
  if (used === 0) return emptyTextVector(dims);
  removeProjections(out, params.commonComponents);
  return normalizeInPlace(out) ? out : emptyTextVector(dims);
}
