/**
 * The whole records retrieval answers with (the indexes keep slim ones: retrieval-service.ts
 * `wholeRecords`), kept between queries and read again from LevelDB only after an applied command wrote
 * the unit (any unit effect, a reinforcement's included) or a snapshot install replaced the shard's state.
 *
 * Why (issue 28): every answer read its ~10 results from LevelDB and parsed their JSON (a `getSync` each),
 * 4.5% of the main thread under a query storm at 20 users × 1,000 events; the same units answer query after
 * query.
 *
 * Consistency: the listener runs after the command's batch is in LevelDB (state-machine.ts), so an entry
 * dropped by it is read again with the command's writes. A read that may have started before a command of
 * its shard was applied (an asynchronous `getMany`, more than a few keys) is answered but not kept: each
 * shard counts its invalidations, and a read is kept only if the count did not move while it ran.
 * Keys are per shard database (a unit's key names its user), so no answer reads another shard's copy.
 *
 * Bounded: least recently used records are dropped beyond `maxBytes` (an entry's weight is an estimate of
 * its record's size: a fixed overhead plus its strings' lengths).
 */
import { join, readMany, type ApplyEffects, type MemoryUnit, type StateDb } from '@strata/store';

/** Fixed weight of an entry besides its record's text (the key, the map entry, the record's other fields). */
const ENTRY_OVERHEAD = 640;

interface ShardRecords {
  /** a number per shard database, in the keys */
  tag: number;
  /** invalidations so far (a read that saw it move is not kept) */
  generation: number;
}

export class WholeRecordCache {
  /** `${tag}\u0001${user}\u0000${unit}` → the record (insertion order is recency: first is least recently used) */
  private readonly entries = new Map<string, { unit: MemoryUnit; bytes: number }>();
  private readonly shards = new WeakMap<StateDb, ShardRecords>();
  private nextTag = 0;
  private total = 0;
  private hitCount = 0;
  private missCount = 0;

  constructor(readonly maxBytes = 16 * 1024 * 1024) {}

  /**
   * Called after each command applied to `db`'s shard (state-machine listener): the units it wrote are read
   * again next time. A key range's hand-over (`range.*`: a split or merge copies and clears users' records
   * with no effects, store range-split.ts) forgets the shard's records: a user moved away and back is read anew.
   */
  onApplied(db: StateDb, effects: ApplyEffects, command?: { type: string }): void {
    if (command?.type.startsWith('range.')) return this.clear(db);
    if (effects.units.length === 0) return;
    const shard = this.shardOf(db);
    shard.generation++;
    for (const u of effects.units) this.drop(`${shard.tag}\u0001${join(u.user_id, u.unit_id)}`);
  }

  /** Forgets `db`'s records (a snapshot install replaced its state). */
  clear(db: StateDb): void {
    const shard = this.shardOf(db);
    shard.generation++;
    const prefix = `${shard.tag}\u0001`;
    for (const key of [...this.entries.keys()]) if (key.startsWith(prefix)) this.drop(key);
  }

  /** The records of `keys` (join(user, unit)) in `db`'s units, as `readMany` answers them: kept ones, the others read. */
  async read(db: StateDb, keys: readonly string[]): Promise<(MemoryUnit | undefined)[]> {
    const shard = this.shardOf(db);
    const out: (MemoryUnit | undefined)[] = new Array(keys.length);
    const missing: number[] = [];
    keys.forEach((key, i) => {
      const k = `${shard.tag}\u0001${key}`;
      const hit = this.entries.get(k);
      if (hit) {
        this.hitCount++;
        this.entries.delete(k);
        this.entries.set(k, hit);
        out[i] = hit.unit;
      } else missing.push(i);
    });
    if (missing.length === 0) return out;
    this.missCount += missing.length;
    const generation = shard.generation;
    const read = await readMany(db.units, missing.map((i) => keys[i]));
    const keep = shard.generation === generation;
    missing.forEach((i, j) => {
      out[i] = read[j];
      if (keep && read[j]) this.keep(`${shard.tag}\u0001${keys[i]}`, read[j]!);
    });
    return out;
  }

  /** Bytes held (estimated), records held, and hits and misses since start. */
  stats(): { bytes: number; records: number; hits: number; misses: number } {
    return { bytes: this.total, records: this.entries.size, hits: this.hitCount, misses: this.missCount };
  }

  private shardOf(db: StateDb): ShardRecords {
    let s = this.shards.get(db);
    if (!s) this.shards.set(db, (s = { tag: this.nextTag++, generation: 0 }));
    return s;
  }

  private keep(key: string, unit: MemoryUnit): void {
    const bytes = ENTRY_OVERHEAD + 2 * recordTextLength(unit);
    if (bytes > this.maxBytes) return;
    this.drop(key);
    this.entries.set(key, { unit, bytes });
    this.total += bytes;
    for (const [k, e] of this.entries) {
      if (this.total <= this.maxBytes) break;
      this.entries.delete(k);
      this.total -= e.bytes;
    }
  }

  private drop(key: string): void {
    const e = this.entries.get(key);
    if (!e) return;
    this.entries.delete(key);
    this.total -= e.bytes;
  }
}

/** The characters of a record's strings that grow with it: its content, keywords, references and assets. */
function recordTextLength(unit: MemoryUnit): number {
  let n = unit.content.length;
  for (const k of unit.keywords) n += k.length + 16;
  for (const r of unit.references) n += r.length + 16;
  n += 256 * unit.assets.length;
  return n;
}
