/** Webhook subscriptions (CONTRACT §13): the adapters of operations/webhooks.ts. */
import { callerOf, type RouteSpec } from '../http/route';
import { createWebhook, deleteWebhook, listWebhookSubscriptions, webhookDeliveries } from '../operations/webhooks';
import type { Services } from '../services';
import { queryInt } from '../validation';

export function webhookRoutes(services: Services): RouteSpec[] {
  return [
    {
      method: 'post', path: '/v1/webhooks', tag: 'webhooks', auth: 'write', body: 'Webhook', scope: 'operation',
      summary: 'Subscribe a URL to kinds of changes (signed POSTs, at least once, in commit order per user); within the credentials\' scope. The secret is shown only here.',
      handler: (ctx) => createWebhook(services, callerOf(ctx), ctx.body),
    },
    {
      method: 'get', path: '/v1/webhooks', tag: 'webhooks', auth: 'read', scope: 'operation',
      summary: 'The webhook subscriptions within the credentials\' scope (never their secrets).',
      handler: (ctx) => listWebhookSubscriptions(services, callerOf(ctx)),
    },
    {
      method: 'delete', path: '/v1/webhooks/:webhook_id', tag: 'webhooks', auth: 'write', scope: 'operation',
      summary: 'Delete a webhook subscription; deliveries still waiting are discarded.',
      handler: (ctx) => deleteWebhook(services, callerOf(ctx), { webhook_id: ctx.params.webhook_id }),
    },
    {
      method: 'get', path: '/v1/webhooks/:webhook_id/deliveries', tag: 'webhooks', auth: 'read', scope: 'operation',
      summary: 'Counters (queued, delivered, dropped, expired) and the most recent delivery attempts of a subscription, newest first.',
      queryParams: [{ name: 'limit', schema: { type: 'integer', minimum: 1, maximum: 100, default: 50 } }],
      handler: (ctx) => webhookDeliveries(services, callerOf(ctx), { webhook_id: ctx.params.webhook_id, limit: queryInt(ctx.query.limit, 'limit', 50, 1, 100) }),
    },
  ];
}
