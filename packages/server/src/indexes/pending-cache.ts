/**
 * Each user's most recent pending events (those retrieval searches raw, include_pending), kept between
 * queries and read again from LevelDB only after an applied command added or removed one of that user's
 * pending entries (the `pending` apply effects).
 *
 * Why (issue 28): reading them cost every query a reverse LevelDB iteration over the user's pending
 * index, and once a user's backlog is consolidated that index is a range of deleted keys the iterator
 * walks one by one until LevelDB compacts them away: on a node right after a drain, this read was most
 * of a query's server time (mean 30-75 ms of 45-110 ms on the busy 2-core machine, 20 users).
 *
 * Consistency: a read that started before an invalidation of its user is not kept (it may predate the
 * command), though it is still returned to its caller, as a read of LevelDB at that time would be. The
 * listener runs after the command's batch is in LevelDB (state-machine.ts), so a read started after an
 * invalidation sees the command. A snapshot install clears everything.
 *
 * Bounded: least recently used users are dropped beyond `maxBytes` (an entry's weight is a fixed
 * overhead plus its events' content length), so a node with many users with backlogs holds at most that.
 */
import type { ApplyEffects, EventRecord } from '@strata/store';

/** Fixed weight of an entry besides its events' content (the key, the list, the records' other fields). */
const ENTRY_OVERHEAD = 256;
const EVENT_OVERHEAD = 512;

export class PendingEventsCache {
  /** user id → its pending events as last read (insertion order is recency: first is least recently used) */
  private readonly entries = new Map<string, { events: EventRecord[]; bytes: number }>();
  /** reads in flight per user; an invalidation marks them not to be kept */
  private readonly reading = new Map<string, Set<{ stale: boolean }>>();
  private total = 0;
  private hitCount = 0;
  private missCount = 0;

  constructor(readonly maxBytes = 16 * 1024 * 1024) {}

  /** Called after each applied command (state-machine listener): users whose pending entries changed are read again next time. */
  onApplied(effects: ApplyEffects): void {
    for (const p of effects.pending) this.invalidate(p.user_id);
  }

  /** Forgets everything (a snapshot install replaced the state). */
  clear(): void {
    this.entries.clear();
    this.total = 0;
    for (const tokens of this.reading.values()) for (const t of tokens) t.stale = true;
  }

  invalidate(userId: string): void {
    const e = this.entries.get(userId);
    if (e) {
      this.entries.delete(userId);
      this.total -= e.bytes;
    }
    for (const t of this.reading.get(userId) ?? []) t.stale = true;
  }

  /** The user's pending events: kept ones, or `read`'s (kept unless invalidated meanwhile). */
  async get(userId: string, read: () => Promise<EventRecord[]>): Promise<EventRecord[]> {
    const hit = this.entries.get(userId);
    if (hit) {
      this.hitCount++;
      this.entries.delete(userId);
      this.entries.set(userId, hit);
      return hit.events;
    }
    this.missCount++;
    const token = { stale: false };
    let tokens = this.reading.get(userId);
    if (!tokens) this.reading.set(userId, (tokens = new Set()));
    tokens.add(token);
    try {
      const events = await read();
      if (!token.stale) this.keep(userId, events);
      return events;
    } finally {
      tokens.delete(token);
      if (tokens.size === 0 && this.reading.get(userId) === tokens) this.reading.delete(userId);
    }
  }

  /** Bytes held (estimated), users held, and hits and misses since start. */
  stats(): { bytes: number; users: number; hits: number; misses: number } {
    return { bytes: this.total, users: this.entries.size, hits: this.hitCount, misses: this.missCount };
  }

  private keep(userId: string, events: EventRecord[]): void {
    const bytes = ENTRY_OVERHEAD + events.reduce((n, e) => n + EVENT_OVERHEAD + e.content.length * 2, 0);
    if (bytes > this.maxBytes) return;
    const before = this.entries.get(userId); // a concurrent read of the same state kept it first
    if (before) {
      this.entries.delete(userId);
      this.total -= before.bytes;
    }
    this.entries.set(userId, { events, bytes });
    this.total += bytes;
    for (const [id, e] of this.entries) {
      if (this.total <= this.maxBytes) break;
      this.entries.delete(id);
      this.total -= e.bytes;
    }
  }
}
