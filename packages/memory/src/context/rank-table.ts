/**
 * A BPE encoding's rank table in a few typed arrays, read through the two Map-like views js-tiktoken's
 * encode and decode call: `rankMap.get(key)` (a token's bytes in decimal joined by commas → its rank)
 * and `textMap.get(rank)` (→ the token's bytes).
 *
 * Why not the library's two Maps: they hold a key string, a Map entry and a Uint8Array (with its
 * ArrayBuffer) per token. For cl100k_base (100,256 tokens) that was 47.6 MiB of a node's heap and
 * ~300,000 objects that every full garbage collection marks (heap snapshot of a node holding a user of
 * 100,000 units: docs/performance.md). Here: the tokens' bytes end to end, their offsets, lengths and
 * ranks, and an open-addressing hash of the bytes, ~3 MiB.
 *
 * Same answers as the Maps it replaces: a key names the token whose bytes it spells, the last one added
 * for the same bytes (Map.set's last-wins), and every rank added keeps its own bytes
 * (packages/memory/test/context/tokenizer.test.ts compares every entry with the library's tables).
 */

/** FNV-1a over bytes (32-bit): spreads short byte strings well, cheap to compute while parsing a key. */
const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

export class RankTable {
  /** every token's bytes, end to end */
  private bytes = new Uint8Array(1 << 16);
  private used = 0;
  /** per token (in the order added): where its bytes start, how many, its rank */
  private starts = new Int32Array(1024);
  private lengths = new Int32Array(1024);
  private ranks = new Int32Array(1024);
  private count = 0;
  /** hash slots: a token's number + 1, or 0 when free (linear probing; at most half full) */
  private slots = new Int32Array(2048);
  /** rank → token number + 1 (0: no such rank) */
  private byRank = new Int32Array(1024);
  private distinctKeys = 0;
  private distinctRanks = 0;
  /** a parsed key's bytes (grown when a longer piece is looked up) */
  private scratch = new Uint8Array(256);

  /** What js-tiktoken's encode reads as `rankMap` (only `get`; `size` for checks). */
  readonly rankMap = {
    get: (key: string): number | undefined => this.rankOf(key),
    size: 0,
  };

  /** What js-tiktoken's decode reads as `textMap`. */
  readonly textMap = {
    get: (rank: number): Uint8Array | undefined => this.bytesOf(rank),
    size: 0,
  };

  /** Adds a token: the first `length` bytes of `token`, with its rank. */
  add(token: Uint8Array, length: number, rank: number): void {
    if (this.count === this.starts.length) {
      this.starts = grow(this.starts, this.count * 2);
      this.lengths = grow(this.lengths, this.count * 2);
      this.ranks = grow(this.ranks, this.count * 2);
    }
    if (this.used + length > this.bytes.length) {
      const bytes = new Uint8Array(Math.max(this.bytes.length * 2, this.used + length));
      bytes.set(this.bytes.subarray(0, this.used));
      this.bytes = bytes;
    }
    const n = this.count++;
    this.bytes.set(token.subarray(0, length), this.used);
    this.starts[n] = this.used;
    this.lengths[n] = length;
    this.ranks[n] = rank;
    this.used += length;

    if ((this.distinctKeys + 1) * 2 > this.slots.length) this.rehash(this.slots.length * 2);
    const slot = this.findSlot(token, length, hashOf(token, length));
    if (this.slots[slot] === 0) this.distinctKeys++;
    this.slots[slot] = n + 1; // the same bytes again: the last one added answers (as Map.set)

    if (rank >= this.byRank.length) this.byRank = grow(this.byRank, Math.max(this.byRank.length * 2, rank + 1));
    if (this.byRank[rank] === 0) this.distinctRanks++;
    this.byRank[rank] = n + 1;
    this.rankMap.size = this.distinctKeys;
    this.textMap.size = this.distinctRanks;
  }

  /** The rank of the token whose bytes `key` spells (decimal bytes joined by commas), if there is one. */
  rankOf(key: string): number | undefined {
    let length = 0;
    let value = -1;
    let h = FNV_OFFSET;
    for (let i = 0; i <= key.length; i++) {
      const c = i < key.length ? key.charCodeAt(i) : 44; // the end closes the last byte as a comma would
      if (c >= 48 && c <= 57) {
        if (value === 0) return undefined; // a leading zero: no key the library makes (Uint8Array.join)
        value = (value < 0 ? 0 : value * 10) + (c - 48);
        if (value > 255) return undefined;
      } else if (c === 44) {
        if (value < 0) {
          if (i === key.length && length === 0) break; // the empty key
          return undefined;
        }
        if (length === this.scratch.length) this.scratch = grow(this.scratch, length * 2);
        this.scratch[length++] = value;
        h = Math.imul(h ^ value, FNV_PRIME);
        value = -1;
      } else {
        return undefined;
      }
    }
    const n = this.slots[this.findSlot(this.scratch, length, h >>> 0)];
    return n === 0 ? undefined : this.ranks[n - 1];
  }

  /** The bytes of the token of `rank` (a view: read it, do not keep changing it). */
  bytesOf(rank: number): Uint8Array | undefined {
    if (!(rank >= 0 && rank < this.byRank.length) || !Number.isInteger(rank)) return undefined;
    const n = this.byRank[rank];
    if (n === 0) return undefined;
    const start = this.starts[n - 1];
    return this.bytes.subarray(start, start + this.lengths[n - 1]);
  }

  /** Bytes held (the typed arrays' lengths). */
  get byteSize(): number {
    return this.bytes.byteLength + this.starts.byteLength + this.lengths.byteLength + this.ranks.byteLength + this.slots.byteLength + this.byRank.byteLength;
  }

  /** The slot holding these bytes, or the free slot where they would go. */
  private findSlot(bytes: Uint8Array, length: number, hash: number): number {
    const mask = this.slots.length - 1;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const n = this.slots[slot];
      if (n === 0 || this.equals(n - 1, bytes, length)) return slot;
    }
  }

  private equals(n: number, bytes: Uint8Array, length: number): boolean {
    if (this.lengths[n] !== length) return false;
    const start = this.starts[n];
    for (let i = 0; i < length; i++) if (this.bytes[start + i] !== bytes[i]) return false;
    return true;
  }

  private rehash(size: number): void {
    const old = this.slots;
    this.slots = new Int32Array(size);
    for (let slot = 0; slot < old.length; slot++) {
      const n = old[slot];
      if (n === 0) continue;
      const token = this.bytes.subarray(this.starts[n - 1], this.starts[n - 1] + this.lengths[n - 1]);
      this.slots[this.findSlot(token, token.length, hashOf(token, token.length))] = n;
    }
  }
}

function hashOf(bytes: Uint8Array, length: number): number {
  let h = FNV_OFFSET;
  for (let i = 0; i < length; i++) h = Math.imul(h ^ bytes[i], FNV_PRIME);
  return h >>> 0;
}

function grow<T extends Int32Array | Uint8Array>(a: T, size: number): T {
  const b = new (a.constructor as new (n: number) => T)(size);
  b.set(a);
  return b;
}
