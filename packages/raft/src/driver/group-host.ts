/**
 * What a RaftGroup needs from the process that drives it, and nothing more. RaftHost implements it; the
 * group depends only on this interface, so it never reads the host's options or scheduling state and
 * group.ts does not import host.ts (host.ts imports group.ts: one direction, no cycle).
 */
import type { LevelStorage } from '../storage/level-storage';

export interface GroupHost {
  /** this node's id */
  readonly nodeId: number;
  /** milliseconds per Raft tick: retry pauses and the leadership-transfer timeout are counted in ticks */
  readonly tickMs: number;
  /** the log storage: a group writes its own compaction (snapshot + log prefix removal) and reads and writes its snapshot files through it */
  readonly storage: Pick<LevelStorage, 'compactionOps' | 'write' | 'deleteCompacted' | 'snapshots'>;
  /** asks the host to run its flush loop soon (after a proposal, a step, a conf change) */
  schedule(): void;
  /** a peer's URL as the host knows it, or null when unknown */
  urlOf(id: number): string | null;
}
