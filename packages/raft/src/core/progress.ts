/** The leader's view of one follower's replication (etcd's Progress), with a bounded in-flight window. */
import { invariant } from './assert';

export enum ProgressState {
  /** one App at a time, until the follower's position is known */
  Probe = 0,
  /** pipelined: optimistic next, up to maxInflight messages in flight */
  Replicate = 1,
  /** sending a snapshot; appends paused */
  Snapshot = 2,
}

export class Progress {
  match = 0;
  next: number;
  state = ProgressState.Probe;
  /** probe state: an App was sent and no answer came yet */
  probeSent = false;
  /** last index of each App in flight (replicate state) */
  inflights: number[] = [];
  pendingSnapshot = 0;
  /** bytes of the pending snapshot the follower confirmed */
  snapOffset = 0;
  /** snapOffset seen at the previous heartbeat answer: unchanged since, the chunk in flight is resent */
  snapOffsetAtLastHeartbeat = -1;
  /** set by any message from the follower; CheckQuorum reads and clears it */
  recentActive = false;
  /** match seen at the previous heartbeat answer, to detect lost Apps in the pipelined state */
  matchAtLastHeartbeat = -1;

  constructor(next: number, readonly maxInflight: number, public isLearner: boolean) {
    this.next = next;
  }

  becomeProbe(): void {
    if (this.state === ProgressState.Snapshot) {
      this.next = Math.max(this.match + 1, this.pendingSnapshot + 1);
    } else {
      this.next = this.match + 1;
    }
    this.state = ProgressState.Probe;
    this.reset();
  }

  becomeReplicate(): void {
    this.state = ProgressState.Replicate;
    this.next = this.match + 1;
    this.reset();
  }

  becomeSnapshot(index: number): void {
    this.state = ProgressState.Snapshot;
    this.reset();
    this.pendingSnapshot = index;
    this.snapOffset = 0;
  }

  private reset(): void {
    this.probeSent = false;
    this.inflights = [];
    this.pendingSnapshot = 0;
    this.snapOffset = 0;
    this.snapOffsetAtLastHeartbeat = -1;
  }

  /** An acknowledgement of index n; returns true if it moved match forward. */
  maybeUpdate(n: number): boolean {
    let updated = false;
    if (this.match < n) {
      this.match = n;
      this.probeSent = false;
      updated = true;
    }
    this.next = Math.max(this.next, n + 1);
    return updated;
  }

  /**
   * A rejection of the App whose previous index was `rejected`; hint is the follower's guess of the
   * last index that may match. Returns false for a stale rejection (one that answers an older App).
   */
  maybeDecrTo(rejected: number, hint: number): boolean {
    if (this.state === ProgressState.Replicate) {
      if (rejected <= this.match) return false;
      this.next = this.match + 1;
      return true;
    }
    if (this.next - 1 !== rejected) return false;
    this.next = Math.max(Math.min(rejected, hint + 1), this.match + 1);
    this.probeSent = false;
    return true;
  }

  isPaused(): boolean {
    switch (this.state) {
      case ProgressState.Probe:
        return this.probeSent;
      case ProgressState.Replicate:
        return this.inflights.length >= this.maxInflight;
      case ProgressState.Snapshot:
        return true;
    }
  }

  /** Records an App carrying entries up to lastIndex (count entries). */
  sentEntries(count: number, lastIndex: number): void {
    if (this.state === ProgressState.Replicate) {
      if (count > 0) {
        invariant(lastIndex >= this.next, 'replicate: sent entries must advance next');
        this.next = lastIndex + 1;
        this.inflights.push(lastIndex);
      }
    } else if (this.state === ProgressState.Probe) {
      this.probeSent = true;
    }
  }

  freeInflightsTo(index: number): void {
    let i = 0;
    while (i < this.inflights.length && this.inflights[i] <= index) i++;
    if (i > 0) this.inflights.splice(0, i);
  }
}
