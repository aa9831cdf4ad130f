/**
 * The in-memory retrieval indexes of a set of units (a user's memory, or an organization's knowledge on
 * a shard): BM25 over the whole document and over each of its fields, vectors (exact or HNSW), units by
 * stream, perceptual hashes of image assets; a user's set adds the graph. Filled and kept current by
 * the server's index lifecycle (packages/server/src/indexes/derived.ts) from store reads and apply
 * effects; searched by the retrieval pipeline.
 */
import type { Edge, MemoryUnit } from '@strata/store';
import { SIZE, TextIndex, valueBytes, VectorIndex, type TextIndexOptions } from '@strata/store/indexes';
import { TEXT_FIELDS, documentText, fieldTexts, type SourceContext, type TextField } from './documents';
import type { GraphNeighbor } from './types';

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
  readonly units = new Map<string, MemoryUnit>();
  readonly text: TextIndex;
  /** the document's fields, each indexed alone (fieldTexts) */
  readonly fields: Record<TextField, TextIndex>;
  readonly vector: VectorIndex;
  /** unit id → perceptual hashes of its image assets */
  readonly images = new Map<string, string[]>();
  readonly byStream = new Map<string, Set<string>>();

  constructor(private readonly options: UnitSetOptions) {
    this.text = new TextIndex(options.text);
    this.fields = { own: new TextIndex(options.text), context: new TextIndex(options.text) };
    this.vector = new VectorIndex({ dimensions: options.embedder.dimensions, exactThreshold: options.exactThreshold });
  }

  get size(): number {
    return this.units.size;
  }

  /**
   * Estimated bytes held (see @strata/store sizes.ts): the records (with their id strings), the three
   * text indexes' postings, the vectors, the image hashes and the stream sets.
   */
  estimatedBytes(): number {
    let n = UNIT_SET_FIXED_BYTES;
    for (const unit of this.units.values()) n += SIZE.mapEntry + valueBytes(unit);
    n += this.text.estimatedBytes() + this.vector.estimatedBytes();
    for (const f of TEXT_FIELDS) n += this.fields[f].estimatedBytes();
    n += SIZE.map;
    for (const hashes of this.images.values()) n += SIZE.mapEntry + valueBytes(hashes);
    n += SIZE.map;
    for (const ids of this.byStream.values()) n += SIZE.mapEntry + SIZE.map + SIZE.mapEntry * ids.size;
    return n;
  }

  put(unit: MemoryUnit, vector: Float32Array | null, context: SourceContext | null = null): void {
    const before = this.units.get(unit.id);
    if (before && before.stream_id !== unit.stream_id) this.byStream.get(before.stream_id)?.delete(unit.id);
    this.units.set(unit.id, unit);
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
    const before = this.units.get(unit.id);
    if (!before || before.stream_id !== unit.stream_id) return false;
    this.units.set(unit.id, unit);
    return true;
  }

  delete(id: string): void {
    const before = this.units.get(id);
    if (!before) return;
    this.units.delete(id);
    this.text.remove(id);
    for (const f of TEXT_FIELDS) this.fields[f].remove(id);
    this.vector.remove(id);
    this.images.delete(id);
    this.byStream.get(before.stream_id)?.delete(id);
  }

  /** Replace the content at once (a build): the text index is filled in chunks, HNSW builds in a worker. */
  async load(entries: IndexEntry[]): Promise<void> {
    const docText = this.options.documentText ?? documentText;
    await this.text.rebuildAsync(entries.map((e) => ({ id: e.unit.id, text: docText(e.unit, e.context) })), this.options.chunk ?? 500);
    const fields = entries.map((e) => ({ id: e.unit.id, ...fieldTexts(e.unit, e.context) }));
    for (const f of TEXT_FIELDS) {
      await this.fields[f].rebuildAsync(fields.filter((x) => x[f]).map((x) => ({ id: x.id, text: x[f] })), this.options.chunk ?? 500);
    }
    await this.vector.rebuild(entries.filter((e) => e.vector).map((e) => ({ id: e.unit.id, vector: e.vector! })));
    this.units.clear();
    this.images.clear();
    this.byStream.clear();
    for (const { unit } of entries) {
      this.units.set(unit.id, unit);
      this.index(unit);
    }
  }

  private index(unit: MemoryUnit): void {
    let stream = this.byStream.get(unit.stream_id);
    if (!stream) this.byStream.set(unit.stream_id, (stream = new Set()));
    stream.add(unit.id);
    const hashes = unit.assets.filter((a) => a.media_type === 'image' && a.phash).map((a) => a.phash!);
    if (hashes.length > 0) this.images.set(unit.id, hashes);
    else this.images.delete(unit.id);
  }
}

/** A user's memory: the unit set plus the graph. */
export class UserIndex extends UnitSet {
  private readonly adjacency = new Map<string, Neighbor[]>();
  private readonly edges = new Map<string, Edge>();

  neighbors = (id: string): Iterable<GraphNeighbor> => this.adjacency.get(id) ?? [];

  get edgeCount(): number {
    return this.edges.size;
  }

  /** The unit set's estimate plus the graph: the edge records and both adjacency lists of each edge. */
  override estimatedBytes(): number {
    let n = super.estimatedBytes() + 2 * SIZE.map;
    for (const edge of this.edges.values()) n += SIZE.mapEntry + valueBytes(edge);
    for (const list of this.adjacency.values()) n += SIZE.mapEntry + SIZE.array + list.length * (SIZE.slot + SIZE.object + 5 * SIZE.property + 16);
    return n;
  }

  putEdge(edge: Edge): void {
    if (this.edges.has(edge.edge_id)) this.removeEdge(edge.edge_id);
    if (edge.source_id === edge.target_id) return;
    this.edges.set(edge.edge_id, edge);
    const weight = Number.isFinite(edge.weight) ? Math.min(1, Math.max(0, edge.weight)) : 1;
    this.push(edge.source_id, { id: edge.target_id, relation: edge.relation, weight, direction: 'out', edge_id: edge.edge_id });
    this.push(edge.target_id, { id: edge.source_id, relation: edge.relation, weight, direction: 'in', edge_id: edge.edge_id });
  }

  removeEdge(edgeId: string): void {
    const edge = this.edges.get(edgeId);
    if (!edge) return;
    this.edges.delete(edgeId);
    for (const end of [edge.source_id, edge.target_id]) {
      const list = this.adjacency.get(end);
      if (!list) continue;
      const kept = list.filter((n) => n.edge_id !== edgeId);
      if (kept.length > 0) this.adjacency.set(end, kept);
      else this.adjacency.delete(end);
    }
  }

  override delete(id: string): void {
    super.delete(id);
    for (const n of this.adjacency.get(id) ?? []) this.removeEdge(n.edge_id);
  }

  loadEdges(edges: Edge[]): void {
    this.adjacency.clear();
    this.edges.clear();
    for (const e of edges) this.putEdge(e);
  }

  private push(from: string, n: Neighbor): void {
    const list = this.adjacency.get(from);
    if (list) list.push(n);
    else this.adjacency.set(from, [n]);
  }
}
