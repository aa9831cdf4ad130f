/**
 * The Raft protocol as a pure, deterministic state machine (etcd's RawNode design): the driver calls
 * tick(), step(msg), propose(), readIndex(); it takes out a Ready (what to persist, send, apply), does
 * it in that order, and calls advance(). No I/O, no clock, no Math.random: randomness comes from
 * config.random, a seeded source.
 */
import { ConfChangeError, NotLeaderError, TransferInProgressError } from '../errors';
import { invariant } from './assert';
import { applyConfChange, cloneConf, decodeConf, encodeConf, isMember } from './conf';
import { RaftLog } from './log';
import { Progress, ProgressState } from './progress';
import { hasQuorum, quorumIndex, voteResult } from './quorum';
import { ReadOnly } from './read-only';
import {
  DEFAULT_CONFIG,
  EntryType,
  MsgType,
  NONE,
  type ConfChange,
  type ConfState,
  type Entry,
  type HardState,
  type InitialState,
  type Message,
  type NodeId,
  type RaftConfig,
  type ReadState,
  type Ready,
  type Role,
  type Snapshot,
  type SnapshotMeta,
  type SnapWrite,
  type SoftState,
} from './types';

type CampaignKind = 'pre' | 'elect' | 'transfer';

/** Leader messages may be sent before the leader's own entries are synced (thesis 10.2.1). */
export function canSendBeforePersist(m: Message): boolean {
  return m.type === MsgType.App || m.type === MsgType.Heartbeat || m.type === MsgType.Snap || m.type === MsgType.TimeoutNow;
}

/** A snapshot being received: only its position; the bytes go to the driver (Ready.snapshotChunks). */
interface IncomingSnapshot {
  meta: SnapshotMeta;
  from: NodeId;
  received: number;
}

function sameMeta(a: SnapshotMeta, b: SnapshotMeta): boolean {
  return a.index === b.index && a.term === b.term;
}

export class RawNode {
  readonly id: NodeId;
  readonly cfg: RaftConfig;
  term = 0;
  vote: NodeId = NONE;
  lead: NodeId = NONE;
  role: Role = 'follower';
  /**
   * Elections of this node since this core was made, counted where they happen (for the driver's
   * metrics; nothing in Raft reads them). Counted here, not from Readys: the role is visible to
   * readers (status) from this moment, before the driver takes the Ready that carries it.
   */
  readonly elections = { started: 0, won: 0 };
  readonly log: RaftLog;
  /** membership in force: the latest conf entry in the log, else the one at the compaction point */
  conf: ConfState;
  /** membership at log.offset */
  private offsetConf: ConfState;
  /** leader only: replication state per member other than itself */
  readonly prs = new Map<NodeId, Progress>();
  private votes = new Map<NodeId, boolean>();
  electionElapsed = 0;
  private heartbeatElapsed = 0;
  private randomizedElectionTimeout = 0;
  leadTransferee: NodeId = NONE;
  private readOnly = new ReadOnly();
  /** reads asked before this leader committed an entry of its term; served once it has */
  private pendingReads: { ctx: number; from: NodeId }[] = [];
  private msgs: Message[] = [];
  private readStates: ReadState[] = [];
  private pendingBcast = false;
  /** latest local snapshot (meta and size), sent to followers whose next entry is compacted */
  snapshot: Snapshot | null;
  private incoming: IncomingSnapshot | null = null;
  /** received snapshot bytes not yet handed to the driver (at most what arrived since the last Ready) */
  private snapWrites: SnapWrite[] = [];
  /** a received snapshot not yet handed to the driver */
  private pendingRestore: Snapshot | null = null;
  /** first log index not yet handed out in a Ready */
  private unstableFrom: number;
  /** highest index known durable on this node (advance() confirms) */
  persisted: number;
  /** highest index handed out for applying, and confirmed applied */
  private applyCursor: number;
  applied: number;
  private prevHardState: HardState;
  private prevSoftState: SoftState;
  /**
   * The replica was wiped after the membership entry at this index removed it (0: never). Until its log
   * reaches that index it has no say in the group: a blank replica has lost its term, its vote and its
   * log, so it would vote for anyone and take any leader's entries, and a member that missed the changes
   * since (its old membership still naming this node) could win an election with such votes and
   * overwrite what the group committed (test/cluster/elastic.test.ts lost acknowledged writes that way).
   * So it grants no vote, never campaigns, and takes entries and snapshots only from a leader whose
   * commit index reached the removal (`commit` of App and Snap): the leader of the group that added it
   * back. A zombie leader's log ends before the removal (it never saw it).
   */
  removedAt: number;

