import { fnv1a32, groupOfUser, initialRanges, unavailable, type CommandLog, type StateDb, type StateMachine } from '@strata/store';

export { fnv1a32 };

export interface Shard {
  id: number;
  db: StateDb;
  sm: StateMachine;
  log: CommandLog;
}

/** Which group a user's data is in (the key-range directory, cluster/placement/range-directory.ts). */
export interface UserGroups {
  groupOf(userId: string): number;
  /** every live group id, open on this node or not (without it: the groups open here) */
  groupIds?(): number[];
}

/**
 * The group of a user in a data directory made with `shardCount` groups, before any split: the
 * `fnv1a32 mod shards` layout, which the initial key-range table reproduces exactly (key-ranges.ts).
 */
export function shardOf(userId: string, shardCount: number): number {
  return fnv1a32(userId) % shardCount;
}

/** The initial layout of `shardCount` groups as UserGroups (one node's tests, tools). */
export function initialGroups(shardCount: number): UserGroups {
  const table = initialRanges(shardCount);
  return { groupOf: (userId) => groupOfUser(table, userId) };
}

/** Which shard group holds a user's data. Shard 0 also holds the service-wide records (accounts, keys). */
export class ShardRouter {
  constructor(readonly shards: Shard[], readonly groups: UserGroups = initialGroups(shards.length)) {
    if (shards.length === 0) throw new Error('at least one shard is required');
  }

  /**
   * The user's group as open on this node. A range never routes to a removed group, but a group may
   * not be open here: a replica moved away is closed (cluster/replica-drop.ts); requests about its
   * users are forwarded to a holder before they get here, and anything else is answered 503.
   */
  forUser(userId: string): Shard {
    return this.here(this.groups.groupOf(userId));
  }

  /** The group of this id open on this node; 503 when it is not (a replica moved away a moment ago: retry). */
  here(id: number): Shard {
    const shard = this.byId(id);
    if (!shard) throw unavailable(`This node does not hold shard ${id}; retry on another node.`, 'no_leader');
    return shard;
  }

  /** The id of the user's group (open here or not). */
  groupOf(userId: string): number {
    return this.groups.groupOf(userId);
  }

  /**
   * Every live group's id, in order, open on this node or not (a replica moved away is not open here):
   * what a read about every group goes over, each group from its replica here or from a holder.
   */
  groupIds(): number[] {
    return this.groups.groupIds?.() ?? this.shards.map((s) => s.id).sort((a, b) => a - b);
  }

  /** The group of this id open on this node (undefined: removed, or not opened yet). */
  byId(id: number): Shard | undefined {
    // ids are dense but for removed groups: the index first, else a search
    const at = this.shards[id];
    return at?.id === id ? at : this.shards.find((s) => s.id === id);
  }

  /** The group that holds accounts, API keys and other service-wide records. */
  meta(): Shard {
    return this.shards[0];
  }

  all(): Shard[] {
    return this.shards;
  }
}
