/**
 * The messages between the main thread and the index worker (thread.ts). The main thread reads LevelDB
 * and sends what changed, in apply order, on one channel; the worker applies them in the order received,
 * so a query sent after an index's changes sees them (a message channel is first in, first out).
 */
import type { Edge, MemoryUnit } from '@strata/store';
import type { retrieval } from '@strata/memory';

/** The unit sets' options as the worker builds them: plain data (no functions cross a thread). */
export interface WorkerSetOptions {
  embedder: { dimensions: number };
  exactThreshold?: number;
  chunk?: number;
  text?: retrieval.UnitSetOptions['text'];
}

/** Entries of a load, their vectors packed in one buffer moved to the worker (entry-chunks.ts). */
export interface EntryChunk {
  units: MemoryUnit[];
  contexts: (retrieval.SourceContext | null)[];
  /** units.length × dimensions; row i is unit i's vector when has[i] is 1 */
  vectors: Float32Array;
  has: Uint8Array;
}

/** One change to a user's index held by the worker, as UserIndex takes it. */
export type IndexOp =
  | { op: 'begin' }
  | { op: 'entries'; chunk: EntryChunk }
  | { op: 'load' }
  | { op: 'edges'; edges: Edge[] }
  | { op: 'put'; unit: MemoryUnit; vector: Float32Array | null; context: retrieval.SourceContext | null }
  | { op: 'replace'; unit: MemoryUnit }
  | { op: 'delete'; id: string }
  | { op: 'putEdge'; edge: Edge }
  | { op: 'removeEdge'; id: string };

/** A retrieval for a user whose indexes the worker holds: what the main thread read for it. */
export interface WorkerQuery {
  request: retrieval.RetrieveRequest;
  /** without `fusion.collapseKey`: the worker sets collapseBySource, as the main thread does */
  config: retrieval.RetrievalConfig;
  now: number;
  scope: string;
  streamId: string | null;
  queryHash: string | null;
  /** the user's pending events searched raw, with their vectors (null: none) */
  pending: { hits: retrieval.RawHit[]; vectors: (Float32Array | null)[] } | null;
  /** the org's units of each shard, in shard order, whole (the worker builds a set of each for this query) */
  orgs: retrieval.IndexEntry[][];
}

export interface WorkerResult extends retrieval.ScoredUnit<retrieval.IndexedRecord | MemoryUnit | retrieval.RawHit> {
  /** a slim record of the user's index: the answer reads its whole record */
  slim: boolean;
}

export interface WorkerAnswer {
  results: WorkerResult[];
  /** milliseconds of each pipeline stage, as the worker measured them */
  stages: Partial<Record<retrieval.RetrievalStage, number>>;
}

export type ToWorker =
  | { type: 'ops'; handle: number; ops: IndexOp[] }
  | { type: 'drop'; handle: number }
  | { type: 'query'; id: number; handle: number; query: WorkerQuery }
  | { type: 'idle'; id: number; handle: number };

/** What the worker tells of an index after changing it (the main thread's cache counts its bytes). */
export interface IndexStats {
  size: number;
  edgeCount: number;
  bytes: number;
  /** its vector graph is being built (search is exact meanwhile) */
  building: boolean;
}

export type FromWorker =
  | { type: 'reply'; id: number; ok: true; value: unknown }
  | { type: 'reply'; id: number; ok: false; error: string; gone: boolean }
  | { type: 'stats'; handle: number; stats: IndexStats }
  | { type: 'failed'; handle: number; error: string };
