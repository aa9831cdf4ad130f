/** Deterministic string hashing for feature hashing (same result on every node and every run). */

/** 32-bit FNV-1a over the UTF-16 code units of `s`, continued from `seed`. */
export function fnv1a(s: string, seed = 0x811c9dc5): number {
  let h = seed >>> 0;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return avalanche(h);
}

/**
 * murmur3's finalizer (every input bit moves every output bit): FNV alone leaves the low bits of
 * short strings poorly mixed, and we take them modulo.
 */
export function avalanche(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * Memory's one seeded PRNG (mulberry32), for reproducible pseudo-random vectors. The same generator as raft's
 * `seededRandom` (core/random.ts); one copy per layer, because memory does not depend on the consensus package.
 */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
