/**
 * What an applied command changed in memory, as far as the derived indexes care: per user, which units
 * and edges to read again from LevelDB. Made from the command's typed effects (store/effects.ts), which
 * are read from what apply wrote: never from the command's payload.
 */
import type { ApplyEffects } from '@strata/store';

export interface MemoryChange {
  user_id: string;
  unit_ids: string[];
  edge_ids: string[];
  /**
   * Only the units' records and stats changed (importance, retrieval stats), not what they are searched
   * by: the indexes replace the records and leave text and vectors alone.
   */
  records_only?: boolean;
}

/**
 * One change per user and kind: units whose record alone moved (importance, statistics) apart from
 * the rest (created, changed, retired, deleted units and edges), so an index can be cheap where it may.
 */
export function memoryChangesOf(effects: ApplyEffects): MemoryChange[] {
  const full = new Map<string, MemoryChange>();
  const records = new Map<string, MemoryChange>();
  const of = (m: Map<string, MemoryChange>, user: string, recordsOnly: boolean): MemoryChange => {
    let c = m.get(user);
    if (!c) m.set(user, (c = recordsOnly ? { user_id: user, unit_ids: [], edge_ids: [], records_only: true } : { user_id: user, unit_ids: [], edge_ids: [] }));
    return c;
  };
  for (const u of effects.units) of(u.record_only ? records : full, u.user_id, u.record_only).unit_ids.push(u.unit_id);
  for (const e of effects.edges) of(full, e.user_id, false).edge_ids.push(e.edge_id);
  return [...full.values(), ...records.values()];
}
