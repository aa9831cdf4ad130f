import type { Command } from './commands';
import type { CommandAnswer } from './state-machine';

export interface LogStatus {
  role: 'leader' | 'follower' | 'candidate' | 'learner';
  term: number;
  /** node id of the leader, null when unknown */
  leader: number | null;
  commit_index: number;
  applied_index: number;
}

/**
 * Where every change of state goes. Every node uses a RaftCommandLog per shard (a single node is a group of
 * one); LocalLog is the unreplicated variant for in-process tests. Nothing above this interface knows
 * which.
 */
export interface CommandLog {
  /**
   * Appends a command and resolves with the state machine's result once the command is durable
   * (committed: on disk on a majority) and applied on this node. Rejects with a StrataError when it
   * cannot be committed (503) and never resolves for a command that was not committed.
   */
  propose<C extends Command>(command: C): Promise<CommandAnswer<C['type']>>;
  /** Resolves once this replica has applied everything committed before the call (linearizable reads). */
  readBarrier(): Promise<void>;
  /** True when this node can propose right now (the leader, or a single node). */
  isLeader(): boolean;
  status(): LogStatus;
  close(): Promise<void>;
}
