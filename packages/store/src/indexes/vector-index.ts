/**
 * A per-user vector index (derived: rebuilt from the records whenever stale).
 *
 * Small users are searched exactly: a dot product over a contiguous Float32Array (10,000 × 100 floats
 * is ~1 ms), which is exact, has no build cost and handles any filter. Once a user has `exactThreshold`
 * vectors, an HNSW graph (hnswlib-node, inner product on normalized vectors = cosine) is built off the
 * event loop and used from then on; inserts go into it incrementally (~0.2 ms each).
 *
 * The index keeps its own copy of every vector (the matrix), so it can:
 *  - answer exactly while the graph is (re)building, and fall back to exact search when a filter is so
 *    selective that the filtered graph search returns fewer than k results;
 *  - rebuild the graph without re-reading the store.
 * Once the graph is live it holds the same float32 vectors, so the matrix becomes int8 codes
 * (quantized-rows.ts: 10 MB instead of 40 at 100,000 × 100): exact scans score the codes and rescore
 * on the graph's floats only the rows that may be among the best, with the answer a float scan gives.
 * A rebuild starts from floats again.
 *
 * hnswlib needs integer labels: the index keeps id ↔ label maps. A removed id's label is marked deleted
 * in the graph and reused by a later insert (hnswlib then updates that element in place), so the graph
 * does not grow with churn.
 */
import { HierarchicalNSW } from 'hnswlib-node';
import { WorkerHnswBuilder, type HnswBuilder } from './hnsw-builder';
import { boundedTopK, QuantizedRows } from './quantized-rows';
import { SIZE, typedArrayBytes } from './sizes';
import { TopK } from './topk';

export interface VectorIndexOptions {
  dimensions: number;
  /** Below this many vectors search is exact; at or above it an HNSW graph is built (default 10,000). */
  exactThreshold?: number;
  /** HNSW graph degree (default 16). */
  m?: number;
  /** HNSW build beam (default 100). */
  efConstruction?: number;
  /** HNSW search beam (default 128: recall@10 0.82 at ef=64 on 100,000 SIF vectors; the effective ef is max(ef, k)). */
  efSearch?: number;
  /**
   * When more than this many vectors changed while a graph was being built (a bulk load), the graph is
   * built again from the current content instead of replaying them one by one (default 5,000).
   */
  maxReplay?: number;
  /** Seed of the graph's level generator, for reproducible builds (default 42). */
  seed?: number;
  /** Where graph builds run (default: a worker thread). */
  builder?: HnswBuilder;
}

export interface VectorHit {
  id: string;
  /** cosine similarity in [-1, 1] */
  score: number;
}

export interface VectorSearchOptions {
  /** Keep only ids for which this returns true. Filtered searches still return k results when k exist. */
  filter?: (id: string) => boolean;
  /**
   * Only these ids can match (e.g. the units of one stream, from a derived stream index). When the set is
   * small against the index, they are scored exactly one by one instead of walking the graph.
   */
  among?: Iterable<string> & { size?: number };
}

export interface VectorEntry {
  id: string;
  vector: Float32Array | number[];
}

export type VectorIndexMode = 'exact' | 'building' | 'hnsw';

export class VectorIndex {
  readonly dimensions: number;
  readonly exactThreshold: number;
  private readonly m: number;
  private readonly efConstruction: number;
  private efSearch: number;
  private readonly seed: number;
  private readonly builder: HnswBuilder;
  private readonly maxReplay: number;

  private capacity = 0;
  /** the vectors, normalized, row = label; empty once `codes` holds them */
  private matrix = new Float32Array(0);
  /** the vectors as int8 codes while the graph is live (its floats are the exact values) */
  private codes: QuantizedRows | null = null;
  /** a vector normalized on its way into the codes and the graph */
  private scratch: Float32Array;
  private alive = new Uint8Array(0);
  private labelToId: Array<string | undefined> = [];
  private idToLabel = new Map<string, number>();
  private freeLabels: number[] = [];
  /** labels handed out so far (the next fresh label) */
  private nextLabel = 0;

  private graph: HierarchicalNSW | null = null;
  /** bumped by every rebuild: a build started for an older generation is discarded */
  private generation = 0;
  private building: Promise<void> | null = null;
  /** labels changed while a build is in flight, re-synced into the graph when it lands */
  private touched = new Set<number>();
  private lastBuildError: Error | null = null;
  /** after a failed build, the next attempt waits until the index has grown this large */
  private retryAtSize = 0;

