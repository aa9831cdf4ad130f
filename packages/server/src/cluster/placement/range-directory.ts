/**
 * This node's copy of the key-range directory (store/key-ranges.ts): which group holds each range of
 * user keys, read from shard 0 and kept current by its applied `cluster.ranges` commands. Until the
 * table is recorded (the first start of a data directory, or one made before ranges existed) it is the
 * initial table of the data directory's group count, which routes exactly as the recorded one will.
 */
import { groupOfUser, initialRanges, readKeyRanges, type KeyRangeTable, type StateDb, type StateMachine } from '@strata/store';
import type { UserGroups } from '../../shards';

export class KeyRangeDirectory implements UserGroups {
  private recordedTable: KeyRangeTable | null = null;

  private constructor(private readonly initial: KeyRangeTable) {}

  /** Loads the recorded table and follows shard 0's applies (and snapshot installs) from now on. */
  static async open(meta: { db: StateDb; sm: StateMachine }, groups: number): Promise<KeyRangeDirectory> {
    const dir = new KeyRangeDirectory(initialRanges(groups));
    dir.recordedTable = await readKeyRanges(meta.db);
    meta.sm.onApplied((_index, command, result) => {
      if (command.type === 'cluster.ranges' && (result as { status?: string } | null)?.status === 'recorded') dir.recordedTable = command.table;
    });
    meta.sm.onRestored(() => void readKeyRanges(meta.db).then((t) => (dir.recordedTable = t)));
    return dir;
  }

  /** The table routing uses now. */
  table(): KeyRangeTable {
    return this.recordedTable ?? this.initial;
  }

  /** Whether the table is recorded in shard 0 (not only the data directory's initial one). */
  recorded(): boolean {
    return this.recordedTable !== null;
  }

  /** The table to record when none is: the initial one of this data directory's group count. */
  initialTable(): KeyRangeTable {
    return this.initial;
  }

  groupOf(userId: string): number {
    return groupOfUser(this.table(), userId);
  }
}
