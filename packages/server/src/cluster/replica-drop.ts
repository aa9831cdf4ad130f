/**
 * Disk reclaimed (docs/cluster.md "Placement"): a replica moved off this node is wiped here once this
 * node knows it is no longer a member. The placement loop, having removed node X from group g by the
 * membership entry at index R, asks X to drop g (a signed `POST /v1/cluster/groups/:id/drop` with R),
 * and asks again while X is down. X decides from its own replica only, so a request that arrives late
 * (after X was added back to g) cannot make it wipe a replica it needs.
 */
import type { ConfState, RaftGroup } from '@strata/raft';
import type { RaftApplier } from '@strata/store';

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

/** Runs the decisions of one node, one at a time per group (two placement leaders may ask at once). */
export class ReplicaDrops {
  private readonly running = new Map<number, Promise<unknown>>();

  constructor(private readonly o: { view: (group: number) => ReplicaView; wipe: (group: number, removedAt: number) => Promise<void>; onWiped?: (group: number, removedAt: number) => void }) {}

  async drop(group: number, removedAt: number): Promise<{ status: Exclude<DropDecision, 'wipe'> }> {
    const before = this.running.get(group) ?? Promise.resolve();
    const next = before.catch(() => undefined).then(() => this.decideAndWipe(group, removedAt));
    this.running.set(group, next);
    try {
      return await next;
    } finally {
      if (this.running.get(group) === next) this.running.delete(group);
    }
  }

  private async decideAndWipe(group: number, removedAt: number): Promise<{ status: Exclude<DropDecision, 'wipe'> }> {
    const decision = dropDecision(this.o.view(group), removedAt);
    if (decision !== 'wipe') return { status: decision };
    await this.o.wipe(group, removedAt);
    this.o.onWiped?.(group, removedAt);
    return { status: 'dropped' };
  }
}
