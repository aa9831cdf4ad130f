/**
 * The derived indexes of one shard (ARCHITECTURE.md: "rebuilt from LevelDB when stale, never the source
 * of truth"): per user a BM25 text index, a vector index, the graph adjacency, the units by stream and
 * the perceptual hashes of image assets; per organization the same over the org's units of every user
 * of the shard.
 *
 * - Bounded: the users' indexes held are a least-recently-used cache within the node's byte budget
 *   (`memory.index_cache_bytes`, index-cache.ts); an evicted user is built again from LevelDB on next
 *   use. A user with no memory gets no entry at all: its retrieval reads one key and answers from a
 *   shared empty index, so retrievals for ids that hold nothing (typos, probes, 50,000 made-up users)
 *   cost no memory (docs/security.md, "Memory bounds").
 * - Built lazily: a user's indexes on the first retrieval for that user, the organizations' on the
 *   first retrieval with an `org_id` (one scan of the shard's units). Figures (scripts/bench-retrieval-http.ts):
 *   a user with 20,000 units builds in 0.8 s while /livez answers within 36 ms at worst (text index
 *   filled in chunks, HNSW in a worker), so an eager build of every user at start would only cost
 *   memory for users nobody asks about.
 * - Kept current by a state-machine listener: after each applied command, the units and edges it names
 *   (changes.ts) are read again from LevelDB, in order, per user. A read awaits the user's queue, so it
 *   sees every command applied before it started (read-your-writes after an acknowledged write).
 * - Retired units stay in the indexes (as_of needs them); the retrieval filter hides them. A unit gone
 *   from LevelDB (hard-deleted) is removed from every index.
 * - Vectors made by another embedder than the node's (a changed `[embedding]` configuration) are not
 *   comparable with the query's: those units are embedded again with the node's embedder while the
 *   index is built (a derived copy; the stored vectors are left as they are).
 */
import type { Logger } from 'pino';
import { retrieval, type Embedder } from '@strata/memory';
import {
  decodeVector, join, orgUnitsOf, prefixRange, type ApplyEffects, type Edge, type MemoryUnit, type StateDb, type StateMachine, type StoredVector, type UnitStats,
} from '@strata/store';
import { memoryChangesOf, type MemoryChange } from './changes';
import { IndexCache } from './index-cache';
import type { IndexWorker } from './worker/index-worker';
import { RemoteUserIndex } from './worker/remote-index';

const { UnitSet, UserIndex, warmTraits, withStats } = retrieval;
type UnitSet = retrieval.UnitSet;
type UserIndex = retrieval.UserIndex;
type IndexEntry = retrieval.IndexEntry;
type IndexedUnit = retrieval.IndexedUnit;
type SourceContext = retrieval.SourceContext;

export interface DerivedIndexesOptions extends retrieval.UnitSetOptions {
  db: StateDb;
  embedder: Embedder;
  logger: Logger;
  /**
   * Index an L1 unit also by the text of the event it was made from (default true), and by the events
   * before it in its stream (default true, `previousTurns` of them): see `sourceContext`.
   */
  sourceText?: boolean;
  previousTurn?: boolean;
  /**
   * How many events before it (default 2). LoCoMo dev, L1-evidence recall@10: 1 → 0.738, 2 → 0.768,
   * 3 → 0.764 (docs/retrieval-tuning.md): an answer often replies to a question asked two turns up
   * ("How was the meteor shower?" / "breathtaking!" / "I felt tiny and in awe").
   */
  previousTurns?: number;
  /** the node's budget for users' indexes, shared by its shards (default: unbounded) */
  cache?: IndexCache;
  /**
   * The thread that holds the large users' indexes and answers their queries (worker/), shared by the
   * node's shards; absent: every index is held on the main thread.
   */
  worker?: IndexWorker;
  /**
   * Units from which a user's indexes are held by `worker` (decided at each build; default 50,000).
   * Below it a query's ranking fits in a turn of the event loop (loop-turns.ts, 8 ms): at 20,000 units
   * (~3-5 ms of CPU a query) the worker made the worst /livez worse (a second busy thread on two cores),
   * at 100,000 (~12-16 ms) it bounded it (docs/performance.md, "Third round").
   */
  workerMinUnits?: number;
}

