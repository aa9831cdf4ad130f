/**
 * Goals and tasks from one L0 event (CONTRACT §8), as plain records ready to go into a command.
 * Pure: ids come from `ctx.newId`, times from `ctx.now`, the parent lookup from `ctx.resolveParent`,
 * and an LLM plan (if any) is computed beforehand (`planFromEventWithLlm` does both).
 *
 * Decisions:
 * - Only `text` events are planned (a media event's content is a URL or base64, not a plan).
 * - `parent_id` that resolves (to a goal or task, by its id or by the event it came from) makes the
 *   event a task under it, even with `level: 3` (the client placed it in a tree explicitly).
 *   `level: 3` otherwise makes a goal. A `parent_id` that resolves to nothing creates nothing and is
 *   reported in `unresolved_parent_id`, so the caller can retry once the parent has been planned
 *   (consolidation of the parent's event may lag behind).
 * - Task state from the event: `task_status` parsed like the status route; an unreadable value gives
 *   `pending` (the event was already accepted, a hint must not fail it); `task_progress` clamped to
 *   [0, 1]; a completed task has progress 1. The same hints on a `level: 3` event set the goal's state.
 * - Explicit dependencies: `metadata.depends_on` or `metadata.dependencies` (ids of tasks or of the
 *   events they came from), resolved through `resolveParent`; unknown ids are dropped.
 * - Plans in text: steps found in a goal event become its tasks; steps in a task event become its
 *   subtasks. An event with neither level 3 nor parent makes a goal only from an explicit goal
 *   statement ("My goal is …", "Goal: …"), or from a weak one ("I want to …", "I'm planning to …")
 *   followed by steps; steps without any goal statement make nothing (ordinary lists in chat are not
 *   plans).
 * - Titles are cleaned (`cleanTitle`); a goal's content is its statement ("Move to Berlin"), or the
 *   event's first line when it has none. Step i of a plan gets created_at = now + i ms so that
 *   creation order is plan order.
 */
import type { EventRecord, Goal, L3Task, TaskStatus } from '@strata/store';
import type { Llm } from '../providers/types';
import { extractTextPlanWithLlm } from './llm-plan';
import { tryParseTaskStatus } from './status';
import { cleanTitle, extractTextPlan, mayContainPlan, type TextPlan } from './text-plan';

export type ParentRef = { kind: 'goal'; goal: Goal } | { kind: 'task'; task: L3Task };

export type PlannableEvent = Pick<EventRecord,
  'event_id' | 'user_id' | 'stream_id' | 'org_id' | 'agent_id' | 'content' | 'content_type' | 'level' |
  'parent_id' | 'task_status' | 'task_progress' | 'metadata'>;

export interface PlanContext {
  newId: () => string;
  /** RFC 3339 UTC time of the planning (the command's time). */
  now: string;
  /** A goal or task by its own id, or by the event_id of the event it came from; null if none. */
  resolveParent: (id: string) => ParentRef | null;
  /** A plan already extracted from the text (e.g. by the LLM); undefined = extract offline now. */
  textPlan?: TextPlan | null;
}

export interface EventPlan {
  goals: Goal[];
  tasks: L3Task[];
  /** The event's parent_id when it named nothing known; nothing was created for the event then. */
  unresolved_parent_id: string | null;
  source: 'goal_event' | 'task_event' | 'text' | 'none';
}

function addMs(iso: string, ms: number): string {
  return new Date(Date.parse(iso) + ms).toISOString();
}

function clamp01(x: number | null | undefined): number | null {
  return typeof x === 'number' && Number.isFinite(x) ? Math.min(1, Math.max(0, x)) : null;
}

/** The event's own headline: text before a colon, a newline or the first numbered step. */
export function headline(content: string): string {
  const cut = content.search(/:\s|\n|(?:^|\s)(?:step\s*)?1\s*[.)]\s/i);
  return cleanTitle(cut > 0 ? content.slice(0, cut) : content);
}

function stateFromHints(event: PlannableEvent): { status: TaskStatus; reason: string | null; progress: number } {
  const parsed = event.task_status === null ? null : tryParseTaskStatus(event.task_status);
  const status = parsed?.status ?? 'pending';
  const progress = status === 'completed' ? 1 : clamp01(event.task_progress) ?? 0;
  return { status, reason: parsed?.reason ?? null, progress };
}

function explicitDependencies(event: PlannableEvent, ctx: PlanContext): string[] {
  const meta = event.metadata ?? {};
  const raw = Array.isArray(meta.depends_on) ? meta.depends_on : Array.isArray(meta.dependencies) ? meta.dependencies : [];
  const ids: string[] = [];
  for (const r of raw) {
    if (typeof r !== 'string') continue;
    const ref = ctx.resolveParent(r);
    if (ref?.kind === 'task' && !ids.includes(ref.task.task_id)) ids.push(ref.task.task_id);
  }
  return ids;
}

