/** @strata/raft: a Raft consensus library with a pure core, LevelDB storage, a multi-group driver and HTTP transport. */
export * from './core/types';
export { RawNode, canSendBeforePersist } from './core/raft';
export { RaftLog } from './core/log';
export { Progress, ProgressState } from './core/progress';
export { majority, quorumIndex } from './core/quorum';
export { applyConfChange, encodeConf, decodeConf } from './core/conf';
export { InvariantError } from './core/assert';
export * from './errors';