/**
 * Users of up to this many units have what queries read of every record computed once their indexes are
 * built, in slices between which the event loop turns, and each record a refresh puts at once
 * (`warmTraits`): under a query storm at 20 users × 1,000 events, a query paid ~1.5 ms for the records it
 * was the first to touch (facets, stems). Above it the traits stay computed on first use: at 100,000 units
 * they would be ~100 MiB of heap, most of it for records no query reads.
 */
export const WARM_TRAITS_MAX_UNITS = 10_000;
/** records warmed between turns of the event loop */
const WARM_SLICE = 200;

/** A user's indexes: on the main thread, or held by the index worker (large users). */
export type HeldIndex = UserIndex | RemoteUserIndex;

interface UserEntry {
  userId: string;
  index: HeldIndex;
  /** the build, then every refresh, in order */
  chain: Promise<void>;
  stale: boolean;
}

/** How many memory units the user holds (a scan of keys: where a build puts the user is decided before its records are read). */
async function countUnits(db: StateDb, userId: string): Promise<number> {
  let n = 0;
  for await (const _key of db.units.keys(prefixRange(userId))) n++;
  return n;
}

/** Whether the user holds any memory unit (edges and stats need units): one key read. */
async function hasUnits(db: StateDb, userId: string): Promise<boolean> {
  for await (const _key of db.units.keys({ ...prefixRange(userId), limit: 1 })) return true;
  return false;
}

/** Per-shard manager of the derived indexes; `attach` it to the shard's state machine. */
export class DerivedIndexes {
  private readonly users = new Map<string, UserEntry>();
  private orgs: Map<string, UnitSet> | null = null;
  /** unit id → its org, for units in an org set */
  private readonly unitOrg = new Map<string, string>();
  private orgChain: Promise<void> | null = null;
  private orgStale = false;
  private readonly db: StateDb;
  private readonly embedder: Embedder;
  private readonly logger: Logger;
  private readonly chunk: number;
  private readonly cache: IndexCache;
  /** entries refreshed since last measured (measured together, once per turn of the event loop) */
  private readonly unmeasured = new Set<UserEntry>();
  private measureScheduled = false;
  /** what a user with no memory is answered from: never written to, never cached */
  private emptyIndex: UserIndex | null = null;

  constructor(private readonly options: DerivedIndexesOptions) {
    this.db = options.db;
    this.embedder = options.embedder;
    this.logger = options.logger;
    this.chunk = options.chunk ?? 500;
    this.cache = options.cache ?? new IndexCache(Infinity);
  }

  attach(sm: StateMachine): void {
    sm.onApplied((_index, _command, _result, effects) => this.onApplied(effects));
  }

  /** Called after each applied command (synchronously: the order of calls is the log order). */
  onApplied(effects: ApplyEffects): void {
    for (const change of memoryChangesOf(effects)) this.onChange(change);
  }

  private onChange(change: MemoryChange): void {
    const entry = this.users.get(change.user_id);
    if (entry) {
      entry.chain = entry.chain.then(async () => {
        await this.refreshUser(entry, change);
        this.remeasureSoon(entry);
      });
      entry.chain = entry.chain.catch((err) => this.markStale(entry, err));
    }
    if (this.orgChain) {
      this.orgChain = this.orgChain
        .then(() => this.refreshOrgs(change))
        .catch((err) => {
          this.orgStale = true;
          this.logger.error({ err }, 'organization index refresh failed; rebuilding on next use');
        });
    }
  }

  /**
   * The user's indexes, built if needed and current with every command applied before the call. A user
   * with no memory gets an empty index and no entry (a command applied before the call is in LevelDB,
   * so the probe sees it; one applied during the call may or may not be seen, as with any read).
   */
  async forUser(userId: string): Promise<HeldIndex> {
    let entry = this.users.get(userId);
    if (!entry) {
      const known = await hasUnits(this.db, userId);
      entry = this.users.get(userId); // another call may have built it meanwhile
      if (!entry && !known) return (this.emptyIndex ??= new UserIndex(this.options));
    }
    if (!entry) {
      const fresh: UserEntry = { userId, index: new UserIndex(this.options), chain: Promise.resolve(), stale: false };
      // In the map before the build starts: commands applied from now on queue behind the build.
      this.users.set(userId, fresh);
      this.cache.touch(fresh, () => this.drop(userId, fresh));
      fresh.chain = this.buildUser(userId, fresh).then(() => {
        this.measured(userId, fresh);
        this.warmSoon(fresh);
      });
      entry = fresh;
    } else if (entry.stale || (entry.index instanceof RemoteUserIndex && entry.index.lost)) {
      const e = entry;
      e.stale = false;
      e.chain = e.chain.then(() => this.buildUser(userId, e)).then(() => {
        this.measured(userId, e);
        this.warmSoon(e);
      });
    }
    const e = entry;
    if (this.users.get(userId) === e) this.cache.touch(e, () => this.drop(userId, e));
    await e.chain.catch((err) => {
      this.markStale(e, err);
      throw err;
    });
    return e.index;
  }

