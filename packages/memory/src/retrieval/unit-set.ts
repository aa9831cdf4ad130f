/**
 * The in-memory retrieval indexes of a set of units (a user's memory, or an organization's knowledge on
 * a shard): BM25 over the whole document and over each of its fields, vectors (exact or HNSW), units by
 * stream, perceptual hashes of image assets; a user's set adds the graph. Filled and kept current by
 * the server's index lifecycle (packages/server/src/indexes/derived.ts) from store reads and apply
 * effects; searched by the retrieval pipeline.
 */
import type { Edge, MemoryUnit } from '@strata/store';
import { SIZE, stringBytes, TextIndex, valueBytes, VectorIndex, type TextIndexOptions } from '@strata/store/indexes';
import { TEXT_FIELDS, documentText, fieldTexts, type IndexedUnit, type SourceContext, type TextField } from './documents';
import type { GraphNeighbor } from './types';
import { OutdatedInsights } from './outdated-insights';
import { carryTraits } from './unit-traits';

export interface UnitSetOptions {
  /** the embedder whose vectors the set holds (only its dimensions are read) */
  embedder: { dimensions: number };
  /** vectors per set from which HNSW is used instead of an exact scan (default 10,000) */
  exactThreshold?: number;
  /** the text a unit is searched by (default: documentText) */
  documentText?: (unit: MemoryUnit, context?: SourceContext | null) => string;
  text?: TextIndexOptions;
  /** units indexed between yields to the event loop during builds (default 500) */
  chunk?: number;
  /**
   * Keep the records whole (default: slim, see `IndexedRecord`): for a set whose units cannot be read
   * again where it is searched (the org units another node sent for one request).
   */
  wholeRecords?: boolean;
}

/**
 * A unit as the indexes keep it: what ranking reads, not what only the answer shows. `keywords` and
 * `assets` are left out (they are in the text index and the image map already), `references` keeps
 * its first id only (the source event: collapseBySource and the source context read no other), and
 * the strings many units share (user, stream, org, agent, type, speaker, attribute) are one string per
 * set. The answer reads the whole records of its few results from LevelDB (retrieval-service.ts). At
 * 100,000 units the whole records were ~80 MiB of the heap.
 */
export type IndexedRecord = Omit<IndexedUnit, 'keywords' | 'assets'> & Partial<Pick<IndexedUnit, 'keywords' | 'assets'>>;

/** Is this record a slim one (its answer must read the whole record)? */
export function isSlimRecord(unit: object): boolean {
  return unit instanceof SlimRecord;
}

type Neighbor = GraphNeighbor & { edge_id: string };

/** A unit with its vector and source context, as a build loads it. */
export interface IndexEntry {
  unit: MemoryUnit;
  vector: Float32Array | null;
  context?: SourceContext | null;
}

/**
 * What an empty unit set costs beyond its contents: its objects, the four indexes' objects and initial
 * arrays, the cache entry and build chain (measured: a 3-unit user's heap is ~6 KiB above the sum of
 * its contents' estimates; scripts/bench-index-memory.ts prints estimate against measured heap).
 */
const UNIT_SET_FIXED_BYTES = 6 * 1024;

/** One searchable set of units (a user's memory, or an organization's knowledge on this shard). */
export class UnitSet {
  private unitMap = new Map<string, IndexedRecord>();
  /** one copy of each string many records share (`slim`) */
  private shared = new Map<string, string>();
  /** the time strings of the records made lately, one copy of each (`RecentTimes`) */
  private times = new RecentTimes();
  readonly text: TextIndex;
  /** the document's fields, each indexed alone (fieldTexts) */
  readonly fields: Record<TextField, TextIndex>;
  readonly vector: VectorIndex;
  private imageMap = new Map<string, string[]>();
  private streamMap = new Map<string, Set<string>>();
  /**
   * Estimated bytes of the records (map entries included), kept as records come and go: the cache
   * measures a set after every refresh, and a walk of 100,000 records took ~100 ms of the event loop.
   */
  private unitBytes = 0;

  constructor(private readonly options: UnitSetOptions) {
    this.text = new TextIndex(options.text);
    this.fields = { own: new TextIndex(options.text), context: new TextIndex(options.text) };
    this.vector = new VectorIndex({ dimensions: options.embedder.dimensions, exactThreshold: options.exactThreshold });
  }

  get units(): ReadonlyMap<string, IndexedRecord> {
    return this.unitMap;
  }

  /** unit id → perceptual hashes of its image assets */
  get images(): ReadonlyMap<string, string[]> {
    return this.imageMap;
  }

  get byStream(): ReadonlyMap<string, ReadonlySet<string>> {
    return this.streamMap;
  }

  get size(): number {
    return this.unitMap.size;
  }

