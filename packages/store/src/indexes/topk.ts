/**
 * Bounded top-k selection: a min-heap of at most k entries, so selecting k of n costs O(n log k)
 * instead of sorting all n. Ties break by key (ascending) so results are deterministic.
 */
export class TopK<K extends string | number> {
  private readonly keys: K[] = [];
  private readonly scores: number[] = [];

  constructor(private readonly k: number) {}

  get size(): number {
    return this.keys.length;
  }

  /** Lowest score kept, or -Infinity while not full (anything would enter). */
  threshold(): number {
    return this.keys.length < this.k ? -Infinity : this.scores[0];
  }

  /**
   * Would `push(key, score)` keep the entry? Lets a caller skip a costly test (a filter) for an entry
   * that would not enter anyway, ties included (a score equal to the lowest kept loses to a smaller key).
   */
  admits(key: K, score: number): boolean {
    return this.k > 0 && (this.keys.length < this.k || this.worse(0, key, score));
  }

  push(key: K, score: number): void {
    if (this.k <= 0) return;
    if (this.keys.length < this.k) {
      this.keys.push(key);
      this.scores.push(score);
      this.up(this.keys.length - 1);
    } else if (this.worse(0, key, score)) {
      this.keys[0] = key;
      this.scores[0] = score;
      this.down(0);
    }
  }

  /** Entries best first. */
  sorted(): Array<{ key: K; score: number }> {
    const out = this.keys.map((key, i) => ({ key, score: this.scores[i] }));
    out.sort((a, b) => b.score - a.score || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    return out;
  }

  /** Is the entry at heap slot i worse than (key, score)? */
  private worse(i: number, key: K, score: number): boolean {
    const s = this.scores[i];
    return s < score || (s === score && this.keys[i] > key);
  }

  /** Heap order: i is worse than j (lower score, or equal score and larger key). */
  private less(i: number, j: number): boolean {
    return this.worse(i, this.keys[j], this.scores[j]);
  }

  private up(i: number): void {
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(i, p)) break;
      this.swap(i, p);
      i = p;
    }
  }

  private down(i: number): void {
    const n = this.keys.length;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < n && this.less(l, m)) m = l;
      if (r < n && this.less(r, m)) m = r;
      if (m === i) return;
      this.swap(i, m);
      i = m;
    }
  }

  private swap(i: number, j: number): void {
    [this.keys[i], this.keys[j]] = [this.keys[j], this.keys[i]];
    [this.scores[i], this.scores[j]] = [this.scores[j], this.scores[i]];
  }
}