  /** The user's indexes as forUser gives them, when they are held on the main thread (tests: they read the structures). */
  async localIndex(userId: string): Promise<UserIndex> {
    const index = await this.forUser(userId);
    if (index instanceof RemoteUserIndex) throw new Error(`the indexes of ${userId} are held by the index worker`);
    return index;
  }

  /** Forgets a user's entry (evicted, or left without memory); readers holding its index keep using it. */
  private drop(userId: string, entry: UserEntry): void {
    if (this.users.get(userId) === entry) this.users.delete(userId);
    if (entry.index instanceof RemoteUserIndex) {
      // Given up in the worker once its build or refresh in progress is done and the readers waiting for
      // it have sent their queries (they resume in microtasks; a query sent before the drop is answered):
      // at once, a user evicted while it was built answered its waiting readers "gone".
      const index = entry.index;
      void entry.chain.catch(() => undefined).then(() => setImmediate(() => index.drop()));
    }
    this.cache.remove(entry);
    this.unmeasured.delete(entry);
  }

  /** After a build or refresh: the entry's size goes to the budget (which may evict others); an empty user is dropped. */
  private measured(userId: string, entry: UserEntry): void {
    if (this.users.get(userId) !== entry) return;
    if (entry.index.size === 0 && entry.index.edgeCount === 0) this.drop(userId, entry);
    else this.cache.resize(entry, entry.index.estimatedBytes());
  }

  /**
   * After a build of a small user on this thread: every record's traits computed in the background, off
   * the queries (WARM_TRAITS_MAX_UNITS). Stops when the entry is given up or built again meanwhile.
   */
  private warmSoon(entry: UserEntry): void {
    const index = entry.index;
    if (index instanceof RemoteUserIndex || index.size > WARM_TRAITS_MAX_UNITS) return;
    const records = [...index.units.values()];
    let next = 0;
    const slice = () => {
      if (this.users.get(entry.userId) !== entry || entry.index !== index) return;
      for (const end = Math.min(records.length, next + WARM_SLICE); next < end; next++) warmTraits(records[next]);
      if (next < records.length) setImmediate(slice);
    };
    setImmediate(slice);
  }

  /** After a refresh: measured with the others refreshed in the same turn (a walk of the index each). */
  private remeasureSoon(entry: UserEntry): void {
    this.unmeasured.add(entry);
    if (this.measureScheduled) return;
    this.measureScheduled = true;
    setImmediate(() => {
      this.measureScheduled = false;
      const entries = [...this.unmeasured];
      this.unmeasured.clear();
      for (const e of entries) {
        if (this.cache.has(e)) this.measured(e.userId, e);
      }
    });
  }

  /** The organization's knowledge on this shard (undefined when it has none), current like forUser. */
  async forOrg(orgId: string): Promise<UnitSet | undefined> {
    if (!this.orgChain || this.orgStale) {
      this.orgStale = false;
      this.orgChain = (this.orgChain ?? Promise.resolve()).then(() => this.buildOrgs());
    }
    await this.orgChain;
    if (this.orgStale) throw new Error('organization index build failed');
    return this.orgs?.get(orgId);
  }

  /** For metrics and benchmarks. */
  stats(): { users: number; units: number; orgs: number; org_units: number } {
    let units = 0;
    for (const e of this.users.values()) units += e.index.size;
    let orgUnits = 0;
    for (const s of this.orgs?.values() ?? []) orgUnits += s.size;
    return { users: this.users.size, units, orgs: this.orgs?.size ?? 0, org_units: orgUnits };
  }

