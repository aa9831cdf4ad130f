import { settle, type UserOrgAnswer } from '@strata/store';
import type { ShardReads } from '../cluster/shard-reads';
import type { ShardRouter } from '../shards';
import type { UserDirectory } from './scope';

/**
 * The user → organization records, kept in each user's shard (replicated `user.set_org` commands).
 * Reads come from this node's replica of the user's group when it holds it, else from a node that
 * does (`ShardReads`: a request naming users in its body, such as a webhook's filter, is not routed
 * to their groups); changes are proposed to the user's shard, so they must run where that shard can
 * propose (routes that write are forwarded to its leader first).
 */
export class UserOrgs implements UserDirectory {
  constructor(private readonly shards: ShardRouter, private readonly reads: ShardReads) {}

  orgOf(userId: string): Promise<string | null> {
    return this.reads.one(this.shards.groupOf(userId), 'userOrg', { user_id: userId });
  }

  hasData(userId: string): Promise<boolean> {
    return this.reads.one(this.shards.groupOf(userId), 'userHasData', { user_id: userId });
  }

  async claim(userId: string, orgId: string): Promise<string | null> {
    return (await this.propose(userId, orgId, 'claim')).org_id;
  }

  /** An admin's `PUT /v1/users/:user_id/org`: records the org, or clears it with null. */
  set(userId: string, orgId: string | null): Promise<UserOrgAnswer> {
    return this.propose(userId, orgId, 'set');
  }

  /** Every user recorded for the org, over all groups (each group's from a node holding it). */
  async usersOf(orgId: string): Promise<string[]> {
    const perShard = await this.reads.each('usersOfOrg', { org_id: orgId });
    return perShard.flat().sort();
  }

  private async propose(userId: string, orgId: string | null, mode: 'set' | 'claim'): Promise<UserOrgAnswer> {
    return settle(await this.shards.forUser(userId).log.propose({
      type: 'user.set_org', user_id: userId, org_id: orgId, mode, at: new Date().toISOString(),
    }));
  }
}
