/** Users (CONTRACT §1, §15): the adapters of operations/users.ts. */
import { callerOf, pageParams, type RouteSpec } from '../http/route';
import { listUsers, setUserOrg } from '../operations/users';
import type { Services } from '../services';
import { queryPage } from '../validation';

export function userRoutes(services: Services): RouteSpec[] {
  return [
    {
      method: 'get', path: '/v1/users', tag: 'users', auth: 'admin', scope: 'operation',
      summary: 'Known users in id order with their organization and counts (events, memory units, goals, tasks, pending); scoped keys see their scope.',
      queryParams: pageParams(50, 500),
      handler: (ctx) => listUsers(services, callerOf(ctx), queryPage(ctx.query, 50, 500)),
    },
    {
      method: 'put', path: '/v1/users/:user_id/org', tag: 'users', auth: 'admin', body: 'UserOrg', scope: 'service',
      summary: "Set the organization a user belongs to (null: none); org-scoped keys act only on users of their org.",
      handler: (ctx) => setUserOrg(services, callerOf(ctx), { user_id: ctx.params.user_id, org_id: ctx.body.org_id }),
    },
  ];
}
