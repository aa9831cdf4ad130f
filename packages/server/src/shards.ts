import { fnv1a32, groupOfUser, initialRanges, type CommandLog, type StateDb, type StateMachine } from '@strata/store';

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

  forUser(userId: string): Shard {
    return this.byId(this.groups.groupOf(userId))!; // a range never routes to a removed group
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
