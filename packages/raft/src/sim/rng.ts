import { seededRandom } from '../core/random';

/** The simulator's only source of randomness: raft's one PRNG (core/random.ts) with drawing helpers. */
export class Rng {
  /** uniform in [0, 1) */
  readonly next: () => number;
  constructor(seed: number) {
    // The seed is spread first so that nearby seeds (1, 2, 3 …) start far apart.
    this.next = seededRandom((seed * 0x9e3779b1) >>> 0 || 0x6d2b79f5);
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