  /**
   * Estimated bytes held (see @strata/store sizes.ts): the records (with their id strings), the three
   * text indexes' postings, the vectors, the image hashes and the stream sets.
   */
  estimatedBytes(): number {
    let n = UNIT_SET_FIXED_BYTES + this.unitBytes + poolBytes(this.shared);
    n += this.text.estimatedBytes() + this.vector.estimatedBytes();
    for (const f of TEXT_FIELDS) n += this.fields[f].estimatedBytes();
    n += SIZE.map;
    for (const hashes of this.imageMap.values()) n += SIZE.mapEntry + valueBytes(hashes);
    n += SIZE.map;
    for (const ids of this.streamMap.values()) n += SIZE.mapEntry + SIZE.map + SIZE.mapEntry * ids.size;
    return n;
  }

  /** Puts a record in the map, keeping the byte count. */
  private setRecord(unit: MemoryUnit): void {
    const before = this.unitMap.get(unit.id);
    if (before) this.unitBytes -= recordBytes(before);
    const record = this.options.wholeRecords ? unit : slim(unit, this.shared, this.times);
    // a reinforcement replaces a record with one of the same content: what ranking read from it stays
    if (before) carryTraits(before, record);
    this.unitMap.set(unit.id, record);
    this.unitBytes += recordBytes(record);
    this.recordChanged(before, record);
  }

  /**
   * A record was put, replaced or deleted (`before` or `after` undefined), or every record at once (a
   * load: both undefined): for what a subclass keeps about the records.
   */
  protected recordChanged(_before: IndexedRecord | undefined, _after: IndexedRecord | undefined): void {}

  put(unit: MemoryUnit, vector: Float32Array | null, context: SourceContext | null = null): void {
    const before = this.unitMap.get(unit.id);
    if (before && before.stream_id !== unit.stream_id) this.streamMap.get(before.stream_id)?.delete(unit.id);
    this.setRecord(unit);
    this.text.add(unit.id, (this.options.documentText ?? documentText)(unit, context));
    const fields = fieldTexts(unit, context);
    for (const f of TEXT_FIELDS) {
      if (fields[f]) this.fields[f].add(unit.id, fields[f]);
      else this.fields[f].remove(unit.id);
    }
    if (vector) this.vector.add(unit.id, vector);
    else this.vector.remove(unit.id);
    this.index(unit);
  }

  /** Replaces the record of a unit already held (same content: nothing to index again); false when absent. */
  replaceRecord(unit: MemoryUnit): boolean {
    const before = this.unitMap.get(unit.id);
    if (!before || before.stream_id !== unit.stream_id) return false;
    this.setRecord(unit);
    return true;
  }

  delete(id: string): void {
    const before = this.unitMap.get(id);
    if (!before) return;
    this.unitMap.delete(id);
    this.unitBytes -= recordBytes(before);
    this.text.remove(id);
    for (const f of TEXT_FIELDS) this.fields[f].remove(id);
    this.vector.remove(id);
    this.imageMap.delete(id);
    this.streamMap.get(before.stream_id)?.delete(id);
    this.recordChanged(before, undefined);
  }

  /**
   * Replace the content at once (a build). Every step runs in chunks between which the event loop turns
   * (documents are made as the text indexes read them, the records' maps are filled aside and swapped
   * in); the HNSW graph builds in a worker.
   */
  async load(entries: IndexEntry[]): Promise<void> {
    const chunk = this.options.chunk ?? 500;
    const docText = this.options.documentText ?? documentText;
    await this.text.rebuildAsync(lazyMap(entries, (e) => ({ id: e.unit.id, text: docText(e.unit, e.context) })), chunk);
    for (const f of TEXT_FIELDS) {
      // Yields by entries read, not by documents made: a field most units leave empty (`context` of
      // units without source turns) would otherwise be read through at once (100,000 entries: ~150 ms).
      const docs = async function* () {
        for (let i = 0; i < entries.length; i++) {
          const e = entries[i];
          const text = fieldTexts(e.unit, e.context)[f];
          if (text) yield { id: e.unit.id, text };
          if ((i + 1) % chunk === 0) await new Promise((r) => setImmediate(r));
        }
      };
      await this.fields[f].rebuildAsync(docs(), chunk);
    }
    await this.vector.rebuild(lazyFilterMap(entries, (e) => (e.vector ? { id: e.unit.id, vector: e.vector } : null)), entries.length);
    const units = new Map<string, IndexedRecord>();
    const shared = new Map<string, string>();
    const times = new RecentTimes();
    const images = new Map<string, string[]>();
    const streams = new Map<string, Set<string>>();
    let bytes = 0;
    for (let i = 0; i < entries.length; i++) {
      const { unit } = entries[i];
      const before = units.get(unit.id);
      if (before) bytes -= recordBytes(before);
      const record = this.options.wholeRecords ? unit : slim(unit, shared, times);
      // a set loaded again (a rebuild) keeps what ranking read from the records of the same content
      const held = this.unitMap.get(unit.id);
      if (held) carryTraits(held, record);
      units.set(unit.id, record);
      bytes += recordBytes(record);
      indexInto(unit, images, streams);
      if ((i + 1) % chunk === 0) await new Promise((r) => setImmediate(r));
    }
    this.unitMap = units;
    this.shared = shared;
    this.times = times;
    this.imageMap = images;
    this.streamMap = streams;
    this.unitBytes = bytes;
    this.recordChanged(undefined, undefined);
  }

