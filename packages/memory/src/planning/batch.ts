/**
 * L3 planning of a consolidation batch (CONTRACT §8), pure: the batch's events in acceptance order over
 * the user's current goals and tasks become the content of one `l3.plan` command. The server's shell
 * (server/src/workers/planning.ts) reads the records, asks the LLM and proposes; this decides.
 *
 * An event may name a goal planned from an earlier event of the same batch. Parent progress is rolled up
 * from a task event's own state (`task_progress`, `task_status`); a plan's new steps start pending.
 * Events already planned (a retry after a crash between the two commands) are skipped here and refused
 * by apply, so an event is planned once. The records of the i-th event of a batch are stamped `now + i`
 * ms, so however events were batched, goals sort newest first and sibling tasks in acceptance order.
 */
import type { EventRecord, Goal, L3EventPlan, L3RecordUpdate, L3Source, L3Task } from '@strata/store';
import { planFromEvent, type ParentRef } from './extract';
import { recomputeAncestors } from './progress';
import type { TextPlan } from './text-plan';

export interface L3State {
  goals: readonly Goal[];
  tasks: readonly L3Task[];
  /** events already planned → the record each gave */
  sources: ReadonlyMap<string, L3Source>;
}

export interface L3Batch {
  events: L3EventPlan[];
  updates: L3RecordUpdate[];
  /** parent_id values of events that named nothing known (nothing was created for them) */
  unresolved: { event_id: string; parent_id: string }[];
}

/** Goals and tasks from a batch of one user's events (pure). `textPlans`: plans already extracted (LLM), by event id. */
export function planL3(events: readonly EventRecord[], state: L3State, opts: { now: string; newId: () => string; textPlans?: ReadonlyMap<string, TextPlan | null> }): L3Batch {
  const goals = new Map(state.goals.map((g) => [g.id, g]));
  const tasks = new Map(state.tasks.map((t) => [t.task_id, t]));
  const sources = new Map(state.sources);
  const created = new Set<string>();
  const planned: { event_id: string; goal_ids: string[]; task_ids: string[] }[] = [];
  const unresolved: L3Batch['unresolved'] = [];

  const resolveParent = (id: string): ParentRef | null => {
    const key = id.toLowerCase();
    const goal = goals.get(key);
    if (goal) return { kind: 'goal', goal };
    const task = tasks.get(key);
    if (task) return { kind: 'task', task };
    const source = sources.get(key);
    if (source?.kind === 'goal' && goals.has(source.id)) return { kind: 'goal', goal: goals.get(source.id)! };
    if (source?.kind === 'task' && tasks.has(source.id)) return { kind: 'task', task: tasks.get(source.id)! };
    return null;
  };

  const base = Date.parse(opts.now);
  for (const [position, event] of events.entries()) {
    if (sources.has(event.event_id)) continue;
    // The i-th event's records are stamped now + i ms, so a batch keeps acceptance order (newest goal first, tasks in order).
    const now = new Date(base + position).toISOString();
    const plan = planFromEvent(event, { newId: opts.newId, now, resolveParent, textPlan: opts.textPlans?.get(event.event_id) });
    if (plan.unresolved_parent_id !== null) unresolved.push({ event_id: event.event_id, parent_id: plan.unresolved_parent_id });
    if (plan.goals.length + plan.tasks.length === 0) continue;
    for (const g of plan.goals) {
      goals.set(g.id, g);
      created.add(g.id);
    }
    for (const t of plan.tasks) {
      tasks.set(t.task_id, t);
      created.add(t.task_id);
    }
    sources.set(event.event_id, plan.goals.length > 0 ? { kind: 'goal', id: plan.goals[0].id } : { kind: 'task', id: plan.tasks[0].task_id });
    planned.push({ event_id: event.event_id, goal_ids: plan.goals.map((g) => g.id), task_ids: plan.tasks.map((t) => t.task_id) });
    if (plan.source === 'task_event') {
      // The event's own task carries its state: its ancestors' progress follows.
      const changes = recomputeAncestors(plan.tasks[0], [...tasks.values()], [...goals.values()], now);
      for (const t of changes.tasks) tasks.set(t.task_id, t);
      for (const g of changes.goals) goals.set(g.id, g);
    }
  }

  const updates: L3RecordUpdate[] = [];
  for (const before of state.goals) {
    const after = goals.get(before.id)!;
    if (after !== before) updates.push({ kind: 'goal', before, after });
  }
  for (const before of state.tasks) {
    const after = tasks.get(before.task_id)!;
    if (after !== before) updates.push({ kind: 'task', before, after });
  }
  return {
    events: planned.map((p) => ({ event_id: p.event_id, goals: p.goal_ids.map((id) => goals.get(id)!), tasks: p.task_ids.map((id) => tasks.get(id)!) })),
    updates,
    unresolved,
  };
}
