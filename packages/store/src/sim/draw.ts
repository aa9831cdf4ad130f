import { seededRandom } from '@strata/raft';

/**
 * Seeded choices for the store simulator, over the raft package's PRNG (mulberry32): everything random in
 * a run (ids, times, vectors, which command, which fault) comes from here, so a seed replays the run.
 */
export class Draw {
  private readonly next: () => number;

  constructor(seed: number) {
    this.next = seededRandom(seed);
  }

  float(): number {
    return this.next();
  }

  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)];
  }

  /** Up to `max` distinct elements, in a random order. */
  some<T>(xs: readonly T[], max: number): T[] {
    const copy = [...xs];
    const out: T[] = [];
    while (out.length < max && copy.length > 0) out.push(copy.splice(this.int(copy.length), 1)[0]);
    return out;
  }

  /** A lowercase UUID-shaped id (version 4 layout), as the proposer's crypto.randomUUID would give. */
  uuid(): string {
    const hex = (n: number) => Array.from({ length: n }, () => this.int(16).toString(16)).join('');
    return `${hex(8)}-${hex(4)}-4${hex(3)}-${'89ab'[this.int(4)]}${hex(3)}-${hex(12)}`;
  }

  hex(bytes: number): string {
    return Array.from({ length: bytes }, () => this.int(256).toString(16).padStart(2, '0')).join('');
  }

  /** An embedding: `dims` floats in [-1, 1). */
  vector(dims: number): number[] {
    return Array.from({ length: dims }, () => this.next() * 2 - 1);
  }
}
