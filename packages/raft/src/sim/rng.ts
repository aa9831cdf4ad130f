/** A small seeded PRNG (mulberry32): the simulator's only source of randomness. */
export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = (seed * 0x9e3779b1) >>> 0 || 0x6d2b79f5;
  }
  /** uniform in [0, 1) */
  next(): number {
    let t = (this.s = (this.s + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  range(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)];
  }
  shuffle<T>(xs: T[]): T[] {
    for (let i = xs.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      [xs[i], xs[j]] = [xs[j], xs[i]];
    }
    return xs;
  }
  /** an independent stream, so adding draws in one place does not shift another */
  fork(): Rng {
    return new Rng(Math.floor(this.next() * 2 ** 31));
  }
}
