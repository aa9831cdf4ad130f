/**
 * What an applied command changed in memory, as far as the derived indexes care: which user, which
 * units and which edges to read again from LevelDB. Pure: it looks at the command only.
 *
 * Known command types are read field by field. A command type this file does not know yet (the set
 * grows with the API) is read generically: every UUID-looking string in it is a candidate unit or edge
 * id (re-reading an id that is neither costs one LevelDB get and changes nothing), so a new command that
 * names the units it touches (in the command or in its answer) is handled correctly without an edit here. A command that changes memory
 * without naming the units (a bulk operation) must be listed in `WHOLE_USER` so the user is rebuilt.
 */
import type { Command } from '@strata/store';

export interface MemoryChange {
  user_id: string;
  unit_ids: string[];
  edge_ids: string[];
  /** re-read the user's whole memory (a bulk change the command does not enumerate) */
  whole_user: boolean;
  /**
   * Only the units' records and stats changed (importance, retrieval stats), not what they are searched
   * by: the indexes replace the records and leave text and vectors alone.
   */
  records_only?: boolean;
}

/**
 * Every user's change of a command: one per user for commands that span users (`memory.reinforce`, one
 * command per shard), else memoryChangeOf's.
 */
export function memoryChangesOf(command: Command, result?: unknown): MemoryChange[] {
  if (command.type === 'memory.reinforce') {
    // the answer names the units actually written (missing and retired ones were skipped)
    const done = (result as { reinforced?: { user_id: string; unit_ids: string[] }[] } | undefined)?.reinforced;
    const entries = Array.isArray(done) ? done : command.users.map((u) => ({ user_id: u.user_id, unit_ids: u.units.map((r) => r.unit_id) }));
    return entries
      .filter((e) => e.unit_ids.length > 0)
      .map((e) => ({ user_id: e.user_id, unit_ids: [...e.unit_ids], edge_ids: [], whole_user: false, records_only: true }));
  }
  const change = memoryChangeOf(command, result);
  return change ? [change] : [];
}

/** Commands that never change memory units or edges. */
const IRRELEVANT = new Set<string>([
  'events.ingest', 'auth.bootstrap', 'auth.set_password', 'apikey.create', 'apikey.revoke', 'memory.consolidation_failed',
  // goals and tasks are not memory units; a completed task's outcome event is consolidated like any other
  'l3.plan', 'l3.task_status', 'semantic.plan',
]);

/** Command types (of other modules) that change a user's memory in bulk without naming units. */
const WHOLE_USER = new Set<string>(['memory.delete_user', 'user.delete', 'users.delete']);

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Fields whose UUIDs are never units or edges (saves gets on large commands). */
const NOT_MEMORY_IDS = new Set([
  'event_id', 'event_ids', 'delete_event_ids', 'stream_id', 'references', 'add_references', 'consumed', 'dropped', 'reflected', 'vector',
  'context_refs', 'plan_id', 'deleted_event_ids', 'sediment_event_id',
]);

export function memoryChangeOf(command: Command, result?: unknown): MemoryChange | null {
  const type = (command as { type: string }).type;
  if (IRRELEVANT.has(type)) return null;
  const userId = (command as { user_id?: unknown }).user_id;
  if (typeof userId !== 'string') return null;
  const units = new Set<string>();
  const edges = new Set<string>();
  switch (command.type) {
    case 'memory.consolidate':
      for (const u of command.units) units.add(u.unit.id);
      for (const r of command.reinforced) units.add(r.unit_id);
      for (const r of command.retired) units.add(r.unit_id);
      for (const e of command.edges) edges.add(e.edge_id);
      break;
    case 'memory.insights':
      for (const u of command.create) units.add(u.unit.id);
      for (const u of command.update) units.add(u.unit_id);
      for (const e of command.edges) edges.add(e.edge_id);
      for (const id of command.removed_edges) edges.add(id);
      break;
    default: {
      if (WHOLE_USER.has(type)) return { user_id: userId, unit_ids: [], edge_ids: [], whole_user: true };
      collectUuids(command, units, 0);
      // answers name what apply decided (e.g. the edges removed with deleted units)
      collectUuids(result, units, 0);
      for (const id of units) edges.add(id);
      if (units.size === 0) return null;
    }
  }
  return { user_id: userId, unit_ids: [...units], edge_ids: [...edges], whole_user: false };
}

function collectUuids(value: unknown, out: Set<string>, depth: number): void {
  if (depth > 6 || value === null || value === undefined) return;
  if (typeof value === 'string') {
    if (UUID_RE.test(value)) out.add(value.toLowerCase());
    return;
  }
  if (Array.isArray(value)) {
    for (const v of value) collectUuids(v, out, depth + 1);
    return;
  }
  if (typeof value === 'object') {
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      if (NOT_MEMORY_IDS.has(k)) continue;
      collectUuids(v, out, depth + 1);
    }
  }
}
