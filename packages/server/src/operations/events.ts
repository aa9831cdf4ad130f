/**
 * L0 events (CONTRACT §2): ingest one or many events of a stream, and list a stream's events. Transport
 * free: a principal and plain input in, plain output back; the scope check is made here, once, for
 * every surface that calls it.
 */
import { randomUUID } from 'node:crypto';
import { prepareEvent, type EventInput } from '@strata/memory';
import { badRequest, listEvents, listUserStreams, payloadTooLarge, settle, type IngestAnswer, type IngestCommand } from '@strata/store';
import type { Principal } from '../auth/principal';
import type { Services } from '../services';
import { MAX_JSON_DEPTH, jsonDeeperThan } from '../validation';
import { eventView } from './views';

const IDEMPOTENCY_KEY_MAX = 256;

export interface IngestInput {
  user_id: string;
  stream_id: string;
  events: EventInput[];
  /** a retry with the same key (per user and stream, for ingest.idempotency_ttl) answers the first answer */
  idempotency_key: string | null;
  /** the events came as a batch: errors name `/events/N/...` */
  batch: boolean;
}

/**
 * Builds one `events.ingest` command for the events and proposes it to the user's shard. Resolves after
 * the command is committed and applied: only then is an event acknowledged. A batch is all or nothing.
 */
export async function ingestEvents(services: Services, principal: Principal, input: IngestInput): Promise<IngestAnswer> {
  const { user_id, stream_id, events } = input;
  const { ingest: limits } = services.config;
  await services.scope.authorizeUser(principal, { user_id, org_ids: events.map((e) => e.org_id), write: true });
  if (input.batch && events.length > limits.max_batch) throw payloadTooLarge(`The batch has ${events.length} events; at most ${limits.max_batch} (ingest.max_batch) are allowed.`);
  if (input.idempotency_key !== null && input.idempotency_key.length > IDEMPOTENCY_KEY_MAX) {
    throw badRequest('validation_failed', `The Idempotency-Key header must be at most ${IDEMPOTENCY_KEY_MAX} characters.`);
  }
  if (events.length === 0) return { event_ids: [], replayed: false };
  const pathOf = (i: number) => (input.batch ? `/events/${i}` : '');
  const now = new Date().toISOString();
  events.forEach((e, i) => refuseDeepJsonContent(e, pathOf(i)));
  const prepared = events.map((e, i) => prepareEvent(e, {
    user_id, stream_id, event_id: randomUUID(), now, path: pathOf(i),
    metadataMaxBytes: limits.metadata_max_bytes, maxContentBytes: limits.max_content_bytes,
  }));
  const key = input.idempotency_key;
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

export interface ListEventsInput {
  user_id: string;
  stream_id: string;
  /** next_cursor of the previous page */
  after: string | null;
  limit: number;
  /** wait for the leader's commit index first (ReadIndex) */
  linearizable: boolean;
}

/** The stream's raw events in acceptance order, paged by cursor. */
export async function listStreamEvents(services: Services, principal: Principal, input: ListEventsInput) {
  await services.scope.authorizeUser(principal, { user_id: input.user_id, write: false });
  if (input.after !== null && !/^\d{21}$/.test(input.after)) throw badRequest('validation_failed', 'after must be a next_cursor returned by this route.', [{ path: '/after', message: 'is not a cursor' }]);
  const shard = services.shards.forUser(input.user_id);
  if (input.linearizable) await shard.log.readBarrier();
  const page = await listEvents(shard.db, input.user_id, input.stream_id, input.after, input.limit);
  return { events: page.events.map(eventView), next_cursor: page.next_cursor };
}

/**
 * Extension: the streams the user has events in (stream_id order, paged by the last stream_id), each with
 * the times of its first and last event: where a timeline of the user's events starts.
 */
export async function listStreams(services: Services, principal: Principal, input: { user_id: string; after: string | null; limit: number }) {
  await services.scope.authorizeUser(principal, { user_id: input.user_id, write: false });
  const after = input.after === null ? null : input.after.toLowerCase();
  if (after !== null && !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(after)) {
    throw badRequest('validation_failed', 'after must be a next_cursor returned by this route.', [{ path: '/after', message: 'is not a cursor' }]);
  }
  const streams = await listUserStreams(services.shards.forUser(input.user_id).db, input.user_id, after, input.limit + 1);
  const more = streams.length > input.limit;
  if (more) streams.pop();
  return { streams, next_cursor: more ? streams[streams.length - 1].stream_id : null };
}