  private index(unit: MemoryUnit): void {
    indexInto(unit, this.imageMap, this.streamMap);
  }
}

/** Fields of a slim record whose strings are shared (counted once, in the set's pool). */
const SHARED_FIELDS = ['user_id', 'stream_id', 'org_id', 'agent_id', 'memory_type', 'speaker', 'attribute', 'retired_reason'] as const;

/** A record's estimated bytes in the map (its entry, the object, its own strings: not the shared ones). */
function recordBytes(record: IndexedRecord): number {
  if (!(record instanceof SlimRecord)) return SIZE.mapEntry + valueBytes(record);
  let n = SIZE.mapEntry + SIZE.object;
  for (const [key, value] of Object.entries(record)) {
    n += SIZE.property;
    if (!(SHARED_FIELDS as readonly string[]).includes(key)) n += valueBytes(value);
  }
  return n;
}

/** The estimated bytes of a pool of shared strings. */
function poolBytes(shared: Map<string, string>): number {
  let n = SIZE.map;
  for (const s of shared.keys()) n += SIZE.mapEntry + stringBytes(s);
  return n;
}

const one = (shared: Map<string, string>, s: string): string => {
  const kept = shared.get(s);
  if (kept !== undefined) return kept;
  shared.set(s, s);
  return s;
};
const oneOrNull = (shared: Map<string, string>, s: string | null): string | null => (s === null ? null : one(shared, s));

/**
 * One copy of each time string (`valid_time`, `transaction_time`) among the records made lately. The units
 * of one command share its transaction time, those of one event or session their valid time, and they
 * come in order; a unit read from LevelDB brings its own copies (2 × 40 bytes, ~7.7 MiB of heap at
 * 100,000 units). Unlike the shared pool, distinct times are the rule in some memories, so the table is
 * bounded: emptied when it reaches `RecentTimes.MAX` strings, it costs at most that many entries per set.
 */
class RecentTimes {
  static readonly MAX = 1024;
  private readonly kept = new Map<string, string>();

  one(s: string): string {
    const k = this.kept.get(s);
    if (k !== undefined) return k;
    if (this.kept.size >= RecentTimes.MAX) this.kept.clear();
    this.kept.set(s, s);
    return s;
  }
}

type SlimFields = Omit<IndexedRecord, 'keywords' | 'assets' | 'last_retrieved_at'>;

/**
 * A slim record: one of this class, so that `isSlimRecord` is an `instanceof` (a WeakSet of every slim
 * record was 4 MiB of heap at 100,000 units). Its fields are assigned in the constructor, in one order,
 * so records share one shape with their fields in the object (as the object literal it replaces).
 */
// The interface gives the class its fields' types without emitting class fields (which would define
// them all, `last_retrieved_at` too, before the constructor runs).
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
interface SlimRecord extends SlimFields {
  /** only on records whose unit has it (as the unit) */
  last_retrieved_at?: string | null;
}
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
class SlimRecord {
  constructor(unit: IndexedUnit, shared: Map<string, string>, times: RecentTimes) {
    this.id = unit.id;
    this.user_id = one(shared, unit.user_id);
    this.stream_id = one(shared, unit.stream_id);
    this.org_id = oneOrNull(shared, unit.org_id);
    this.agent_id = oneOrNull(shared, unit.agent_id);
    this.level = unit.level;
    this.memory_type = one(shared, unit.memory_type) as IndexedUnit['memory_type'];
    this.content = unit.content;
    this.speaker = oneOrNull(shared, unit.speaker);
    this.valid_time = times.one(unit.valid_time);
    this.transaction_time = times.one(unit.transaction_time);
    this.references = unit.references.length <= 1 ? unit.references : [unit.references[0]];
    this.importance = unit.importance;
    this.subject = unit.subject;
    this.attribute = oneOrNull(shared, unit.attribute);
    this.retired_at = unit.retired_at;
    this.retired_reason = oneOrNull(shared, unit.retired_reason) as IndexedUnit['retired_reason'];
    this.superseded_by = unit.superseded_by;
    if (unit.last_retrieved_at !== undefined) this.last_retrieved_at = unit.last_retrieved_at;
  }
}

