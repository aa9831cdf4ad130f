/**
 * Queries over the user → organization records (`user.set_org`). Each shard holds the records of its
 * own users; `usersOfOrg` and `pendingOfUsers` read one shard's replica, callers merge over shards.
 */
import type { StateDb, Sub } from './db';
import { prefixRange } from './keys';
import type { PendingSummary } from './queries';

/** The org recorded for a user, or null (no org). */
export async function userOrg(db: StateDb, userId: string): Promise<string | null> {
  return (await db.userOrgs.get(userId))?.org_id ?? null;
}

/** True when the user has anything stored: events, memory units, goals or tasks (one seek each). */
export async function userHasData(db: StateDb, userId: string): Promise<boolean> {
  const subs = [db.events, db.units, db.goals, db.tasks] as Sub<unknown>[];
  for (const sub of subs) {
    for await (const _key of sub.keys({ ...prefixRange(userId), limit: 1 })) return true;
  }
  return false;
}

/** The users of an org recorded in this shard, in id order. */
export async function usersOfOrg(db: StateDb, orgId: string): Promise<string[]> {
  const out: string[] = [];
  for await (const user of db.orgUsers.values(prefixRange(orgId))) out.push(user);
  return out;
}

/**
 * The pending backlog of some users of this shard: their pending and failed events and the oldest
 * pending acceptance time (what `GET /v1/status/pending` answers to credentials scoped to them).
 */
export async function pendingOfUsers(db: StateDb, userIds: readonly string[]): Promise<PendingSummary> {
  const users = new Set(userIds);
  let pending = 0;
  let oldest: string | null = null;
  for (const user of users) {
    for await (const entry of db.pendingByUser.values(prefixRange(user))) {
      pending++;
      if (oldest === null || entry.accepted_at < oldest) oldest = entry.accepted_at;
    }
  }
  let failed = 0;
  // failed events are few (consolidation gave up on them); one pass over them is enough
  for await (const entry of db.failed.values()) if (users.has(entry.user_id)) failed++;
  return { pending, failed, oldest_accepted_at: oldest };
}
