/** HTTP adapters of the event operations (operations/events.ts): read the request, call, shape the answer. */
import { callerOf, pageParams, type RouteContext, type RouteSpec } from '../http/route';
import { ingestEvents, listStreamEvents, listStreams } from '../operations/events';
import type { Services } from '../services';
import { queryPage } from '../validation';
import { chatToEvents } from '@strata/memory';
import { badRequest } from '@strata/store';

function idempotencyKey(ctx: RouteContext): string | null {
  const value = ctx.req.headers['idempotency-key'];
  const key = Array.isArray(value) ? value[0] : value;
  return key === undefined || key === '' ? null : key;
}


export function eventRoutes(services: Services): RouteSpec[] {
  const base = '/v1/users/:user_id/streams/:stream_id/events';
  return [
    {
      method: 'post', path: base, tag: 'ingest', auth: 'write', body: 'Event', scope: 'operation', idempotencyKey: true,
      summary: 'Accept one L0 event; answered only once it is durable (committed in the replicated log).',
      handler: async (ctx) => {
        const { user_id, stream_id } = ctx.params;
        const answer = await ingestEvents(services, callerOf(ctx), { user_id, stream_id, events: [ctx.body], idempotency_key: idempotencyKey(ctx), batch: false });
        return { status: 'accepted', event_id: answer.event_ids[0] };
      },
    },
    {
      method: 'post', path: `${base}/batch`, tag: 'ingest', auth: 'write', body: 'EventBatch', scope: 'operation', idempotencyKey: true,
      summary: 'Accept a batch of events atomically (one invalid event rejects the batch, naming its index), or a chat export as `messages`.',
      handler: async (ctx) => {
        const { user_id, stream_id } = ctx.params;
        const events = batchEvents(ctx.body as { events?: unknown[]; messages?: unknown[] });
        const answer = await ingestEvents(services, callerOf(ctx), { user_id, stream_id, events, idempotency_key: idempotencyKey(ctx), batch: true });
        return { status: 'accepted', event_ids: answer.event_ids, count: answer.event_ids.length };
      },
    },
    {
      method: 'get', path: base, tag: 'ingest', auth: 'read', scope: 'operation',
      summary: "The stream's raw events in acceptance order, paged by cursor.",
      queryParams: [
        ...pageParams(100, 1000),
        { name: 'consistency', schema: { type: 'string', enum: ['local', 'linearizable'], default: 'local' }, description: 'linearizable: wait for the leader\'s commit index first (ReadIndex)' },
      ],
      handler: (ctx) => listStreamEvents(services, callerOf(ctx), {
        user_id: ctx.params.user_id, stream_id: ctx.params.stream_id, ...queryPage(ctx.query, 100, 1000),
        linearizable: ctx.query.consistency === 'linearizable',
      }),
    },
    {
      method: 'get', path: '/v1/users/:user_id/streams', tag: 'ingest', auth: 'read', scope: 'operation',
      summary: 'Extension: the streams the user has events in (stream_id order), with the times of their first and last events; paged by cursor.',
      queryParams: pageParams(100, 1000),
      handler: (ctx) => listStreams(services, callerOf(ctx), { user_id: ctx.params.user_id, ...queryPage(ctx.query, 100, 1000) }),
    },
  ];
}

/** The events of a batch body: `events` as given, or `messages` (a chat export) one event a message. */
function batchEvents(body: { events?: unknown[]; messages?: unknown[] }): never[] {
  const hasEvents = body.events !== undefined;
  const hasMessages = body.messages !== undefined;
  if (hasEvents === hasMessages) {
    throw badRequest('validation_failed', 'Invalid request body: give either events (event objects) or messages (a chat export [{role, content, name?, timestamp?}]).',
      [{ path: '/', message: hasEvents ? 'has both events and messages' : 'needs events or messages' }]);
  }
  if (hasEvents) return body.events as never[];
  const chat = chatToEvents(body.messages, '/messages');
  if (chat.events === null) {
    const first = chat.errors[0];
    throw badRequest('validation_failed', `Invalid chat export: ${first.path} ${first.message}.`, chat.errors);
  }
  return chat.events as never[];
}
