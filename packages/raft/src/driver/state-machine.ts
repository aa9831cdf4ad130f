/** The interface the application implements for each Raft group. */

export type EntryKind = 'command' | 'noop' | 'membership';

export interface AppliedEntry {
  index: number;
  term: number;
  /** only 'command' entries carry application data; the others just advance the applied index */
  kind: EntryKind;
  data: Buffer;
}

export interface SnapshotData {
  index: number;
  term: number;
  data: Buffer;
}

/**
 * Applies are called in index order, exactly once per index as far as the application's persisted
 * applied index tells: the application must persist its applied index atomically with its data. On
 * restart the driver replays committed entries after appliedIndex().
 */
export interface RaftStateMachine {
  /** Applies entries in order; may return one result per entry (returned by propose()). */
  apply(entries: AppliedEntry[]): Promise<unknown[] | void>;
  /** A consistent image of the state as of appliedIndex() (its index and the term of that entry). */
  snapshot(): Promise<SnapshotData>;
  /** Replaces the whole state by a snapshot (its applied index becomes snapshot.index). */
  restore(snapshot: SnapshotData): Promise<void>;
  appliedIndex(): number;
}
