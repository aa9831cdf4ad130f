/**
 * The store-backed lookups consolidation asks for: a user's current L1 units most similar to a vector,
 * and the units stating a fact about a subject+attribute.
 *
 * Held across batches and kept current instead of read per batch (issue 13: reading all of a user's
 * units and vectors for every batch made a batch cost grow with the user's memory). `MemoryViews` keeps
 * one `UserMemoryView` per recently consolidated user; a state-machine listener notes, after each
 * applied command, the units its effects name, and the next `get` reads those units (and only those)
 * again from LevelDB. A snapshot install or a user-level change drops the views concerned, and a budget
 * of bytes bounds them (least recently used go first; the user being consolidated always stays).
 *
 * What a view answers equals what reading LevelDB at that moment would (`allUnits` + `userVectors`,
 * `unitsBySubjectAttribute`): planning is unchanged, only cheaper.
 */
import { SharedDirections, SimilarUnits, TopicWords, type SimilarUnit } from '@strata/memory/consolidation';
import {
  allUnits, compareKeys, decodeVector, join, readMany, userVectors, type ApplyEffects, type MemoryUnit, type StateDb, type StateMachine, type StoredVector,
} from '@strata/store';

/** A subject or attribute as the `unit_by_subject` key holds it (store/apply/memory.ts `keyPart`). */
const keyPart = (s: string): string => s.split('\x00').join(' ');
const factKey = (subject: string, attribute: string): string => `${keyPart(subject)}\x00${keyPart(attribute)}`;
/** Where a unit of this id goes in a list in LevelDB's key order (UTF-8 bytes of the ids), by binary search. */
function positionOf(list: readonly MemoryUnit[], id: string): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareKeys(list[mid].id, id) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Only a current L1 unit is held with its vector (SimilarUnits): for any other the vector is not read. */
const mayBeSimilar = (unit: MemoryUnit): boolean => unit.level === 1 && unit.retired_at === null;

/** Rough bytes a held unit costs (record, vector, entries): for the budget only. */
function unitBytes(u: MemoryUnit, dims: number): number {
  return 600 + 2 * (u.content.length + u.keywords.reduce((n, k) => n + k.length + 16, 0)) + 60 * u.references.length + 4 * dims;
}

export class UserMemoryView {
  private readonly similar: SimilarUnits;
  /** subject+attribute key → the units with it (current or not, any level), in key order */
  private readonly facts = new Map<string, MemoryUnit[]>();
  /** unit id → its fact key, for units in `facts` */
  private readonly factOf = new Map<string, string>();
  private readonly sizes = new Map<string, number>();
  /** the current statements by their topic words (findSharingWords) */
  private readonly topics = new TopicWords();
  /** what the units held cost, roughly (the budget of MemoryViews) */
  bytes = 0;

  private constructor(private readonly db: StateDb, readonly userId: string, embedderId: string, shared?: SharedDirections) {
    this.similar = new SimilarUnits(embedderId, { shared });
  }

  /**
   * Reads all of the user's units and vectors: a view's first load (and the only one while it stays held).
   * `shared`: the pruning directions of the worker's other users (SimilarUnits), so each user need not compute its own.
   */
  static async load(db: StateDb, userId: string, embedderId: string, shared?: SharedDirections): Promise<UserMemoryView> {
    const view = new UserMemoryView(db, userId, embedderId, shared);
    const [units, vectors] = await Promise.all([allUnits(db, userId), userVectors(db, userId)]);
    for (const unit of units) view.put(unit, vectors.get(unit.id));
    return view;
  }

  /**
   * Reads these units again (created, changed, retired or deleted since the view was read), and the
   * vectors of those that are current L1 units: a retired unit (in a trickle of corrections, one per
   * event) leaves SimilarUnits whatever its vector, so its vector is not read and decoded.
   */
  async refresh(unitIds: readonly string[]): Promise<void> {
    if (unitIds.length === 0) return;
    const units = await readMany(this.db.units, unitIds.map((id) => join(this.userId, id)));
    const similar = unitIds.filter((_, i) => units[i] !== undefined && mayBeSimilar(units[i]!));
    const vectors = new Map<string, StoredVector | undefined>();
    const stored = await readMany(this.db.vectors, similar.map((id) => join(this.userId, id)));
    similar.forEach((id, i) => vectors.set(id, stored[i]));
    unitIds.forEach((id, i) => {
      const unit = units[i];
      const vector = vectors.get(id);
      if (unit) this.put(unit, vector ? { vector: decodeVector(vector), embedder_id: vector.embedder_id } : undefined);
      else this.remove(id);
    });
  }

  get size(): number {
    return this.similar.size;
  }

  /** The k most similar current units, best first (ties by id, so the answer is deterministic). */
  findSimilar = async (userId: string, vector: Float32Array, k: number): Promise<SimilarUnit[]> =>
    (userId === this.userId ? this.similar.topK(vector, k) : []);

  /**
   * The current L1 statements sharing `min` (default two) or more topic words with `text` (updates.ts
   * objectStems), most shared first, ties by id: deterministic, like findSimilar.
   */
  findSharingWords = async (userId: string, text: string, k: number, min?: number): Promise<MemoryUnit[]> =>
    (userId === this.userId ? this.topics.sharing(text, k, min) : []);

