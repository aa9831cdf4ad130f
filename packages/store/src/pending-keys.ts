/**
 * The keys of the pending backlog (`pending_by_user`), held in memory by the consolidation worker so
 * that it reads a tick's queues by key instead of walking the backlog (docs/performance.md, issue 27).
 *
 * Why: pending entries are deleted as they are consumed, and LevelDB walks the tombstones of deleted
 * keys until compaction drops them. Finding the users with pending entries (`pendingUsersFrom`, one seek
 * per user) and reading a user's entries (`pendingOfUser`) walked every consumed entry since the last
 * compaction, twice a tick: a range's `lt` bound does not stop LevelDB's skip over deleted keys, which
 * goes on to the next live key wherever it is. In a trickle that cost grew with what had been consumed.
 *
 * What this is: a hint, never state. It is built by one scan of `pending_by_user` and kept exact by the
 * apply effects (every `put` and `del` of a pending entry is a `pending` effect, on every replica, after
 * its batch is written); the users with pending entries and each one's seqs, oldest first, are then
 * known without a read, and the entries themselves are read by key. It is dropped, and built again by
 * a scan when next asked, whenever it could be wrong: a snapshot install or reset (`onRestored`), a
 * `range.*` command (a split copies and deletes entries with `move`, which are no effects), or when its
 * count disagrees with the deterministic `pending` counter. While it is absent (or the backlog is larger
 * than `maxEntries`, what it would hold in memory) reads fall back to the scans of queries.ts, which
 * answer the same. Effects that arrive while a scan runs are replayed on its result, so an entry
 * written after the scan's snapshot is not missed; an entry the hint names that is gone when read
 * (consumed meanwhile) is dropped from it. So no entry is ever skipped: a user's entries are served
 * oldest first, as the scans serve them.
 */
import { readMany, type StateDb } from './db';
import type { PendingEffect } from './effects';
import { compareKeys, join, SEP } from './keys';
import { pendingOfUser, pendingUsersFrom, type PendingItem } from './queries';
import type { StateMachine } from './state-machine';

export interface PendingQueue {
  user_id: string;
  entries: PendingItem[];
}

/** Seqs are fixed-width digits (keys.ts eventSeq): `<` orders them as LevelDB does. */
const bySeq = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** One user's pending seqs: a Set in insertion order, which is seq order but when `sorted` is false. */
interface UserSeqs {
  seqs: Set<string>;
  newest: string;
  sorted: boolean;
}

export class PendingKeys {
  private readonly byUser = new Map<string, UserSeqs>();
  /** the users with at least one pending entry, in key order (compareKeys) */
  private users: string[] = [];
  private count = 0;
  private state: 'absent' | 'building' | 'ready' = 'absent';
  /** bumped by every drop: a scan that began before it is discarded */
  private generation = 0;
  /** pending effects applied while a scan runs, replayed on its result */
  private during: PendingEffect[] = [];
  /** scans that built the hint (tests) */
  builds = 0;

  /** without a state machine to follow, nothing would keep it exact: always scan */
  private readonly followed: boolean;

  constructor(private readonly db: StateDb, sm: StateMachine | null | undefined, private readonly maxEntries = 100_000) {
    this.followed = !!sm;
    sm?.onApplied((_index, command, _result, effects) => {
      if (this.state === 'absent') return;
      if (command.type.startsWith('range.')) this.drop();
      else if (effects.pending.length === 0) return;
      else if (this.state === 'building') this.during.push(...effects.pending);
      else for (const p of effects.pending) this.note(p);
    });
    sm?.onRestored(() => this.drop());
  }

  /** Entries the hint holds now (null while it is absent). */
  size(): number | null {
    return this.state === 'ready' ? this.count : null;
  }

  /** Forgets everything; the next read scans again. */
  drop(): void {
    this.generation++;
    this.state = 'absent';
    this.byUser.clear();
    this.users = [];
    this.count = 0;
    this.during = [];
  }

  /**
   * Up to `maxUsers` users with pending entries in round-robin order after `after` (as
   * `pendingUsersFrom`), each with its oldest `limit` entries (as `pendingOfUser`).
   */
  async queues(after: string | null, maxUsers: number, limit: number): Promise<PendingQueue[]> {
    if (await this.usable()) {
      const out: PendingQueue[] = [];
      for (const user_id of this.usersFrom(after, maxUsers)) {
        const entries = await this.entriesOf(user_id, limit);
        if (entries.length > 0) out.push({ user_id, entries });
      }
      return out;
    }
    const users = await pendingUsersFrom(this.db, after, maxUsers);
    return Promise.all(users.map(async (user_id) => ({ user_id, entries: await pendingOfUser(this.db, user_id, limit) })));
  }

