import type { ApplyContext } from '../apply-context';
import type { IngestCommand, L3PlanAnswer, L3PlanCommand, L3RecordUpdate, TaskStatusAnswer, TaskStatusCommand } from '../commands';
import type { StateDb } from '../db';
import { InvariantError } from '@strata/raft';
import { failure, notFound, StrataError, type ApplyFailure } from '../errors';
import { join } from '../keys';
import { applyIngest } from './events';
import { indexPendingByUser } from './memory';

/**
 * Apply of L3 commands (CONTRACT §8): goals and tasks planned from events, and status updates. The
 * proposer decided everything (ids, times, progress, the outcome text); apply checks that the records
 * it changes are still the versions it read (compare-and-set) and writes, all or nothing.
 */

const invalid = (message: string): ApplyFailure => failure(new StrataError('invalid_command', message));

/** JSON with keys sorted at every level: two records are the same version when these strings are equal. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    return `{${Object.keys(o).filter((k) => o[k] !== undefined).sort().map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

export function sameRecord(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b);
}

export const goalKey = (userId: string, goalId: string): string => join(userId, goalId);
export const taskKey = (userId: string, taskId: string): string => join(userId, taskId);

const idOf = (u: L3RecordUpdate): string => (u.kind === 'goal' ? u.before.id : u.before.task_id);

/** Null when every update's `before` is the stored version (and the update is well formed), else why not. */
async function checkUpdates(db: StateDb, ctx: ApplyContext, userId: string, updates: L3RecordUpdate[]): Promise<{ stale: string } | { invalid: string } | null> {
  const seen = new Set<string>();
  for (const u of updates) {
    const id = idOf(u);
    const afterId = u.kind === 'goal' ? u.after.id : u.after.task_id;
    if (afterId !== id || u.before.user_id !== userId || u.after.user_id !== userId) return { invalid: `update of ${u.kind} ${id} changes its id or user` };
    if (seen.has(id)) return { invalid: `${u.kind} ${id} is updated twice` };
    seen.add(id);
    const stored = u.kind === 'goal' ? await ctx.get(db.goals, goalKey(userId, id)) : await ctx.get(db.tasks, taskKey(userId, id));
    if (!stored) return { stale: `${u.kind} ${id} no longer exists` };
    // A record is stored under its own user and id; anything else is a write bug, not a stale plan.
    if (stored.user_id !== userId || ('id' in stored ? stored.id : stored.task_id) !== id) throw new InvariantError(`${u.kind} stored under ${userId}/${id} is another record`);
    if (!sameRecord(stored, u.before)) return { stale: `${u.kind} ${id} changed since it was read` };
  }
  return null;
}

function writeUpdates(db: StateDb, ctx: ApplyContext, userId: string, updates: L3RecordUpdate[]): void {
  for (const u of updates) {
    if (u.kind === 'goal') ctx.put(db.goals, goalKey(userId, u.after.id), u.after);
    else ctx.put(db.tasks, taskKey(userId, u.after.task_id), u.after);
  }
}

const STALE_PLAN = (stale: string): L3PlanAnswer => ({ applied: false, stale, goals_created: 0, tasks_created: 0, updated: 0 });

