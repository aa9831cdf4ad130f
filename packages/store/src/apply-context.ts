import { readMany, type Sub } from './db';
import type { TrackedKind, TrackedWrite } from './effects';

const DELETED = Symbol('deleted');

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Op = { type: 'put'; sublevel: Sub<any>; key: string; value: unknown } | { type: 'del'; sublevel: Sub<any>; key: string };

/**
 * One point read, synchronous: apply reads one record at a time and waits for each anyway, and a
 * read answered from LevelDB's memtable or block cache costs microseconds where an asynchronous one
 * costs a thread-pool round trip (most of a small command's apply time, docs/performance.md).
 */
function readOne<V>(sub: Sub<V>, key: string): V | undefined {
  return sub.getSync(key);
}

/**
 * A few meta keys that every command's apply reads and almost no command writes (the split fences, the
 * live webhook count), as LevelDB holds them: kept by the StateMachine between commands, each dropped
 * when a batch writes it and all on a restore, so a read is a map lookup instead of a LevelDB miss per
 * command (~17 µs of each replica's apply of an ingest, docs/performance.md, issue 27). The values
 * are shared: handlers copy them, never change them.
 */
export interface StableReads {
  sub: Sub<unknown>;
  keys: ReadonlySet<string>;
  values: Map<string, unknown>;
}

/** `key` of `sub` as LevelDB holds it: from the stable reads when it is one of theirs. */
export function readStable<V>(stable: StableReads | null, sub: Sub<V>, key: string): V | undefined {
  if (!stable || (sub as Sub<unknown>) !== stable.sub || !stable.keys.has(key)) return readOne(sub, key);
  if (!stable.values.has(key)) stable.values.set(key, readOne(sub, key));
  return stable.values.get(key) as V | undefined;
}

/**
 * Writes of the earlier commands of one apply batch, not yet in LevelDB (state-machine.ts applies a
 * run of commands and writes them in one LevelDB batch). A later command of the batch reads them
 * before LevelDB, so each command sees exactly the state its predecessors left, as if applied alone.
 */
export class PendingWrites {
  readonly ops: Op[] = [];
  private readonly values = new Map<Sub<unknown>, Map<string, unknown>>();
  /** ops a later op of the same key replaced (what LevelDB would overwrite within the batch) */
  private superseded = 0;
  /** sublevel → key → position in `ops` of its last op */
  private readonly lastOp = new Map<Sub<unknown>, Map<string, number>>();

  /** `found` false: nothing of the batch wrote the key (read LevelDB); otherwise its value (undefined: deleted). */
  lookup(sub: Sub<unknown>, key: string): { found: boolean; value: unknown } {
    const v = this.values.get(sub)?.get(key);
    if (v === undefined) return { found: false, value: undefined };
    return { found: true, value: v === DELETED ? undefined : v };
  }

  /** Point reads of many keys: the batch's writes first, the rest in one LevelDB getMany. */
  async getMany<V>(sub: Sub<V>, keys: string[]): Promise<(V | undefined)[]> {
    const out: (V | undefined)[] = new Array(keys.length);
    const misses: number[] = [];
    keys.forEach((k, i) => {
      const hit = this.lookup(sub as Sub<unknown>, k);
      if (hit.found) out[i] = hit.value as V | undefined;
      else misses.push(i);
    });
    if (misses.length === 1) out[misses[0]] = readOne(sub, keys[misses[0]]);
    else if (misses.length) {
      const got = await readMany(sub, misses.map((i) => keys[i]));
      misses.forEach((i, j) => (out[i] = got[j]));
    }
    return out;
  }

  /** Takes a command's writes into the batch, after it was applied. */
  absorb(ops: readonly Op[]): void {
    for (const op of ops) {
      let m = this.values.get(op.sublevel);
      if (!m) this.values.set(op.sublevel, (m = new Map()));
      m.set(op.key, op.type === 'put' ? op.value : DELETED);
      let last = this.lastOp.get(op.sublevel);
      if (!last) this.lastOp.set(op.sublevel, (last = new Map()));
      if (last.has(op.key)) this.superseded++;
      last.set(op.key, this.ops.length);
      this.ops.push(op);
    }
  }

  /**
   * The batch to write: each key's last op only. Within one LevelDB batch a later op of a key replaces
   * an earlier one, so the state written is the same; the counters (`ApplyContext.increment`), which
   * every command of a run and every user batch of `memory.consolidate_users` writes again, were a
   * fifth of the ops of a live trickle's batches (docs/performance.md, issue 27).
   */
  finalOps(): Op[] {
    if (this.superseded === 0) return this.ops;
    return this.ops.filter((op, i) => this.lastOp.get(op.sublevel)!.get(op.key) === i);
  }
}

/**
 * What one command's apply reads and writes. Writes are collected into one batch (written atomically
 * with the applied index); reads see the command's own earlier writes, so a handler can treat the
 * context as the state after its own changes.
 */
