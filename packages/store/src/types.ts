/**
 * The records Strata keeps. Every record is plain JSON, written only by `apply` (see state-machine.ts).
 * Times are RFC 3339 UTC strings with millisecond precision; ids are lowercase UUIDs.
 */

export type ContentType = 'text' | 'image' | 'audio' | 'video' | 'json';
export type MediaType = 'image' | 'audio' | 'video';

/** A media payload stored once, content-addressed by the SHA-256 of its bytes (or a remote URL). */
export interface AssetRef {
  /** hex SHA-256 of the bytes; for a URL-only asset, of the URL text. */
  asset_id: string;
  media_type: MediaType;
  /** bytes stored in the asset table; 0 for a URL-only asset. */
  size: number;
  url: string | null;
  /** 64-bit perceptual hash (hex) of an image, when it could be decoded. */
  phash: string | null;
}

/**
 * The roles an event may carry (`role` of an event): the parties of a chat exchange. The one list: the
 * ingest schema enumerates it, and memory uses it to tell a role ("assistant") from a named speaker.
 */
export const EVENT_ROLES = ['user', 'assistant', 'system', 'tool'] as const;
export type EventRole = (typeof EVENT_ROLES)[number];
const EVENT_ROLE_SET: ReadonlySet<string> = new Set(EVENT_ROLES);
/** Is this (already lowercased) name a role rather than a person or agent? */
export function isEventRole(name: string): name is EventRole {
  return EVENT_ROLE_SET.has(name);
}

/** A raw L0 event, as accepted. */
export interface EventRecord {
  event_id: string;
  user_id: string;
  stream_id: string;
  /** Position in the stream: log index and position in the command, zero-padded, so keys sort in acceptance order. */
  seq: string;
  content: string;
  content_type: ContentType;
  org_id: string | null;
  agent_id: string | null;
  /** One of EVENT_ROLES when set (the schema enforces it at ingest). */
  role: string | null;
  level: number | null;
  parent_id: string | null;
  task_status: string | null;
  task_progress: number | null;
  valid_time: string;
  transaction_time: string;
  metadata: Record<string, unknown> | null;
  assets: AssetRef[];
}

export type MemoryType = 'factual' | 'procedural';

/** An L1 fact/procedure or an L2 insight. */
export interface MemoryUnit {
  id: string;
  user_id: string;
  stream_id: string;
  org_id: string | null;
  agent_id: string | null;
  level: 1 | 2;
  memory_type: MemoryType;
  content: string;
  keywords: string[];
  /** Who said it (`user`, `assistant`, a speaker name, a tool), when known. */
  speaker: string | null;
  valid_time: string;
  transaction_time: string;
  /** Provenance: ids of the L0 events this unit was made from. */
  references: string[];
  assets: AssetRef[];
  /** 0..1, from content signals; reinforced by retrieval, decays with time. */
  importance: number;
  /** Normalized subject and attribute of a fact, used to detect corrections (same subject+attribute, new value). */
  subject: string | null;
  attribute: string | null;
  /** Set when the unit stops being current: superseded by a correction or logically forgotten. */
  retired_at: string | null;
  retired_reason: 'superseded' | 'forgotten' | null;
  superseded_by: string | null;
}

export const RELATIONS = [
  'Next', 'RelatedTo', 'Contradicts', 'Supports', 'Abstracts', 'DerivedFrom', 'CausedBy', 'EvolvedTo',
  'IsSubTaskOf', 'Blocks', 'Accomplishes',
] as const;
export type Relation = (typeof RELATIONS)[number];

export interface Edge {
  edge_id: string;
  user_id: string;
  source_id: string;
  target_id: string;
  relation: Relation;
  weight: number;
  created_at: string;
}

export const TASK_STATUSES = ['pending', 'in_progress', 'blocked', 'completed', 'failed', 'cancelled'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

export interface Goal {
  id: string;
  user_id: string;
  stream_id: string;
  content: string;
  status: TaskStatus;
  progress: number;
  /** id of the L0 event the goal came from. */
  source_event_id: string | null;
  transaction_time: string;
}

export interface L3Task {
  task_id: string;
  user_id: string;
  org_id: string | null;
  agent_id: string | null;
  stream_id: string;
  /** A goal id or a task id. */
  parent_id: string | null;
  title: string;
  description: string;
  status: TaskStatus;
  status_reason: string | null;
  progress: number;
  /** task ids that must be completed first */
  dependencies: string[];
  /** event or memory ids this task was derived from */
  context_refs: string[];
  created_at: string;
  updated_at: string;
  result_summary: string | null;
}

export type ApiKeyRole = 'read' | 'write' | 'admin';

export interface ApiKeyRecord {
  key_id: string;
  /** hex SHA-256 of the full key; the key itself is never stored. */
  key_hash: string;
  key_prefix: string;
  name: string | null;
  org_id: string | null;
  user_ids: string[] | null;
  role: ApiKeyRole;
  created_at: string;
}

export interface AccountRecord {
  username: string;
  /** `scrypt$N$r$p$salt$hash`, salt and hash in base64. */
  password_hash: string;
  must_change_password: boolean;
  updated_at: string;
}