  constructor(options: VectorIndexOptions) {
    if (!Number.isInteger(options.dimensions) || options.dimensions < 1) throw new RangeError('dimensions must be a positive integer');
    this.dimensions = options.dimensions;
    this.exactThreshold = options.exactThreshold ?? 10_000;
    this.m = options.m ?? 16;
    this.efConstruction = options.efConstruction ?? 100;
    this.efSearch = options.efSearch ?? 128;
    this.seed = options.seed ?? 42;
    this.maxReplay = options.maxReplay ?? 5000;
    this.builder = options.builder ?? new WorkerHnswBuilder();
    this.scratch = new Float32Array(this.dimensions);
  }

  get size(): number {
    return this.idToLabel.size;
  }

  get mode(): VectorIndexMode {
    if (this.graph) return 'hnsw';
    return this.building ? 'building' : 'exact';
  }

  /** The error of the last failed graph build, if any (search stays exact and correct meanwhile). */
  get buildError(): Error | null {
    return this.lastBuildError;
  }

  has(id: string): boolean {
    return this.idToLabel.has(id);
  }

  ids(): IterableIterator<string> {
    return this.idToLabel.keys();
  }

  /**
   * Estimated bytes held (sizes.ts): the vector matrix (its capacity, not only the used rows), the label
   * maps, and the HNSW graph when there is one (outside the JS heap, in RSS: per element the vector, the
   * level-0 links (2·m), a label, a lock and a lookup entry, ~ +1/m for the upper levels). Id strings are
   * counted by the records that hold them.
   */
  estimatedBytes(): number {
    let n = SIZE.object * 2 + typedArrayBytes(this.matrix) + typedArrayBytes(this.alive) + (this.codes ? 3 * SIZE.typedArray + this.codes.byteLength : 0);
    n += SIZE.array + SIZE.slot * (this.labelToId.length + this.freeLabels.length);
    n += SIZE.map + SIZE.mapEntry * this.idToLabel.size + SIZE.map + SIZE.mapEntry * this.touched.size;
    if (this.graph) {
      const perElement = this.dimensions * 4 + (2 * this.m + 1) * 4 + 8 + 4 + 40 + 40 + Math.ceil(((this.m + 1) * 4) / Math.max(1, Math.log(this.m)));
      n += this.graph.getMaxElements() * perElement;
    }
    return n;
  }

  /** A copy of the stored (normalized) vector of an id. */
  getVector(id: string): Float32Array | undefined {
    const label = this.idToLabel.get(id);
    if (label === undefined) return undefined;
    if (this.codes) return Float32Array.from(this.graph!.getPoint(label));
    return this.matrix.slice(label * this.dimensions, (label + 1) * this.dimensions);
  }

  /** Set the HNSW search beam; applied now and after every (re)load of the graph. */
  setEf(ef: number): void {
    if (!Number.isInteger(ef) || ef < 1) throw new RangeError('ef must be a positive integer');
    this.efSearch = ef;
    this.graph?.setEf(ef);
  }

  /** Insert or replace the vector of an id. */
  add(id: string, vector: Float32Array | number[]): void {
    // Normalized straight into the matrix row (the same float32 values `normalized` makes): a load of
    // 100,000 vectors no longer allocates 100,000 typed arrays, whose upkeep held the event loop for
    // ~100 ms at a time.
    const norm = this.normOf(vector);
    let label = this.idToLabel.get(id);
    if (label === undefined) {
      label = this.freeLabels.pop() ?? this.nextLabel++;
      this.ensureCapacity(label + 1);
      this.idToLabel.set(id, label);
      this.labelToId[label] = id;
    }
    // into the matrix's row, or (codes) a scratch row first: the same float32 values either way
    const m = this.codes ? this.scratch : this.matrix;
    const base = this.codes ? 0 : label * this.dimensions;
    const scale = norm > 0 && Math.abs(norm - 1) > 1e-6;
    for (let j = 0; j < this.dimensions; j++) m[base + j] = scale ? Math.fround(vector[j]) / norm : vector[j];
    this.codes?.set(label, m);
    this.alive[label] = 1;
    if (this.graph) {
      this.ensureGraphCapacity(label + 1);
      // re-adding a label hnswlib knows (alive or marked deleted) updates that element in place
      this.graph.addPoint(Array.from(m.subarray(base, base + this.dimensions)), label);
    }
    if (this.building) this.touched.add(label);
    this.maybeStartBuild();
  }

