/** HTTP adapters of the goal and task operations (operations/tasks.ts). */
import { callerOf, type RouteSpec } from '../http/route';
import { readyTaskList, taskTrees, updateTaskStatus } from '../operations/tasks';
import type { Services } from '../services';

export function taskRoutes(services: Services): RouteSpec[] {
  return [
    {
      method: 'get', path: '/v1/users/:user_id/streams/:stream_id/tasks/tree', tag: 'tasks', auth: 'read', scope: 'operation',
      summary: "The stream's goals (newest first), each with its task tree.",
      handler: (ctx) => taskTrees(services, callerOf(ctx), { user_id: ctx.params.user_id, stream_id: ctx.params.stream_id }),
    },
    {
      method: 'get', path: '/v1/users/:user_id/tasks/tree', tag: 'tasks', auth: 'read', scope: 'operation',
      summary: "The user's goals over all streams (newest first), each with its task tree.",
      handler: (ctx) => taskTrees(services, callerOf(ctx), { user_id: ctx.params.user_id }),
    },
    {
      method: 'get', path: '/v1/users/:user_id/tasks/ready', tag: 'tasks', auth: 'read', scope: 'operation',
      summary: 'Pending tasks whose dependencies are all completed, in creation order.',
      handler: (ctx) => readyTaskList(services, callerOf(ctx), { user_id: ctx.params.user_id }),
    },
    {
      method: 'put', path: '/v1/users/:user_id/tasks/:task_id/status', tag: 'tasks', auth: 'write', body: 'TaskStatus', scope: 'operation',
      summary: 'Set a task\'s status (409 from completed/cancelled unless reopen); completing it rolls up progress and sediments the outcome as an event.',
      handler: (ctx) => updateTaskStatus(services, callerOf(ctx), { user_id: ctx.params.user_id, task_id: ctx.params.task_id, update: ctx.body }),
    },
  ];
}