  /** Gives every user's entry up (this manager is being replaced, e.g. after a snapshot install). */
  release(): void {
    for (const [userId, entry] of [...this.users]) this.drop(userId, entry);
  }

  /** Users whose vector graph is being built (search is exact until it is live): a gauge, and what benchmarks wait for. */
  graphsBuilding(): number {
    let n = 0;
    for (const e of this.users.values()) if (e.index instanceof RemoteUserIndex ? e.index.building : e.index.vector.mode === 'building') n++;
    return n;
  }

  /** Whether a user's indexes are held (tests). */
  holds(userId: string): boolean {
    return this.users.has(userId);
  }

  /** The record the user's indexes hold for a unit, if they are held on the main thread (tests). */
  heldRecord(userId: string, unitId: string): retrieval.IndexedRecord | undefined {
    const index = this.users.get(userId)?.index;
    return index instanceof RemoteUserIndex ? undefined : index?.units.get(unitId);
  }

  /** Whether a user's indexes are held by the index worker (tests, metrics). */
  inWorker(userId: string): boolean {
    return this.users.get(userId)?.index instanceof RemoteUserIndex;
  }

  /** Resolves when every queued build and refresh is done (tests, benchmarks, clean stop). */
  async idle(): Promise<void> {
    await Promise.all([...this.users.values()].map((e) => e.chain.catch(() => undefined)));
    await this.orgChain?.catch(() => undefined);
  }

  /** Resolves when, besides `idle`, every held user's vector graph build is done (benchmarks, tests). */
  async settled(): Promise<void> {
    await this.idle();
    await Promise.all([...this.users.values()].map((e) => (e.index instanceof RemoteUserIndex ? e.index.whenIdle() : e.index.vector.whenIdle())));
  }

  private markStale(entry: UserEntry, err: unknown): void {
    if (entry.stale) return;
    entry.stale = true;
    this.logger.error({ err }, 'derived index update failed; the user is rebuilt on next use');
  }

  private async buildUser(userId: string, entry: UserEntry): Promise<void> {
    const started = performance.now();
    const stats = new Map<string, UnitStats>();
    for await (const [key, s] of this.db.unitStats.iterator(prefixRange(userId))) stats.set(key.slice(userId.length + 1), s);
    this.placeIndex(entry, this.options.worker ? await countUnits(this.db, userId) : 0);
    if (entry.index instanceof RemoteUserIndex) {
      const built = await this.streamUser(userId, entry.index, stats);
      entry.stale = false;
      if (built.units >= 1000) this.logger.info({ ...built, ms: Math.round(performance.now() - started), worker: true }, 'user indexes built');
      return;
    }
    const units: MemoryUnit[] = [];
    let n = 0;
    for await (const unit of this.db.units.values(prefixRange(userId))) {
      units.push(withStats(unit, stats.get(unit.id)));
      if (++n % this.chunk === 0) await yieldToLoop();
    }
    const entries = await this.withVectors(userId, units);
    const edges: Edge[] = [];
    for await (const edge of this.db.edges.values(prefixRange(userId))) edges.push(edge);
    await entry.index.load(entries);
    entry.index.loadEdges(edges);
    entry.stale = false;
    const ms = performance.now() - started;
    if (units.length >= 1000) this.logger.info({ units: units.length, edges: edges.length, ms: Math.round(ms) }, 'user indexes built');
  }

  /**
   * A worker user's build: its units read, completed (vectors, contexts) and sent in parts of `chunk`,
   * so the event loop's heap holds one part at a time, not the whole user (at 100,000 units that room
   * stayed in the main thread's RSS after the build).
   */
  private async streamUser(userId: string, index: RemoteUserIndex, stats: Map<string, UnitStats>): Promise<{ units: number; edges: number }> {
    index.begin();
    let part: MemoryUnit[] = [];
    let units = 0;
    const send = async () => {
      index.append(await this.entriesOf(userId, part));
      part = [];
      await yieldToLoop();
    };
    for await (const unit of this.db.units.values(prefixRange(userId))) {
      part.push(withStats(unit, stats.get(unit.id)));
      units++;
      if (part.length >= this.chunk) await send();
    }
    if (part.length > 0) await send();
    const edges: Edge[] = [];
    for await (const edge of this.db.edges.values(prefixRange(userId))) edges.push(edge);
    index.finish();
    index.loadEdges(edges);
    return { units, edges: edges.length };
  }