  /** Ready and in agreement with the `pending` counter, built first if need be; false: read by scanning. */
  private async usable(): Promise<boolean> {
    if (!this.followed) return false;
    const pending = this.db.counterSync('pending');
    if (this.state === 'ready' && this.count !== pending) this.drop();
    if (this.state === 'absent' && pending <= this.maxEntries) await this.build();
    return this.state === 'ready' && this.count === this.db.counterSync('pending');
  }

  private async build(): Promise<void> {
    const generation = ++this.generation;
    this.state = 'building';
    this.during = [];
    const seqs = new Map<string, string[]>();
    let n = 0;
    for await (const key of this.db.pendingByUser.keys()) {
      if (generation !== this.generation) return;
      if (++n > this.maxEntries) {
        this.drop();
        return;
      }
      const at = key.indexOf(SEP);
      const user = key.slice(0, at);
      const list = seqs.get(user);
      if (list) list.push(key.slice(at + 1));
      else seqs.set(user, [key.slice(at + 1)]);
    }
    if (generation !== this.generation) return;
    this.byUser.clear();
    for (const [user, list] of seqs) this.byUser.set(user, { seqs: new Set(list), newest: list[list.length - 1], sorted: true });
    this.users = [...seqs.keys()]; // in key order, the scan's
    this.count = n;
    this.state = 'ready';
    const during = this.during;
    this.during = [];
    for (const p of during) this.note(p);
    this.builds++;
  }

  private note(p: PendingEffect): void {
    if (this.state !== 'ready') return; // dropped (by an earlier change of the same command, say): nothing to keep
    const user = this.byUser.get(p.user_id);
    if (p.change === 'added') {
      if (!user) {
        this.byUser.set(p.user_id, { seqs: new Set([p.seq]), newest: p.seq, sorted: true });
        this.users.splice(this.userPosition(p.user_id), 0, p.user_id);
      } else if (user.seqs.has(p.seq)) {
        return;
      } else {
        // Entries are made with ever larger seqs (log indexes); one that is not is ordered when read.
        if (bySeq(p.seq, user.newest) < 0) user.sorted = false;
        else user.newest = p.seq;
        user.seqs.add(p.seq);
      }
      if (++this.count > this.maxEntries) this.drop();
    } else if (user?.seqs.delete(p.seq)) {
      this.count--;
      if (user.seqs.size === 0) {
        this.byUser.delete(p.user_id);
        const i = this.userPosition(p.user_id);
        if (this.users[i] === p.user_id) this.users.splice(i, 1);
      }
    }
  }

  /** Where `user` is, or would go, in `users` (binary search in key order). */
  private userPosition(user: string): number {
    let lo = 0;
    let hi = this.users.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareKeys(this.users[mid], user) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** pendingUsersFrom's order: the users after `after`, then from the start up to `after` itself. */
  private usersFrom(after: string | null, max: number): string[] {
    const n = this.users.length;
    let start = 0;
    if (after !== null) {
      start = this.userPosition(after);
      if (this.users[start] === after) start++;
    }
    const out: string[] = [];
    for (let i = 0; i < n && out.length < max; i++) out.push(this.users[(start + i) % n]);
    return out;
  }

  /** The user's oldest `limit` entries, read by key; one gone meanwhile (consumed) is dropped from the hint. */
  private async entriesOf(userId: string, limit: number): Promise<PendingItem[]> {
    const user = this.byUser.get(userId);
    if (!user) return [];
    if (!user.sorted) {
      const seqs = [...user.seqs].sort(bySeq);
      Object.assign(user, { seqs: new Set(seqs), newest: seqs[seqs.length - 1], sorted: true });
    }
    const seqs: string[] = [];
    for (const seq of user.seqs) {
      if (seqs.length >= limit) break;
      seqs.push(seq);
    }
    const values = await readMany(this.db.pendingByUser, seqs.map((seq) => join(userId, seq)));
    const out: PendingItem[] = [];
    seqs.forEach((seq, i) => {
      const entry = values[i];
      if (entry) out.push({ ...entry, seq });
      else this.note({ user_id: userId, seq, change: 'removed' });
    });
    return out;
  }
}