/** The record the indexes keep of a unit (IndexedRecord), its shared strings taken from `shared`, its times from `times`. */
function slim(unit: IndexedUnit, shared: Map<string, string>, times: RecentTimes): IndexedRecord {
  return new SlimRecord(unit, shared, times);
}

/** The unit's place in the by-stream and image maps. */
function indexInto(unit: MemoryUnit, images: Map<string, string[]>, streams: Map<string, Set<string>>): void {
  let stream = streams.get(unit.stream_id);
  if (!stream) streams.set(unit.stream_id, (stream = new Set()));
  stream.add(unit.id);
  const hashes = unit.assets.filter((a) => a.media_type === 'image' && a.phash).map((a) => a.phash!);
  if (hashes.length > 0) images.set(unit.id, hashes);
  else images.delete(unit.id);
}

function* lazyMap<T, R>(items: readonly T[], f: (item: T) => R): Generator<R> {
  for (const item of items) yield f(item);
}

function* lazyFilterMap<T, R>(items: readonly T[], f: (item: T) => R | null): Generator<R> {
  for (const item of items) {
    const r = f(item);
    if (r !== null) yield r;
  }
}

/** A user's memory: the unit set plus the graph. */
export class UserIndex extends UnitSet {
  private readonly adjacency = new Map<string, Neighbor[]>();
  private readonly edges = new Map<string, Edge>();
  /** estimated bytes of the edge records, and the adjacency lists' entries: kept as edges come and go */
  private edgeBytes = 0;
  private neighborCount = 0;

  neighbors = (id: string): Iterable<GraphNeighbor> => this.adjacency.get(id) ?? [];

  /** which insights quote a memory replaced since, kept until a retirement or an edge changes (outdated-insights.ts) */
  readonly outdatedInsights = new OutdatedInsights(this.neighbors, () => this.units);

  protected override recordChanged(before: IndexedRecord | undefined, after: IndexedRecord | undefined): void {
    if (!before || !after || before.retired_at !== after.retired_at || before.retired_reason !== after.retired_reason) this.outdatedInsights.invalidate();
  }

  get edgeCount(): number {
    return this.edges.size;
  }

  /** The unit set's estimate plus the graph: the edge records and both adjacency lists of each edge. */
  override estimatedBytes(): number {
    let n = super.estimatedBytes() + 2 * SIZE.map + this.edgeBytes;
    n += this.adjacency.size * (SIZE.mapEntry + SIZE.array) + this.neighborCount * (SIZE.slot + SIZE.object + 5 * SIZE.property + 16);
    return n;
  }

  putEdge(edge: Edge): void {
    this.outdatedInsights.invalidate();
    if (this.edges.has(edge.edge_id)) this.removeEdge(edge.edge_id);
    if (edge.source_id === edge.target_id) return;
    this.edges.set(edge.edge_id, edge);
    this.edgeBytes += SIZE.mapEntry + valueBytes(edge);
    const weight = Number.isFinite(edge.weight) ? Math.min(1, Math.max(0, edge.weight)) : 1;
    this.push(edge.source_id, { id: edge.target_id, relation: edge.relation, weight, direction: 'out', edge_id: edge.edge_id });
    this.push(edge.target_id, { id: edge.source_id, relation: edge.relation, weight, direction: 'in', edge_id: edge.edge_id });
  }

  removeEdge(edgeId: string): void {
    const edge = this.edges.get(edgeId);
    if (!edge) return;
    this.outdatedInsights.invalidate();
    this.edges.delete(edgeId);
    this.edgeBytes -= SIZE.mapEntry + valueBytes(edge);
    for (const end of [edge.source_id, edge.target_id]) {
      const list = this.adjacency.get(end);
      if (!list) continue;
      const kept = list.filter((n) => n.edge_id !== edgeId);
      this.neighborCount -= list.length - kept.length;
      if (kept.length > 0) this.adjacency.set(end, kept);
      else this.adjacency.delete(end);
    }
  }

  override delete(id: string): void {
    super.delete(id);
    for (const n of this.adjacency.get(id) ?? []) this.removeEdge(n.edge_id);
  }

  loadEdges(edges: Edge[]): void {
    this.outdatedInsights.invalidate();
    this.adjacency.clear();
    this.edges.clear();
    this.edgeBytes = 0;
    this.neighborCount = 0;
    for (const e of edges) this.putEdge(e);
  }

  private push(from: string, n: Neighbor): void {
    this.neighborCount++;
    const list = this.adjacency.get(from);
    if (list) list.push(n);
    else this.adjacency.set(from, [n]);
  }
}
