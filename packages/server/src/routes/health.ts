import { StrataError } from '@strata/store';
import type { RouteSpec } from '../http/route';
import type { Services } from '../services';
import { buildOpenApi } from '../openapi';
import { queryBool } from '../validation';

export function healthRoutes(services: Services, allRoutes: () => RouteSpec[]): RouteSpec[] {
  return [
    {
      method: 'get', path: '/livez', tag: 'operations', auth: 'public', summary: 'The process is up.',
      handler: async () => ({ status: 'ok' }),
    },
    {
      method: 'get', path: '/readyz', tag: 'operations', auth: 'public',
      summary: 'This node can serve, for a load balancer: storage open, a member of the cluster, and a leader known (or known within cluster.forward_timeout_ms) for most of the groups it serves; strict=true: a leader known right now for every one (503 otherwise).',
      queryParams: [{ name: 'strict', schema: { type: 'boolean', default: false }, description: 'a leader known right now for shard 0 and every group this node holds' }],
      handler: async (ctx) => {
        const verdict = services.readiness(queryBool(ctx.query.strict, 'strict'));
        if (!verdict.ready) throw new StrataError('unavailable', `This node cannot serve now: ${verdict.reason}`, undefined, 1);
        return { status: 'ready' };
      },
    },
    {
      method: 'get', path: '/openapi.json', tag: 'operations', auth: 'public', summary: 'The OpenAPI 3.1 document of every route.',
      handler: async () => buildOpenApi(allRoutes()),
    },
  ];
}
