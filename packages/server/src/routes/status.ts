import { pendingOfUsers, pendingSummary } from '@strata/store';
import type { RouteSpec } from '../http/route';
import type { Services } from '../services';

export function statusRoutes(services: Services): RouteSpec[] {
  return [
    {
      method: 'get', path: '/v1/status/pending', tag: 'status', auth: 'read', scope: 'scoped',
      summary: 'Events accepted but not yet consolidated into memory, over every shard (scoped credentials: over their users only); ready once none are left.',
      handler: async ({ principal }) => {
        // Scoped credentials see the backlog of their own users only (CONTRACT §1).
        const users = principal ? await services.scope.usersInScope(principal) : null;
        const summaries = await Promise.all(services.shards.all().map((s) => (users === null
          ? pendingSummary(s.db)
          : pendingOfUsers(s.db, users.filter((u) => services.shards.forUser(u).id === s.id)))));
        const pending = summaries.reduce((n, s) => n + s.pending, 0);
        const failed = summaries.reduce((n, s) => n + s.failed, 0);
        const oldest = summaries.map((s) => s.oldest_accepted_at).filter((t): t is string => t !== null).sort()[0];
        return { pending, ready: pending === 0, failed, oldest_pending_ms: oldest ? Math.max(0, Date.now() - Date.parse(oldest)) : null };
      },
    },
  ];
}
