import type { AccountRecord, ApiKeyRecord, Edge, EventRecord, MemoryType, MemoryUnit } from './types';

/**
 * Commands of the replicated log. A command carries everything non-deterministic (ids, times, hashes,
 * secrets, embeddings) so that applying it is a pure function of the state and the command.
 */

/** An event as proposed: everything but `seq`, which apply derives from the log index. */
export type ProposedEvent = Omit<EventRecord, 'seq'>;

export interface IngestCommand {
  type: 'events.ingest';
  user_id: string;
  stream_id: string;
  /** when the node accepted the request (transaction time of the events) */
  at: string;
  idempotency: { key: string; expires_at: string } | null;
  events: ProposedEvent[];
  /** media bytes to store, base64, keyed by content hash; already-stored assets are skipped by apply */
  assets: { asset_id: string; data_b64: string }[];
}

export interface AuthBootstrapCommand {
  type: 'auth.bootstrap';
  account: AccountRecord;
  jwt_secret: string;
}

export interface SetPasswordCommand {
  type: 'auth.set_password';
  username: string;
  password_hash: string;
  at: string;
}

export interface ApiKeyCreateCommand {
  type: 'apikey.create';
  record: ApiKeyRecord;
}

export interface ApiKeyRevokeCommand {
  type: 'apikey.revoke';
  key_id: string;
}

/** A pending-consolidation entry named by its key (`seq`) and the event it stands for. */
export interface PendingRef {
  seq: string;
  event_id: string;
}

/** A unit to create, with its embedding (plain numbers: it crosses the log as JSON). */
export interface UnitWithVector {
  unit: MemoryUnit;
  vector: number[];
}

export interface UnitReinforcement {
  unit_id: string;
  /** event ids added to the unit's references (set union) */
  add_references: string[];
  /** the unit's new importance */
  importance: number;
}

export interface UnitRetirement {
  unit_id: string;
  retired_at: string;
  reason: 'superseded';
  superseded_by: string;
}

export interface DroppedEvent {
  event_id: string;
  reason: string;
}

/**
 * The result of consolidating one user's batch of pending events (a consolidation plan, computed by the
 * shard leader with its embedder and LLM). Apply is all or nothing: when any consumed entry is no longer
 * pending, or a unit it reinforces is gone, the plan was made from a state that no longer holds and the
 * command changes nothing (the events still pending are planned again).
 */
export interface ConsolidateCommand {
  type: 'memory.consolidate';
  user_id: string;
  /** planning time (transaction time of new units and edges) */
  at: string;
  consumed: PendingRef[];
  embedder_id: string;
  method: 'offline' | 'llm';
  units: UnitWithVector[];
  reinforced: UnitReinforcement[];
  retired: UnitRetirement[];
  edges: Edge[];
  dropped: DroppedEvent[];
}

/** Events that could not be consolidated after `attempts` tries: moved from `pending` to `failed`. */
export interface ConsolidationFailedCommand {
  type: 'memory.consolidation_failed';
  user_id: string;
  at: string;
  entries: PendingRef[];
  error: string;
  attempts: number;
}

/** A new content of an existing L2 unit (a community insight or a stream reflection). */
export interface InsightUnitUpdate {
  unit_id: string;
  content: string;
  keywords: string[];
  references: string[];
  importance: number;
  valid_time: string;
  memory_type?: MemoryType;
  vector: number[] | null;
}

/** L2 insights and reflections of one user (planned by the shard leader). */
export interface InsightsCommand {
  type: 'memory.insights';
  user_id: string;
  at: string;
  embedder_id: string;
  create: { unit: MemoryUnit; vector: number[] | null }[];
  update: InsightUnitUpdate[];
  edges: Edge[];
  removed_edges: string[];
  /** streams reflected on, up to the acceptance time of their last event: clears their "reflection due" mark */
  reflected: { stream_id: string; through: string }[];
}

export type Command =
  | IngestCommand
  | AuthBootstrapCommand
  | SetPasswordCommand
  | ApiKeyCreateCommand
  | ApiKeyRevokeCommand
  | ConsolidateCommand
  | ConsolidationFailedCommand
  | InsightsCommand;

export type CommandType = Command['type'];

/** Answer of `events.ingest`: the event ids in request order, and whether this was an idempotent replay. */
export interface IngestAnswer {
  event_ids: string[];
  replayed: boolean;
}

/** Answer of `memory.consolidate`. `applied: false` means stale (nothing written); `stale` says why. */
export interface ConsolidateAnswer {
  applied: boolean;
  stale: string | null;
  consumed: number;
  units_created: number;
  reinforced: number;
  retired: number;
  edges: number;
  dropped: number;
}

export interface ConsolidationFailedAnswer {
  failed: number;
}

export interface InsightsAnswer {
  created: number;
  updated: number;
  edges: number;
  removed_edges: number;
}
