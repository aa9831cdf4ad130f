/**
 * The consolidation backlog (CONTRACT §6) and the events consolidation gave up on, over every shard.
 * Scoped credentials see only their own users' (CONTRACT §1).
 */
import { badRequest, pendingOfUsers, pendingSummary, type FailedRecord } from '@strata/store';
import type { Principal } from '../auth/principal';
import type { Services } from '../services';

/** Events accepted but not yet consolidated; ready once none are left. */
export async function pendingStatus(services: Services, principal: Principal) {
  const users = await services.scope.usersInScope(principal);
  const summaries = await Promise.all(services.shards.all().map((s) => (users === null
    ? pendingSummary(s.db)
    : pendingOfUsers(s.db, users.filter((u) => services.shards.forUser(u).id === s.id)))));
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
  const users = await services.scope.usersInScope(principal);
  const visible = users === null ? () => true : (record: FailedRecord) => users.includes(record.user_id);
  const out: (FailedRecord & { cursor: string })[] = [];
  let more = false;
  for (const shard of services.shards.all()) {
    if (after && shard.id < after.shard) continue;
    const range = after && shard.id === after.shard ? { gt: after.seq } : {};
    for await (const [seq, record] of shard.db.failed.iterator(range)) {
      if (!visible(record)) continue;
      if (out.length === input.limit) {
        more = true;
        break;
      }
      out.push({ ...record, cursor: `${shard.id}.${seq}` });
    }
    if (more) break;
  }
  return {
    failed: out.map((r) => ({ event_id: r.event_id, user_id: r.user_id, stream_id: r.stream_id, error: r.error, attempts: r.attempts, at: r.at })),
    next_cursor: more ? out[out.length - 1].cursor : null,
  };
}
