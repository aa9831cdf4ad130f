/**
 * The log matching property as the simulator checks it: two entries with the same index and term
 * hold the same data and follow the same term, on every node, in memory and on disk; and terms never
 * go down along a log. Returns a violation message, or null.
 */
import type { Entry } from '../core/types';
import type { SimDisk } from './node';

export class LogMatching {
  private readonly seen = new Map<string, { prevTerm: number | undefined; data: Uint8Array }>();

  /** One entry and the term of the entry before it in the same log (undefined when unknown). */
  check(node: number, where: 'disk' | 'memory', e: Entry, prevTerm: number | undefined): string | null {
    if (prevTerm !== undefined && prevTerm > e.term) return `terms go down in node ${node}'s log (${where}): ${e.index - 1}@${prevTerm} then ${e.index}@${e.term}`;
    const k = `${e.index}:${e.term}`;
    const seen = this.seen.get(k);
    if (!seen) {
      this.seen.set(k, { prevTerm, data: e.data });
      return null;
    }
    if (!sameBytes(seen.data, e.data)) return `log matching: two different entries at ${k} (node ${node}, ${where})`;
    if (seen.prevTerm !== undefined && prevTerm !== undefined && seen.prevTerm !== prevTerm) {
      return `log matching: entry ${k} follows term ${prevTerm} on node ${node} (${where}) but ${seen.prevTerm} elsewhere`;
    }
    if (seen.prevTerm === undefined) seen.prevTerm = prevTerm;
    return null;
  }

  /**
   * Entries a Ready just wrote, judged on the disk as that write left it. Not against the core's
   * log of now: while a write is in flight a newer leader may replace those entries in memory, and
   * the next Ready writes the replacement (judging the old write against the new memory reported
   * entry 49@3 "following term 4" in seed 9101015 although no log ever held that sequence).
   */
  checkWrite(node: number, disk: SimDisk, entries: Entry[]): string | null {
    for (const e of entries) {
      const v = this.check(node, 'disk', e, disk.termAt(e.index - 1));
      if (v) return v;
    }
    return null;
  }
}

/** Byte equality without copying (entries mostly travel as the same object). */
export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a === b) return true;
  if (a.byteLength !== b.byteLength) return false;
  return Buffer.compare(Buffer.from(a.buffer, a.byteOffset, a.byteLength), Buffer.from(b.buffer, b.byteOffset, b.byteLength)) === 0;
}