  constructor(cfg: Partial<RaftConfig> & Pick<RaftConfig, 'id' | 'random'>, init: InitialState) {
    this.cfg = { ...DEFAULT_CONFIG, ...cfg };
    invariant(this.cfg.id > 0, 'node id must be positive');
    invariant(this.cfg.heartbeatTick < this.cfg.electionTick, 'heartbeatTick must be below electionTick');
    this.id = this.cfg.id;
    const hs = init.hardState;
    this.log = new RaftLog(init.offset, init.offsetTerm, [...init.entries], Math.max(hs.commit, init.offset));
    this.term = hs.term;
    this.vote = hs.vote;
    this.offsetConf = cloneConf(init.offsetConf);
    this.conf = this.confAt(this.log.lastIndex());
    this.snapshot = init.snapshot;
    // A transfer interrupted by a restart resumes from what reached the disk (the leader is told so
    // by the SnapResp answering its next chunk).
    const inc = init.incoming;
    if (inc && inc.received < inc.total && inc.meta.index > Math.max(hs.commit, init.offset)) this.incoming = { meta: inc.meta, from: inc.from, received: inc.received };
    this.unstableFrom = this.log.lastIndex() + 1;
    this.persisted = this.log.lastIndex();
    // Replay what the application has not applied; it may also be ahead of the saved commit index
    // (commit is saved lazily), in which case everything it applied is committed by definition.
    const applied = Math.max(init.applied, init.offset);
    invariant(applied <= this.log.lastIndex(), () => `applied index ${applied} beyond the log's last index ${this.log.lastIndex()}`);
    if (applied > this.log.committed) this.log.committed = applied;
    this.applyCursor = applied;
    this.applied = applied;
    this.prevHardState = { term: this.term, vote: this.vote, commit: this.log.committed };
    this.prevSoftState = this.softState();
    this.removedAt = init.removedAt ?? 0;
    this.resetRandomizedElectionTimeout();
  }

  /** Wiped after its removal and not given the group's log past it yet (removedAt). */
  private tombstoned(): boolean {
    return this.removedAt > this.log.lastIndex() && this.pendingRestore === null;
  }

  // ---------------------------------------------------------------- queries

  softState(): SoftState {
    return { role: this.role, leader: this.lead, term: this.term };
  }

  hardState(): HardState {
    return { term: this.term, vote: this.vote, commit: this.log.committed };
  }

  isVoter(id: NodeId = this.id): boolean {
    return this.conf.voters.includes(id);
  }

  /** Membership as of a log index (the last conf entry at or before it). */
  confAt(index: number): ConfState {
    for (let i = Math.min(index, this.log.lastIndex()); i > this.log.offset; i--) {
      const e = this.log.entry(i) as Entry;
      if (e.type === EntryType.Conf) return decodeConf(e.data);
    }
    return cloneConf(this.offsetConf);
  }

  /** Index of the latest conf entry in the log (0 if none after the compaction point). */
  lastConfIndex(): number {
    for (let i = this.log.lastIndex(); i > this.log.offset; i--) {
      if ((this.log.entry(i) as Entry).type === EntryType.Conf) return i;
    }
    return 0;
  }

  /** True once this leader has committed an entry of its own term (Figure 8 rule; ReadIndex and conf changes wait for it). */
  committedInTerm(): boolean {
    return this.log.term(this.log.committed) === this.term;
  }

  // ---------------------------------------------------------------- driver API

  /** Bootstraps a brand-new group with a first conf entry; false if this node already has state. */
  bootstrap(conf: ConfState): boolean {
    if (this.log.lastIndex() > 0 || this.term > 0) return false;
    invariant(conf.voters.length > 0, 'bootstrap needs at least one voter');
    this.term = 1;
    this.appendLocal([{ index: 1, term: 1, type: EntryType.Conf, data: encodeConf(conf) }]);
    return true;
  }

  tick(): void {
    if (this.role === 'leader') this.tickHeartbeat();
    else this.tickElection();
  }

  /**
   * Starts an election now (as if the election timeout fired). A leader ignores it, as etcd ignores
   * MsgHup on a leader: a caller asking for an election (the seed right after its bootstrap entry
   * reached the disk) may find that a tick meanwhile already elected this node.
   */
  campaign(): void {
    if (this.role === 'leader') return;
    if (this.promotable()) this.startCampaign(this.cfg.preVote ? 'pre' : 'elect');
  }

  propose(data: Uint8Array): { index: number; term: number } {
    return this.proposeEntries([data])[0];
  }

  /** Appends many proposals at once (one Ready, one broadcast). Throws NotLeaderError when not leader. */
  proposeEntries(datas: Uint8Array[]): { index: number; term: number }[] {
    this.checkCanPropose();
    const ents: Entry[] = datas.map((data, i) => ({ index: this.log.lastIndex() + 1 + i, term: this.term, type: EntryType.Normal, data }));
    this.appendLocal(ents);
    return ents.map((e) => ({ index: e.index, term: e.term }));
  }

  proposeConfChange(cc: ConfChange): { index: number; term: number } {
    this.checkCanPropose();
    if (!this.committedInTerm()) throw new ConfChangeError('not_ready', 'the leader has not yet committed an entry of its term; retry shortly');
    if (this.lastConfIndex() > this.log.committed) throw new ConfChangeError('in_progress', 'another membership change is in progress');
    const next = applyConfChange(this.conf, cc);
    if (next instanceof ConfChangeError) throw next;
    const e: Entry = { index: this.log.lastIndex() + 1, term: this.term, type: EntryType.Conf, data: encodeConf(next) };
    this.appendLocal([e]);
    return { index: e.index, term: e.term };
  }

