/**
 * Which applied entries keep their payloads in memory. The core holds the whole uncompacted log, and a
 * snapshot comes due only after `snapshotEveryBytes` (64 MiB) of applied entries, with a margin kept
 * behind it: 75 MiB of a 100,000-unit node's RSS were payloads of entries long applied and on disk,
 * which only a lagging follower will ever read again. The newest `limit` bytes of applied payloads
 * stay (a follower a little behind is sent them from memory); older ones are let go (`Entry.offloaded`)
 * and the host reads them back from disk when a message is to carry them (host.ts `fillEntries`).
 *
 * Only entries both applied and persisted here are let go (on disk, and never handed to the state
 * machine again), never a membership entry (the core decodes those: `confAt`). Entries below `from`
 * have let their payloads go (or are compacted); those in [from, counted] hold theirs and sum to
 * `bytes`.
 */
import { payloadBytes, type RaftLog } from '../core/log';
import { EntryType, type Entry } from '../core/types';

/** An entry whose payload may be let go (a non-empty command payload still held). */
function droppable(e: Entry): boolean {
  return e.type !== EntryType.Conf && e.offloaded === undefined && e.data.byteLength > 0;
}

export class HeldPayloads {
  private from: number;
  private counted: number;
  private bytes = 0;

  /** `offset`: the log's compaction point when the group opens (every entry after it holds its payload) */
  constructor(private readonly limit: number, offset: number) {
    this.from = offset + 1;
    this.counted = offset;
  }

  /** Payload bytes of applied entries held in memory (what `limit` bounds). */
  get heldBytes(): number {
    return this.bytes;
  }

  /**
   * After entries up to `upTo` were applied and persisted: counts them, then lets the oldest held
   * payloads go until at most `limit` bytes are held.
   */
  settle(log: RaftLog, upTo: number): void {
    upTo = Math.min(upTo, log.lastIndex());
    // The core replaced its log by a snapshot it accepted (compactions come through beforeCompact): a
    // snapshot is installed beyond what was applied here, so nothing counted is left.
    if (this.from <= log.offset) this.compacted(log.offset);
    for (let i = this.counted + 1; i <= upTo; i++) {
      const e = log.entry(i)!;
      if (droppable(e)) this.bytes += e.data.byteLength;
    }
    this.counted = Math.max(this.counted, upTo);
    while (this.bytes > this.limit && this.from <= this.counted) {
      const e = log.entry(this.from)!;
      if (droppable(e)) {
        this.bytes -= e.data.byteLength;
        log.offload(this.from);
      }
      this.from++;
    }
  }

  /** Before the log drops the entries up to `upTo` (compaction): they leave the count. */
  beforeCompact(log: RaftLog, upTo: number): void {
    for (let i = Math.max(this.from, log.offset + 1); i <= Math.min(upTo, this.counted); i++) {
      const e = log.entry(i)!;
      if (droppable(e)) this.bytes -= e.data.byteLength;
    }
    this.compacted(upTo);
  }

  /** The log holds nothing up to `offset` (compacted, or replaced by a snapshot). */
  private compacted(offset: number): void {
    if (this.counted <= offset) this.bytes = 0; // everything counted is gone
    this.from = Math.max(this.from, offset + 1);
    this.counted = Math.max(this.counted, offset);
  }
}

/** Payload bytes of entries, held or not (for byte budgets that mean the log's size, not memory). */
export function entriesBytes(entries: Iterable<Entry>): number {
  let n = 0;
  for (const e of entries) n += payloadBytes(e);
  return n;
}
