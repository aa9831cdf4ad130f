/** HTTP adapters of the goal and task operations (operations/tasks.ts). */
import { badRequest } from '@strata/store';
import { callerOf, type RouteSpec } from '../http/route';
import { readyTaskList, taskTrees, updateTaskStatus } from '../operations/tasks';
import type { TaskViewKind } from '../operations/views';
import type { Services } from '../services';

/** `?view=full` adds stream_id and status_reason to each task (CONTRACT §8); anything else is refused. */
function viewOf(query: Record<string, unknown>): TaskViewKind {
  const view = query.view;
  if (view === undefined || view === '' || view === 'contract') return 'contract';
  if (view === 'full') return 'full';
  throw badRequest('validation_failed', 'view must be full (or left out).', [{ path: '/view', message: 'must be full' }]);
}

const VIEW_PARAM = [{ name: 'view', schema: { type: 'string', enum: ['full'] }, description: 'full: each task also carries stream_id and status_reason' }];

export function taskRoutes(services: Services): RouteSpec[] {
  return [
    {
      method: 'get', path: '/v1/users/:user_id/streams/:stream_id/tasks/tree', tag: 'tasks', auth: 'read', scope: 'operation',
      summary: "The stream's goals (newest first), each with its task tree.", queryParams: VIEW_PARAM,
      handler: (ctx) => taskTrees(services, callerOf(ctx), { user_id: ctx.params.user_id, stream_id: ctx.params.stream_id, view: viewOf(ctx.query) }),
    },
    {
      method: 'get', path: '/v1/users/:user_id/tasks/tree', tag: 'tasks', auth: 'read', scope: 'operation',
      summary: "The user's goals over all streams (newest first), each with its task tree.", queryParams: VIEW_PARAM,
      handler: (ctx) => taskTrees(services, callerOf(ctx), { user_id: ctx.params.user_id, view: viewOf(ctx.query) }),
    },
    {
      method: 'get', path: '/v1/users/:user_id/tasks/ready', tag: 'tasks', auth: 'read', scope: 'operation',
      summary: 'Pending tasks whose dependencies are all completed, in creation order.', queryParams: VIEW_PARAM,
      handler: (ctx) => readyTaskList(services, callerOf(ctx), { user_id: ctx.params.user_id, view: viewOf(ctx.query) }),
    },
    {
      method: 'put', path: '/v1/users/:user_id/tasks/:task_id/status', tag: 'tasks', auth: 'write', body: 'TaskStatus', scope: 'operation',
      summary: 'Set a task\'s status (409 from completed/cancelled unless reopen); completing it rolls up progress and sediments the outcome as an event.',
      queryParams: VIEW_PARAM,
      handler: (ctx) => updateTaskStatus(services, callerOf(ctx), { user_id: ctx.params.user_id, task_id: ctx.params.task_id, update: ctx.body, view: viewOf(ctx.query) }),
    },
  ];
}
