/** Input and output of consolidation: plain data, so the plan can travel inside one replicated command. */
import type { Edge, EventRecord, MemoryUnit } from '@strata/store';
import type { Embedder, Llm } from '../providers/types';
import type { SimilarityThresholds } from './similarity';
import type { KeywordOptions } from './keywords';
import type { TextOptions } from './text';

export interface SimilarUnit {
  unit: MemoryUnit;
  similarity: number;
}

export interface ConsolidationInput {
  /** A batch for one user (possibly several streams). */
  events: EventRecord[];
  /** RFC 3339 planning time: transaction time of new units and edges, time of retirements. */
  now: string;
  /** Id source (a UUID generator in production, a counter in tests); called in a deterministic order. */
  newId: () => string;
  embedder: Embedder;
  /** Existing current units of the user most similar to `vector`, best first. */
  findSimilar: (userId: string, vector: Float32Array, k: number) => Promise<SimilarUnit[]>;
  /** Existing units of the user with this subject and attribute. */
  findBySubjectAttribute: (userId: string, subject: string, attribute: string) => Promise<MemoryUnit[]>;
  /**
   * Existing current units of the user sharing at least `min` (default two) topic words (updates.ts
   * `objectStems`) with `text`, most shared first: where an update of a topic looks beside the
   * vector-nearest statements, and an ending for what named the ended thing.
   */
  findSharingWords?: (userId: string, text: string, k: number, min?: number) => Promise<MemoryUnit[]>;
  llm?: Llm;
  options?: Partial<ConsolidationOptions>;
}

export interface ConsolidationOptions {
  thresholds: SimilarityThresholds;
  /** RelatedTo edges per new unit, at most. */
  maxLinks: number;
  /** Neighbours asked of `findSimilar` per statement. */
  candidateK: number;
  keywords: KeywordOptions;
  text: TextOptions;
  /**
   * A duplicate must also share this fraction of its content words with the unit it repeats (Jaccard,
   * speaker prefix left out; similarity.ts DEFAULT_MIN_WORD_OVERLAP): merging two different statements
   * loses one of them, keeping a repeat only costs a little space.
   */
  minWordOverlap: number;
}

export interface NewUnit {
  unit: MemoryUnit;
  /** The embedding of `unit.content`, by `ConsolidationInput.embedder`. */
  vector: number[];
}

export interface Reinforcement {
  unit_id: string;
  /** Event ids to add to the unit's references (a set union at apply time). */
  add_references: string[];
  /** The unit's new importance. */
  importance: number;
}

export interface Retirement {
  unit_id: string;
  retired_at: string;
  reason: 'superseded';
  superseded_by: string;
}

export interface Dropped {
  event_id: string;
  reason: string;
}

export interface ConsolidationPlan {
  units: NewUnit[];
  reinforced: Reinforcement[];
  retired: Retirement[];
  edges: Edge[];
  dropped: Dropped[];
  /** `offline`, or `llm` when the LLM's extraction was used for at least one event. */
  method: 'offline' | 'llm';
  /** The embedder's id, stored beside the vectors. */
  embedder_id: string;
}
