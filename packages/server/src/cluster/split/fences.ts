/**
 * The ranges each group of this node is handing over in a split (store/range-split.ts), kept from the
 * groups' own state: a request about a user of such a range is not served here by that group (the
 * hand-over rule: a write while the range is `moving`, anything once it has `moved`), but answered
 * 503 `range_moving` with Retry-After, by which time the directory names the new group.
 */
import { fnv1a32, handOver, rangeKey, readFences, unavailable, type RangeFence } from '@strata/store';
import type { Shard } from '../../shards';

export class GroupFences {
  private readonly byGroup = new Map<number, RangeFence[]>();
  /** the replica of each group followed now (one closed and opened again is followed afresh) */
  private readonly followed = new Map<number, Shard>();

  /** Loads a group's fences and follows its applies (and snapshot installs). */
  async follow(shard: Shard): Promise<void> {
    this.followed.set(shard.id, shard);
    const load = async () => {
      let list: RangeFence[];
      try {
        list = await readFences(shard.db);
      } catch (err) {
        if (this.followed.get(shard.id) !== shard) return; // closed meanwhile (forget): nothing to keep
        throw err;
      }
      if (this.followed.get(shard.id) !== shard) return;
      if (list.length) this.byGroup.set(shard.id, list);
      else this.byGroup.delete(shard.id);
    };
    await load();
    shard.sm.onApplied((_index, command) => {
      if (command.type.startsWith('range.')) void load();
    });
    shard.sm.onRestored(() => void load());
  }

  /** A group closed on this node (its replica moved away): nothing of it is served here. */
  forget(group: number): void {
    this.byGroup.delete(group);
    this.followed.delete(group);
  }

  /** This group's fences (status, the split driver). */
  of(group: number): RangeFence[] {
    return this.byGroup.get(group) ?? [];
  }

  /** Throws 503 `range_moving` when the group does not serve this user now (module comment). */
  check(group: number, userId: string, access: 'read' | 'write'): void {
    const fences = this.byGroup.get(group);
    if (!fences) return;
    const verdict = handOver(fences, rangeKey(fnv1a32(userId), fences[0].base), access);
    if (verdict !== 'serve') throw unavailable(`User ${userId} is being moved to another shard group (a split); retry.`, 'range_moving');
  }
}
