/**
 * Disk reclaimed (docs/cluster.md "Placement"): a replica moved off this node is wiped here once this
 * node knows it is no longer a member. The placement loop, having removed node X from group g by the
 * membership entry at index R, asks X to drop g (a signed `POST /v1/cluster/groups/:id/drop` with R),
 * and asks again while X is down. X decides from its own replica only, so a request that arrives late
 * (after X was added back to g) cannot make it wipe a replica it needs.
 */
import { readdir, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { syncDir, type ConfState, type RaftGroup } from '@strata/raft';
import type { GroupPlacementRecord, RaftApplier } from '@strata/store';

/** What this node knows of its replica of the group, read from its own Raft state and applied state. */
export interface ReplicaView {
  /** this node's id */
  self: number;
  /** the last index of its log (0: nothing held, never written or already wiped) */
  lastIndex: number;
  /** the membership of its log, uncommitted entries included (Raft's configuration takes effect on append) */
  logMembers: readonly number[];
  /** the index its state machine has applied */
  appliedIndex: number;
  /** the membership as of the last membership entry applied (committed), null before the first */
  appliedMembers: ConfState | null;
}

/** What this node's own Raft state and applied state say of its replica. */
export function replicaView(self: number, group: RaftGroup, applier: RaftApplier): ReplicaView {
  const s = group.status();
  return { self, lastIndex: s.lastIndex, logMembers: s.members.map((m) => m.id), appliedIndex: applier.appliedIndex(), appliedMembers: applier.clusterMeta().members };
}

/**
 * - `dropped`: wipe it now (or nothing is left to wipe): the removal at R is the last word on this node
 * - `member`: a later membership entry names this node again: the request is stale, keep the replica
 * - `not_yet`: the node has the removal in its log but has not applied it: ask again
 */
export type DropDecision = 'wipe' | 'dropped' | 'member' | 'not_yet';

/**
 * Pure: whether the replica may be wiped, given the index R of the committed entry that removed this
 * node. A node's log reaches past R only through entries the group committed after R (R is committed,
 * so no leader truncates below it); an add of this node after R would be one of them, and a voter or
 * caught-up learner has it in its log.
 * - Its log ends before R: it never saw its removal, nor anything after it, so no re-add: wipe.
 * - Its log names it (at or past R): added again (or the request is older than a re-add): keep.
 * - Its applied membership, at or past R, names it: added again and not yet removed by what it applied: keep.
 * - Its applied membership at or past R does not name it, nor does its log: wipe.
 * - Otherwise it holds the removal but has not applied it yet: not yet.
 */
export function dropDecision(v: ReplicaView, removedAt: number): DropDecision {
  if (v.lastIndex === 0) return 'dropped';
  if (v.lastIndex < removedAt) return 'wipe';
  if (v.logMembers.includes(v.self)) return 'member';
  if (v.appliedIndex < removedAt) return 'not_yet';
  const applied = v.appliedMembers;
  if (applied && (applied.voters.includes(v.self) || applied.learners.includes(v.self))) return 'member';
  return 'wipe';
}

/** What a replica with nothing in it looks like (not open here: dropped already, or never held). */
export function blankView(self: number): ReplicaView {
  return { self, lastIndex: 0, logMembers: [], appliedIndex: 0, appliedMembers: null };
}

/** Runs the decisions of one node, one at a time per group (two placement leaders may ask at once). */
export class ReplicaDrops {
  private readonly running = new Map<number, Promise<unknown>>();

  /**
   * `serial`: runs a decision and its wipe where nothing else opens or closes the node's groups (node.ts:
   * the queue that does), so that the replica the decision saw is the one wiped.
   */
  constructor(private readonly o: {
    view: (group: number) => ReplicaView | Promise<ReplicaView>; wipe: (group: number, removedAt: number) => Promise<void>; onWiped?: (group: number, removedAt: number) => void;
    serial?: <T>(decideAndWipe: () => Promise<T>) => Promise<T>;
  }) {}

  async drop(group: number, removedAt: number): Promise<{ status: Exclude<DropDecision, 'wipe'> }> {
    const before = this.running.get(group) ?? Promise.resolve();
    const next = before.catch(() => undefined).then(() => (this.o.serial ? this.o.serial(() => this.decideAndWipe(group, removedAt)) : this.decideAndWipe(group, removedAt)));
    this.running.set(group, next);
    try {
      return await next;
    } finally {
      if (this.running.get(group) === next) this.running.delete(group);
    }
  }

  private async decideAndWipe(group: number, removedAt: number): Promise<{ status: Exclude<DropDecision, 'wipe'> }> {
    const decision = dropDecision(await this.o.view(group), removedAt);
    if (decision !== 'wipe') return { status: decision };
    await this.o.wipe(group, removedAt);
    this.o.onWiped?.(group, removedAt);
    return { status: 'dropped' };
  }
}

/*
 * The replica's files. A dropped replica is not kept open blank: the group closes on this node, its
 * state directory (`shard-<id>`) and its Raft log and snapshot files are deleted, and the node opens
 * the group again (blank, from nothing) only when the placement directory names it for the group.
 */

/** Pure: whether the placement record names `self` for the group (voter, learner, or the target of its move). */
export function namedFor(record: GroupPlacementRecord | null, self: number): boolean {
  if (!record) return false;
  return record.voters.includes(self) || record.learners.includes(self) || record.move?.to === self;
}

/**
 * Pure: whether a live group stays closed on this node (not opened at start, nor when the key-range
 * directory names it again), given what its Raft storage holds: only a replica with nothing in it (no
 * entry, no hard state, no snapshot: `blank`), which this node dropped (`removedAt` > 0) or which it never
 * held on a node removed from the cluster (it will never be added to anything again), and which the
 * placement does not name for this node. A replica with anything in its log is opened, whatever else
 * (a drop a crash interrupted before the log went: the state is rebuilt from the log, and the drop,
 * asked again, wipes it); so is one the placement names (added back: it catches up from nothing).
 */
export function staysClosed(disk: { blank: boolean; removedAt: number }, o: { named: boolean; removedFromCluster: boolean }): boolean {
  if (o.named || !disk.blank) return false;
  return disk.removedAt > 0 || o.removedFromCluster;
}

/**
 * Whether a live group not open on this node stays closed (staysClosed); when it does, whatever
 * directory of it is left goes (nothing in its log: a directory can only hold a replica the group does
 * not count on).
 */
export async function keepClosed(dir: string, disk: { blank: boolean; removedAt: number }, o: { named: boolean; removedFromCluster: boolean }): Promise<boolean> {
  if (!staysClosed(disk, o)) return false;
  await deleteAside(await setAside(dir));
  return true;
}

/**
 * Deletes a replica's files once its Raft group is closed, in the order that leaves a crash something the
 * next start finishes or recognises: `removeGroup` closes the group (no apply of it runs any more), then
 * runs the callback it is given, which closes the state (`closeState`) and renames its directory aside
 * (one atomic rename), then deletes the log and snapshot files (RaftHost.removeGroup with beforeStorage);
 * the directory set aside goes last. A crash before the rename leaves the whole replica; after it, the log
 * (its state rebuilt from it at start) or nothing; what was set aside is deleted at start (sweepSetAside).
 */
export async function deleteReplica(o: { dir: string; removeGroup: (beforeStorage: () => Promise<void>) => Promise<void>; closeState: () => Promise<void> }): Promise<void> {
  let aside: string | null = null;
  await o.removeGroup(async () => {
    await o.closeState();
    aside = await setAside(o.dir);
  });
  await deleteAside(aside);
}

/** What a dropped replica's directory is renamed to before it is deleted: `shard-<id>.dropped-<time>`. */
const SET_ASIDE = '.dropped-';

/**
 * Renames a replica's directory aside (one atomic rename, then the data directory synced), so that no
 * crash leaves half a LevelDB where the state was: either the whole state is there or none of it.
 * Returns where it went (null when there was no directory).
 */
export async function setAside(dir: string): Promise<string | null> {
  const aside = `${dir}${SET_ASIDE}${Date.now()}`;
  try {
    await rename(dir, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  await syncDir(dirname(dir));
  return aside;
}

/** Deletes a directory set aside (setAside); what a crash leaves of it goes at the next start (sweepSetAside). */
export async function deleteAside(aside: string | null): Promise<void> {
  if (aside) await rm(aside, { recursive: true, force: true });
}

/** Deletes every directory drops left set aside in `dataDir` (a crash between the rename and the delete). */
export async function sweepSetAside(dataDir: string): Promise<string[]> {
  const names = await readdir(dataDir).catch(() => [] as string[]);
  const left = names.filter((name) => /^shard-[0-9]+$/.test(name.split(SET_ASIDE)[0]) && name.includes(SET_ASIDE));
  for (const name of left) await rm(join(dataDir, name), { recursive: true, force: true });
  return left;
}

/** The directory a group's replica keeps its state in. */
export function replicaDir(dataDir: string, group: number): string {
  return join(dataDir, `shard-${group}`);
}
