/**
 * Task status: parsing what clients send (CONTRACT §8) and the pure transition applied by
 * `PUT /tasks/:task_id/status`. The proposing node calls `applyStatusUpdate` and puts the resulting
 * task (and sediment text) into the command, so apply stays deterministic.
 *
 * Decisions where the contract is silent:
 * - Accepted spellings: the six statuses in any casing, with `-`, `_`, spaces or camel case between
 *   words (`InProgress`, `in-progress`, `IN_PROGRESS`, `in progress`), plus the aliases `canceled`,
 *   `complete` and `done`. Anything else is a 400 `validation_failed` naming the accepted values.
 * - The object form `{"<Status>": "reason"}` is accepted for every status (not only Blocked/Failed);
 *   it must have exactly one key, and the reason must be a string or null.
 * - Transitions: `completed` and `cancelled` are terminal. Leaving them needs `reopen: true`
 *   (409 `invalid_transition` otherwise). Re-sending the same terminal status without `reopen` is an
 *   idempotent no-op (a retried request must not fail or sediment twice). Every other transition is
 *   allowed, `failed -> pending` and `blocked -> in_progress` included: agents retry failed work.
 * - `status_reason` belongs to the status: a new status without a reason clears it; the same status
 *   re-sent without a reason keeps it.
 * - `progress` must be a number in [0, 1]; completing sets it to 1 whatever was sent; other statuses
 *   keep the current progress unless one is sent (reopening does not reset it).
 * - `result_summary` is replaced only when sent (a string, trimmed; empty means null).
 * - Sedimentation happens on each transition *into* `completed` (so a reopened task completed again
 *   sediments its new outcome). Text: "Task '<title>' completed: <summary>", or
 *   "Task '<title>' completed." without a summary.
 */
import { TASK_STATUSES, type L3Task, type TaskStatus } from '@strata/store';
import { PlanningError } from './errors';

export interface ParsedStatus {
  status: TaskStatus;
  reason: string | null;
}

export const TERMINAL_STATUSES: readonly TaskStatus[] = ['completed', 'cancelled'];

export function isTerminal(status: TaskStatus): boolean {
  return TERMINAL_STATUSES.includes(status);
}

const ALIASES: Record<string, TaskStatus> = {
  pending: 'pending',
  inprogress: 'in_progress',
  blocked: 'blocked',
  completed: 'completed',
  complete: 'completed',
  done: 'completed',
  failed: 'failed',
  cancelled: 'cancelled',
  canceled: 'cancelled',
};

const ACCEPTED = `use one of ${TASK_STATUSES.join(', ')} (any casing; "InProgress" and "in-progress" work too), ` +
  'or {"Blocked": "reason"} / {"Failed": "reason"} to give a reason';

function statusFromName(name: string): TaskStatus | null {
  const key = name.trim().toLowerCase().replace(/[\s_-]+/g, '');
  return Object.prototype.hasOwnProperty.call(ALIASES, key) ? ALIASES[key] : null;
}

function describe(input: unknown): string {
  if (typeof input === 'string') return `"${input.length > 40 ? input.slice(0, 40) + '…' : input}"`;
  if (input === null) return 'null';
  if (Array.isArray(input)) return 'an array';
  return typeof input === 'object' ? 'this object' : String(input);
}

/** Parse a client status; throws `PlanningError('validation_failed')` with an actionable message. */
export function parseTaskStatus(input: unknown, path = '/status'): ParsedStatus {
  const fail = (why: string): never => {
    const message = `${why}; ${ACCEPTED}.`;
    throw new PlanningError('validation_failed', message, [{ path, message }]);
  };
  if (typeof input === 'string') {
    const status = statusFromName(input);
    return status ? { status, reason: null } : fail(`${describe(input)} is not a task status`);
  }
  if (input !== null && typeof input === 'object' && !Array.isArray(input)) {
    const keys = Object.keys(input);
    if (keys.length !== 1) return fail(`a status object must have exactly one key, got ${keys.length}`);
    const status = statusFromName(keys[0]);
    if (!status) return fail(`"${keys[0]}" is not a task status`);
    const raw = (input as Record<string, unknown>)[keys[0]];
    if (raw !== null && raw !== undefined && typeof raw !== 'string') return fail(`the reason for "${keys[0]}" must be a string`);
    const reason = typeof raw === 'string' && raw.trim() !== '' ? raw.trim() : null;
    return { status, reason };
  }
  return fail(`${describe(input)} is not a task status`);
}

/** Like `parseTaskStatus` but returns null instead of throwing (for hints on already-accepted events). */
export function tryParseTaskStatus(input: unknown): ParsedStatus | null {
  try {
    return parseTaskStatus(input);
  } catch {
    return null;
  }
}

/** Null when the transition is allowed, else the reason it is not (for a 409 message). */
export function transitionError(from: TaskStatus, to: TaskStatus, reopen: boolean): string | null {
  if (!isTerminal(from) || from === to || reopen) return null;
  return `The task is ${from}, a final state; send "reopen": true with the new status to change it.`;
}

export interface StatusUpdate {
  /** Raw client input: a status string in any accepted form, or `{"<Status>": "reason"}`. */
  status: unknown;
  progress?: number | null;
  result_summary?: string | null;
  reopen?: boolean | null;
}

export interface StatusUpdateResult {
  task: L3Task;
  /** False for an idempotent repeat of a terminal status (nothing to propose). */
  changed: boolean;
  /** True only on a transition into `completed`: recompute the parent's progress and sediment. */
  completedNow: boolean;
  /** The L0 event text to sediment into the task's stream, when `completedNow`. */
  sedimentText?: string;
}

/** The outcome text sedimented back as an L0 event when a task completes. */
export function completionText(title: string, resultSummary: string | null): string {
  const summary = resultSummary?.trim();
  return summary ? `Task '${title}' completed: ${summary}` : `Task '${title}' completed.`;
}

/** Apply a status update to a task (pure). Throws `PlanningError` on bad input or a forbidden transition. */
export function applyStatusUpdate(task: L3Task, update: StatusUpdate, now: string): StatusUpdateResult {
  const parsed = parseTaskStatus(update.status);
  const { progress } = update;
  if (progress !== undefined && progress !== null && (typeof progress !== 'number' || !Number.isFinite(progress) || progress < 0 || progress > 1)) {
    const message = 'progress must be a number from 0 to 1.';
    throw new PlanningError('validation_failed', message, [{ path: '/progress', message }]);
  }
  if (update.result_summary !== undefined && update.result_summary !== null && typeof update.result_summary !== 'string') {
    const message = 'result_summary must be a string.';
    throw new PlanningError('validation_failed', message, [{ path: '/result_summary', message }]);
  }
  const reopen = update.reopen === true;
  const from = task.status;
  const to = parsed.status;
  const refused = transitionError(from, to, reopen);
  if (refused) throw new PlanningError('invalid_transition', refused);
  if (isTerminal(from) && from === to && !reopen) return { task, changed: false, completedNow: false };

  const next: L3Task = {
    ...task,
    status: to,
    status_reason: parsed.reason ?? (to === from ? task.status_reason : null),
    updated_at: now,
  };
  if (to === 'completed') next.progress = 1;
  else if (typeof progress === 'number') next.progress = progress;
  if (typeof update.result_summary === 'string') {
    const summary = update.result_summary.trim();
    next.result_summary = summary === '' ? null : summary;
  }
  const completedNow = to === 'completed' && from !== 'completed';
  const result: StatusUpdateResult = { task: next, changed: true, completedNow };
  if (completedNow) result.sedimentText = completionText(next.title, next.result_summary);
  return result;
}
