/** A small in-memory state machine for driver tests: an ordered list of applied commands. */
import { readWholeSnapshot } from '../src/driver/snapshot-buffer';
import type { AppliedEntry, RaftStateMachine, SnapshotPoint, SnapshotReader, SnapshotWriter } from '../src/driver/state-machine';

export class ListMachine implements RaftStateMachine {
  items: string[] = [];
  applied = 0;
  appliedTerm = 0;
  restores = 0;

  async apply(entries: AppliedEntry[]): Promise<unknown[]> {
    return entries.map((e) => {
      if (e.index !== this.applied + 1) throw new Error(`apply ${e.index} after ${this.applied}`);
      this.applied = e.index;
      this.appliedTerm = e.term;
      if (e.kind !== 'command') return undefined;
      this.items.push(e.data.toString());
      return this.items.length;
    });
  }

  /** The image is the JSON list, written in pieces of `pieceSize` bytes (a snapshot of many chunks in tests). */
  pieceSize = 64 * 1024;

  async snapshot(out: SnapshotWriter): Promise<SnapshotPoint> {
    // fixed at the call: applies go on while the driver writes the image
    const at = { index: this.applied, term: this.appliedTerm };
    const image = Buffer.from(JSON.stringify(this.items));
    for (let from = 0; from < image.byteLength; from += this.pieceSize) await out.write(image.subarray(from, from + this.pieceSize));
    return at;
  }

  async restore(s: SnapshotPoint, image: SnapshotReader): Promise<void> {
    this.items = JSON.parse((await readWholeSnapshot(image)).toString()) as string[];
    this.applied = s.index;
    this.appliedTerm = s.term;
    this.restores++;
  }

  appliedIndex(): number {
    return this.applied;
  }

  resets = 0;

  async reset(): Promise<void> {
    this.items = [];
    this.applied = 0;
    this.appliedTerm = 0;
    this.resets++;
  }
}
