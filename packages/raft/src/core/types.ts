/** Plain data types of the Raft core. Everything here is serializable and carries no behaviour. */

/** Node ids are positive integers; 0 means "nobody" (no vote, no known leader). */
export type NodeId = number;
export const NONE: NodeId = 0;

export enum EntryType {
  Normal = 0,
  /** data is the complete new membership (ConfState) encoded by conf.ts */
  Conf = 1,
}

export interface Entry {
  index: number;
  term: number;
  type: EntryType;
  data: Uint8Array;
  /**
   * Set when the payload was let go from memory (the driver keeps the applied entries' payloads within
   * a byte budget: driver/held-payloads.ts): `data` is empty and this is its length. The entry is on
   * disk; the driver reads it back before any message carries it. Never set on an entry not yet applied.
   */
  offloaded?: number;
}

/** Membership of a group. Voters count in quorums; learners only receive the log. */
export interface ConfState {
  voters: NodeId[];
  learners: NodeId[];
  /** base URL of each member's peer endpoint, carried in the log so every member learns it */
  addrs: Record<number, string>;
}

/** What must be on disk before any message that depends on it leaves the node. */
export interface HardState {
  term: number;
  vote: NodeId;
  commit: number;
}

export interface SnapshotMeta {
  index: number;
  term: number;
  /** membership as of `index`, so a node restored from the snapshot knows the group */
  conf: ConfState;
}

/**
 * A snapshot as the core knows it: what it covers and the size of its image. The image's bytes never
 * enter the core: they live in the driver's snapshot store (a file), which reads a chunk when the
 * core's Snap message is sent and appends received chunks to a receiving file.
 */
export interface Snapshot {
  meta: SnapshotMeta;
  /** bytes of the image */
  size: number;
}

export enum MsgType {
  App = 1,
  AppResp = 2,
  Vote = 3,
  VoteResp = 4,
  PreVote = 5,
  PreVoteResp = 6,
  Heartbeat = 7,
  HeartbeatResp = 8,
  Snap = 9,
  SnapResp = 10,
  TimeoutNow = 11,
  ReadIndex = 12,
  ReadIndexResp = 13,
}

/**
 * One chunk of a snapshot image: bytes [offset, offset + length) of an image of `total` bytes. The core
 * sends it without `data` (the driver reads those bytes from its snapshot file just before sending);
 * on the wire and when received, `data` holds exactly `length` bytes.
 */
export interface SnapChunk {
  meta: SnapshotMeta;
  offset: number;
  total: number;
  length: number;
  data?: Uint8Array;
}

/**
 * Received snapshot bytes the driver must append to the receiving file before anything else in the
 * Ready is persisted (offset 0 starts a new file for this snapshot; any other offset follows the
 * bytes already there). `from` is the sending leader: a restart resumes only its transfer.
 */
export interface SnapWrite {
  meta: SnapshotMeta;
  from: NodeId;
  offset: number;
  total: number;
  data: Uint8Array;
}

/** A snapshot being received, as persisted: the node resumes it after a restart. */
export interface IncomingSnapshotState {
  meta: SnapshotMeta;
  from: NodeId;
  /** bytes durably received (a prefix of the image) */
  received: number;
  total: number;
}

/**
 * One message type with optional fields, like etcd's raftpb.Message. Field use by type:
 * - App: index/logTerm = previous entry, entries, commit
 * - AppResp: index = last matching index (success) or rejected prev index; hintIndex/hintTerm on reject
 * - Vote/PreVote: index/logTerm = candidate's last entry; force = leadership transfer (bypasses lease)
 * - Heartbeat: commit, ctx = latest read-index sequence; HeartbeatResp: ctx echoed
 * - Snap: snap chunk; SnapResp: index = snapshot index, snapOffset = bytes received so far
 * - ReadIndex: ctx (requester's id for the read); ReadIndexResp: ctx, index = read index
 */
export interface Message {
  type: MsgType;
  from: NodeId;
  to: NodeId;
  term: number;
  index?: number;
  logTerm?: number;
  entries?: Entry[];
  commit?: number;
  reject?: boolean;
  hintIndex?: number;
  hintTerm?: number;
  ctx?: number;
  force?: boolean;
  snap?: SnapChunk;
  snapOffset?: number;
}

export type Role = 'follower' | 'pre_candidate' | 'candidate' | 'leader';

/** A confirmed linearizable read: once applied >= index, state read locally is linearizable for ctx. */
export interface ReadState {
  ctx: number;
  index: number;
}

export interface SoftState {
  role: Role;
  leader: NodeId;
  term: number;
}

/** What the driver must do, in this order: persist snapshot+entries+hardState (synced), send, apply. */
export interface Ready {
  /** received snapshot bytes to append to the receiving file first (see SnapWrite) */
  snapshotChunks: SnapWrite[];
  /** a completely received snapshot (its image is the receiving file): persist, then restore the state machine from it */
  snapshot: Snapshot | null;
  /** entries to append; any stored entry at index >= entries[0].index is replaced */
  entries: Entry[];
  hardState: HardState | null;
  /** send after the writes above are synced (leader App/Heartbeat/Snap/TimeoutNow may go before: see canSendBeforePersist) */
  messages: Message[];
  /** apply in order after the writes are synced */
  committedEntries: Entry[];
  readStates: ReadState[];
  softState: SoftState | null;
}

/** A membership change request. Exactly one change at a time (see conf.ts). */
export type ConfChange =
  | { type: 'add_learner'; node: NodeId; addr: string }
  | { type: 'promote'; node: NodeId }
  | { type: 'remove'; node: NodeId };

export interface RaftConfig {
  id: NodeId;
  /** ticks without hearing a leader before an election; randomized in [electionTick, 2*electionTick) */
  electionTick: number;
  heartbeatTick: number;
  /** byte budget of entries in one App message */
  maxSizePerMsg: number;
  maxEntriesPerMsg: number;
  /** App messages in flight to one follower in the pipelined (replicate) state */
  maxInflightMsgs: number;
  snapshotChunkSize: number;
  preVote: boolean;
  checkQuorum: boolean;
  /** seeded random source in [0, 1): the only source of randomness */
  random: () => number;
}

export const DEFAULT_CONFIG: Omit<RaftConfig, 'id' | 'random'> = {
  electionTick: 10,
  heartbeatTick: 1,
  maxSizePerMsg: 1 << 20,
  maxEntriesPerMsg: 4096,
  maxInflightMsgs: 64,
  snapshotChunkSize: 1024 * 1024,
  preVote: true,
  checkQuorum: true,
};

/** State a node starts from, as loaded from storage. */
export interface InitialState {
  hardState: HardState;
  /** latest local snapshot (meta and size; its image is in the driver's store), null if none */
  snapshot: Snapshot | null;
  /** a snapshot transfer that was under way when the node stopped (resumed from `received`), null if none */
  incoming?: IncomingSnapshotState | null;
  /** index/term of the entry just before entries[0] (the compaction point), and membership at it */
  offset: number;
  offsetTerm: number;
  offsetConf: ConfState;
  entries: Entry[];
  /** the application's applied index: committed entries after it are handed out again */
  applied: number;
  /**
   * The index of the membership entry that removed this node from the group, when its replica was wiped
   * since (0: never wiped). See RawNode.removedAt.
   */
  removedAt?: number;
}

export function emptyConf(): ConfState {
  return { voters: [], learners: [], addrs: {} };
}

export function emptyInitialState(): InitialState {
  return { hardState: { term: 0, vote: NONE, commit: 0 }, snapshot: null, offset: 0, offsetTerm: 0, offsetConf: emptyConf(), entries: [], applied: 0 };
}
