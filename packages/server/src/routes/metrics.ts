import type { RouteSpec } from '../http/route';
import type { Services } from '../services';

/** Prometheus text format; off with server.metrics_enabled = false, admin-only with server.metrics_auth = true. */
export function metricsRoutes(services: Services): RouteSpec[] {
  const { server } = services.config;
  if (!server.metrics_enabled) return [];
  return [
    {
      method: 'get', path: '/metrics', tag: 'operations', auth: server.metrics_auth ? 'admin' : 'public', summary: 'Prometheus metrics.',
      handler: async ({ res }) => {
        const text = await services.metrics.registry.metrics();
        res.status(200).type(services.metrics.registry.contentType).send(text);
        return undefined;
      },
    },
  ];
}
