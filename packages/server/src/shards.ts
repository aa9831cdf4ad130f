import type { CommandLog, StateDb, StateMachine } from '@strata/store';

export interface Shard {
  id: number;
  db: StateDb;
  sm: StateMachine;
  log: CommandLog;
}

/**
 * FNV-1a (32-bit) over the UTF-8 bytes of the user id. Documented and stable: changing it would move
 * users between shards, so it must never change for a given shard count.
 */
export function fnv1a32(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(text, 'utf8')) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

export function shardOf(userId: string, shardCount: number): number {
  return fnv1a32(userId) % shardCount;
}

/** Which shard group holds a user's data. Shard 0 also holds the service-wide records (accounts, keys). */
export class ShardRouter {
  constructor(readonly shards: Shard[]) {
    if (shards.length === 0) throw new Error('at least one shard is required');
  }

  forUser(userId: string): Shard {
    return this.shards[shardOf(userId, this.shards.length)];
  }

  /** The group that holds accounts, API keys and other service-wide records. */
  meta(): Shard {
    return this.shards[0];
  }

  all(): Shard[] {
    return this.shards;
  }
}
