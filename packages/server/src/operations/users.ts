/**
 * Users (CONTRACT §1, §15): the list of known users with what is stored for each, and the user →
 * organization record that decides what org-scoped keys may act on.
 */
import { compareKeys, listUserIds, userCounts, userOrg } from '@strata/store';
import type { Principal } from '../auth/principal';
import { requireUnscoped } from '../auth/scope';
import type { Services } from '../services';
import { checkIdentifier } from '../validation';

export interface ListUsersInput {
  /** next_cursor of the previous page (the last user id it listed) */
  after: string | null;
  limit: number;
}

/**
 * Known users in id order, over every shard, with their org and counts. Unscoped credentials see every
 * user with data or an org record; scoped ones see the users of their scope.
 */
export async function listUsers(services: Services, principal: Principal, input: ListUsersInput) {
  const { after, limit } = input;
  const inScope = await services.scope.usersInScope(principal);
  let ids: string[];
  if (inScope === null) {
    // each shard gives its first `limit` users after the cursor: the first `limit` of their union are the page
    const perShard = await Promise.all(services.shards.all().map((s) => listUserIds(s.db, after, limit + 1)));
    ids = [...new Set(perShard.flat())].sort(compareKeys);
  } else {
    ids = [...new Set(inScope)].filter((u) => after === null || compareKeys(u, after) > 0).sort(compareKeys);
  }
  const page = ids.slice(0, limit);
  const users = await Promise.all(page.map(async (user_id) => {
    const db = services.shards.forUser(user_id).db;
    const [org_id, counts] = await Promise.all([userOrg(db, user_id), userCounts(db, user_id)]);
    return { user_id, org_id, counts };
  }));
  return { users, next_cursor: ids.length > limit ? page[page.length - 1] : null };
}

/**
 * Records the org a user belongs to (null: none) as a replicated `user.set_org` command. Service-wide:
 * a scoped key moving users between orgs would widen its own or another org's reach.
 */
export async function setUserOrg(services: Services, principal: Principal, input: { user_id: string; org_id: string | null }) {
  requireUnscoped(principal, "Setting a user's organization");
  const orgId = input.org_id === null ? null : checkIdentifier(input.org_id, '/org_id');
  const answer = await services.userOrgs.set(input.user_id, orgId);
  return { user_id: input.user_id, org_id: answer.org_id, changed: answer.changed };
}
