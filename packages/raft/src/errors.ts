/**
 * Errors callers can act on: retry elsewhere (not leader), retry later (no quorum), or fix the request.
 * Callers decide on the class and its typed fields (`code`, `leaderId`, `reason`), never on the message,
 * which is for people and may be reworded.
 */
export type RaftErrorCode = 'not_leader' | 'no_quorum' | 'proposal_dropped' | 'conf_change_refused' | 'transfer_in_progress' | 'closed' | 'overloaded' | 'reset' | 'stopped';

export class RaftError extends Error {
  override name = 'RaftError';
  constructor(message: string, readonly code: RaftErrorCode) {
    super(message);
  }
}

/** This node cannot serve the request; leaderId/leaderUrl name the leader when known (null otherwise). */
export class NotLeaderError extends RaftError {
  override name = 'NotLeaderError';
  constructor(readonly leaderId: number | null, readonly leaderUrl: string | null = null) {
    super(leaderId ? `not the leader; the leader is node ${leaderId}${leaderUrl ? ` at ${leaderUrl}` : ''}` : 'not the leader; no leader is known', 'not_leader');
  }
}

/** The operation did not complete in time (no quorum reachable, election in progress). Outcome unknown for proposals. */
export class NoQuorumError extends RaftError {
  override name = 'NoQuorumError';
  constructor(message = 'no quorum: the operation did not complete in time') {
    super(message, 'no_quorum');
  }
}

/** The proposal was definitely not committed (its log slot went to another entry); safe to retry. */
export class ProposalDroppedError extends RaftError {
  override name = 'ProposalDroppedError';
  constructor(message = 'the proposal was dropped by a leader change; it was not committed') {
    super(message, 'proposal_dropped');
  }
}

/**
 * The group holds as many proposals waiting to commit as it may (GroupOptions.maxPendingProposals /
 * maxPendingBytes): this one was not proposed at all. Safe to retry once the backlog drains.
 */
export class OverloadedError extends RaftError {
  override name = 'OverloadedError';
  constructor(message = 'too many proposals are waiting to commit in this group; retry shortly') {
    super(message, 'overloaded');
  }
}

/**
 * Why a membership change (or a leadership transfer) was refused:
 * - `unknown_node`: the node named is not a member;
 * - `already_member`, `not_learner`, `not_voter`, `last_voter`, `no_other_voter`: the membership forbids it;
 * - `in_progress`: another change is not committed yet, and `not_ready`: the leader has not committed an
 *   entry of its term yet. Both pass by themselves: the only reasons worth retrying.
 */
export type ConfChangeReason =
  | 'unknown_node' | 'already_member' | 'not_learner' | 'not_voter' | 'last_voter' | 'no_other_voter'
  | 'in_progress' | 'not_ready';

/** A membership change that the rules refuse; `reason` says why (see ConfChangeReason). */
export class ConfChangeError extends RaftError {
  override name = 'ConfChangeError';
  constructor(readonly reason: ConfChangeReason, message: string) {
    super(message, 'conf_change_refused');
  }

  /** Whether waiting may let the same change through (the one-change-at-a-time rule, a new leader). */
  get retryable(): boolean {
    return this.reason === 'in_progress' || this.reason === 'not_ready';
  }
}

/** A leadership transfer is in progress: proposals wait for the new leader. */
export class TransferInProgressError extends RaftError {
  override name = 'TransferInProgressError';
  constructor() {
    super('leadership transfer in progress', 'transfer_in_progress');
  }
}

export class ClosedError extends RaftError {
  override name = 'ClosedError';
  constructor() {
    super('the raft group is closed', 'closed');
  }
}

/** The group's replica on this node was wiped (RaftHost.resetGroup): what waited on it will not complete here. */
export class GroupResetError extends RaftError {
  override name = 'GroupResetError';
  constructor() {
    super('the raft group was reset on this node (its replica was wiped)', 'reset');
  }
}

/**
 * This node's Raft host stopped after a failed synced write or apply (RaftHost): no group on it applies
 * or acknowledges anything again until the process restarts. What waited on it, and every later call,
 * gets this; `cause` is the failure (in the node's log). The cluster's other replicas are unaffected:
 * retry on another node.
 */
export class HostStoppedError extends RaftError {
  override name = 'HostStoppedError';
  override readonly cause: Error;
  constructor(cause: Error) {
    super(`this node stopped serving after a storage or apply failure: ${cause.message}`, 'stopped');
    this.cause = cause;
  }
}
