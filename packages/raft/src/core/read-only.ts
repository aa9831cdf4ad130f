/**
 * ReadIndex bookkeeping on the leader: each read gets a sequence number carried by the next heartbeat
 * round; an answer with sequence s acknowledges every read with sequence <= s. A read is confirmed
 * once a majority acknowledged it (the leader was still leader when it was registered).
 */
import { majority } from './quorum';
import type { NodeId } from './types';

export interface PendingRead {
  ctx: number;
  index: number;
  seq: number;
  /** who asked: the leader itself or a follower that forwarded the read */
  from: NodeId;
  acks: Set<NodeId>;
}

export class ReadOnly {
  seq = 0;
  pending: PendingRead[] = [];

  add(ctx: number, index: number, from: NodeId, self: NodeId): number {
    this.seq++;
    this.pending.push({ ctx, index, from, seq: this.seq, acks: new Set([self]) });
    return this.seq;
  }

  ack(from: NodeId, seq: number): void {
    for (const p of this.pending) {
      if (p.seq > seq) break;
      p.acks.add(from);
    }
  }

  /** Removes and returns the reads confirmed by a majority of voters (a prefix, in order). */
  release(voters: NodeId[]): PendingRead[] {
    const q = majority(voters.length);
    let last = -1;
    for (let i = 0; i < this.pending.length; i++) {
      let n = 0;
      for (const v of voters) if (this.pending[i].acks.has(v)) n++;
      if (n >= q) last = i;
    }
    return last < 0 ? [] : this.pending.splice(0, last + 1);
  }

  clear(): void {
    this.pending = [];
  }
}
