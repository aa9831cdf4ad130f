/**
 * This node's copy of the key-range directory (store/key-ranges.ts): which group holds each range of
 * user keys, read from shard 0 and kept current by its applied `cluster.ranges` and `cluster.split`
 * commands, with the splits in flight and those whose old group still drops the moved records. Until
 * the table is recorded (the first start of a data directory, or one made before ranges existed) it
 * is the initial table of the data directory's group count, which routes exactly as the recorded one will.
 */
import {
  groupOfUser, initialRanges, readKeyRanges, readKeySplitAborts, readKeySplitDrops, readKeySplits, readRemovedGroups, readRetiredGroups, type KeyRangeTable, type KeySplit, type StateDb, type StateMachine,
} from '@strata/store';
import type { UserGroups } from '../../shards';

export class KeyRangeDirectory implements UserGroups {
  private recordedTable: KeyRangeTable | null = null;
  private inFlight: KeySplit[] = [];
  private dropping: KeySplit[] = [];
  private aborting: KeySplit[] = [];
  private retiredIds: number[] = [];
  private removedIds: number[] = [];
  private readonly newGroupListeners: ((id: number) => void)[] = [];
  private readonly removedListeners: ((id: number) => void)[] = [];

  private constructor(private readonly initial: KeyRangeTable, private readonly db: StateDb) {}

  /** Loads the recorded table and follows shard 0's applies (and snapshot installs) from now on. */
  static async open(meta: { db: StateDb; sm: StateMachine }, groups: number): Promise<KeyRangeDirectory> {
    const dir = new KeyRangeDirectory(initialRanges(groups), meta.db);
    await dir.reload();
    meta.sm.onApplied((_index, command, result) => {
      const status = (result as { status?: string } | null)?.status;
      if (command.type === 'cluster.ranges' && status === 'recorded') dir.recordedTable = command.table;
      if (command.type === 'cluster.remove_group' && status === 'removed') void dir.reload();
      if (command.type !== 'cluster.split' || status === undefined) return;
      // the answers that changed something; the lists are read again (small) so this copy is the stored one
      if (['begun', 'committed', 'aborted', 'cleared', 'dropped'].includes(status)) void dir.reload();
    });
    meta.sm.onRestored(() => void dir.reload());
    return dir;
  }

  private reloads = 0;

  private async reload(): Promise<void> {
    // reloads run concurrently (one per applied change): only the last begun may set the lists, or one
    // that read older state could finish last and bring back a group removed meanwhile
    const mine = ++this.reloads;
    const [table, splits, drops, aborts, retired, removed] = await Promise.all([
      readKeyRanges(this.db), readKeySplits(this.db), readKeySplitDrops(this.db), readKeySplitAborts(this.db), readRetiredGroups(this.db), readRemovedGroups(this.db),
    ]);
    if (mine !== this.reloads) return;
    this.recordedTable = table;
    this.inFlight = splits;
    this.dropping = drops;
    this.aborting = aborts;
    this.retiredIds = retired;
    this.removedIds = removed;
    for (const id of this.groupIds()) for (const l of this.newGroupListeners) l(id);
    for (const id of removed) for (const l of this.removedListeners) l(id);
  }

  /** Called with every removed group id (again on each change: the listener skips those it has removed). */
  onRemoved(listener: (id: number) => void): void {
    this.removedListeners.push(listener);
  }

  /** Retired groups removed (`cluster.remove_group`): no node opens them; their ids stay retired. */
  removed(): number[] {
    return this.removedIds;
  }

  /** Called with every group id the directory names (again on each change: the listener skips those it has). */
  onNewGroup(listener: (id: number) => void): void {
    this.newGroupListeners.push(listener);
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

  /** Splits begun and not committed (or aborted) yet. */
  splits(): KeySplit[] {
    return this.inFlight;
  }

  /** Committed splits whose old group has not dropped the moved records yet. */
  drops(): KeySplit[] {
    return this.dropping;
  }

  /** Aborted splits and merges whose groups are not put back yet (the old group unfenced, the new one cleared). */
  aborts(): KeySplit[] {
    return this.aborting;
  }

  /** Groups merged away: they own no range, and their ids are never given to a new group. */
  retired(): number[] {
    return this.retiredIds;
  }

  /** The group ids a new split may not take: named by the table, claimed by a split in flight or being put back, or retired. */
  claimed(): number[] {
    return [...this.inFlight, ...this.aborting].map((s) => s.new_group).concat(this.retiredIds);
  }

  /**
   * Every group id named by the table, by a split or merge not finished (both of its groups), or retired
   * (a merged-away group keeps running until it is removed: its queued webhook deliveries are still sent
   * from it), in order; never a removed one.
   */
  groupIds(): number[] {
    const busy = [...this.inFlight, ...this.dropping, ...this.aborting].flatMap((s) => [s.group, s.new_group]);
    const ids = new Set([...this.table().ranges.map((r) => r.group), ...busy, ...this.retiredIds]);
    for (const id of this.removedIds) ids.delete(id);
    return [...ids].sort((a, b) => a - b);
  }

  groupOf(userId: string): number {
    return groupOfUser(this.table(), userId);
  }
}