export async function applyL3Plan(db: StateDb, ctx: ApplyContext, cmd: L3PlanCommand): Promise<L3PlanAnswer | ApplyFailure> {
  const user = cmd.user_id;
  const ids = new Set<string>();
  const fresh = async (id: string, what: string): Promise<string | null> => {
    if (ids.has(id)) return `${what} ${id} is created twice`;
    ids.add(id);
    if ((await ctx.get(db.goals, goalKey(user, id))) !== undefined || (await ctx.get(db.tasks, taskKey(user, id))) !== undefined) return `${what} ${id} exists already`;
    return null;
  };
  for (const ep of cmd.events) {
    if ((await ctx.get(db.l3ByEvent, join(user, ep.event_id))) !== undefined) return STALE_PLAN(`event ${ep.event_id} was planned already`);
    if (ep.goals.length + ep.tasks.length === 0) return invalid(`l3.plan: event ${ep.event_id} gives nothing`);
    for (const g of ep.goals) {
      if (g.user_id !== user) return invalid(`l3.plan: goal ${g.id} belongs to another user`);
      const problem = await fresh(g.id, 'goal');
      if (problem) return invalid(`l3.plan: ${problem}`);
    }
    for (const t of ep.tasks) {
      if (t.user_id !== user) return invalid(`l3.plan: task ${t.task_id} belongs to another user`);
      const problem = await fresh(t.task_id, 'task');
      if (problem) return invalid(`l3.plan: ${problem}`);
    }
  }
  const check = await checkUpdates(db, ctx, user, cmd.updates);
  if (check && 'invalid' in check) return invalid(`l3.plan: ${check.invalid}`);
  if (check) return STALE_PLAN(check.stale);

  let goals = 0;
  let tasks = 0;
  for (const ep of cmd.events) {
    for (const g of ep.goals) ctx.put(db.goals, goalKey(user, g.id), g);
    for (const t of ep.tasks) ctx.put(db.tasks, taskKey(user, t.task_id), t);
    const source = ep.goals.length > 0 ? { kind: 'goal' as const, id: ep.goals[0].id } : { kind: 'task' as const, id: ep.tasks[0].task_id };
    ctx.put(db.l3ByEvent, join(user, ep.event_id), source);
    goals += ep.goals.length;
    tasks += ep.tasks.length;
  }
  writeUpdates(db, ctx, user, cmd.updates);
  if (goals > 0) await ctx.increment(db.meta, 'goals', goals);
  if (tasks > 0) await ctx.increment(db.meta, 'tasks', tasks);
  return { applied: true, stale: null, goals_created: goals, tasks_created: tasks, updated: cmd.updates.length };
}

export async function applyTaskStatus(db: StateDb, ctx: ApplyContext, cmd: TaskStatusCommand): Promise<TaskStatusAnswer | ApplyFailure> {
  const user = cmd.user_id;
  const first = cmd.updates[0];
  if (!first || first.kind !== 'task' || first.after.task_id !== cmd.task_id) return invalid('l3.task_status: the first update must be the task itself');
  const current = await ctx.get(db.tasks, taskKey(user, cmd.task_id));
  if (!current) return failure(notFound(`User '${user}' has no task '${cmd.task_id}'.`));
  const check = await checkUpdates(db, ctx, user, cmd.updates);
  if (check && 'invalid' in check) return invalid(`l3.task_status: ${check.invalid}`);
  if (check) return { applied: false, stale: check.stale, task: current, sediment_event_id: null };
  const s = cmd.sediment;
  if (s && (s.user_id !== user || s.stream_id !== first.after.stream_id)) return invalid('l3.task_status: the outcome event must go to the task\'s own stream');
  if (s && (await ctx.get(db.eventIds, join(user, s.event_id))) !== undefined) return invalid(`l3.task_status: event ${s.event_id} exists already`);
  // An outcome is sedimented on a transition into `completed` only (memory/planning/status.ts), never twice for one completion.
  if (s && (first.before.status === 'completed' || first.after.status !== 'completed')) return invalid(`l3.task_status: an outcome event without a transition into completed (${first.before.status} -> ${first.after.status})`);

  writeUpdates(db, ctx, user, cmd.updates);
  if (s) {
    // The ingest apply path itself: the outcome is an L0 event with its pending entry, consolidated like any other.
    const ingest: IngestCommand = { type: 'events.ingest', user_id: user, stream_id: s.stream_id, at: cmd.at, idempotency: null, events: [s], assets: [] };
    const answer = await applyIngest(db, ctx, ingest);
    await indexPendingByUser(db, ctx, ingest, answer);
  }
  return { applied: true, stale: null, task: first.after, sediment_event_id: s?.event_id ?? null };
}