  /**
   * Asks for a linearizable read point. The answer comes as a ReadState with the same ctx in a later
   * Ready. Returns false when it cannot be served here (not leader and no leader known).
   */
  readIndex(ctx: number): boolean {
    if (this.role === 'leader') {
      this.leaderReadIndex(ctx, this.id);
      return true;
    }
    if (this.lead === NONE) return false;
    this.send({ type: MsgType.ReadIndex, to: this.lead, ctx });
    return true;
  }

  transferLeadership(target: NodeId): void {
    if (this.role !== 'leader') throw new NotLeaderError(this.lead || null);
    if (target === this.id) return;
    if (!this.isVoter(target)) throw new ConfChangeError('not_voter', `node ${target} is not a voter`);
    if (this.leadTransferee === target) return;
    this.leadTransferee = target;
    this.electionElapsed = 0;
    const pr = this.prs.get(target) as Progress;
    if (pr.match === this.log.lastIndex()) this.send({ type: MsgType.TimeoutNow, to: target });
    else this.sendAppend(target, true);
  }

  /** Builds the snapshot metadata for a state-machine snapshot taken at index (membership included). */
  snapshotMeta(index: number): SnapshotMeta {
    invariant(index <= this.applied, () => `snapshot at ${index} beyond applied ${this.applied}`);
    const term = this.log.term(index);
    invariant(term !== undefined, () => `snapshot index ${index} is compacted`);
    return { index, term, conf: this.confAt(index) };
  }

  /**
   * Records a snapshot the driver persisted and drops log entries up to compactTo (<= snapshot index;
   * keeping a tail lets slightly lagging followers catch up without a snapshot).
   */
  compact(snap: Snapshot, compactTo: number): void {
    invariant(compactTo <= snap.meta.index && snap.meta.index <= this.applied, 'compaction beyond the snapshot or applied index');
    invariant(compactTo <= this.persisted, 'compaction beyond the persisted index');
    if (!this.snapshot || this.snapshot.meta.index < snap.meta.index) this.snapshot = snap;
    if (compactTo > this.log.offset) {
      this.offsetConf = this.confAt(compactTo);
      this.log.compact(compactTo);
    }
  }

  hasReady(): boolean {
    return (
      this.pendingBcast ||
      this.msgs.length > 0 ||
      this.readStates.length > 0 ||
      this.snapWrites.length > 0 ||
      this.pendingRestore !== null ||
      this.log.lastIndex() >= this.unstableFrom ||
      this.applyCursor < this.log.committed ||
      !sameHardState(this.prevHardState, this.hardState()) ||
      !sameSoftState(this.prevSoftState, this.softState())
    );
  }

  ready(): Ready {
    if (this.pendingBcast) {
      this.pendingBcast = false;
      if (this.role === 'leader') this.bcastAppend(false);
    }
    const r: Ready = { snapshotChunks: this.snapWrites, snapshot: null, entries: [], hardState: null, messages: this.msgs, committedEntries: [], readStates: this.readStates, softState: null };
    this.msgs = [];
    this.readStates = [];
    this.snapWrites = [];
    if (this.pendingRestore) {
      r.snapshot = this.pendingRestore;
      this.pendingRestore = null;
      this.applyCursor = Math.max(this.applyCursor, r.snapshot.meta.index);
    }
    if (this.log.lastIndex() >= this.unstableFrom) {
      r.entries = this.log.slice(this.unstableFrom, this.log.lastIndex() + 1) as Entry[];
      this.unstableFrom = this.log.lastIndex() + 1;
    }
    const hs = this.hardState();
    if (!sameHardState(hs, this.prevHardState)) {
      r.hardState = hs;
      this.prevHardState = hs;
    }
    if (this.applyCursor < this.log.committed) {
      const ents = this.log.slice(this.applyCursor + 1, this.log.committed + 1);
      invariant(ents !== undefined, () => `entries to apply from ${this.applyCursor + 1} were compacted`);
      r.committedEntries = ents;
      this.applyCursor = this.log.committed;
    }
    const ss = this.softState();
    if (!sameSoftState(ss, this.prevSoftState)) {
      r.softState = ss;
      this.prevSoftState = ss;
    }
    return r;
  }

  /** Confirms a Ready was fully handled (persisted, sent, applied). */
  advance(r: Ready): void {
    this.advancePersisted(r);
    this.advanceApplied(r);
  }

  /**
   * Confirms a Ready's writes are durable (its snapshot and entries synced). A driver that applies
   * asynchronously calls this as soon as the write is synced, before the Ready's committed entries are
   * applied: the leader then counts itself in the commit quorum without waiting for its apply.
   */
  advancePersisted(r: Ready): void {
    if (r.snapshot && this.log.offset === r.snapshot.meta.index) this.persisted = Math.max(this.persisted, r.snapshot.meta.index);
    if (r.entries.length > 0) {
      const last = r.entries[r.entries.length - 1];
      // Entries replaced while this Ready was being written are confirmed by the later Ready.
      if (this.log.term(last.index) === last.term) this.persisted = Math.max(this.persisted, last.index);
    }
    if (this.role === 'leader' && this.maybeCommit()) this.pendingBcast = true;
  }

