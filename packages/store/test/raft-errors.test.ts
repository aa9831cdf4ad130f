import { ClosedError, ConfChangeError, NoQuorumError, NotLeaderError, ProposalDroppedError } from '@strata/raft';
import { NotLeaderStrataError, StrataError, fromRaftError } from '../src';

/** Raft's errors as the contract's, decided on classes and typed fields (never on message text). */
describe('fromRaftError', () => {
  const mapped = (err: unknown) => {
    const e = fromRaftError(err) as StrataError;
    return { code: e.code, status: e.status, retryAfter: e.retryAfter };
  };

  it('answers 404 for a change naming a node that is not a member, 409 for any other refusal', () => {
    expect(mapped(new ConfChangeError('unknown_node', 'node 9 is not a member'))).toEqual({ code: 'not_found', status: 404, retryAfter: undefined });
    // The message alone no longer decides: a reworded unknown-node refusal is still a 404, and a
    // message that mentions membership does not make another reason one.
    expect(mapped(new ConfChangeError('unknown_node', 'no such node'))).toMatchObject({ status: 404 });
    expect(mapped(new ConfChangeError('in_progress', 'node 3 is not a member yet'))).toMatchObject({ code: 'conflict', status: 409 });
    for (const reason of ['already_member', 'not_learner', 'not_voter', 'last_voter', 'no_other_voter', 'not_ready'] as const) {
      expect(mapped(new ConfChangeError(reason, 'refused'))).toMatchObject({ code: 'conflict', status: 409 });
    }
  });

  it('answers every "cannot commit now" 503 with Retry-After, and keeps the leader id for forwarding', () => {
    const notLeader = fromRaftError(new NotLeaderError(2));
    expect(notLeader).toBeInstanceOf(NotLeaderStrataError);
    expect(notLeader).toMatchObject({ code: 'no_leader', status: 503, retryAfter: 1, leaderId: 2 });
    expect(mapped(new NoQuorumError())).toEqual({ code: 'no_leader', status: 503, retryAfter: 1 });
    expect(mapped(new ProposalDroppedError())).toEqual({ code: 'no_leader', status: 503, retryAfter: 1 });
    expect(mapped(new ClosedError())).toEqual({ code: 'unavailable', status: 503, retryAfter: 1 });
  });

  it('passes StrataErrors and foreign errors through unchanged', () => {
    const own = new StrataError('conflict', 'x');
    const foreign = new TypeError('y');
    expect(fromRaftError(own)).toBe(own);
    expect(fromRaftError(foreign)).toBe(foreign);
  });
});
