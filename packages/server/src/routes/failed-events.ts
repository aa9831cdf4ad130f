import { badRequest, type FailedRecord } from '@strata/store';
import type { RouteSpec } from '../http/route';
import type { Services } from '../services';
import { queryInt } from '../validation';

/** `<shard>.<seq>`: where the previous page stopped (shards are read in order, each in seq order). */
const CURSOR = /^(\d{1,3})\.(\d{21})$/;

/**
 * `GET /v1/status/failed`: the events consolidation gave up on (the `failed` figure of
 * /v1/status/pending), each with the reason and the number of attempts, so an operator can see what
 * will never become memory and why. Scoped like /v1/status/pending: scoped credentials see only the
 * events of their own users (docs/security.md, "Input handling").
 */
export function failedEventRoutes(services: Services): RouteSpec[] {
  return [
    {
      method: 'get', path: '/v1/status/failed', tag: 'status', auth: 'read', scope: 'scoped',
      summary: 'Events consolidation gave up on, with the reason, paged; scoped credentials see only their users\' events.',
      queryParams: [
        { name: 'after', schema: { type: 'string' }, description: 'next_cursor of the previous page' },
        { name: 'limit', schema: { type: 'integer', minimum: 1, maximum: 1000, default: 100 } },
      ],
      handler: async ({ principal, query }) => {
        const limit = queryInt(query.limit, 'limit', 100, 1, 1000);
        const after = parseCursor(query.after);
        const users = principal ? await services.scope.usersInScope(principal) : null;
        const visible = users === null ? () => true : (record: FailedRecord) => users.includes(record.user_id);
        const out: (FailedRecord & { cursor: string })[] = [];
        let more = false;
        for (const shard of services.shards.all()) {
          if (after && shard.id < after.shard) continue;
          const range = after && shard.id === after.shard ? { gt: after.seq } : {};
          for await (const [seq, record] of shard.db.failed.iterator(range)) {
            if (!visible(record)) continue;
            if (out.length === limit) {
              more = true;
              break;
            }
            out.push({ ...record, cursor: `${shard.id}.${seq}` });
          }
          if (more) break;
        }
        return {
          failed: out.map(({ cursor: _cursor, ...r }) => ({
            event_id: r.event_id, user_id: r.user_id, stream_id: r.stream_id, error: r.error, attempts: r.attempts, at: r.at,
          })),
          next_cursor: more ? out[out.length - 1].cursor : null,
        };
      },
    },
  ];
}

function parseCursor(value: unknown): { shard: number; seq: string } | null {
  if (value === undefined || value === '') return null;
  const m = typeof value === 'string' ? CURSOR.exec(value) : null;
  if (!m) throw badRequest('validation_failed', 'after must be a next_cursor returned by this route.', [{ path: '/after', message: 'is not a cursor' }]);
  return { shard: Number(m[1]), seq: m[2] };
}