  /** The user's units (current or not) stating a fact about this subject and attribute, in key order. */
  findBySubjectAttribute = async (userId: string, subject: string, attribute: string): Promise<MemoryUnit[]> =>
    (userId === this.userId ? [...(this.facts.get(factKey(subject, attribute)) ?? [])] : []);

  private put(unit: MemoryUnit, stored: { vector: Float32Array; embedder_id: string } | undefined): void {
    // SimilarUnits and TopicWords replace a unit they hold themselves (TopicWords keeps its words when the text is the same).
    this.forget(unit.id);
    this.similar.put(unit, stored);
    if (unit.subject && unit.attribute) {
      // In key order, as the unit_by_subject range reads them (a list grows with every correction of the fact).
      const key = factKey(unit.subject, unit.attribute);
      let list = this.facts.get(key);
      if (!list) this.facts.set(key, (list = []));
      list.splice(positionOf(list, unit.id), 0, unit);
      this.factOf.set(unit.id, key);
    }
    this.topics.put(unit);
    const size = unitBytes(unit, stored?.vector.length ?? 0);
    this.sizes.set(unit.id, size);
    this.bytes += size;
  }

  private remove(unitId: string): void {
    this.similar.remove(unitId);
    this.topics.remove(unitId);
    this.forget(unitId);
  }

  /** Drops the unit from the fact lists and the byte count. */
  private forget(unitId: string): void {
    const key = this.factOf.get(unitId);
    if (key !== undefined) {
      const list = this.facts.get(key) ?? [];
      const at = positionOf(list, unitId);
      if (list[at]?.id === unitId) list.splice(at, 1);
      if (list.length === 0) this.facts.delete(key);
      this.factOf.delete(unitId);
    }
    this.bytes -= this.sizes.get(unitId) ?? 0;
    this.sizes.delete(unitId);
  }
}

interface Held {
  /** resolves to the view once loaded (or refreshed); a failed load or refresh drops the entry */
  view: Promise<UserMemoryView>;
  /** the view once loaded (for the budget) */
  loaded: UserMemoryView | null;
  /** units named by commands applied since the view last read them */
  dirty: Set<string>;
}

export interface MemoryViewsOptions {
  db: StateDb;
  embedderId: string;
  /** the state machine whose applied commands keep the views current; without one, every `get` reads afresh */
  sm?: StateMachine | null;
  /** bytes the views may hold together (default 64 MiB); the view in use is kept even beyond it */
  maxBytes?: number;
}

export const DEFAULT_VIEW_BYTES = 64 * 1024 * 1024;

/** The consolidation worker's views of one shard's users, kept current by the shard's applied commands. */
export class MemoryViews {
  /** least recently used first */
  private readonly held = new Map<string, Held>();
  private readonly maxBytes: number;
  private readonly directions = new SharedDirections();

  constructor(private readonly o: MemoryViewsOptions) {
    this.maxBytes = o.maxBytes ?? DEFAULT_VIEW_BYTES;
    // In log order, before the proposer of the command hears its answer: a batch planned after its
    // predecessor's proposal resolved sees every unit that proposal wrote.
    o.sm?.onApplied((_index, _command, _result, effects) => this.noteApplied(effects));
    o.sm?.onRestored(() => this.held.clear());
  }

  /** How many users' views are held (tests, logs). */
  get users(): number {
    return this.held.size;
  }

  /** The user's view as of every command applied before the call. */
  async get(userId: string): Promise<UserMemoryView> {
    if (!this.o.sm) return UserMemoryView.load(this.o.db, userId, this.o.embedderId, this.directions);
    let held = this.held.get(userId);
    if (held) {
      this.held.delete(userId); // most recently used: to the end
      const dirty = [...held.dirty];
      held.dirty.clear();
      const before = held.view;
      held.view = dirty.length === 0 ? before : before.then(async (view) => {
        await view.refresh(dirty);
        return view;
      });
    } else {
      // Held (and so noting changes) before the first read starts: a command applied during the load is read again by the next get.
      const fresh: Held = { view: UserMemoryView.load(this.o.db, userId, this.o.embedderId, this.directions), loaded: null, dirty: new Set() };
      fresh.view.then((view) => { fresh.loaded = view; }, () => undefined);
      held = fresh;
    }
    this.held.set(userId, held);
    const entry = held;
    entry.view.catch(() => {
      if (this.held.get(userId) === entry) this.held.delete(userId);
    });
    const view = await entry.view;
    this.evict(userId);
    return view;
  }

  private noteApplied(effects: ApplyEffects): void {
    if (this.held.size === 0) return;
    for (const u of effects.units) this.held.get(u.user_id)?.dirty.add(u.unit_id);
    // A user-level change (organization) may change every unit's scope: read the user afresh.
    for (const u of effects.users) this.held.delete(u.user_id);
  }

  /** Drops the least recently used views while the held ones exceed the budget (never `keep`). */
  private evict(keep: string): void {
    let total = 0;
    const sizes: [string, number][] = [];
    for (const [userId, held] of this.held) {
      const size = held.loaded?.bytes ?? 0;
      total += size;
      sizes.push([userId, size]);
    }
    for (const [userId, size] of sizes) {
      if (total <= this.maxBytes) break;
      if (userId === keep) continue;
      this.held.delete(userId);
      total -= size;
    }
  }
}