  /** Remove an id; returns whether it was there. */
  remove(id: string): boolean {
    const label = this.idToLabel.get(id);
    if (label === undefined) return false;
    this.idToLabel.delete(id);
    this.labelToId[label] = undefined;
    this.alive[label] = 0;
    this.freeLabels.push(label);
    if (this.graph) this.markDeleted(this.graph, label);
    if (this.building) this.touched.add(label);
    return true;
  }

  /**
   * Replace the whole content from a source of truth. The new content is searchable (exactly) as soon
   * as the promise of reading the source resolves; the graph, when the size calls for one, is built in
   * the background (await `whenIdle()` to wait for it).
   */
  async rebuild(source: Iterable<VectorEntry> | AsyncIterable<VectorEntry>, sizeHint = 0): Promise<void> {
    // Read the source into fresh state first, so that a failing source leaves the index as it was.
    const fresh = new VectorIndex({
      dimensions: this.dimensions,
      exactThreshold: Number.MAX_SAFE_INTEGER,
      builder: this.builder,
    });
    // the matrix at its final size at once, when the caller knows it: no doubling copies on the way
    if (sizeHint > 0) fresh.ensureCapacity(sizeHint);
    let n = 0;
    for await (const entry of source as AsyncIterable<VectorEntry>) {
      fresh.add(entry.id, entry.vector);
      // reading a large source is chunked so the event loop keeps turning
      if (++n % 250 === 0) await new Promise((r) => setImmediate(r));
    }
    this.generation++;
    this.graph = null;
    this.codes = null;
    this.building = null;
    this.touched = new Set();
    this.retryAtSize = 0;
    // The load grew its matrix by doubling: up to half of it unused (100,000 rows took 131,072, 10 MiB
    // at 100 dimensions); kept with a sixteenth of room to grow.
    const rows = Math.min(fresh.capacity, Math.max(4, fresh.nextLabel + (fresh.nextLabel >> 4)));
    this.capacity = rows;
    this.matrix = rows === fresh.capacity ? fresh.matrix : fresh.matrix.slice(0, rows * this.dimensions);
    this.alive = rows === fresh.capacity ? fresh.alive : fresh.alive.slice(0, rows);
    this.labelToId = fresh.labelToId;
    this.idToLabel = fresh.idToLabel; // swapped, not copied: 100,000 entries were ~30 ms of the event loop
    this.freeLabels = fresh.freeLabels;
    this.nextLabel = fresh.nextLabel;
    this.maybeStartBuild();
  }

  /** Resolves when no graph build is in flight. */
  async whenIdle(): Promise<void> {
    while (this.building) await this.building;
  }

  /** The k nearest ids by cosine similarity, best first. */
  search(query: Float32Array | number[], k: number, options: VectorSearchOptions = {}): VectorHit[] {
    const q = this.normalized(query); // validates the query even when there is nothing to search
    if (k <= 0 || this.idToLabel.size === 0) return [];
    const filter = options.filter;
    if (options.among) return this.searchAmong(q, k, options.among, filter);
    if (this.graph) {
      if (filter && this.looksSelective(filter)) return this.searchExact(q, k, filter);
      const hits = this.searchGraph(this.graph, q, k, filter);
      // A very selective filter can starve the graph walk; the exact scan is then both right and cheap
      // enough (it only ever happens when fewer than k matches were reachable).
      if (hits.length >= Math.min(k, this.idToLabel.size) || !filter) return hits;
    }
    return this.searchExact(q, k, filter);
  }

  /**
   * The answer of `search`, for a caller that can wait: while a large index has no graph yet (the first
   * tens of seconds after a 100,000-vector user's indexes are built), the exact scan (~30 ms at 100,000
   * × 100 dimensions) runs in slices of `slice` rows with the event loop turning between them, so other
   * requests are not held behind it. Otherwise the same synchronous search.
   *
   * Writes that land between slices are seen or not, as with any read running beside writes: each row
   * is scored with the vector it holds when its slice runs, and a hit keeps the id it was scored for.
   */
  async searchAsync(query: Float32Array | number[], k: number, options: VectorSearchOptions = {}, slice = 8192): Promise<VectorHit[]> {
    if (this.graph || options.among || this.nextLabel <= slice) return this.search(query, k, options);
    const q = this.normalized(query);
    if (k <= 0 || this.idToLabel.size === 0) return [];
    const filter = options.filter;
    const top = new TopK<number>(k);
    // the id each kept label was scored for (a label freed and reused between slices names another unit)
    const idOf = new Map<number, string>();
    const generation = this.generation;
    for (let start = 0; start < this.nextLabel; start += slice) {
      if (start > 0) await new Promise((r) => setImmediate(r));
      // the whole content was replaced meanwhile (a rebuild): its rows are not comparable with those scanned
      if (generation !== this.generation) return this.search(query, k, options);
      this.scanRows(q, top, start, Math.min(start + slice, this.nextLabel), filter, idOf);
    }
    return top.sorted().map(({ key, score }) => ({ id: idOf.get(key)!, score }));
  }

