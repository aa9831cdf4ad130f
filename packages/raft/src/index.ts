/** @strata/raft: a Raft consensus library with a pure core, LevelDB storage, a multi-group driver and HTTP transport. */
export * from './core/types';
export { RawNode, canSendBeforePersist } from './core/raft';
export { RaftLog, payloadBytes } from './core/log';
export { Progress, ProgressState } from './core/progress';
export { majority, quorumIndex } from './core/quorum';
export { applyConfChange, encodeConf, decodeConf } from './core/conf';
export { InvariantError } from './core/assert';
export * from './errors';
export { RaftHost, type RaftHostOptions, type TickStall } from './driver/host';
export { seededRandom } from './core/random';
export type { GroupHost } from './driver/group-host';
export {
  RaftGroup, DEFAULT_GROUP_OPTIONS, type GroupOptions, type GroupStatus, type MemberStatus, type ProposeResult,
  type GroupCounters, type GroupObserver, type EntryPosition, type LogSize,
} from './driver/group';
export type { RaftStateMachine, AppliedEntry, SnapshotPoint, SnapshotReader, SnapshotWriter, EntryKind } from './driver/state-machine';
export { BufferSnapshotWriter, bufferSnapshotReader, readWholeSnapshot } from './driver/snapshot-buffer';
export { LevelStorage, type StoredGroup, type BatchOp } from './storage/level-storage';
export { SnapshotFiles, SnapshotFileWriter, syncDir } from './storage/snapshot-files';
export { HttpTransport, startRaftServer, sign, signedHeaders, bodyDigest, type HttpTransportOptions, type SignedHeaders } from './transport/http';
export { ReplayGuard } from './transport/replay';
export { LocalTransportHub, type Transport, type InboundHandler } from './transport/transport';
export { encodeBatch, decodeBatch, type GroupMessage } from './transport/codec';