  /** Units of one user with their stored vectors (the node's embedder's, else embedded again) and source contexts. */
  private async entriesOf(userId: string, units: MemoryUnit[]): Promise<IndexEntry[]> {
    const stored = await this.db.vectors.getMany(units.map((u) => join(userId, u.id)));
    const out: IndexEntry[] = [];
    for (const [i, unit] of units.entries()) out.push({ unit, vector: this.usableVector(stored[i]), context: await this.sourceContext(unit) });
    const missing = out.filter((e) => !e.vector);
    if (missing.length > 0) await this.embedInto(missing);
    return out;
  }

  /** A stored vector as the indexes take it, when the node's embedder made it (else null: embedded again). */
  private usableVector(v: StoredVector | undefined | null): Float32Array | null {
    return v && v.embedder_id === this.embedder.id && v.dims === this.embedder.dimensions ? decodeVector(v) : null;
  }

  /**
   * Where a build puts the user's indexes: in the worker from `workerMinUnits` units, else here. Decided
   * at each build (a user that grows past it moves at its next build: eviction, restart, a failed refresh).
   */
  private placeIndex(entry: UserEntry, units: number): void {
    const { worker } = this.options;
    // An entry given up while it was read (evicted to make room for another) is built for the readers
    // waiting for it only, here: nothing would ever give its copy in the worker up.
    const held = this.users.get(entry.userId) === entry;
    const remote = worker !== undefined && held && units >= (this.options.workerMinUnits ?? 50_000);
    if (remote === entry.index instanceof RemoteUserIndex && !(entry.index instanceof RemoteUserIndex && entry.index.lost)) return;
    if (entry.index instanceof RemoteUserIndex) entry.index.drop();
    entry.index = remote
      ? new RemoteUserIndex(worker, this.embedder.dimensions, () => this.cache.has(entry) && this.remeasureSoon(entry), () => this.markStale(entry, new Error('index worker lost the index')))
      : new UserIndex(this.options);
  }

  /** Each unit with its vector: the stored one when the node's embedder made it, else embedded again. */
  private async withVectors(userId: string, units: MemoryUnit[]): Promise<IndexEntry[]> {
    const stored = new Map<string, Float32Array>();
    let n = 0;
    for await (const [key, v] of this.db.vectors.iterator(prefixRange(userId))) {
      const vector = this.usableVector(v);
      if (vector) stored.set(key.slice(userId.length + 1), vector);
      if (++n % this.chunk === 0) await yieldToLoop();
    }
    const out: IndexEntry[] = units.map((unit) => ({ unit, vector: stored.get(unit.id) ?? null, context: null }));
    for (let i = 0; i < out.length; i++) {
      out[i].context = await this.sourceContext(out[i].unit);
      if ((i + 1) % this.chunk === 0) await yieldToLoop();
    }
    const missing = out.filter((e) => !e.vector);
    if (missing.length > 0) {
      this.logger.info({ user_id: userId, units: missing.length, embedder: this.embedder.id }, 'embedding units whose stored vectors are of another embedder');
      await this.embedInto(missing);
    }
    return out;
  }

  /** The source event's text and the ones before it in the stream (L1 units made from text events). */
  private sourceContext(unit: MemoryUnit): Promise<SourceContext | null> {
    return sourceContextOf(this.db, unit, this.options);
  }

  /**
   * A unit set over entries read elsewhere (the org units of a shard group another node holds,
   * cluster/read-queries.ts `orgIndexEntries`), built with this manager's options so it ranks like the
   * sets built here; entries without a usable vector are embedded with the node's embedder.
   */
  async unitSetOf(entries: IndexEntry[]): Promise<UnitSet> {
    await this.embedInto(entries.filter((e) => !e.vector));
    // whole records: they cannot be read again here when a result is answered
    const set = new UnitSet({ ...this.options, wholeRecords: true });
    await set.load(entries);
    return set;
  }

