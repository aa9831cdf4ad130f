/**
 * From raw word vectors and frequencies to the input of the binary encoder: the pieces of the SIF model that
 * can be computed once, at install, instead of at every start.
 */
import type { WordVectorInput, WordVectorSource } from '../word-vector-format';
import { normalizeInPlace } from '../vector-math';

/**
 * SIF's common-discourse direction, estimated without a corpus: the first singular vector of many SIF
 * sentence vectors is dominated by their mean, and the mean of a sentence made of words drawn from the
 * unigram distribution is sum_w p(w) * a/(a+p(w)) * v_w.
 */
export function commonComponent(vectors: Float32Array, dims: number, probs: ArrayLike<number>, a: number): Float32Array {
  const c = new Float64Array(dims);
  const count = vectors.length / dims;
  for (let r = 0; r < count; r++) {
    const w = (probs[r] * a) / (a + probs[r]);
    for (let d = 0; d < dims; d++) c[d] += w * vectors[r * dims + d];
  }
  const out = Float32Array.from(c);
  if (!normalizeInPlace(out)) throw new Error('cannot compute the common component of an all-zero table');
  return out;
}

export function buildWordVectorInput(args: {
  words: string[];
  vectors: Float32Array;
  dims: number;
  probs: Float32Array;
  sifA: number;
  source: WordVectorSource;
  frequencySource: string;
}): WordVectorInput {
  return {
    words: args.words,
    vectors: args.vectors,
    dims: args.dims,
    probs: args.probs,
    source: args.source,
    frequencySource: args.frequencySource,
    sifA: args.sifA,
    commonComponents: [commonComponent(args.vectors, args.dims, args.probs, args.sifA)],
  };
}
