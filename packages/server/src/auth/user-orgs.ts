import { settle, userHasData, userOrg, usersOfOrg, type UserOrgAnswer } from '@strata/store';
import type { ShardRouter } from '../shards';
import type { UserDirectory } from './scope';

/**
 * The user → organization records, kept in each user's shard (replicated `user.set_org` commands).
 * Reads come from this node's replica; changes are proposed to the user's shard, so they must run
 * where that shard can propose (routes that write are forwarded to its leader first).
 */
export class UserOrgs implements UserDirectory {
  constructor(private readonly shards: ShardRouter) {}

  orgOf(userId: string): Promise<string | null> {
    return userOrg(this.shards.forUser(userId).db, userId);
  }

  hasData(userId: string): Promise<boolean> {
    return userHasData(this.shards.forUser(userId).db, userId);
  }

  async claim(userId: string, orgId: string): Promise<string | null> {
    return (await this.propose(userId, orgId, 'claim')).org_id;
  }

  /** An admin's `PUT /v1/users/:user_id/org`: records the org, or clears it with null. */
  set(userId: string, orgId: string | null): Promise<UserOrgAnswer> {
    return this.propose(userId, orgId, 'set');
  }

  async usersOf(orgId: string): Promise<string[]> {
    const perShard = await Promise.all(this.shards.all().map((shard) => usersOfOrg(shard.db, orgId)));
    return perShard.flat().sort();
  }

  private async propose(userId: string, orgId: string | null, mode: 'set' | 'claim'): Promise<UserOrgAnswer> {
    return settle(await this.shards.forUser(userId).log.propose({
      type: 'user.set_org', user_id: userId, org_id: orgId, mode, at: new Date().toISOString(),
    }));
  }
}
