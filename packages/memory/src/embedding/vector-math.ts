/** Small vector helpers shared by every embedder (pure, allocation-conscious). */

/** Scales `v` in place to unit L2 length; returns false (and leaves `v` untouched) when it is all zeros. */
export function normalizeInPlace(v: Float32Array): boolean {
  let sum = 0;
  for (let i = 0; i < v.length; i++) sum += v[i] * v[i];
  if (!(sum > 0) || !Number.isFinite(sum)) return false;
  const inv = 1 / Math.sqrt(sum);
  for (let i = 0; i < v.length; i++) v[i] *= inv;
  return true;
}

export function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) throw new RangeError(`dot: length ${a.length} != ${b.length}`);
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

/**
 * Cosine similarity, memory's one: 0 when either vector is all zeros (embedders return unit vectors, but
 * stored or test vectors need not be). Vectors of different lengths come from different embedders and
 * have no similarity, so they are refused rather than compared over a prefix.
 */
export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) throw new RangeError(`cosine: vector dimensions differ: ${a.length} vs ${b.length}`);
  let d = 0, na = 0, nb = 0;
  for (let i = 0; i < a.length; i++) {
    d += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return na === 0 || nb === 0 ? 0 : d / Math.sqrt(na * nb);
}

export function l2norm(v: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < v.length; i++) s += v[i] * v[i];
  return Math.sqrt(s);
}

/**
 * The vector returned for a text with no usable content (empty, or nothing the model can read): unit length,
 * as the Embedder contract demands, and the same every time, so empty texts are alike and far from nothing.
 */
export function emptyTextVector(dimensions: number): Float32Array {
  return new Float32Array(dimensions).fill(1 / Math.sqrt(dimensions));
}

/** Removes from `v` (in place) its projection on each unit vector of `components`. */
export function removeProjections(v: Float32Array, components: readonly Float32Array[]): void {
  for (const u of components) {
    const p = dot(v, u);
    for (let i = 0; i < v.length; i++) v[i] -= p * u[i];
  }
}
