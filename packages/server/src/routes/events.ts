import { randomUUID } from 'node:crypto';
import { badRequest, listEvents, payloadTooLarge, settle, type EventRecord, type IngestAnswer, type IngestCommand } from '@strata/store';
import { prepareEvent, type EventInput } from '@strata/memory';
import type { RouteContext, RouteSpec } from '../http/route';
import type { Services } from '../services';
import { MAX_JSON_DEPTH, jsonDeeperThan, queryInt } from '../validation';

const IDEMPOTENCY_KEY_MAX = 256;

function idempotencyKey(ctx: RouteContext): string | null {
  const value = ctx.req.headers['idempotency-key'];
  const key = Array.isArray(value) ? value[0] : value;
  if (key === undefined || key === '') return null;
  if (key.length > IDEMPOTENCY_KEY_MAX) throw badRequest('validation_failed', `The Idempotency-Key header must be at most ${IDEMPOTENCY_KEY_MAX} characters.`);
  return key;
}

export function eventView(e: EventRecord) {
  return {
    event_id: e.event_id, content: e.content, content_type: e.content_type, org_id: e.org_id, agent_id: e.agent_id, role: e.role,
    level: e.level, parent_id: e.parent_id, task_status: e.task_status, task_progress: e.task_progress, valid_time: e.valid_time,
    transaction_time: e.transaction_time, metadata: e.metadata, assets: e.assets,
  };
}

/**
 * Builds one `events.ingest` command for a request's events and proposes it to the user's shard.
 * Resolves after the command is committed and applied: only then is the event acknowledged.
 */
async function ingest(services: Services, ctx: RouteContext, inputs: EventInput[], pathOf: (i: number) => string): Promise<IngestAnswer> {
  const { user_id, stream_id } = ctx.params;
  const { ingest: limits } = services.config;
  const now = new Date().toISOString();
  inputs.forEach((input, i) => refuseDeepJsonContent(input, pathOf(i)));
  const prepared = inputs.map((input, i) => prepareEvent(input, {
    user_id, stream_id, event_id: randomUUID(), now, path: pathOf(i),
    metadataMaxBytes: limits.metadata_max_bytes, maxContentBytes: limits.max_content_bytes,
  }));
  const key = idempotencyKey(ctx);
  const command: IngestCommand = {
    type: 'events.ingest', user_id, stream_id, at: now,
    idempotency: key ? { key, expires_at: new Date(Date.parse(now) + limits.idempotency_ttl * 1000).toISOString() } : null,
    events: prepared.map((p) => p.event),
    assets: dedupeAssets(prepared.flatMap((p) => p.assets)),
  };
  const answer = settle(await services.shards.forUser(user_id).log.propose(command));
  if (!answer.replayed) services.metrics.eventsIngested.inc(answer.event_ids.length);
  return answer;
}

/**
 * A `json` event nested deeper than the body itself may be (CONTRACT.md §0) is refused here, at ingest:
 * accepted, it would only fail consolidation later, and forever.
 */
function refuseDeepJsonContent(input: EventInput, path: string): void {
  if (input.content_type === 'json' && jsonDeeperThan(input.content, MAX_JSON_DEPTH)) {
    throw badRequest('json_too_deep', `${path}/content nests JSON deeper than ${MAX_JSON_DEPTH} levels.`, [{ path: `${path}/content`, message: `must not nest deeper than ${MAX_JSON_DEPTH} levels` }]);
  }
}

function dedupeAssets(assets: { asset_id: string; data_b64: string }[]) {
  const seen = new Set<string>();
  return assets.filter((a) => !seen.has(a.asset_id) && seen.add(a.asset_id));
}

export function eventRoutes(services: Services): RouteSpec[] {
  const base = '/v1/users/:user_id/streams/:stream_id/events';
  return [
    {
      method: 'post', path: base, tag: 'ingest', auth: 'write', body: 'Event',
      summary: 'Accept one L0 event; answered only once it is durable (committed in the replicated log).',
      handler: async (ctx) => {
        const answer = await ingest(services, ctx, [ctx.body], () => '');
        return { status: 'accepted', event_id: answer.event_ids[0] };
      },
    },
    {
      method: 'post', path: `${base}/batch`, tag: 'ingest', auth: 'write', body: 'EventBatch',
      summary: 'Accept a batch of events atomically (one invalid event rejects the batch, naming its index).',
      handler: async (ctx) => {
        const { events } = ctx.body;
        const max = services.config.ingest.max_batch;
        if (events.length > max) throw payloadTooLarge(`The batch has ${events.length} events; at most ${max} (ingest.max_batch) are allowed.`);
        if (events.length === 0) return { status: 'accepted', event_ids: [], count: 0 };
        const answer = await ingest(services, ctx, events, (i) => `/events/${i}`);
        return { status: 'accepted', event_ids: answer.event_ids, count: answer.event_ids.length };
      },
    },
    {
      method: 'get', path: base, tag: 'ingest', auth: 'read',
      summary: "The stream's raw events in acceptance order, paged by cursor.",
      queryParams: [
        { name: 'after', schema: { type: 'string' }, description: 'next_cursor of the previous page' },
        { name: 'limit', schema: { type: 'integer', minimum: 1, maximum: 1000, default: 100 } },
        { name: 'consistency', schema: { type: 'string', enum: ['local', 'linearizable'], default: 'local' }, description: 'linearizable: wait for the leader\'s commit index first (ReadIndex)' },
      ],
      handler: async ({ params, query }) => {
        if (query.consistency === 'linearizable') await services.shards.forUser(params.user_id).log.readBarrier();
        const limit = queryInt(query.limit, 'limit', 100, 1, 1000);
        const after = typeof query.after === 'string' && query.after !== '' ? query.after : null;
        if (after !== null && !/^\d{21}$/.test(after)) throw badRequest('validation_failed', 'after must be a next_cursor returned by this route.', [{ path: '/after', message: 'is not a cursor' }]);
        const page = await listEvents(services.shards.forUser(params.user_id).db, params.user_id, params.stream_id, after, limit);
        return { events: page.events.map(eventView), next_cursor: page.next_cursor };
      },
    },
  ];
}