function newTask(event: PlannableEvent, fields: Pick<L3Task, 'task_id' | 'parent_id' | 'title' | 'description' | 'status' | 'status_reason' | 'progress' | 'dependencies'>, createdAt: string): L3Task {
  return {
    ...fields,
    user_id: event.user_id,
    org_id: event.org_id,
    agent_id: event.agent_id,
    stream_id: event.stream_id,
    context_refs: [event.event_id],
    created_at: createdAt,
    updated_at: createdAt,
    result_summary: null,
  };
}

/** Tasks for the plan's steps under `parentId`, ids in step order. */
function stepTasks(event: PlannableEvent, ctx: PlanContext, plan: TextPlan, parentId: string): L3Task[] {
  const ids = plan.steps.map(() => ctx.newId());
  return plan.steps.map((s, i) => newTask(event, {
    task_id: ids[i],
    parent_id: parentId,
    title: s.title,
    description: s.description,
    status: 'pending',
    status_reason: null,
    progress: 0,
    dependencies: s.depends_on.map((j) => ids[j]),
  }, addMs(ctx.now, i + 1)));
}

function newGoal(event: PlannableEvent, ctx: PlanContext, content: string, state: { status: TaskStatus; progress: number }): Goal {
  return {
    id: ctx.newId(),
    user_id: event.user_id,
    stream_id: event.stream_id,
    content,
    status: state.status,
    progress: state.progress,
    source_event_id: event.event_id,
    transaction_time: ctx.now,
  };
}

/** Goals and tasks that one event creates (pure; see the module comment for the rules). */
export function planFromEvent(event: PlannableEvent, ctx: PlanContext): EventPlan {
  const none: EventPlan = { goals: [], tasks: [], unresolved_parent_id: null, source: 'none' };
  if (event.content_type !== 'text' || event.content.trim() === '') return none;
  const plan = ctx.textPlan !== undefined ? ctx.textPlan : extractTextPlan(event.content);
  const steps = plan?.steps.length ? plan : null;

  if (event.parent_id !== null) {
    const parent = ctx.resolveParent(event.parent_id);
    if (parent) {
      const state = stateFromHints(event);
      const task = newTask(event, {
        task_id: ctx.newId(),
        parent_id: parent.kind === 'goal' ? parent.goal.id : parent.task.task_id,
        title: plan?.goal ?? headline(event.content),
        description: event.content.trim(),
        status: state.status,
        status_reason: state.reason,
        progress: state.progress,
        dependencies: explicitDependencies(event, ctx),
      }, ctx.now);
      return { goals: [], tasks: [task, ...(steps ? stepTasks(event, ctx, steps, task.task_id) : [])], unresolved_parent_id: null, source: 'task_event' };
    }
    if (event.level !== 3) return { ...none, unresolved_parent_id: event.parent_id };
  }

  if (event.level === 3) {
    const goal = newGoal(event, ctx, plan?.goal ?? headline(event.content), stateFromHints(event));
    return { goals: [goal], tasks: steps ? stepTasks(event, ctx, steps, goal.id) : [], unresolved_parent_id: null, source: 'goal_event' };
  }

  if (plan?.goal && (plan.goal_explicit || steps)) {
    const goal = newGoal(event, ctx, plan.goal, { status: 'pending', progress: 0 });
    return { goals: [goal], tasks: steps ? stepTasks(event, ctx, steps, goal.id) : [], unresolved_parent_id: null, source: 'text' };
  }
  return none;
}

/** Would this event produce anything (so an LLM call is worth making)? */
export function eventMayPlan(event: PlannableEvent): boolean {
  return event.content_type === 'text' && (event.level === 3 || event.parent_id !== null || mayContainPlan(event.content));
}

/**
 * `planFromEvent` with an optional LLM planner: the LLM is asked only when the event may hold a
 * plan, and its failures fall back to the offline extractor (`extractTextPlanWithLlm`).
 */
export async function planFromEventWithLlm(event: PlannableEvent, ctx: Omit<PlanContext, 'textPlan'> & { llm?: Llm | null }): Promise<EventPlan & { planner: 'llm' | 'offline' }> {
  const { llm, ...rest } = ctx;
  if (!llm || !eventMayPlan(event)) return { ...planFromEvent(event, rest), planner: 'offline' };
  const { plan, source } = await extractTextPlanWithLlm(llm, event.content);
  return { ...planFromEvent(event, { ...rest, textPlan: plan }), planner: source };
}
