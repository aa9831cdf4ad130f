/** The interface the application implements for each Raft group. */

export type EntryKind = 'command' | 'noop' | 'membership';

export interface AppliedEntry {
  index: number;
  term: number;
  /** only 'command' entries carry application data; the others just advance the applied index */
  kind: EntryKind;
  data: Buffer;
  /**
   * On the node that proposed this very entry (same index and term) and is applying it: what the
   * proposer handed to propose() beside the bytes (RaftGroup.propose's `local`), for a state machine
   * that can use it instead of decoding `data`. It must stand for exactly these bytes: the other
   * replicas decode them.
   */
  proposed?: unknown;
}

/** The log position a snapshot image stands for: the state after applying `index` (of term `term`). */
export interface SnapshotPoint {
  index: number;
  term: number;
}

/**
 * Where a state machine writes its snapshot image, piece by piece: the driver's snapshot file. Await
 * each write (back-pressure), so no more than one piece is held in memory at a time.
 */
export interface SnapshotWriter {
  write(bytes: Uint8Array): Promise<void>;
}

/**
 * A snapshot image to read in pieces of bounded size (the driver's file, streamed). chunks() may be
 * called more than once: a state machine verifies the whole image in one pass before it replaces any
 * state in a second.
 */
export interface SnapshotReader {
  /** bytes of the image */
  readonly size: number;
  chunks(): AsyncIterable<Uint8Array>;
}

/**
 * Applies are called in index order, exactly once per index as far as the application's persisted
 * applied index tells: the application must persist its applied index atomically with its data. On
 * restart the driver replays committed entries after appliedIndex().
 */
export interface RaftStateMachine {
  /** Applies entries in order; may return one result per entry (returned by propose()). */
  apply(entries: AppliedEntry[]): Promise<unknown[] | void>;
  /**
   * Writes a consistent image of the state as of appliedIndex() to `out`, streaming (never the whole
   * image in memory), and returns the position it stands for (that index and the term of its entry).
   * The image is of the state at the call: the implementation fixes what it will write (e.g. opens a
   * database snapshot) before its first await, because applies go on while the image is written (the
   * driver takes snapshots in the background, so the flush loop keeps sending heartbeats).
   */
  snapshot(out: SnapshotWriter): Promise<SnapshotPoint>;
  /**
   * Replaces the whole state by the image (its applied index becomes at.index). An image that does not
   * verify must be refused before any state is changed.
   */
  restore(at: SnapshotPoint, image: SnapshotReader): Promise<void>;
  appliedIndex(): number;
  /**
   * Optional: deletes the whole state (applied index 0), for a replica wiped from this node
   * (RaftHost.resetGroup). Needed only by groups that may be reset.
   */
  reset?(): Promise<void>;
}
