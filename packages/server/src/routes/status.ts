/** The backlog routes (CONTRACT §6): the adapters of operations/status.ts. */
import { callerOf, pageParams, type RouteSpec } from '../http/route';
import { failedEvents, pendingStatus } from '../operations/status';
import type { Services } from '../services';
import { queryPage } from '../validation';

export function statusRoutes(services: Services): RouteSpec[] {
  return [
    {
      method: 'get', path: '/v1/status/pending', tag: 'status', auth: 'read', scope: 'operation',
      summary: 'Events accepted but not yet consolidated into memory, over every shard (scoped credentials: over their users only); ready once none are left.',
      handler: (ctx) => pendingStatus(services, callerOf(ctx)),
    },
    {
      method: 'get', path: '/v1/status/failed', tag: 'status', auth: 'read', scope: 'operation',
      summary: 'Events consolidation gave up on, with the reason, paged; scoped credentials see only their users\' events.',
      queryParams: pageParams(100, 1000),
      handler: (ctx) => failedEvents(services, callerOf(ctx), queryPage(ctx.query, 100, 1000)),
    },
  ];
}
