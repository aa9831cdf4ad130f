/**
 * The shapes retrieval works on. Everything here is plain data: the store hands units and edges in,
 * retrieval hands ranked units out. A unit needs only the fields below, so callers may pass full
 * `MemoryUnit` records or lighter projections of them.
 */
import type { MemoryUnit, Relation } from '@strata/store';

export type RetrievalUnit = Pick<
  MemoryUnit,
  | 'id'
  | 'user_id'
  | 'stream_id'
  | 'org_id'
  | 'agent_id'
  | 'memory_type'
  | 'content'
  | 'valid_time'
  | 'transaction_time'
  | 'importance'
  | 'subject'
  | 'attribute'
  | 'retired_at'
  | 'superseded_by'
> &
  Partial<Pick<MemoryUnit, 'references' | 'speaker' | 'retired_reason'>> & {
    /** 1 fact or procedure, 2 insight; 0 an event not consolidated yet, searched raw (pending.ts) */
    level: number;
    /** when retrieval last returned the unit (its stats, attached by the derived indexes), if known */
    last_retrieved_at?: string | null;
  };

/** One edge seen from one of its ends. `direction` is `out` when the edge goes from that end to `id`. */
export interface GraphNeighbor {
  id: string;
  relation: Relation;
  /** [0, 1] */
  weight: number;
  direction: 'out' | 'in';
}

/** Adjacency lookup: the edges touching a unit, both directions. */
export type Neighbors = (id: string) => Iterable<GraphNeighbor>;

/** A ranked candidate list from one retriever, best first. */
export interface RankedList {
  /** e.g. `vector`, `text`, `image`, `graph` */
  name: string;
  weight: number;
  items: Array<{ id: string; score?: number; strength?: number }>;
}

/** Why a result scored what it did (kept for debugging and tests, not part of the wire contract). */
export interface ScoreSignals {
  /** 1-based rank in each list the unit appeared in */
  ranks: Record<string, number>;
  /** normalized weighted RRF score before reranking */
  fused: number;
  recency: number;
  importance: number;
  boosts: string[];
  /** set for units that entered through graph expansion: the seed and hop count of the strongest path */
  graph?: { from: string; hops: number; strength: number };
}

export interface ScoredUnit<U extends RetrievalUnit = RetrievalUnit> {
  unit: U;
  /** [0, 1], comparable across queries of the same configuration */
  score: number;
  signals: ScoreSignals;
}