  /** Exact search, whatever the mode (used by tests and benchmarks to measure the graph's recall). */
  searchExact(query: Float32Array | number[], k: number, filter?: (id: string) => boolean): VectorHit[] {
    const q = query instanceof Float32Array && query.length === this.dimensions ? query : this.normalized(query);
    let top: TopK<number>;
    if (this.codes) {
      const alive = this.alive;
      const to = this.nextLabel;
      top = boundedTopK<number>(
        k, this.codes, q,
        (offer) => {
          for (let label = 0; label < to; label++) if (alive[label]) offer(label, label);
        },
        (label) => this.graphDot(label, q),
        filter && ((label) => filter(this.labelToId[label]!)),
      );
    } else {
      top = new TopK<number>(k);
      this.scanRows(q, top, 0, this.nextLabel, filter, null);
    }
    return top.sorted().map(({ key, score }) => ({ id: this.labelToId[key]!, score }));
  }

  /** The dot product of a label's vector as the graph holds it (the float32 values the matrix held) with q, summed as the scan sums it. */
  private graphDot(label: number, q: Float32Array): number {
    const v = this.graph!.getPoint(label);
    let dot = 0;
    for (let j = 0; j < this.dimensions; j++) dot += v[j] * q[j];
    return dot;
  }

  /**
   * Scores rows [from, to) into `top` (by label); `idOf`, when given, notes the id of each label pushed.
   * Four live rows at a time: each row's dot product is still one chain of adds in dimension order (the
   * same float64 sum, bit for bit, as a row alone), but the four chains are independent, so the CPU runs
   * them side by side instead of waiting for each add of one chain (~2x faster at 2,500 × 100). The rows
   * are then offered to `top` in label order, as one at a time would.
   */
  private scanRows(q: Float32Array, top: TopK<number>, from: number, to: number, filter: ((id: string) => boolean) | undefined, idOf: Map<number, string> | null): void {
    if (this.codes) throw new Error('scanRows reads the float matrix, which the codes replaced'); // searchAsync scans only without a graph
    const dims = this.dimensions;
    const m = this.matrix;
    const alive = this.alive;
    let label = from;
    for (; label + 3 < to; label += 4) {
      if (alive[label] && alive[label + 1] && alive[label + 2] && alive[label + 3]) {
        let d0 = 0;
        let d1 = 0;
        let d2 = 0;
        let d3 = 0;
        const b0 = label * dims;
        const b1 = b0 + dims;
        const b2 = b1 + dims;
        const b3 = b2 + dims;
        for (let j = 0; j < dims; j++) {
          const qj = q[j];
          d0 += m[b0 + j] * qj;
          d1 += m[b1 + j] * qj;
          d2 += m[b2 + j] * qj;
          d3 += m[b3 + j] * qj;
        }
        this.offerRow(top, label, d0, filter, idOf);
        this.offerRow(top, label + 1, d1, filter, idOf);
        this.offerRow(top, label + 2, d2, filter, idOf);
        this.offerRow(top, label + 3, d3, filter, idOf);
      } else {
        for (let l = label; l < label + 4; l++) if (alive[l]) this.offerRow(top, l, this.rowDot(l, q), filter, idOf);
      }
    }
    for (; label < to; label++) if (alive[label]) this.offerRow(top, label, this.rowDot(label, q), filter, idOf);
  }

  /** One row's dot product with q, summed in dimension order. */
  private rowDot(label: number, q: Float32Array): number {
    const dims = this.dimensions;
    const m = this.matrix;
    const base = label * dims;
    let dot = 0;
    for (let j = 0; j < dims; j++) dot += m[base + j] * q[j];
    return dot;
  }

  /** A scanned row's score offered to `top` (the threshold first, then the filter). */
  private offerRow(top: TopK<number>, label: number, dot: number, filter: ((id: string) => boolean) | undefined, idOf: Map<number, string> | null): void {
    if (dot < top.threshold() || !top.admits(label, dot)) return;
    const id = this.labelToId[label]!;
    if (filter && !filter(id)) return;
    top.push(label, dot);
    idOf?.set(label, id);
  }