  /**
   * Confirms a Ready's snapshot is restored and its committed entries applied. Readys are applied in
   * the order they were taken; later Readys may have been taken (and persisted) meanwhile.
   */
  advanceApplied(r: Ready): void {
    if (r.snapshot) this.applied = Math.max(this.applied, r.snapshot.meta.index);
    if (r.committedEntries.length > 0) {
      const first = r.committedEntries[0].index;
      invariant(first === this.applied + 1, () => `applied out of order: ${first} after ${this.applied}`);
      this.applied = r.committedEntries[r.committedEntries.length - 1].index;
    }
  }

  // ---------------------------------------------------------------- ticks and elections

  private promotable(): boolean {
    return this.isVoter() && this.pendingRestore === null && !this.tombstoned();
  }

  private tickElection(): void {
    this.electionElapsed++;
    if (this.promotable() && this.electionElapsed >= this.randomizedElectionTimeout) {
      this.electionElapsed = 0;
      this.startCampaign(this.cfg.preVote ? 'pre' : 'elect');
    }
  }

  private tickHeartbeat(): void {
    this.heartbeatElapsed++;
    this.electionElapsed++;
    if (this.electionElapsed >= this.cfg.electionTick) {
      this.electionElapsed = 0;
      if (this.cfg.checkQuorum) {
        const ok = hasQuorum(this.conf.voters, (id) => id === this.id || (this.prs.get(id)?.recentActive ?? false));
        for (const pr of this.prs.values()) pr.recentActive = false;
        if (!ok) {
          // CheckQuorum: a leader that cannot hear from a majority steps down.
          this.becomeFollower(this.term, NONE);
          return;
        }
      }
      if (this.leadTransferee !== NONE) this.leadTransferee = NONE; // transfer timed out
    }
    if (this.role !== 'leader') return;
    if (this.heartbeatElapsed >= this.cfg.heartbeatTick) {
      this.heartbeatElapsed = 0;
      this.bcastHeartbeat();
    }
  }

  private resetRandomizedElectionTimeout(): void {
    const r = this.cfg.random();
    invariant(r >= 0 && r < 1, 'random source must return [0, 1)');
    this.randomizedElectionTimeout = this.cfg.electionTick + Math.floor(r * this.cfg.electionTick);
  }

  private reset(term: number): void {
    if (term !== this.term) {
      invariant(term > this.term, () => `term went back from ${this.term} to ${term}`);
      this.term = term;
      this.vote = NONE;
    }
    this.lead = NONE;
    this.electionElapsed = 0;
    this.heartbeatElapsed = 0;
    this.resetRandomizedElectionTimeout();
    this.leadTransferee = NONE;
    this.votes.clear();
    this.prs.clear();
    this.readOnly.clear();
    this.pendingReads = [];
    this.pendingBcast = false;
  }

  private becomeFollower(term: number, lead: NodeId): void {
    this.reset(term);
    this.role = 'follower';
    this.lead = lead;
  }

  private becomePreCandidate(): void {
    invariant(this.role !== 'leader', 'leader cannot become pre-candidate');
    // PreVote changes neither term nor vote: a partitioned node cannot inflate terms.
    this.votes.clear();
    this.prs.clear();
    this.lead = NONE;
    this.role = 'pre_candidate';
  }

  private becomeCandidate(): void {
    invariant(this.role !== 'leader', 'leader cannot become candidate');
    this.reset(this.term + 1);
    this.vote = this.id;
    this.role = 'candidate';
    this.elections.started++;
  }

  private becomeLeader(): void {
    invariant(this.role === 'candidate', 'only a candidate becomes leader');
    this.reset(this.term);
    this.role = 'leader';
    this.lead = this.id;
    this.elections.won++;
    const next = this.log.lastIndex() + 1;
    for (const id of [...this.conf.voters, ...this.conf.learners]) {
      if (id === this.id) continue;
      const pr = new Progress(next, this.cfg.maxInflightMsgs, this.conf.learners.includes(id));
      pr.recentActive = true;
      this.prs.set(id, pr);
    }
    // The no-op of the new term: entries of earlier terms commit only under it (Figure 8).
    this.appendLocal([{ index: next, term: this.term, type: EntryType.Normal, data: new Uint8Array(0) }]);
  }

  private startCampaign(kind: CampaignKind): void {
    let voteTerm: number;
    let type: MsgType;
    if (kind === 'pre') {
      this.becomePreCandidate();
      voteTerm = this.term + 1;
      type = MsgType.PreVote;
    } else {
      this.becomeCandidate();
      voteTerm = this.term;
      type = MsgType.Vote;
    }
    if (this.poll(this.id, true) === 'won') {
      if (kind === 'pre') this.startCampaign('elect');
      else this.becomeLeader();
      return;
    }
    for (const v of this.conf.voters) {
      if (v === this.id) continue;
      this.send({ type, to: v, term: voteTerm, index: this.log.lastIndex(), logTerm: this.log.lastTerm(), force: kind === 'transfer' });
    }
  }

  private poll(from: NodeId, granted: boolean) {
    if (!this.votes.has(from)) this.votes.set(from, granted);
    return voteResult(this.conf.voters, this.votes);
  }

