import type { ApplyContext } from '../apply-context';
import type { UserOrgAnswer, UserOrgCommand } from '../commands';
import type { StateDb } from '../db';
import { failure, StrataError, type ApplyFailure } from '../errors';
import { join } from '../keys';
import { userHasData } from '../user-orgs';

/**
 * `user.set_org` (see UserOrgCommand): the user → org record and its by-org index, changed together.
 * A claim never overrides a recorded org and never takes a user that already has data; it answers
 * the org the user ends up in, so the proposer decides from the replicated state.
 */
export async function applyUserOrg(db: StateDb, ctx: ApplyContext, cmd: UserOrgCommand): Promise<UserOrgAnswer | ApplyFailure> {
  if (cmd.org_id !== null && (typeof cmd.org_id !== 'string' || cmd.org_id === '')) {
    return failure(new StrataError('invalid_command', 'user.set_org: org_id must be a non-empty string or null'));
  }
  const current = await ctx.get(db.userOrgs, cmd.user_id);
  if (cmd.mode === 'claim') {
    if (cmd.org_id === null) return failure(new StrataError('invalid_command', 'user.set_org: a claim names an org'));
    if (current) return { org_id: current.org_id, changed: false };
    if (await userHasData(db, cmd.user_id)) return { org_id: null, changed: false };
  } else if ((current?.org_id ?? null) === cmd.org_id) {
    return { org_id: cmd.org_id, changed: false };
  }
  if (current) ctx.del(db.orgUsers, join(current.org_id, cmd.user_id));
  if (cmd.org_id === null) {
    ctx.del(db.userOrgs, cmd.user_id);
  } else {
    ctx.put(db.userOrgs, cmd.user_id, { org_id: cmd.org_id, at: cmd.at, by: cmd.mode });
    ctx.put(db.orgUsers, join(cmd.org_id, cmd.user_id), cmd.user_id);
  }
  return { org_id: cmd.org_id, changed: true };
}
