/**
 * The placement model (issue 18): which nodes hold each shard group, and the one-at-a-time membership
 * steps that change it. Pure data and pure functions: the planner reads these types, the metadata
 * group's state machine (later) and the simulator apply steps with `applyStep`.
 *
 * A replica moves in three single changes, each committed before the next (no joint consensus):
 * add `to` as a learner, promote it once it has caught up, then remove `from`. The move is kept in the
 * replicated placement so that every planner run, on any node, continues it instead of starting another.
 */
export type NodeId = number;
export type GroupId = number;

/** A move in flight: `to` joins (learner, then voter), then `from` leaves (null: a pure addition). */
export interface Move {
  to: NodeId;
  from: NodeId | null;
  reason: MoveReason;
}

/** repair: a member is dead; drain: a member is being removed by the operator; balance: spread. */
export type MoveReason = 'repair' | 'drain' | 'balance';

/** The replicated part: what the metadata group stores for one shard group. */
export interface GroupPlacement {
  id: GroupId;
  voters: NodeId[];
  learners: NodeId[];
  /** the current leader (observed), which is also the preference the placement records */
  leader: NodeId | null;
  move: Move | null;
}

/**
 * What the planner sees of a group: the replicated placement plus what its leader observes now.
 * `lagging` lists members that have not caught up (a learner still receiving its snapshot);
 * `bytes` (the group's size) only orders balancing moves: small groups move first.
 */
export interface GroupView extends GroupPlacement {
  lagging: readonly NodeId[];
  bytes?: number;
}

/**
 * A node as the failure detector reports it: `down_since` is when it stopped answering (null: up).
 * A node down for at least the planner's `deadAfter` is dead: its replicas are re-created elsewhere.
 * Draining: the operator is removing it; its replicas move away while it still serves.
 */
export interface NodeStatus {
  id: NodeId;
  down_since: number | null;
  draining: boolean;
}

export type Step =
  | { kind: 'add_learner'; group: GroupId; node: NodeId; replaces: NodeId | null; reason: MoveReason }
  | { kind: 'promote'; group: GroupId; node: NodeId }
  | { kind: 'remove'; group: GroupId; node: NodeId }
  | { kind: 'transfer_leader'; group: GroupId; to: NodeId };

/** Votes needed to commit in a group of `voters` voters. */
export function majority(voters: number): number {
  return Math.floor(voters / 2) + 1;
}

/** Failures a group of `rf` voters survives: f = ⌊(rf − 1) / 2⌋. */
export function faultTolerance(rf: number): number {
  return Math.floor((rf - 1) / 2);
}

/**
 * Pure: the placement after one committed step. Removing a voter once the move's `to` is a voter
 * completes the move (whichever member left: a dead one is taken before the planned `from`);
 * removing the move's own member (learner or voter: it died or started draining) cancels it; a
 * promotion completes a pure addition.
 */
export function applyStep(g: GroupPlacement, step: Step): GroupPlacement {
  if (step.group !== g.id) throw new Error(`step for group ${step.group} applied to group ${g.id}`);
  const { id, voters, learners, leader, move } = g;
  switch (step.kind) {
    case 'add_learner':
      return { id, voters, learners: [...learners, step.node], leader, move: { to: step.node, from: step.replaces, reason: step.reason } };
    case 'promote': {
      const next = [...voters, step.node];
      const done = move !== null && move.to === step.node && (move.from === null || !next.includes(move.from));
      return { id, voters: next, learners: learners.filter((n) => n !== step.node), leader, move: done ? null : move };
    }
    case 'remove': {
      if (learners.includes(step.node)) {
        return { id, voters, learners: learners.filter((n) => n !== step.node), leader, move: move?.to === step.node ? null : move };
      }
      const next = voters.filter((n) => n !== step.node);
      // the move ends when its member leaves (it died or is draining: cancelled) or when another does (completed)
      const ends = move !== null && (move.to === step.node || next.includes(move.to));
      return { id, voters: next, learners, leader: leader === step.node ? null : leader, move: ends ? null : move };
    }
    case 'transfer_leader':
      return { id, voters, learners, leader: step.to, move };
  }
}

/** Default replica tolerance: max − min replicas per node ≤ max(1, ⌈5% of the mean⌉). */
export function defaultTolerance(items: number, nodes: number): number {
  return nodes === 0 ? 1 : Math.max(1, Math.ceil((0.05 * items) / nodes));
}

/** max − min of a count per node over `nodes` (0 for no nodes). */
export function spread(counts: ReadonlyMap<NodeId, number>, nodes: Iterable<NodeId>): { max: number; min: number } {
  let max = -Infinity;
  let min = Infinity;
  for (const n of nodes) {
    const c = counts.get(n) ?? 0;
    if (c > max) max = c;
    if (c < min) min = c;
  }
  return max === -Infinity ? { max: 0, min: 0 } : { max, min };
}