  // ---------------------------------------------------------------- messages

  private send(m: Omit<Message, 'from' | 'term'> & { term?: number }): void {
    // Every caller passes a fresh literal: completing it in place spares a copy per message.
    const msg = m as Message;
    msg.from = this.id;
    msg.term = m.term ?? this.term;
    invariant(msg.to !== this.id && msg.to !== NONE, 'message to self or nobody');
    this.msgs.push(msg);
  }

  step(m: Message): void {
    invariant(m.to === this.id, () => `message for ${m.to} delivered to ${this.id}`);
    if (m.from === this.id) return;
    if (this.tombstoned()) {
      // a wiped replica (removedAt): no vote; entries and snapshots only from a leader past its removal
      if (m.type === MsgType.Vote || m.type === MsgType.PreVote) {
        this.send({ type: m.type === MsgType.Vote ? MsgType.VoteResp : MsgType.PreVoteResp, to: m.from, term: Math.max(m.term, this.term), reject: true });
        return;
      }
      if (m.type === MsgType.Heartbeat) {
        // answered (a leader adding it back probes again on the answer), nothing taken from it, no read confirmed
        this.send({ type: MsgType.HeartbeatResp, to: m.from, term: m.term });
        return;
      }
      if ((m.type === MsgType.App || m.type === MsgType.Snap) && (m.commit ?? 0) < this.removedAt) return;
    }
    if (m.term > this.term) {
      if (m.type === MsgType.Vote || m.type === MsgType.PreVote) {
        // A node that hears a live leader ignores elections (CheckQuorum's lease), unless the leader
        // itself asked for the election (transfer).
        const inLease = this.cfg.checkQuorum && this.lead !== NONE && this.electionElapsed < this.cfg.electionTick;
        if (!m.force && inLease) return;
      }
      if (m.type === MsgType.PreVote) {
        // no term change for a pre-vote
      } else if (m.type === MsgType.PreVoteResp && !m.reject) {
        // a granted pre-vote carries the future term; the campaign moves on below
      } else if (m.type === MsgType.App || m.type === MsgType.Heartbeat || m.type === MsgType.Snap) {
        this.becomeFollower(m.term, m.from);
      } else {
        this.becomeFollower(m.term, NONE);
      }
    } else if (m.term < this.term) {
      if ((this.cfg.checkQuorum || this.cfg.preVote) && (m.type === MsgType.Heartbeat || m.type === MsgType.App)) {
        // A stale leader learns our term (and steps down) from this answer.
        this.send({ type: MsgType.AppResp, to: m.from });
      } else if (m.type === MsgType.PreVote) {
        this.send({ type: MsgType.PreVoteResp, to: m.from, reject: true });
      }
      return;
    }

    switch (m.type) {
      case MsgType.Vote:
      case MsgType.PreVote: {
        const canVote =
          this.vote === m.from || (this.vote === NONE && this.lead === NONE) || (m.type === MsgType.PreVote && m.term > this.term);
        const respType = m.type === MsgType.Vote ? MsgType.VoteResp : MsgType.PreVoteResp;
        if (canVote && this.log.isUpToDate(m.index as number, m.logTerm as number)) {
          // A granted answer carries the asked term so the (pre-)candidate counts it.
          this.send({ type: respType, to: m.from, term: m.term, reject: false });
          if (m.type === MsgType.Vote) {
            this.electionElapsed = 0;
            this.vote = m.from;
          }
        } else {
          this.send({ type: respType, to: m.from, reject: true });
        }
        return;
      }
    }
    switch (this.role) {
      case 'leader':
        return this.stepLeader(m);
      case 'candidate':
      case 'pre_candidate':
        return this.stepCandidate(m);
      case 'follower':
        return this.stepFollower(m);
    }
  }

  private stepLeader(m: Message): void {
    if (m.type === MsgType.ReadIndex) {
      this.leaderReadIndex(m.ctx as number, m.from);
      return;
    }
    const pr = this.prs.get(m.from);
    if (!pr) return; // not a member (any more)
    pr.recentActive = true;
    switch (m.type) {
      case MsgType.AppResp:
        return this.handleAppResp(m, pr);
      case MsgType.HeartbeatResp: {
        pr.probeSent = false;
        if (pr.state === ProgressState.Replicate) {
          // An App lost in the pipelined state leaves match stuck: fall back to probing.
          if (pr.match < this.log.lastIndex() && pr.match === pr.matchAtLastHeartbeat) pr.becomeProbe();
          else if (pr.inflights.length >= pr.maxInflight) pr.inflights.shift();
          pr.matchAtLastHeartbeat = pr.match;
        }
        if (pr.state === ProgressState.Snapshot) {
          // Stop-and-wait: the chunk in flight is resent only when a whole heartbeat passed without an
          // answer moving the offset (it or its answer was lost). Resending at every heartbeat would
          // start one more chain of chunk/answer pairs each time.
          if (pr.snapOffset === pr.snapOffsetAtLastHeartbeat) this.sendSnapChunk(m.from, pr);
          pr.snapOffsetAtLastHeartbeat = pr.snapOffset;
        } else if (pr.match < this.log.lastIndex()) this.sendAppend(m.from, true);
        if (m.ctx) {
          this.readOnly.ack(m.from, m.ctx);
          for (const rd of this.readOnly.release(this.conf.voters)) this.answerRead(rd.ctx, rd.index, rd.from);
        }
        return;
      }
      case MsgType.SnapResp: {
        if (pr.state !== ProgressState.Snapshot) return;
        const snap = this.snapshot as Snapshot;
        if (m.index !== pr.pendingSnapshot || snap.meta.index !== pr.pendingSnapshot) {
          // The follower is receiving an older snapshot: start again with the current one.
          if (snap.meta.index !== pr.pendingSnapshot) pr.becomeSnapshot(snap.meta.index);
          else pr.snapOffset = 0;
        } else {
          // An answer that does not move the offset answers a duplicate chunk: the chunk at that
          // offset is already on its way, and sending it again would double the traffic for good.
          if (m.snapOffset === pr.snapOffset) return;
          pr.snapOffset = m.snapOffset as number;
        }
        if (pr.snapOffset < snap.size || snap.size === 0) this.sendSnapChunk(m.from, pr);
        return;
      }
    }
  }