  /** Exact scoring of the given ids only. */
  searchAmong(query: Float32Array | number[], k: number, ids: Iterable<string>, filter?: (id: string) => boolean): VectorHit[] {
    const q = query instanceof Float32Array && query.length === this.dimensions ? query : this.normalized(query);
    if (this.codes) {
      const top = boundedTopK<string>(
        k, this.codes, q,
        (offer) => {
          for (const id of ids) {
            const label = this.idToLabel.get(id);
            if (label !== undefined) offer(id, label);
          }
        },
        (label) => this.graphDot(label, q),
        filter,
      );
      return top.sorted().map(({ key, score }) => ({ id: key, score }));
    }
    const dims = this.dimensions;
    const top = new TopK<string>(k);
    const m = this.matrix;
    for (const id of ids) {
      const label = this.idToLabel.get(id);
      if (label === undefined) continue;
      let dot = 0;
      const base = label * dims;
      for (let j = 0; j < dims; j++) dot += m[base + j] * q[j];
      if (dot < top.threshold() || !top.admits(id, dot)) continue;
      if (filter && !filter(id)) continue;
      top.push(id, dot);
    }
    return top.sorted().map(({ key, score }) => ({ id: key, score }));
  }

  /**
   * Does the filter pass under ~2 % of the ids? Estimated on a fixed spread of 64 live labels. A graph
   * walk under such a filter visits most of the graph through a JS callback per node and still may come
   * back short; the exact scan is cheaper and always complete.
   */
  private looksSelective(filter: (id: string) => boolean): boolean {
    const SAMPLE = 64;
    if (this.nextLabel < SAMPLE * 4) return false;
    let seen = 0;
    let passed = 0;
    const step = this.nextLabel / SAMPLE;
    for (let i = 0; i < SAMPLE; i++) {
      const label = Math.floor(i * step + step / 2);
      const id = this.labelToId[label];
      if (id === undefined) continue;
      seen++;
      if (filter(id)) passed++;
    }
    return seen > 0 && passed / seen < 0.02;
  }

  private searchGraph(graph: HierarchicalNSW, q: Float32Array, k: number, filter?: (id: string) => boolean): VectorHit[] {
    const want = Math.min(k, this.idToLabel.size);
    graph.setEf(Math.max(this.efSearch, want));
    const callback = filter
      ? (label: number) => {
          const id = this.labelToId[label];
          return id !== undefined && filter(id);
        }
      : undefined;
    const res = graph.searchKnn(Array.from(q), want, callback);
    const hits: VectorHit[] = [];
    for (let i = 0; i < res.neighbors.length; i++) {
      const id = this.labelToId[res.neighbors[i]];
      if (id !== undefined) hits.push({ id, score: 1 - res.distances[i] });
    }
    graph.setEf(this.efSearch);
    return hits;
  }

  /** The norm `normalized` divides by (of the float32 values), after the checks it makes. */
  private normOf(vector: Float32Array | number[]): number {
    if (vector.length !== this.dimensions) {
      throw new RangeError(`vector has ${vector.length} dimensions, the index ${this.dimensions}`);
    }
    let norm = 0;
    for (let i = 0; i < vector.length; i++) {
      const x = Math.fround(vector[i]);
      norm += x * x;
    }
    if (!Number.isFinite(norm)) throw new RangeError('vector has non-finite components');
    return Math.sqrt(norm);
  }

  private normalized(vector: Float32Array | number[]): Float32Array {
    if (vector.length !== this.dimensions) {
      throw new RangeError(`vector has ${vector.length} dimensions, the index ${this.dimensions}`);
    }
    const v = Float32Array.from(vector);
    let norm = 0;
    for (let i = 0; i < v.length; i++) norm += v[i] * v[i];
    if (!Number.isFinite(norm)) throw new RangeError('vector has non-finite components');
    norm = Math.sqrt(norm);
    if (norm > 0 && Math.abs(norm - 1) > 1e-6) for (let i = 0; i < v.length; i++) v[i] /= norm;
    return v;
  }

  private ensureCapacity(n: number): void {
    if (n <= this.capacity) return;
    // Doubling from a small start: most users hold a handful of units, and a first 64 rows (25 KiB at
    // 100 dimensions, 384 KiB at 1536) would be most of a small user's indexes (see estimatedBytes).
    const cap = Math.max(4, this.capacity * 2, n);
    if (this.codes) this.codes.grow(cap);
    else {
      const matrix = new Float32Array(cap * this.dimensions);
      matrix.set(this.matrix);
      this.matrix = matrix;
    }
    const alive = new Uint8Array(cap);
    alive.set(this.alive);
    this.alive = alive;
    this.capacity = cap;
  }

