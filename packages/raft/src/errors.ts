/** Errors callers can act on: retry elsewhere (not leader), retry later (no quorum), or fix the request. */
export class RaftError extends Error {
  override name = 'RaftError';
  constructor(message: string, readonly code: string) {
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

/** A membership change that the rules refuse (another change in progress, unknown node, ...). */
export class ConfChangeError extends RaftError {
  override name = 'ConfChangeError';
  constructor(message: string) {
    super(message, 'conf_change_refused');
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
