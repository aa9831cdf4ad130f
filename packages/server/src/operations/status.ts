/**
 * The consolidation backlog (CONTRACT §6) and the events consolidation gave up on, over every shard
 * (each group read where it is held: services.reads). Scoped credentials see only their own users'
 * (CONTRACT §1).
 */
import { badRequest, type FailedRecord } from '@strata/store';
import type { Principal } from '../auth/principal';
import type { ReadScope } from '../cluster/read-queries';
import type { Services } from '../services';

/** Whose backlog the credentials see, resolved by each group (cluster/read-queries.ts `ReadScope`, as ScopeGuard.usersInScope). */
const scopeOf = (p: Principal): ReadScope => ({ org_id: p.org_id, user_ids: p.user_ids });

/** Events accepted but not yet consolidated; ready once none are left. */
export async function pendingStatus(services: Services, principal: Principal) {
  const summaries = await services.reads.each('pending', { scope: scopeOf(principal) });
  const pending = summaries.reduce((n, s) => n + s.pending, 0);
  const failed = summaries.reduce((n, s) => n + s.failed, 0);
  const oldest = summaries.map((s) => s.oldest_accepted_at).filter((t): t is string => t !== null).sort()[0];
  return { pending, ready: pending === 0, failed, oldest_pending_ms: oldest ? Math.max(0, Date.now() - Date.parse(oldest)) : null };
}

/** `<shard>.<seq>`: where the previous page stopped (shards are read in order, each in seq order). */
const CURSOR = /^(\d{1,3})\.(\d{21})$/;

function parseCursor(value: string | null): { shard: number; seq: string } | null {
  if (value === null || value === '') return null;
  const m = CURSOR.exec(value);
  if (!m) throw badRequest('validation_failed', 'after must be a next_cursor returned by this route.', [{ path: '/after', message: 'is not a cursor' }]);
  return { shard: Number(m[1]), seq: m[2] };
}

/**
 * The events consolidation gave up on (the `failed` figure of the backlog), each with the reason and
 * the number of attempts, paged by cursor: what will never become memory, and why.
 */
export async function failedEvents(services: Services, principal: Principal, input: { after: string | null; limit: number }) {
  const after = parseCursor(input.after);
  const scope = scopeOf(principal);
  // Each group from the cursor's on gives its first `limit + 1` visible records (the cursor's group
  // those after it): in group order, then seq order, the first `limit` are the page.
  const ids = services.shards.groupIds();
  const from = after && ids.includes(after.shard) ? after : null;
  const rest = ids.filter((g) => !after || g > after.shard);
  const limit = input.limit + 1;
  const [first, others] = await Promise.all([
    from ? services.reads.one(from.shard, 'failed', { after: from.seq, limit, scope }) : [],
    rest.length > 0 ? services.reads.each('failed', { after: null, limit, scope }, { groups: rest }) : [],
  ]);
  const pages = [...(from ? [{ group: from.shard, records: first }] : []), ...rest.map((group, i) => ({ group, records: others[i] }))];
  const all: (FailedRecord & { cursor: string })[] = pages.flatMap((p) => p.records.map((r) => ({ ...r.record, cursor: `${p.group}.${r.seq}` })));
  const out = all.slice(0, input.limit);
  const more = all.length > input.limit;
  return {
    failed: out.map((r) => ({ event_id: r.event_id, user_id: r.user_id, stream_id: r.stream_id, error: r.error, attempts: r.attempts, at: r.at })),
    next_cursor: more ? out[out.length - 1].cursor : null,
  };
}