  /** hnswlib's index is fixed-size: grow it (by doubling, ~1 ms per 20,000 elements) when full. */
  private ensureGraphCapacity(n: number): void {
    const graph = this.graph!;
    if (n > graph.getMaxElements()) graph.resizeIndex(Math.max(n, graph.getMaxElements() * 2, this.capacity));
  }

  private markDeleted(graph: HierarchicalNSW, label: number): void {
    try {
      graph.markDelete(label);
    } catch {
      // not in the graph, or already deleted: nothing to do
    }
  }

  private maybeStartBuild(): void {
    const size = this.idToLabel.size;
    if (this.graph || this.building || size < this.exactThreshold || size < this.retryAtSize) return;
    const generation = this.generation;
    const count = this.idToLabel.size;
    const labels = new Int32Array(count);
    let vectors: Float32Array;
    if (count === this.nextLabel) {
      // no free label (a fresh load): the rows are the matrix's first `count`, copied at once
      for (let label = 0; label < count; label++) labels[label] = label;
      vectors = this.matrix.slice(0, count * this.dimensions);
    } else {
      vectors = new Float32Array(count * this.dimensions);
      let i = 0;
      for (let label = 0; label < this.nextLabel; label++) {
        if (!this.alive[label]) continue;
        labels[i] = label;
        vectors.set(this.matrix.subarray(label * this.dimensions, (label + 1) * this.dimensions), i * this.dimensions);
        i++;
      }
    }
    this.touched = new Set();
    const build = this.builder
      .build({
        dimensions: this.dimensions,
        m: this.m,
        efConstruction: this.efConstruction,
        seed: this.seed,
        // room for a sixteenth more, not the matrix's doubling: the graph is ~0.6 KB an element outside
        // the heap, and it grows (by doubling) when needed
        capacity: this.nextLabel + Math.max(16, this.nextLabel >> 4),
        labels,
        vectors,
      })
      .then(
        (graph) => this.install(graph, generation),
        (err: unknown) => {
          if (generation !== this.generation) return;
          this.lastBuildError = err instanceof Error ? err : new Error(String(err));
          this.retryAtSize = Math.ceil(count * 1.25); // do not rebuild on every insert while failing
        },
      )
      .finally(() => {
        if (this.building === build) this.building = null;
      });
    this.building = build;
  }

  /**
   * Bring a freshly built graph up to date with the writes made while it was built, then make it live.
   * The replay runs in chunks between which the event loop turns (writes arriving meanwhile join the
   * next round); if a bulk load left too much to replay, a new build from the current content is
   * cheaper and keeps the event loop free. Until the graph is live, search is exact.
   */
  private async install(graph: HierarchicalNSW, generation: number): Promise<void> {
    const CHUNK = 16; // ≈ 3 ms of inserts
    if (generation !== this.generation) return; // a rebuild replaced the content meanwhile
    let pending = this.touched;
    this.touched = new Set();
    while (pending.size > 0) {
      if (pending.size > this.maxReplay) {
        this.building = null;
        this.maybeStartBuild(); // takes every current vector, so `touched` starts afresh
        return;
      }
      let n = 0;
      for (const label of pending) {
        if (this.alive[label]) {
          if (label + 1 > graph.getMaxElements()) graph.resizeIndex(Math.max(label + 1, graph.getMaxElements() * 2, this.capacity));
          graph.addPoint(Array.from(this.matrix.subarray(label * this.dimensions, (label + 1) * this.dimensions)), label);
        } else this.markDeleted(graph, label);
        if (++n % CHUNK === 0) {
          await new Promise((r) => setImmediate(r));
          if (generation !== this.generation) return;
        }
      }
      pending = this.touched;
      this.touched = new Set();
    }
    if (generation !== this.generation) return; // a rebuild replaced the content meanwhile
    graph.setEf(this.efSearch); // hnswlib resets ef on load
    this.graph = graph;
    this.lastBuildError = null;
    // the graph now holds every live vector as the matrix does: the matrix's copy becomes codes
    this.codes = QuantizedRows.of(this.matrix, this.dimensions, this.nextLabel, this.capacity);
    this.matrix = new Float32Array(0);
  }
}
