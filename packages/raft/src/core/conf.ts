/** Membership: encoding of conf entries and the one-change-at-a-time rule. */
import { ConfChangeError } from '../errors';
import { invariant } from './assert';
import type { ConfChange, ConfState, NodeId } from './types';

export function encodeConf(c: ConfState): Uint8Array {
  return Buffer.from(JSON.stringify(c), 'utf8');
}

export function decodeConf(b: Uint8Array): ConfState {
  const c = JSON.parse(Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('utf8')) as ConfState;
  invariant(Array.isArray(c.voters) && Array.isArray(c.learners), 'malformed conf entry');
  return { voters: c.voters, learners: c.learners, addrs: c.addrs ?? {} };
}

export function cloneConf(c: ConfState): ConfState {
  return { voters: [...c.voters], learners: [...c.learners], addrs: { ...c.addrs } };
}

export function isMember(c: ConfState, id: NodeId): boolean {
  return c.voters.includes(id) || c.learners.includes(id);
}

/** The membership after one change, or the refusal (not thrown: the core decides) when the change is not allowed. */
export function applyConfChange(c: ConfState, cc: ConfChange): ConfState | ConfChangeError {
  const n = cloneConf(c);
  switch (cc.type) {
    case 'add_learner':
      if (isMember(c, cc.node)) return new ConfChangeError('already_member', `node ${cc.node} is already a member`);
      n.learners.push(cc.node);
      n.addrs[cc.node] = cc.addr;
      break;
    case 'promote':
      if (!c.learners.includes(cc.node)) return new ConfChangeError('not_learner', `node ${cc.node} is not a learner`);
      n.learners = n.learners.filter((x) => x !== cc.node);
      n.voters.push(cc.node);
      break;
    case 'remove':
      if (!isMember(c, cc.node)) return new ConfChangeError('unknown_node', `node ${cc.node} is not a member`);
      n.voters = n.voters.filter((x) => x !== cc.node);
      n.learners = n.learners.filter((x) => x !== cc.node);
      delete n.addrs[cc.node];
      if (n.voters.length === 0) return new ConfChangeError('last_voter', 'cannot remove the last voter');
      break;
  }
  n.voters.sort((a, b) => a - b);
  n.learners.sort((a, b) => a - b);
  return n;
}
