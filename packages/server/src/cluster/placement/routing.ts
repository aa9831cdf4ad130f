/**
 * Where a shard group's requests go from this node. Shard 0 (accounts, keys, the placement directory)
 * is on every node; any other group is on `cluster.replication_factor` nodes, and a node that does not
 * hold it finds them in the directory: writes go to the leader it names (whose own Raft state knows
 * better, and forwards once more if leadership moved), reads to one of its voters.
 */
import type { ClusterRuntime } from '../runtime';
import type { LeaderView } from '../forward';
import type { PlacementDirectory } from './directory';

export class GroupRouting implements LeaderView {
  constructor(private readonly rt: ClusterRuntime, private readonly directory: PlacementDirectory) {}

  get nodeId(): number {
    return this.rt.config.cluster.node_id;
  }

  /**
   * A group may leave this node while a request that named it is still looking for its leader (a
   * retired group removed after a merge: docs/cluster.md "Removing a retired group"): not led here then,
   * not held, and no leader known, never an error (a request forwarded meanwhile answered 500).
   */
  isLeader(shard: number): boolean {
    return this.rt.findGroup(shard)?.isLeader() ?? false;
  }

  /**
   * Serves the group's reads here: a voter by its own Raft state and, for a placed group, by the
   * directory too (a replica moved away may not have heard of its removal; a learner still catching
   * up holds only part of the data).
   */
  holds(shard: number): boolean {
    if (!this.rt.findGroup(shard)?.isVoter()) return false;
    if (shard === 0) return true;
    const placed = this.directory.get(shard);
    return placed === null || placed.voters.includes(this.nodeId);
  }

  /** The leader as this node's replica knows it when it holds the group, else as the directory names it. */
  leaderId(shard: number): number | null {
    if (this.holds(shard)) return this.rt.findGroup(shard)!.leaderId();
    const placed = this.directory.get(shard);
    if (!placed) return null;
    return placed.leader ?? placed.voters.find((v) => v !== this.nodeId) ?? null;
  }

  /** The group's voters other than this node, the directory's leader first: where a read may go. */
  replicas(shard: number): number[] {
    const placed = this.directory.get(shard);
    if (!placed) return [];
    const others = placed.voters.filter((v) => v !== this.nodeId);
    return placed.leader !== null && others.includes(placed.leader) ? [placed.leader, ...others.filter((v) => v !== placed.leader)] : others;
  }

  /** Every node is a member of shard 0, whose membership records each one's URL. */
  urlOf(nodeId: number, shard: number): string | null {
    return this.rt.urlOf(nodeId, shard) ?? this.rt.urlOf(nodeId, 0);
  }
}
