/**
 * Users (CONTRACT §1, §15): the list of known users with what is stored for each, and the user →
 * organization record that decides what org-scoped keys may act on.
 */
import { compareKeys } from '@strata/store';
import type { Principal } from '../auth/principal';
import { requireUnscoped } from '../auth/scope';
import type { ReadResult } from '../cluster/read-queries';
import type { Services } from '../services';
import { checkIdentifier } from '../validation';

export interface ListUsersInput {
  /** next_cursor of the previous page (the last user id it listed) */
  after: string | null;
  limit: number;
}

/**
 * Known users in id order, over every shard, with their org and counts. Unscoped credentials see every
 * user with data or an org record; scoped ones see the users of their scope. Each group is read where
 * it is held (services.reads): its user ids first, then the org and counts of the page's users only.
 */
export async function listUsers(services: Services, principal: Principal, input: ListUsersInput) {
  const { after, limit } = input;
  const inScope = await services.scope.usersInScope(principal);
  let ids: string[];
  if (inScope === null) {
    // each shard gives its first `limit` users after the cursor: the first `limit` of their union are the page
    const perShard = await services.reads.each('userIds', { after, limit: limit + 1 });
    ids = [...new Set(perShard.flat())].sort(compareKeys);
  } else {
    ids = [...new Set(inScope)].filter((u) => after === null || compareKeys(u, after) > 0).sort(compareKeys);
  }
  const page = ids.slice(0, limit);
  // the page's users by group, each group asked once
  const byGroup = new Map<number, string[]>();
  for (const user of page) {
    const g = services.shards.groupOf(user);
    byGroup.set(g, [...(byGroup.get(g) ?? []), user]);
  }
  const rows = new Map<string, ReadResult<'userRows'>[number]>();
  await Promise.all([...byGroup].map(async ([g, users]) => {
    for (const row of await services.reads.one(g, 'userRows', { user_ids: users })) rows.set(row.user_id, row);
  }));
  const users = page.map((user_id) => rows.get(user_id)!);
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