  /** Embeds, with the node's embedder, the entries that have no usable vector (in place). */
  async embedInto(entries: IndexEntry[]): Promise<void> {
    for (let i = 0; i < entries.length; i += 256) {
      const batch = entries.slice(i, i + 256);
      try {
        const vectors = await this.embedder.embed(batch.map((e) => e.unit.content));
        batch.forEach((e, j) => (e.vector = vectors[j] ?? null));
      } catch (err) {
        // Text search still finds these units; the vector list just misses them until the next build.
        this.logger.warn({ err, units: batch.length }, 'embedding units for the vector index failed');
      }
      await yieldToLoop();
    }
  }

  /** The unit's record with its retrieval stats, as the indexes hold it; undefined when gone. */
  private async indexedUnit(userId: string, unitId: string): Promise<IndexedUnit | undefined> {
    const unit = await this.db.units.get(join(userId, unitId));
    return unit ? withStats(unit, await this.db.unitStats.get(join(userId, unitId))) : undefined;
  }

  /** `indexedUnit` for many ids of one user, in one getMany per sublevel. */
  private async indexedUnits(userId: string, unitIds: readonly string[]): Promise<(IndexedUnit | undefined)[]> {
    const keys = unitIds.map((id) => join(userId, id));
    const [units, stats] = await Promise.all([this.db.units.getMany(keys), this.db.unitStats.getMany(keys)]);
    return units.map((unit, i) => (unit ? withStats(unit, stats[i]) : undefined));
  }

  private async unitWithVector(userId: string, unitId: string): Promise<IndexEntry | null> {
    const unit = await this.indexedUnit(userId, unitId);
    if (!unit) return null;
    const context = await this.sourceContext(unit);
    const vector = this.usableVector(await this.db.vectors.get(join(userId, unitId)));
    if (vector) return { unit, vector, context };
    const entry: IndexEntry = { unit, vector: null, context };
    await this.embedInto([entry]);
    return entry;
  }

  private async refreshUser(entry: UserEntry, change: MemoryChange): Promise<void> {
    let ids = change.unit_ids;
    if (change.records_only) {
      // a reinforcement names hundreds of units: their records in two reads, not two awaited reads each
      const units = await this.indexedUnits(change.user_id, ids);
      ids = ids.filter((_id, i) => !(units[i] && entry.index.replaceRecord(units[i])));
    }
    for (const id of ids) {
      const found = await this.unitWithVector(change.user_id, id);
      if (found) {
        entry.index.put(found.unit, found.vector, found.context);
        // what queries read of the new record, now rather than in the first query that meets it
        if (!(entry.index instanceof RemoteUserIndex) && entry.index.size <= WARM_TRAITS_MAX_UNITS) warmTraits(entry.index.units.get(id)!);
      } else entry.index.delete(id);
    }
    for (const id of change.edge_ids) {
      const edge = await this.db.edges.get(join(change.user_id, id));
      if (edge) entry.index.putEdge(edge);
      else entry.index.removeEdge(id);
    }
  }

  private async buildOrgs(): Promise<void> {
    const started = performance.now();
    const byOrg = new Map<string, MemoryUnit[]>();
    let n = 0;
    for await (const unit of this.db.units.values()) {
      if (unit.org_id) {
        const list = byOrg.get(unit.org_id);
        if (list) list.push(unit);
        else byOrg.set(unit.org_id, [unit]);
      }
      if (++n % this.chunk === 0) await yieldToLoop();
    }
    const orgs = new Map<string, UnitSet>();
    this.unitOrg.clear();
    for (const [orgId, units] of byOrg) {
      const entries: IndexEntry[] = [];
      for (const record of units) {
        const unit = withStats(record, await this.db.unitStats.get(join(record.user_id, record.id)));
        const vector = this.usableVector(await this.db.vectors.get(join(unit.user_id, unit.id)));
        entries.push({ unit, vector, context: await this.sourceContext(unit) });
        this.unitOrg.set(unit.id, orgId);
      }
      await this.embedInto(entries.filter((e) => !e.vector));
      const set = new UnitSet(this.options);
      await set.load(entries);
      orgs.set(orgId, set);
    }
    this.orgs = orgs;
    const ms = performance.now() - started;
    if (n >= 1000) this.logger.info({ scanned: n, orgs: orgs.size, ms: Math.round(ms) }, 'organization indexes built');
  }

