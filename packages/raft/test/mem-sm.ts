/** A small in-memory state machine for driver tests: an ordered list of applied commands. */
import type { AppliedEntry, SnapshotData, RaftStateMachine } from '../src/driver/state-machine';

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

  async snapshot(): Promise<SnapshotData> {
    return { index: this.applied, term: this.appliedTerm, data: Buffer.from(JSON.stringify(this.items)) };
  }

  async restore(s: SnapshotData): Promise<void> {
    this.items = JSON.parse(s.data.toString()) as string[];
    this.applied = s.index;
    this.appliedTerm = s.term;
    this.restores++;
  }

  appliedIndex(): number {
    return this.applied;
  }
}