export class ApplyContext {
  readonly ops: Op[] = [];
  // sublevel → key → value written by this command
  private readonly overlay = new Map<Sub<unknown>, Map<string, unknown>>();
  // sublevel → key → value read ahead (`prefetch`); nothing else writes the state during an apply, so it stays true
  private readonly fetched = new Map<Sub<unknown>, Map<string, unknown>>();
  /** writes to record sublevels, in order: what the command's effects are made from (effects.ts) */
  readonly tracked: TrackedWrite[] = [];

  constructor(
    /** log index of the command being applied */
    readonly index: number,
    /** the record sublevels whose writes are effects (none: effects are not collected) */
    private readonly tracking: ReadonlyMap<Sub<unknown>, TrackedKind> = new Map(),
    /** writes of the earlier commands of the same apply batch, read before LevelDB */
    private readonly pending: PendingWrites | null = null,
    /** meta keys kept between commands (StableReads) */
    private readonly stable: StableReads | null = null,
  ) {}

  async get<V>(sub: Sub<V>, key: string): Promise<V | undefined> {
    const written = this.overlay.get(sub as Sub<unknown>)?.get(key);
    if (written === DELETED) return undefined;
    if (written !== undefined) return written as V;
    if (this.pending) {
      const hit = this.pending.lookup(sub as Sub<unknown>, key);
      if (hit.found) return hit.value as V | undefined;
    }
    let fetched = this.fetched.get(sub as Sub<unknown>);
    if (fetched?.has(key)) return fetched.get(key) as V | undefined;
    const value = readStable(this.stable, sub, key);
    // kept as read: the state before the command, what its effects are resolved against (`before`)
    if (!fetched) this.fetched.set(sub as Sub<unknown>, (fetched = new Map()));
    fetched.set(key, value);
    return value;
  }

  /**
   * These keys as they were before the command (its own writes not seen): from what the command read
   * already (prefetched, or got from LevelDB), the rest from the batch's earlier writes or LevelDB. What
   * the effects are resolved against (effects.ts): a consolidation's units and edges were all read by
   * its checks, and were read a second time there.
   */
  async before<V>(sub: Sub<V>, keys: string[]): Promise<(V | undefined)[]> {
    const fetched = this.fetched.get(sub as Sub<unknown>);
    const out: (V | undefined)[] = new Array(keys.length);
    const misses: number[] = [];
    keys.forEach((k, i) => {
      if (fetched?.has(k)) out[i] = fetched.get(k) as V | undefined;
      else misses.push(i);
    });
    if (misses.length > 0) {
      const missing = misses.map((i) => keys[i]);
      const got = this.pending ? await this.pending.getMany(sub, missing) : await readMany(sub, missing);
      misses.forEach((i, j) => (out[i] = got[j]));
    }
    return out;
  }

  /**
   * Reads these keys in one `getMany`, so the `get`s that follow cost no LevelDB round trip each (a
   * command naming hundreds of records, like a consolidation batch, would otherwise wait on each in turn).
   */
  async prefetch<V>(sub: Sub<V>, keys: Iterable<string>): Promise<void> {
    let m = this.fetched.get(sub as Sub<unknown>);
    if (!m) this.fetched.set(sub as Sub<unknown>, (m = new Map()));
    const todo = [...new Set(keys)].filter((k) => !m!.has(k));
    if (todo.length === 0) return;
    const values = this.pending ? await this.pending.getMany(sub, todo) : await readMany(sub, todo);
    todo.forEach((k, i) => m!.set(k, values[i]));
  }

  put<V>(sub: Sub<V>, key: string, value: V): void {
    this.ops.push({ type: 'put', sublevel: sub, key, value });
    this.remember(sub as Sub<unknown>, key, value);
    const kind = this.tracking.get(sub as Sub<unknown>);
    if (kind) this.tracked.push({ kind, key, value });
  }

  /**
   * A write that is no change of the data, only of where it is kept (a split's copy and drop,
   * range-split.ts): not an effect (no webhook, no asset reference counted again, no index update).
   */
  move<V>(sub: Sub<V>, key: string, value: V | undefined): void {
    this.ops.push(value === undefined ? { type: 'del', sublevel: sub, key } : { type: 'put', sublevel: sub, key, value });
    this.remember(sub as Sub<unknown>, key, value === undefined ? DELETED : value);
  }

  del<V>(sub: Sub<V>, key: string): void {
    this.ops.push({ type: 'del', sublevel: sub, key });
    this.remember(sub as Sub<unknown>, key, DELETED);
    const kind = this.tracking.get(sub as Sub<unknown>);
    if (kind) this.tracked.push({ kind, key, value: undefined });
  }

  /** Adds `delta` to a counter kept in the meta sublevel. */
  async increment(meta: Sub<unknown>, name: string, delta: number): Promise<void> {
    const key = `counter\x00${name}`;
    const current = ((await this.get(meta, key)) as number | undefined) ?? 0;
    this.put(meta, key, current + delta);
  }

  private remember(sub: Sub<unknown>, key: string, value: unknown): void {
    let m = this.overlay.get(sub);
    if (!m) this.overlay.set(sub, (m = new Map()));
    m.set(key, value);
  }
}