  private async refreshOrgs(change: MemoryChange): Promise<void> {
    if (!this.orgs) return;
    for (const id of change.unit_ids) {
      const unit = await this.indexedUnit(change.user_id, id);
      const before = this.unitOrg.get(id);
      if (change.records_only && unit && before !== undefined && unit.org_id === before && this.orgs.get(before)?.replaceRecord(unit)) continue;
      if (before !== undefined && (!unit || unit.org_id !== before)) {
        this.orgs.get(before)?.delete(id);
        this.unitOrg.delete(id);
      }
      if (unit?.org_id) await this.putOrgUnit(unit);
    }
  }

  private async putOrgUnit(unit: MemoryUnit): Promise<void> {
    const found = await this.unitWithVector(unit.user_id, unit.id);
    if (!found || !this.orgs) return;
    let set = this.orgs.get(unit.org_id!);
    if (!set) this.orgs.set(unit.org_id!, (set = new UnitSet(this.options)));
    set.put(found.unit, found.vector, found.context);
    this.unitOrg.set(unit.id, unit.org_id!);
  }
}

/** What decides the source context of a unit (DerivedIndexesOptions). */
export type SourceContextOptions = Pick<DerivedIndexesOptions, 'sourceText' | 'previousTurn' | 'previousTurns'>;

/** The source event's text and the ones before it in the stream (L1 units made from text events). */
export async function sourceContextOf(db: StateDb, unit: MemoryUnit, o: SourceContextOptions): Promise<SourceContext | null> {
  if (unit.level !== 1 || unit.references.length === 0 || (o.sourceText === false && o.previousTurn === false)) return null;
  const userId = unit.user_id;
  // the first reference is the event the unit was made from; later ones are repeats that reinforced it
  const at = await db.eventIds.get(join(userId, unit.references[0]));
  if (!at) return null;
  const event = await db.events.get(join(userId, at.stream_id, at.seq));
  const textOf = (e: { content: string; content_type: string } | undefined) => (e && (e.content_type === 'text' || e.content_type === 'json') ? e.content : null);
  let previous: string | null = null;
  const turns = o.previousTurn === false ? 0 : Math.max(0, Math.floor(o.previousTurns ?? 2));
  if (turns > 0) {
    const before: string[] = [];
    for await (const e of db.events.values({ gt: join(userId, at.stream_id, ''), lt: join(userId, at.stream_id, at.seq), reverse: true, limit: turns })) {
      const t = textOf(e);
      if (t) before.unshift(t);
    }
    previous = before.length > 0 ? before.join('\n') : null;
  }
  return { source: o.sourceText === false ? null : textOf(event), previous };
}

/** One org unit of a shard as another node needs it to index it: the record with its stats, its stored vector, its source context. */
export interface WireIndexEntry {
  unit: MemoryUnit;
  /** as stored (any embedder): the receiver uses it only when its own embedder made it */
  vector: StoredVector | null;
  context: SourceContext | null;
}

/**
 * The org's units on this shard (current and retired, as `buildOrgs` indexes them) in a form that
 * travels as JSON (cluster/read-queries.ts). The context uses the default options, as the node's
 * managers do (node.ts builds them without overriding them).
 */
export async function orgIndexEntries(db: StateDb, orgId: string, o: SourceContextOptions = {}, owns: (userId: string) => boolean = () => true): Promise<WireIndexEntry[]> {
  const out: WireIndexEntry[] = [];
  let n = 0;
  for (const record of await orgUnitsOf(db, orgId)) {
    if (!owns(record.user_id)) continue; // a user handed over to another group, whose records are still here (read-queries.ts)
    const unit = withStats(record, await db.unitStats.get(join(record.user_id, record.id)));
    out.push({ unit, vector: (await db.vectors.get(join(unit.user_id, unit.id))) ?? null, context: await sourceContextOf(db, unit, o) });
    if (++n % 500 === 0) await yieldToLoop();
  }
  return out;
}

/** Wire entries as index entries: a stored vector counts only when `embedder` made it (else null: embedded again). */
export function indexEntriesOf(wire: readonly WireIndexEntry[], embedder: Pick<Embedder, 'id' | 'dimensions'>): IndexEntry[] {
  return wire.map((e) => ({
    unit: e.unit,
    vector: e.vector && e.vector.embedder_id === embedder.id && e.vector.dims === embedder.dimensions ? decodeVector(e.vector) : null,
    context: e.context,
  }));
}

function yieldToLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
