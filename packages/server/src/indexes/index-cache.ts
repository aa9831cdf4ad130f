/**
 * The node's budget for the per-user derived indexes (`memory.index_cache_bytes`), shared by the
 * DerivedIndexes of all its shards: a least-recently-used list of entries with their estimated sizes
 * (UnitSet.estimatedBytes). When the total goes over the budget, the least recently used entries are
 * dropped (their owner forgets them; the next retrieval of that user builds them again from LevelDB).
 *
 * The entry that caused the trim (just built, or just grown) is never its victim: a user whose indexes
 * alone exceed the budget is still served, and is the first to go when another user needs room.
 * Entries are objects (identity keys), so users of different shards never collide.
 */
export class IndexCache {
  /** insertion order is recency order: the first entry is the least recently used */
  private readonly entries = new Map<object, { bytes: number; evict: () => void }>();
  private total = 0;
  private evicted = 0;
  private admitted = 0;

  constructor(readonly maxBytes: number) {
    if (!(maxBytes >= 0)) throw new RangeError('the index cache budget must be ≥ 0 bytes');
  }

  /** Estimated bytes of every entry held. */
  get bytes(): number {
    return this.total;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Entries dropped to stay within the budget since start. */
  get evictions(): number {
    return this.evicted;
  }

  /** Entries added since start: each is a user's indexes built from LevelDB (first use, or after eviction). */
  get builds(): number {
    return this.admitted;
  }

  has(key: object): boolean {
    return this.entries.has(key);
  }

  /** Adds an entry (0 bytes until measured) or marks it the most recently used. */
  touch(key: object, evict: () => void): void {
    const e = this.entries.get(key);
    if (!e) this.admitted++;
    this.entries.delete(key);
    this.entries.set(key, e ?? { bytes: 0, evict });
  }

  /** Records an entry's new estimated size, then trims (sparing this entry). Ignored for an entry not held. */
  resize(key: object, bytes: number): void {
    const e = this.entries.get(key);
    if (!e) return;
    this.total += bytes - e.bytes;
    e.bytes = bytes;
    this.trim(key);
  }

  /** Forgets an entry without calling its evict (its owner dropped it). */
  remove(key: object): void {
    const e = this.entries.get(key);
    if (!e) return;
    this.entries.delete(key);
    this.total -= e.bytes;
  }

  private trim(spare: object): void {
    for (const [key, e] of this.entries) {
      if (this.total <= this.maxBytes) return;
      if (key === spare) continue;
      this.entries.delete(key);
      this.total -= e.bytes;
      this.evicted++;
      e.evict();
    }
  }
}
