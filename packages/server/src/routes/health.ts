import { StrataError } from '@strata/store';
import type { RouteSpec } from '../http/route';
import type { Services } from '../services';
import { buildOpenApi } from '../openapi';

export function healthRoutes(services: Services, allRoutes: () => RouteSpec[]): RouteSpec[] {
  return [
    {
      method: 'get', path: '/livez', tag: 'operations', auth: 'public', summary: 'The process is up.',
      handler: async () => ({ status: 'ok' }),
    },
    {
      method: 'get', path: '/readyz', tag: 'operations', auth: 'public',
      summary: 'This node can serve: storage open and a leader known for every local shard (503 otherwise).',
      handler: async () => {
        if (!services.isReady()) throw new StrataError('unavailable', 'This node cannot serve yet (storage closed or no leader known).', undefined, 1);
        return { status: 'ready' };
      },
    },
    {
      method: 'get', path: '/openapi.json', tag: 'operations', auth: 'public', summary: 'The OpenAPI 3.1 document of every route.',
      handler: async () => buildOpenApi(allRoutes()),
    },
  ];
}
