/**
 * The lines of an export file (CONTRACT §14, docs/export-format.md): NDJSON, a header, then one record
 * a line. The records are the stored ones with the state that lives beside them in other sublevels
 * (an event's consolidation state and the goal or task it gave, a unit's vector and retrieval stats),
 * so an import into an empty node holds the same memory. `import.records` commands carry these records.
 */
import type { L3Source, StoredVector, UnitStats } from './db';
import type { Edge, EventRecord, Goal, L3Task, MemoryUnit } from './types';

export const EXPORT_FORMAT = 'strata-export';
export const EXPORT_VERSION = 1;

export interface ExportHeader {
  kind: 'header';
  format: typeof EXPORT_FORMAT;
  version: typeof EXPORT_VERSION;
  exported_at: string;
  node_id: number;
  /** the exporting node's embedder: the vectors of the file were made by it (unless a unit's vector says otherwise) */
  embedder: { id: string; dimensions: number };
}

/** Where an event stands in consolidation: still to do, done, judged noise, or given up on. */
export type EventConsolidation =
  | { state: 'pending' }
  | { state: 'consolidated' }
  | { state: 'dropped'; reason: string; at: string }
  | { state: 'failed'; error: string; attempts: number; at: string };

/** An L0 event without its stream position (`seq`): the importing node gives it one in its own log. */
export interface ExportEvent extends Omit<EventRecord, 'seq'> {
  kind: 'event';
  consolidation: EventConsolidation;
  /** the goal or task L3 planning made of this event (null: none, or not planned yet) */
  l3_source: L3Source | null;
}

/** Stored media bytes (content-addressed), kept in the shard of `user_id`. */
export interface ExportAsset {
  kind: 'asset';
  user_id: string;
  asset_id: string;
  data_b64: string;
}

/** A memory unit version (current or retired), with its embedding as stored and its retrieval stats. */
export interface ExportUnit extends MemoryUnit {
  kind: 'unit';
  vector: StoredVector | null;
  stats: UnitStats | null;
}

export interface ExportEdge extends Edge {
  kind: 'edge';
}

export interface ExportGoal extends Goal {
  kind: 'goal';
}

export interface ExportTask extends L3Task {
  kind: 'task';
}

/** A user and the organization recorded for it (null: none). */
export interface ExportUser {
  kind: 'user';
  user_id: string;
  org_id: string | null;
}

/** Every record line (everything but the header). */
export type ExportRecord = ExportEvent | ExportAsset | ExportUnit | ExportEdge | ExportGoal | ExportTask | ExportUser;
export type ExportKind = ExportRecord['kind'];
export const EXPORT_KINDS: readonly ExportKind[] = ['event', 'asset', 'unit', 'edge', 'goal', 'task', 'user'];

/** The org_ids a record names (for scope checks). */
export function recordOrgs(r: ExportRecord): (string | null)[] {
  switch (r.kind) {
    case 'event':
    case 'unit':
    case 'task':
    case 'user':
      return [r.org_id];
    default:
      return [];
  }
}
