/**
 * A user's indexes held by the index worker (thread.ts), as DerivedIndexes sees them: the same
 * changes as a UserIndex takes (load, put, replaceRecord, delete, edges), sent to the worker in order,
 * and a query that the worker answers. Changes are batched per turn of the microtask queue (a
 * reinforcement names hundreds of units) and always sent before a query, so the query sees them.
 *
 * What the main thread must answer at once is kept here: the units' streams (replaceRecord's answer,
 * and the size), the worker's last size report (the index cache's budget) and whether its graph builds.
 */
import type { Edge, MemoryUnit } from '@strata/store';
import type { retrieval } from '@strata/memory';
import { IndexGoneError, type IndexWorker } from './index-worker';
import { packEntries } from './entry-chunks';
import type { IndexOp, IndexStats, WorkerAnswer, WorkerQuery } from './protocol';

/** Entries sent per message during a load: each message is copied on the main thread, so it stays short. */
const LOAD_CHUNK = 500;

export class RemoteUserIndex {
  private readonly handle: number;
  private ops: IndexOp[] = [];
  private flushScheduled = false;
  /** unit id → its stream, for the units the worker holds */
  private readonly streams = new Map<string, string>();
  private reported: IndexStats = { size: 0, edgeCount: 0, bytes: 0, building: false };
  private edgesLoaded = 0;
  /** the worker died or failed a change: the user must be built again */
  lost = false;
  dropped = false;

  constructor(private readonly worker: IndexWorker, private readonly dimensions: number, onStats: () => void, onLost: () => void) {
    this.handle = worker.register({
      stats: (stats) => {
        this.reported = stats;
        onStats();
      },
      failed: () => {
        this.lost = true;
        onLost();
      },
      lost: () => {
        this.lost = true;
        onLost();
      },
    });
  }

  get size(): number {
    return this.streams.size;
  }

  get edgeCount(): number {
    return Math.max(this.reported.edgeCount, this.edgesLoaded);
  }

  /** The worker's estimate of the index (last reported), plus what is kept here. */
  estimatedBytes(): number {
    return this.reported.bytes + this.streams.size * 96;
  }

  /** Its vector graph is being built (as last reported). */
  get building(): boolean {
    return this.reported.building;
  }

  /** Replaces the content at once; the entries go in chunks, between which the event loop turns. */
  async load(entries: retrieval.IndexEntry[]): Promise<void> {
    this.begin();
    for (let i = 0; i < entries.length; i += LOAD_CHUNK) {
      this.append(entries.slice(i, i + LOAD_CHUNK));
      await new Promise((r) => setImmediate(r));
    }
    this.finish();
  }

  /**
   * A load in parts, as its entries are read (DerivedIndexes streams a worker user's build, so the event
   * loop's heap never holds all of them): begin, append each part, finish; the index changes at finish.
   */
  begin(): void {
    this.streams.clear();
    this.edgesLoaded = 0;
    this.push({ op: 'begin' });
  }

  append(entries: readonly retrieval.IndexEntry[]): void {
    const chunk = packEntries(entries, this.dimensions);
    for (const u of chunk.units) this.streams.set(u.id, u.stream_id);
    this.push({ op: 'entries', chunk });
    this.flush([chunk.vectors.buffer as ArrayBuffer, chunk.has.buffer as ArrayBuffer]);
  }

  finish(): void {
    this.push({ op: 'load' });
    this.flush();
  }

  loadEdges(edges: Edge[]): void {
    this.edgesLoaded = edges.filter((e) => e.source_id !== e.target_id).length;
    this.push({ op: 'edges', edges });
  }

  put(unit: MemoryUnit, vector: Float32Array | null, context: retrieval.SourceContext | null = null): void {
    this.streams.set(unit.id, unit.stream_id);
    this.push({ op: 'put', unit, vector, context });
  }

  /** As UnitSet.replaceRecord: false when the unit is not held or moved stream (then it is put again). */
  replaceRecord(unit: MemoryUnit): boolean {
    if (this.streams.get(unit.id) !== unit.stream_id) return false;
    this.push({ op: 'replace', unit });
    return true;
  }

  delete(id: string): void {
    this.streams.delete(id);
    this.push({ op: 'delete', id });
  }

  putEdge(edge: Edge): void {
    this.push({ op: 'putEdge', edge });
  }

  removeEdge(id: string): void {
    this.push({ op: 'removeEdge', id });
  }

  /** A retrieval over this index, answered by the worker after every change sent before it. */
  query(query: WorkerQuery): Promise<WorkerAnswer> {
    if (this.dropped || this.lost) return Promise.reject(new IndexGoneError('index no longer held'));
    this.flush();
    return this.worker.request<WorkerAnswer>({ type: 'query', handle: this.handle, query });
  }

  /** Resolves when the worker has applied every change sent and built the vector graph. */
  async whenIdle(): Promise<void> {
    if (this.dropped || this.lost) return;
    this.flush();
    await this.worker.request({ type: 'idle', handle: this.handle }).catch(() => undefined);
  }

  /** Gives the index up (evicted, replaced): the worker frees it after what was sent before. */
  drop(): void {
    if (this.dropped) return;
    this.flush();
    this.dropped = true;
    this.worker.unregister(this.handle);
  }

  private push(op: IndexOp): void {
    if (this.dropped || this.lost) return;
    this.ops.push(op);
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    queueMicrotask(() => {
      this.flushScheduled = false;
      this.flush();
    });
  }

  /** Sends the changes queued; `transfer`: buffers of theirs moved to the worker (no longer usable here). */
  private flush(transfer: ArrayBuffer[] = []): void {
    if (this.ops.length === 0 || this.dropped || this.lost) return;
    const ops = this.ops;
    this.ops = [];
    this.worker.post({ type: 'ops', handle: this.handle, ops }, transfer);
  }
}