  private handleAppResp(m: Message, pr: Progress): void {
    // An AppResp without an index is a term notice: the answer to an App or heartbeat of an older
    // term, sent with the answerer's (higher) term. It can arrive after this node has itself been
    // elected in that very term, and must not be read as an acknowledgement (next would become NaN).
    if (m.index === undefined) return;
    if (m.reject) {
      const hint = m.hintTerm ? this.log.findConflictByTerm(m.hintIndex as number, m.hintTerm).index : (m.hintIndex as number);
      if (pr.maybeDecrTo(m.index as number, hint)) {
        if (pr.state === ProgressState.Replicate) pr.becomeProbe();
        this.sendAppend(m.from, true);
      }
      return;
    }
    const wasPaused = pr.isPaused();
    if (!pr.maybeUpdate(m.index as number)) return;
    if (pr.state === ProgressState.Probe) pr.becomeReplicate();
    else if (pr.state === ProgressState.Snapshot && pr.match >= pr.pendingSnapshot) pr.becomeReplicate();
    else if (pr.state === ProgressState.Replicate) pr.freeInflightsTo(m.index as number);
    if (this.maybeCommit()) {
      // Followers learn the new commit index from the next App or heartbeat; an empty App per
      // commit would cost a message round per proposal for nothing.
      if (this.role !== 'leader') return;
      this.pendingBcast = true;
    }
    if (wasPaused) {
      this.sendAppend(m.from, true);
    }
    while (this.sendAppend(m.from, false)) {
      /* keep the pipeline full */
    }
    if (m.from === this.leadTransferee && pr.match === this.log.lastIndex()) {
      this.send({ type: MsgType.TimeoutNow, to: m.from });
    }
  }

  private stepCandidate(m: Message): void {
    switch (m.type) {
      case MsgType.App:
      case MsgType.Heartbeat:
      case MsgType.Snap:
        // A leader of our term exists: follow it.
        this.becomeFollower(m.term, m.from);
        return this.stepFollower(m);
      case MsgType.VoteResp:
      case MsgType.PreVoteResp: {
        const mine = this.role === 'pre_candidate' ? MsgType.PreVoteResp : MsgType.VoteResp;
        if (m.type !== mine) return;
        const res = this.poll(m.from, !m.reject);
        if (res === 'won') {
          if (this.role === 'pre_candidate') this.startCampaign('elect');
          else this.becomeLeader();
        } else if (res === 'lost') {
          this.becomeFollower(this.term, NONE);
        }
        return;
      }
    }
  }

  private stepFollower(m: Message): void {
    switch (m.type) {
      case MsgType.App:
        this.electionElapsed = 0;
        this.lead = m.from;
        return this.handleApp(m);
      case MsgType.Heartbeat:
        this.electionElapsed = 0;
        this.lead = m.from;
        this.log.commitTo(Math.min(m.commit as number, this.log.lastIndex()));
        this.send({ type: MsgType.HeartbeatResp, to: m.from, ctx: m.ctx });
        return;
      case MsgType.Snap:
        this.electionElapsed = 0;
        this.lead = m.from;
        return this.handleSnapChunk(m);
      case MsgType.TimeoutNow:
        if (this.promotable()) this.startCampaign('transfer');
        return;
      case MsgType.ReadIndexResp:
        this.readStates.push({ ctx: m.ctx as number, index: m.index as number });
        return;
    }
  }

  // ---------------------------------------------------------------- replication

  private checkCanPropose(): void {
    if (this.role !== 'leader') throw new NotLeaderError(this.lead || null, this.lead ? (this.conf.addrs[this.lead] ?? null) : null);
    if (this.leadTransferee !== NONE) throw new TransferInProgressError();
  }

  /** Appends to the local log (any role), tracking membership and the hand-out cursor. */
  private appendLocal(ents: Entry[]): void {
    if (ents.length === 0) return;
    this.log.append(ents);
    for (const e of ents) if (e.type === EntryType.Conf) this.setConf(decodeConf(e.data));
    if (this.role === 'leader') this.pendingBcast = true;
  }

