/**
 * The users a shard knows, for `GET /v1/users` (CONTRACT §15): every user with events, units, goals,
 * tasks or an org record in this replica. There is no user table (a user exists by having data), so
 * the list skip-scans the per-user key ranges: one seek per sublevel and user, never a walk over a
 * user's records.
 */
import type { StateDb, Sub } from './db';
import { afterPrefix, compareKeys, prefixRange, SEP } from './keys';

/** The per-user sublevels whose keys start with `user SEP`. */
function userKeyed(db: StateDb): Sub<unknown>[] {
  return [db.events, db.units, db.goals, db.tasks] as Sub<unknown>[];
}

async function firstKey(sub: Sub<unknown>, range: { gt?: string; gte?: string }): Promise<string | null> {
  for await (const key of sub.keys({ ...range, limit: 1 })) return key;
  return null;
}

/** The user ids of this shard after `after` (null: from the first), in key order, at most `limit`. */
export async function listUserIds(db: StateDb, after: string | null, limit: number): Promise<string[]> {
  const out: string[] = [];
  let cursor = after;
  while (out.length < limit) {
    const candidates: string[] = [];
    for (const sub of userKeyed(db)) {
      const key = await firstKey(sub, cursor === null ? {} : { gte: afterPrefix(cursor) });
      if (key !== null) candidates.push(key.slice(0, key.indexOf(SEP)));
    }
    // org records are keyed by the bare user id
    const recorded = await firstKey(db.userOrgs as Sub<unknown>, cursor === null ? {} : { gt: cursor });
    if (recorded !== null) candidates.push(recorded);
    if (candidates.length === 0) break;
    const next = candidates.sort(compareKeys)[0];
    out.push(next);
    cursor = next;
  }
  return out;
}

export interface UserCounts {
  events: number;
  /** every stored unit version (L1 and L2), retired ones included */
  memory_units: number;
  goals: number;
  tasks: number;
  /** events accepted and not yet consolidated */
  pending: number;
}

async function countKeys(sub: Sub<unknown>, userId: string): Promise<number> {
  let n = 0;
  for await (const _key of sub.keys(prefixRange(userId))) n++;
  return n;
}

/** What this shard stores for a user, counted over keys only (no values are read). */
export async function userCounts(db: StateDb, userId: string): Promise<UserCounts> {
  const [events, memory_units, goals, tasks, pending] = await Promise.all(
    [db.events, db.units, db.goals, db.tasks, db.pendingByUser].map((sub) => countKeys(sub as Sub<unknown>, userId)),
  );
  return { events, memory_units, goals, tasks, pending };
}
