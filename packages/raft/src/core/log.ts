/**
 * The in-memory Raft log: entries after the compaction point (offset), plus the commit index.
 * The driver persists what the core hands out; the core keeps the whole uncompacted log in memory,
 * which snapshots keep bounded.
 */
import { invariant } from './assert';
import type { Entry } from './types';

const EMPTY = new Uint8Array(0);

/** An entry's payload bytes, held in memory or not (Entry.offloaded). */
export function payloadBytes(e: Entry): number {
  return e.offloaded ?? e.data.byteLength;
}

export class RaftLog {
  /** index and term of the entry just before entries[0] (0/0 for an empty, never-compacted log) */
  offset: number;
  offsetTerm: number;
  entries: Entry[];
  committed: number;

  constructor(offset: number, offsetTerm: number, entries: Entry[], committed: number) {
    this.offset = offset;
    this.offsetTerm = offsetTerm;
    this.entries = entries;
    this.committed = committed;
    for (let i = 0; i < entries.length; i++) invariant(entries[i].index === offset + 1 + i, 'log entries must be contiguous');
    invariant(committed <= this.lastIndex() && committed >= offset, () => `commit ${committed} outside log [${offset}, ${this.lastIndex()}]`);
  }

  firstIndex(): number {
    return this.offset + 1;
  }

  lastIndex(): number {
    return this.offset + this.entries.length;
  }

  lastTerm(): number {
    return this.entries.length ? this.entries[this.entries.length - 1].term : this.offsetTerm;
  }

  /** Term at index, or undefined when compacted away or beyond the end. */
  term(i: number): number | undefined {
    if (i === this.offset) return this.offsetTerm;
    if (i < this.offset || i > this.lastIndex()) return undefined;
    return this.entries[i - this.offset - 1].term;
  }

  entry(i: number): Entry | undefined {
    if (i <= this.offset || i > this.lastIndex()) return undefined;
    return this.entries[i - this.offset - 1];
  }

  matchTerm(i: number, t: number): boolean {
    return this.term(i) === t;
  }

  /** Raft's "at least as up-to-date" rule for granting votes. */
  isUpToDate(lastIndex: number, lastTerm: number): boolean {
    const t = this.lastTerm();
    return lastTerm > t || (lastTerm === t && lastIndex >= this.lastIndex());
  }

  /** Entries [lo, hi) limited to maxBytes/maxCount (always at least one if any); undefined if lo is compacted. */
  slice(lo: number, hi: number, maxBytes = Infinity, maxCount = Infinity): Entry[] | undefined {
    if (lo <= this.offset) return undefined;
    hi = Math.min(hi, this.lastIndex() + 1);
    if (lo >= hi) return [];
    const out: Entry[] = [];
    let bytes = 0;
    for (let i = lo; i < hi; i++) {
      const e = this.entries[i - this.offset - 1];
      bytes += payloadBytes(e) + 16;
      if (out.length > 0 && (bytes > maxBytes || out.length >= maxCount)) break;
      out.push(e);
    }
    return out;
  }

  /**
   * The largest index <= index whose term is <= term, with that term (term 0 when the lookup reaches
   * compacted entries). Used on both sides of fast log backtracking.
   */
  findConflictByTerm(index: number, term: number): { index: number; term: number } {
    for (let i = Math.min(index, this.lastIndex()); i >= this.offset; i--) {
      const t = this.term(i) as number;
      if (t <= term) return { index: i, term: t };
    }
    return { index: this.offset, term: 0 };
  }

  /**
   * Lets the payload of entry i go from memory (Entry.offloaded; the driver keeps it on disk). The entry
   * is replaced by a copy without it, never changed: a Ready being applied, or another node's log in a
   * test's in-process transport, may hold the same object.
   */
  offload(i: number): void {
    invariant(i > this.offset && i <= this.committed, () => `offload of ${i} outside the committed log (${this.offset}, ${this.committed}]`);
    const e = this.entries[i - this.offset - 1];
    if (e.offloaded !== undefined) return;
    this.entries[i - this.offset - 1] = { index: e.index, term: e.term, type: e.type, data: EMPTY, offloaded: e.data.byteLength };
  }

  /** Appends entries that follow the last one. */
  append(ents: Entry[]): void {
    for (const e of ents) {
      invariant(e.index === this.lastIndex() + 1, () => `append of index ${e.index} after ${this.lastIndex()}`);
      invariant(e.term >= this.lastTerm(), () => `append of term ${e.term} after term ${this.lastTerm()}`);
      this.entries.push(e);
    }
  }

  /** Drops entries with index >= from. Committed entries are never dropped. */
  truncateFrom(from: number): void {
    invariant(from > this.committed, () => `truncation at ${from} would drop committed entries (commit ${this.committed})`);
    if (from > this.lastIndex()) return;
    this.entries.length = Math.max(0, from - this.offset - 1);
  }

  commitTo(i: number): boolean {
    if (i <= this.committed) return false;
    invariant(i <= this.lastIndex(), () => `commit ${i} beyond last index ${this.lastIndex()}`);
    this.committed = i;
    return true;
  }

  /** Discards entries <= upTo (they are covered by a snapshot). */
  compact(upTo: number): void {
    if (upTo <= this.offset) return;
    invariant(upTo <= this.lastIndex(), 'compaction beyond the log');
    const t = this.term(upTo) as number;
    this.entries = this.entries.slice(upTo - this.offset);
    this.offset = upTo;
    this.offsetTerm = t;
  }

  /** Replaces the whole log by a snapshot point. */
  restore(index: number, term: number): void {
    this.entries = [];
    this.offset = index;
    this.offsetTerm = term;
    this.committed = index;
  }
}