  private truncate(from: number): void {
    const hadConf = this.lastConfIndex() >= from;
    this.log.truncateFrom(from);
    this.unstableFrom = Math.min(this.unstableFrom, from);
    this.persisted = Math.min(this.persisted, from - 1);
    if (hadConf) this.setConf(this.confAt(this.log.lastIndex()));
  }

  /** Membership takes effect when its entry is appended (one change at a time keeps majorities overlapping). */
  private setConf(c: ConfState): void {
    this.conf = c;
    if (this.role !== 'leader') return;
    const members = new Set([...c.voters, ...c.learners]);
    for (const id of [...this.prs.keys()]) if (!members.has(id)) this.prs.delete(id);
    for (const id of members) {
      if (id === this.id) continue;
      const pr = this.prs.get(id);
      if (pr) pr.isLearner = c.learners.includes(id);
      else {
        const p = new Progress(this.log.lastIndex() + 1, this.cfg.maxInflightMsgs, c.learners.includes(id));
        p.recentActive = true;
        this.prs.set(id, p);
      }
    }
    if (this.leadTransferee !== NONE && !c.voters.includes(this.leadTransferee)) this.leadTransferee = NONE;
  }

  private maybeCommit(): boolean {
    const q = quorumIndex(this.conf.voters, (id) => (id === this.id ? this.persisted : (this.prs.get(id)?.match ?? 0)));
    // Only an entry of the current term commits by counting replicas (Figure 8).
    if (q > this.log.committed && this.log.term(q) === this.term) {
      this.log.commitTo(q);
      this.afterCommit();
      return true;
    }
    return false;
  }

  private afterCommit(): void {
    if (this.pendingReads.length && this.committedInTerm()) {
      const reads = this.pendingReads;
      this.pendingReads = [];
      for (const r of reads) this.leaderReadIndex(r.ctx, r.from);
    }
    // A leader removed from the voters leads until that change commits, then steps down, handing
    // over to the most up-to-date voter so the group does not wait for an election timeout.
    if (!this.isVoter() && this.lastConfIndex() <= this.log.committed) {
      let best: NodeId = NONE;
      for (const v of this.conf.voters) {
        const pr = this.prs.get(v);
        if (pr && pr.match === this.log.lastIndex()) best = v;
      }
      this.bcastAppend();
      if (best !== NONE) this.send({ type: MsgType.TimeoutNow, to: best });
      this.becomeFollower(this.term, NONE);
    }
  }

  private bcastAppend(sendIfEmpty = true): void {
    for (const id of this.prs.keys()) this.sendAppend(id, sendIfEmpty);
  }

  private bcastHeartbeat(): void {
    const ctx = this.readOnly.pending.length ? this.readOnly.seq : 0;
    for (const [id, pr] of this.prs) {
      this.send({ type: MsgType.Heartbeat, to: id, commit: Math.min(pr.match, this.log.committed), ctx });
    }
  }

  /** Sends the next App to a follower if its flow allows; returns whether something was sent. */
  private sendAppend(to: NodeId, sendIfEmpty: boolean): boolean {
    const pr = this.prs.get(to);
    if (!pr || pr.isPaused()) return false;
    const prevIndex = pr.next - 1;
    const prevTerm = this.log.term(prevIndex);
    const ents = this.log.slice(pr.next, this.log.lastIndex() + 1, this.cfg.maxSizePerMsg, this.cfg.maxEntriesPerMsg);
    if (prevTerm === undefined || ents === undefined) return this.sendSnapshot(to, pr);
    if (ents.length === 0 && !sendIfEmpty) return false;
    this.send({ type: MsgType.App, to, index: prevIndex, logTerm: prevTerm, entries: ents, commit: this.log.committed });
    pr.sentEntries(ents.length, ents.length ? ents[ents.length - 1].index : prevIndex);
    return true;
  }

  private sendSnapshot(to: NodeId, pr: Progress): boolean {
    invariant(this.snapshot !== null, () => `follower ${to} needs entries compacted away but there is no snapshot`);
    pr.becomeSnapshot(this.snapshot.meta.index);
    this.sendSnapChunk(to, pr);
    return true;
  }

  /** Sends the chunk at the follower's confirmed offset; the driver reads its bytes from the snapshot file. */
  private sendSnapChunk(to: NodeId, pr: Progress): void {
    const snap = this.snapshot as Snapshot;
    if (pr.pendingSnapshot !== snap.meta.index) pr.becomeSnapshot(snap.meta.index);
    const total = snap.size;
    const offset = Math.min(pr.snapOffset, total);
    const length = Math.min(total, offset + this.cfg.snapshotChunkSize) - offset;
    // with the commit index: a replica wiped after its removal takes a snapshot only from a leader past it (removedAt)
    this.send({ type: MsgType.Snap, to, snap: { meta: snap.meta, offset, total, length }, commit: this.log.committed });
  }

