/**
 * L3 planning at consolidation time (CONTRACT §8): the events of a consolidation batch become goals and
 * tasks (`level: 3` events, events whose `parent_id` names a goal or task, plans in the text), proposed
 * as one `l3.plan` command. Runs on the shard leader, before the batch's `memory.consolidate`, with the
 * node's LLM when configured (its plan is computed here and travels in the command).
 *
 * `planL3` is the pure part: the batch's events in acceptance order over the user's current records, so
 * an event may name a goal planned from an earlier event of the same batch. Parent progress is rolled
 * up from a task event's own state (`task_progress`, `task_status`); a plan's new steps start pending.
 * Events already planned (a retry after a crash between the two commands) are skipped here and refused
 * by apply, so an event is planned once. The records of the i-th event of a batch are stamped `now + i`
 * ms, so however events were batched, goals sort newest first and sibling tasks in acceptance order.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import {
  eventMayPlan, extractTextPlanWithLlm, planFromEvent, recomputeAncestors, type ParentRef, type TextPlan,
} from '@strata/memory/planning';
import type { Llm } from '@strata/memory';
import {
  l3Sources, listGoals, listTasks, settle,
  type EventRecord, type Goal, type L3EventPlan, type L3PlanAnswer, type L3PlanCommand, type L3RecordUpdate, type L3Source, type L3Task,
} from '@strata/store';
import type { Shard } from '../shards';

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

export interface L3PlannerOptions {
  shard: Shard;
  llm?: Llm | null;
  logger: Logger;
  now?: () => number;
  newId?: () => string;
  /** proposals refused as stale before giving up (default 3) */
  attempts?: number;
}

/** The shell around `planL3`: reads the user's records, asks the LLM, proposes `l3.plan`. */
export class L3Planner {
  constructor(private readonly o: L3PlannerOptions) {}

  /** Plans the events (one user's, in acceptance order); null when they give nothing. Stale plans are made again. */
  async planEvents(userId: string, events: readonly EventRecord[]): Promise<L3PlanAnswer | null> {
    const { shard } = this.o;
    const candidates = events.filter((e) => e.content_type === 'text');
    if (candidates.length === 0) return null;
    const textPlans = new Map<string, TextPlan | null>();
    let usedLlm = false;
    const attempts = this.o.attempts ?? 3;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      const [goals, tasks, sources] = await Promise.all([listGoals(shard.db, userId), listTasks(shard.db, userId), l3Sources(shard.db, userId)]);
      const todo = candidates.filter((e) => !sources.has(e.event_id));
      if (this.o.llm) {
        for (const e of todo) {
          if (textPlans.has(e.event_id) || !eventMayPlan(e)) continue;
          const { plan, source } = await extractTextPlanWithLlm(this.o.llm, e.content);
          textPlans.set(e.event_id, plan);
          usedLlm = usedLlm || source === 'llm';
        }
      }
      const now = new Date((this.o.now ?? Date.now)()).toISOString();
      const batch = planL3(todo, { goals, tasks, sources }, { now, newId: this.o.newId ?? randomUUID, textPlans });
      for (const u of batch.unresolved) {
        this.o.logger.info({ shard: shard.id, user_id: userId, ...u }, 'event names a parent that is no goal or task; no task was made of it');
      }
      if (batch.events.length === 0 && batch.updates.length === 0) return null;
      const command: L3PlanCommand = { type: 'l3.plan', user_id: userId, at: now, planner: usedLlm ? 'llm' : 'offline', events: batch.events, updates: batch.updates };
      const answer = settle(await shard.log.propose(command));
      if (answer.applied) return answer;
      this.o.logger.debug({ shard: shard.id, user_id: userId, stale: answer.stale, attempt }, 'L3 plan was stale; planning again');
    }
    throw new Error(`L3 planning for user '${userId}' was stale ${attempts} times`);
  }
}
