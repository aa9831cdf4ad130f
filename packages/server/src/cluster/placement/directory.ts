/**
 * This node's copy of the placement directory: which nodes hold each shard group, read from the
 * metadata group (shard 0, replicated on every node) and kept current by its applied
 * `cluster.placement` commands. A group not recorded yet (just initialized) falls back to the initial
 * placement computed from the configured peers, the same on every node that has them.
 */
import { readPlacement, readRemovedGroups, type GroupPlacementRecord, type StateMachine, type StateDb } from '@strata/store';
import { initialPlacement } from './initial';

/** Pure: the initial placement of groups 1..shards−1 over `nodes` (group 0 is on every node). */
export function initialUserGroups(shards: number, nodes: readonly number[], rf: number): GroupPlacementRecord[] {
  if (shards <= 1 || nodes.length === 0) return [];
  return initialPlacement(shards - 1, nodes, rf).map((g) => ({ group_id: g.id + 1, voters: g.voters, learners: g.learners, leader: g.leader, move: null }));
}

export class PlacementDirectory {
  private readonly groups = new Map<number, GroupPlacementRecord>();
  private readonly initial = new Map<number, GroupPlacementRecord>();
  private readonly removed = new Set<number>();
  private readonly changeListeners: (() => void)[] = [];

  private constructor(private readonly db: StateDb, initial: GroupPlacementRecord[]) {
    for (const g of initial) this.initial.set(g.group_id, g);
  }

  /** Loads the stored directory and follows shard 0's applies (and snapshot installs) from now on. */
  static async open(meta: { db: StateDb; sm: StateMachine }, initial: GroupPlacementRecord[]): Promise<PlacementDirectory> {
    const dir = new PlacementDirectory(meta.db, initial);
    await dir.reload();
    meta.sm.onApplied((_index, command, result) => {
      if (command.type === 'cluster.remove_group' && (result as { status?: string } | null)?.status === 'removed') dir.forget(command.group);
      if (command.type !== 'cluster.placement' || (result as { groups?: number } | null)?.groups === undefined) return;
      for (const g of command.groups) if (!dir.removed.has(g.group_id)) dir.groups.set(g.group_id, g); // as the apply does
      dir.changed();
    });
    meta.sm.onRestored(() => void dir.reload());
    return dir;
  }

  private async reload(): Promise<void> {
    const stored = await readPlacement(this.db);
    this.groups.clear();
    for (const g of stored) this.groups.set(g.group_id, g);
    for (const id of await readRemovedGroups(this.db)) this.forget(id);
    this.changed();
  }

  /** Called after each change of the recorded placement (a node opens a group it is named for: node.ts). */
  onChange(listener: () => void): void {
    this.changeListeners.push(listener);
  }

  private changed(): void {
    for (const l of this.changeListeners) l();
  }

  /** A removed group (a retired one, `cluster.remove_group`): no record, not even its initial one. */
  private forget(groupId: number): void {
    this.removed.add(groupId);
    this.groups.delete(groupId);
    this.initial.delete(groupId);
  }

  /** The recorded placement of a group (else its initial one; null when neither is known). */
  get(groupId: number): GroupPlacementRecord | null {
    return this.groups.get(groupId) ?? this.initial.get(groupId) ?? null;
  }

  /** Whether the group's placement was recorded (not only computed from the configured peers). */
  recorded(groupId: number): boolean {
    return this.groups.has(groupId);
  }

  /** Every known group's placement, in group order. */
  all(): GroupPlacementRecord[] {
    const ids = new Set([...this.groups.keys(), ...this.initial.keys()]);
    return [...ids].sort((a, b) => a - b).map((id) => this.get(id)!);
  }
}