  private handleApp(m: Message): void {
    const prevIndex = m.index as number;
    if (prevIndex < this.log.committed) {
      // Everything up to commit is already matched; say so and let the leader move on.
      this.send({ type: MsgType.AppResp, to: m.from, index: this.log.committed });
      return;
    }
    if (this.log.matchTerm(prevIndex, m.logTerm as number)) {
      const ents = m.entries ?? [];
      let i = 0;
      // Skip entries we already have; truncate at the first conflict (log matching).
      while (i < ents.length && this.log.matchTerm(ents[i].index, ents[i].term)) i++;
      if (i < ents.length) {
        const first = ents[i].index;
        if (first <= this.log.lastIndex()) this.truncate(first);
        this.appendLocal(ents.slice(i));
      }
      const lastNew = prevIndex + ents.length;
      this.log.commitTo(Math.min(m.commit as number, lastNew));
      this.send({ type: MsgType.AppResp, to: m.from, index: lastNew });
      return;
    }
    // Reject with a hint: our last index whose term is <= the leader's prev term, so the leader can
    // skip a whole conflicting term per round trip.
    const hint = this.log.findConflictByTerm(Math.min(prevIndex, this.log.lastIndex()), m.logTerm as number);
    this.send({ type: MsgType.AppResp, to: m.from, index: prevIndex, reject: true, hintIndex: hint.index, hintTerm: hint.term });
  }

  /**
   * A chunk of a leader's snapshot. Only the chunk at the received offset is taken (its bytes go to the
   * driver, which appends them to the receiving file before the SnapResp leaves); any other offset is
   * answered with the offset expected, so the leader resumes there. A transfer from another leader or of
   * another snapshot starts over at offset 0 (the old receiving file is then discarded).
   */
  private handleSnapChunk(m: Message): void {
    const c = m.snap as NonNullable<Message['snap']>;
    if (c.meta.index <= this.log.committed) {
      this.incoming = null;
      this.send({ type: MsgType.AppResp, to: m.from, index: this.log.committed });
      return;
    }
    // A completed snapshot still waiting for the driver owns the receiving file until the next Ready
    // installs it: a newer transfer waits (its leader resends after a heartbeat without progress).
    if (this.pendingRestore) return;
    const data = c.data ?? new Uint8Array(0);
    invariant(data.byteLength === c.length, 'a received chunk carries exactly its bytes');
    if (!this.incoming || !sameMeta(this.incoming.meta, c.meta) || this.incoming.from !== m.from) {
      if (c.offset !== 0) {
        this.send({ type: MsgType.SnapResp, to: m.from, index: c.meta.index, snapOffset: 0 });
        return;
      }
      this.incoming = { meta: c.meta, from: m.from, received: 0 };
    }
    const inc = this.incoming;
    if (c.offset === inc.received && (data.byteLength > 0 || c.offset === 0) && c.offset + data.byteLength <= c.total) {
      this.snapWrites.push({ meta: inc.meta, from: inc.from, offset: c.offset, total: c.total, data });
      inc.received += data.byteLength;
    }
    if (inc.received === c.total) {
      this.incoming = null;
      this.restore({ meta: inc.meta, size: c.total });
      this.send({ type: MsgType.AppResp, to: m.from, index: this.log.lastIndex() });
    } else {
      this.send({ type: MsgType.SnapResp, to: m.from, index: c.meta.index, snapOffset: inc.received });
    }
  }

  private restore(snap: Snapshot): void {
    const { index, term } = snap.meta;
    if (this.log.matchTerm(index, term)) {
      // Our log already has it: just learn that it is committed.
      this.log.commitTo(index);
      return;
    }
    this.log.restore(index, term);
    this.offsetConf = cloneConf(snap.meta.conf);
    this.conf = cloneConf(snap.meta.conf);
    this.unstableFrom = index + 1;
    this.pendingRestore = snap;
    this.snapshot = snap;
  }

  // ---------------------------------------------------------------- reads

  private leaderReadIndex(ctx: number, from: NodeId): void {
    if (!this.committedInTerm()) {
      // Until the no-op commits, the commit index may lag what earlier leaders committed.
      this.pendingReads.push({ ctx, from });
      return;
    }
    if (this.conf.voters.length === 1 && this.isVoter()) {
      this.answerRead(ctx, this.log.committed, from);
      return;
    }
    this.readOnly.add(ctx, this.log.committed, from, this.id);
    this.bcastHeartbeat();
  }

  private answerRead(ctx: number, index: number, from: NodeId): void {
    if (from === this.id) this.readStates.push({ ctx, index });
    else this.send({ type: MsgType.ReadIndexResp, to: from, ctx, index });
  }

  /** Debug/status view of the leader's progress per peer. */
  progressOf(id: NodeId): { match: number; next: number; state: ProgressState } | null {
    const pr = this.prs.get(id);
    return pr ? { match: pr.match, next: pr.next, state: pr.state } : null;
  }

  isMember(id: NodeId): boolean {
    return isMember(this.conf, id);
  }
}

function sameHardState(a: HardState, b: HardState): boolean {
  return a.term === b.term && a.vote === b.vote && a.commit === b.commit;
}

function sameSoftState(a: SoftState, b: SoftState): boolean {
  return a.role === b.role && a.leader === b.leader && a.term === b.term;
}
