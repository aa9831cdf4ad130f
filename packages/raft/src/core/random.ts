/**
 * The raft package's one seeded PRNG (mulberry32): election jitter in the driver and every draw of the
 * simulator come from it, so a seed reproduces a run. Layers above reuse it (store's simulator imports it
 * through `@strata/raft`); memory keeps its own copy in `embedding/hash.ts` because it must not depend on
 * the consensus package for a hash helper. One PRNG per layer, never Math.random.
 */
export function seededRandom(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    let t = (s = (s + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
