/**
 * Goal/task trees and the ready list (pure, for the `tasks/tree` and `tasks/ready` routes).
 *
 * Decisions:
 * - Goals newest first (transaction_time descending, then id). Tasks at every level in creation order
 *   (created_at ascending, then task_id); the planner gives a plan's steps increasing created_at so
 *   creation order is plan order.
 * - A goal's tree holds every task under it whatever the task's stream (a task event may name a
 *   goal of another stream of the same user); `stream_id` filters the goals only.
 * - Only tasks reachable from a goal appear; a task whose parent is missing, or that sits on a parent
 *   cycle, is left out (see `unreachableTasks`). Each task appears at most once.
 * - Ready: status `pending` and every dependency `completed`. A dependency id that names no existing
 *   task (deleted) is ignored, so the task is not stranded forever; a dependency that was cancelled or
 *   failed keeps the task waiting (the contract asks for completed dependencies).
 */
import type { Goal, L3Task } from '@strata/store';

export interface GoalView {
  id: string;
  content: string;
  status: Goal['status'];
  progress: number;
  stream_id: string;
  transaction_time: string;
}

export interface TaskNode {
  task: L3Task;
  children: TaskNode[];
}

export interface GoalTree {
  goal: GoalView;
  tasks: TaskNode[];
}

/** The goal view of CONTRACT §8. */
export function goalView(goal: Goal): GoalView {
  return {
    id: goal.id,
    content: goal.content,
    status: goal.status,
    progress: goal.progress,
    stream_id: goal.stream_id,
    transaction_time: goal.transaction_time,
  };
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Creation order: created_at, then task_id. */
export function compareTasks(a: L3Task, b: L3Task): number {
  return cmp(a.created_at, b.created_at) || cmp(a.task_id, b.task_id);
}

/** Newest first: transaction_time descending, then id. */
export function compareGoals(a: Goal, b: Goal): number {
  return cmp(b.transaction_time, a.transaction_time) || cmp(a.id, b.id);
}

function childIndex(tasks: readonly L3Task[]): Map<string, L3Task[]> {
  const index = new Map<string, L3Task[]>();
  for (const t of [...tasks].sort(compareTasks)) {
    if (t.parent_id === null) continue;
    const list = index.get(t.parent_id);
    if (list) list.push(t);
    else index.set(t.parent_id, [t]);
  }
  return index;
}

export function buildTaskTrees(goals: readonly Goal[], tasks: readonly L3Task[], opts: { stream_id?: string } = {}): GoalTree[] {
  const children = childIndex(tasks);
  const placed = new Set<string>();
  const grow = (parentId: string): TaskNode[] => {
    const nodes: TaskNode[] = [];
    for (const t of children.get(parentId) ?? []) {
      if (placed.has(t.task_id)) continue;
      placed.add(t.task_id);
      nodes.push({ task: t, children: grow(t.task_id) });
    }
    return nodes;
  };
  return goals
    .filter((g) => opts.stream_id === undefined || g.stream_id === opts.stream_id)
    .sort(compareGoals)
    .map((g) => ({ goal: goalView(g), tasks: grow(g.id) }));
}

/** Tasks no goal tree reaches (missing parent, no parent, or a parent cycle), in creation order. */
export function unreachableTasks(goals: readonly Goal[], tasks: readonly L3Task[]): L3Task[] {
  const reached = new Set<string>();
  const walk = (nodes: TaskNode[]): void => {
    for (const n of nodes) {
      reached.add(n.task.task_id);
      walk(n.children);
    }
  };
  for (const tree of buildTaskTrees(goals, tasks)) walk(tree.tasks);
  return tasks.filter((t) => !reached.has(t.task_id)).sort(compareTasks);
}

/** Pending tasks whose existing dependencies are all completed, in creation order. */
export function readyTasks(tasks: readonly L3Task[]): L3Task[] {
  const status = new Map(tasks.map((t) => [t.task_id, t.status]));
  return tasks
    .filter((t) => t.status === 'pending' && t.dependencies.every((d) => !status.has(d) || status.get(d) === 'completed'))
    .sort(compareTasks);
}
