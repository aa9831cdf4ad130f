/**
 * Parent progress recomputed from children (pure).
 *
 * Decisions:
 * - A parent's progress is the mean of its children's progress, a completed child counting 1 and a
 *   cancelled child not counting at all (cancelled work is not owed). Rounded to 4 decimals.
 * - A parent with no counted child keeps its progress (nothing to derive it from).
 * - A completed parent task keeps progress 1 (its own status wins over a late child).
 * - Recomputation walks up the parent chain (task -> task -> goal), cycle-safe.
 * - Nothing completes by itself (CONTRACT §8): a goal or parent task at progress 1 keeps its status;
 *   only an explicit status update completes it.
 */
import type { Goal, L3Task } from '@strata/store';

function round(x: number): number {
  return Math.round(x * 10_000) / 10_000;
}

/** Mean progress of `children` (completed = 1, cancelled excluded), or null when none counts. */
export function aggregateProgress(children: readonly L3Task[]): number | null {
  let sum = 0;
  let n = 0;
  for (const c of children) {
    if (c.status === 'cancelled') continue;
    sum += c.status === 'completed' ? 1 : Math.min(1, Math.max(0, c.progress));
    n += 1;
  }
  return n === 0 ? null : round(sum / n);
}

export interface ProgressChanges {
  /** Ancestor tasks whose progress changed (new versions, `updated_at = now`). */
  tasks: L3Task[];
  /** Goals whose progress changed (new versions). */
  goals: Goal[];
}

/**
 * After `changed` (already in its new state) was updated, recompute the progress of its ancestors.
 * `tasks` and `goals` are the current records of the user (`changed` replaces its old version).
 */
export function recomputeAncestors(changed: L3Task, tasks: readonly L3Task[], goals: readonly Goal[], now: string): ProgressChanges {
  const byId = new Map<string, L3Task>();
  for (const t of tasks) byId.set(t.task_id, t);
  byId.set(changed.task_id, changed);
  const goalById = new Map(goals.map((g) => [g.id, g]));
  const childrenOf = (parentId: string): L3Task[] => [...byId.values()].filter((t) => t.parent_id === parentId);

  const out: ProgressChanges = { tasks: [], goals: [] };
  const seen = new Set<string>([changed.task_id]);
  let parentId = changed.parent_id;
  while (parentId !== null && !seen.has(parentId)) {
    seen.add(parentId);
    const goal = goalById.get(parentId);
    if (goal) {
      const p = aggregateProgress(childrenOf(goal.id));
      if (p !== null && p !== goal.progress) out.goals.push({ ...goal, progress: p });
      break; // goals are roots
    }
    const parent = byId.get(parentId);
    if (!parent) break;
    const p = aggregateProgress(childrenOf(parent.task_id));
    if (p !== null && parent.status !== 'completed' && p !== parent.progress) {
      const next = { ...parent, progress: p, updated_at: now };
      byId.set(next.task_id, next);
      out.tasks.push(next);
    }
    parentId = parent.parent_id;
  }
  return out;
}
