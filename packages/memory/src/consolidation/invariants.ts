/**
 * Step 12: nothing silently lost. Every event of the batch ends up referenced by a unit of the plan (new or
 * reinforced) or dropped with a reason, and only once dropped. A violation is a bug in the planner, so it
 * throws rather than letting an event vanish from the pending backlog without memory.
 */
import type { EventRecord } from '@strata/store';
import type { ConsolidationPlan } from './types';

export class PlanInvariantError extends Error {}

export function assertPlanCoversEvents(events: EventRecord[], plan: ConsolidationPlan): void {
  const covered = new Set<string>();
  for (const u of plan.units) for (const r of u.unit.references) covered.add(r);
  for (const r of plan.reinforced) for (const id of r.add_references) covered.add(id);
  const dropped = new Set<string>();
  for (const d of plan.dropped) {
    if (!d.reason || d.reason.trim() === '') throw new PlanInvariantError(`event ${d.event_id} dropped without a reason`);
    if (dropped.has(d.event_id)) throw new PlanInvariantError(`event ${d.event_id} dropped twice`);
    dropped.add(d.event_id);
  }
  const ids = new Set(events.map((e) => e.event_id));
  for (const e of events) {
    const inUnit = covered.has(e.event_id);
    const isDropped = dropped.has(e.event_id);
    if (!inUnit && !isDropped) throw new PlanInvariantError(`event ${e.event_id} is neither in a unit nor dropped`);
    if (inUnit && isDropped) throw new PlanInvariantError(`event ${e.event_id} is both in a unit and dropped`);
  }
  for (const id of [...covered, ...dropped]) {
    if (!ids.has(id)) throw new PlanInvariantError(`plan references event ${id} that is not in the batch`);
  }
  const unitIds = new Set(plan.units.map((u) => u.unit.id));
  if (unitIds.size !== plan.units.length) throw new PlanInvariantError('plan creates two units with one id');
  for (const u of plan.units) {
    if (u.unit.importance < 0 || u.unit.importance > 1) throw new PlanInvariantError(`unit ${u.unit.id} importance out of [0,1]`);
  }
  for (const e of plan.edges) {
    if (e.weight < 0 || e.weight > 1) throw new PlanInvariantError(`edge ${e.edge_id} weight out of [0,1]`);
    if (e.source_id === e.target_id) throw new PlanInvariantError(`edge ${e.edge_id} is a self-loop`);
  }
}
