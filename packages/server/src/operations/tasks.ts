/**
 * Goals and tasks (CONTRACT §8), transport free: a principal and plain input in, the scope check made
 * here. Trees and the ready list are read from this replica; a status update is computed here
 * (planning's pure transition and progress roll-up) and proposed as one
 * `l3.task_status` command, which on completion also carries the outcome event for the task's stream.
 * The command is compare-and-set: if the task or a parent changed meanwhile, it is read and computed again.
 */
import { randomUUID } from 'node:crypto';
import { prepareEvent } from '@strata/memory';
import { applyStatusUpdate, buildTaskTrees, readyTasks, recomputeAncestors, type StatusUpdate } from '@strata/memory/planning';
import {
  conflict, getTask, l3SourceOfEvent, listGoals, listTasks, notFound, settle,
  type L3RecordUpdate, type L3Task, type StateDb, type TaskStatusCommand,
} from '@strata/store';
import type { Principal } from '../auth/principal';
import type { Services } from '../services';
import { goalTreesView, taskView, type TaskViewKind } from './views';

/** Proposals refused as stale before the operation gives up with 409 (each retry reads the state again). */
const STATUS_ATTEMPTS = 5;

/** A task by its id, or by the id of the event it came from (all a client knows right after ingest). */
async function findTask(db: StateDb, userId: string, id: string): Promise<L3Task | undefined> {
  const key = id.toLowerCase();
  const task = await getTask(db, userId, key);
  if (task) return task;
  const source = await l3SourceOfEvent(db, userId, key);
  return source?.kind === 'task' ? getTask(db, userId, source.id) : undefined;
}

/** The user's goals (newest first), each with its task tree; of one stream when stream_id is given. */
export async function taskTrees(services: Services, principal: Principal, input: { user_id: string; stream_id?: string; view?: TaskViewKind }) {
  const userId = input.user_id;
  const streamId = input.stream_id;
  await services.scope.authorizeUser(principal, { user_id: userId, write: false });
  const db = services.shards.forUser(userId).db;
  const [goals, tasks] = await Promise.all([listGoals(db, userId), listTasks(db, userId)]);
  return goalTreesView(buildTaskTrees(goals, tasks, streamId === undefined ? {} : { stream_id: streamId }), input.view);
}

/** Pending tasks whose dependencies are all completed, in creation order. */
export async function readyTaskList(services: Services, principal: Principal, input: { user_id: string; view?: TaskViewKind }) {
  await services.scope.authorizeUser(principal, { user_id: input.user_id, write: false });
  return readyTasks(await listTasks(services.shards.forUser(input.user_id).db, input.user_id)).map((t) => taskView(t, input.view));
}

/**
 * Sets a task's status: the transition and the progress roll-up are computed here and proposed as one
 * compare-and-set `l3.task_status` command, read and computed again when the task or a parent changed
 * meanwhile (409 after STATUS_ATTEMPTS).
 */
export async function updateTaskStatus(services: Services, principal: Principal, input: { user_id: string; task_id: string; update: StatusUpdate; view?: TaskViewKind }) {
  return taskView(await setTaskStatus(services, principal, input), input.view);
}

async function setTaskStatus(services: Services, principal: Principal, input: { user_id: string; task_id: string; update: StatusUpdate }): Promise<L3Task> {
  const { user_id: userId, task_id: taskId, update: body } = input;
  await services.scope.authorizeUser(principal, { user_id: userId, write: true });
  const shard = services.shards.forUser(userId);
  for (let attempt = 0; attempt < STATUS_ATTEMPTS; attempt++) {
    const task = await findTask(shard.db, userId, taskId);
    if (!task) throw notFound(`User '${userId}' has no task '${taskId}'.`);
    const now = new Date().toISOString();
    const result = applyStatusUpdate(task, body, now);
    if (!result.changed) return task;
    const [goals, tasks] = await Promise.all([listGoals(shard.db, userId), listTasks(shard.db, userId)]);
    const ancestors = recomputeAncestors(result.task, tasks, goals, now);
    const taskById = new Map(tasks.map((t) => [t.task_id, t]));
    const goalById = new Map(goals.map((g) => [g.id, g]));
    const updates: L3RecordUpdate[] = [
      { kind: 'task', before: task, after: result.task },
      ...ancestors.tasks.map((after) => ({ kind: 'task' as const, before: taskById.get(after.task_id)!, after })),
      ...ancestors.goals.map((after) => ({ kind: 'goal' as const, before: goalById.get(after.id)!, after })),
    ];
    const sediment = result.completedNow && result.sedimentText
      ? prepareEvent({
        content: result.sedimentText, org_id: task.org_id, agent_id: task.agent_id,
        metadata: { source: 'task_outcome', task_id: task.task_id },
      }, {
        user_id: userId, stream_id: task.stream_id, event_id: randomUUID(), now, path: '',
        metadataMaxBytes: services.config.ingest.metadata_max_bytes, maxContentBytes: services.config.ingest.max_content_bytes,
      }).event
      : null;
    const command: TaskStatusCommand = { type: 'l3.task_status', user_id: userId, at: now, task_id: task.task_id, updates, sediment };
    const answer = settle(await shard.log.propose(command));
    if (answer.applied && answer.task) {
      if (sediment) services.metrics.eventsIngested.inc(1);
      return answer.task;
    }
  }
  throw conflict('The task or its parents kept changing while this update was being made; send it again.');
}

