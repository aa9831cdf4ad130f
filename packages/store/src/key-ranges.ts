/**
 * Which shard group holds a user: the user id's hash, as a key, in a table of key ranges (the key-range
 * directory, recorded in shard 0 by `cluster.ranges`). The hash and the table live here, beside the
 * record, because every node must route with the same function forever: changing either would move
 * users between groups.
 *
 * The key of a user is a permutation of its 32-bit FNV-1a hash that depends on the table's `base`:
 * `key = (hash mod base) × block + ⌊hash / base⌋`, with `block = ⌈2³² / base⌉`. So the `base` equal
 * ranges [g × block, (g + 1) × block) hold exactly the hashes with `hash mod base = g`: a data directory
 * made with `fnv1a32 mod shards` (before ranges) routes every user to the same group under the table
 * `initialRanges(shards)`, and a range can still be cut anywhere (a split, later) into halves that each
 * take a fair share of the hashes. `base` never changes once recorded.
 */

/** FNV-1a (32-bit) over the UTF-8 bytes of the user id. Documented and stable. */
export function fnv1a32(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(text, 'utf8')) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

/**
 * murmur3's finalizer (every input bit moves every output bit), for the placement's tie-breaks. Its own
 * copy (memory's feature hashing has one too): what places groups must not change when memory's does.
 */
export function avalanche(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** A group's share of the keys: from `start` to the next range's start (the last one to the end of the key space). */
export interface KeyRange {
  start: number;
  group: number;
}

export interface KeyRangeTable {
  /** the shard count the keys are permuted by (the initial count of the data directory; fixed) */
  base: number;
  /** sorted by start, the first at 0 */
  ranges: KeyRange[];
}

/** The most groups a table may name (as `cluster.shards` allows). */
export const MAX_GROUPS = 256;

const HASHES = 2 ** 32;

export const blockOf = (base: number): number => Math.ceil(HASHES / base);

/** The end of the key space (exclusive): `base` blocks. */
export const keySpaceEnd = (base: number): number => base * blockOf(base);

/** The key of a hash under a table's base (see the module comment). */
export function rangeKey(hash: number, base: number): number {
  return (hash % base) * blockOf(base) + Math.floor(hash / base);
}

/** The table equivalent to `fnv1a32 mod shards`: `shards` equal ranges, range g to group g. */
export function initialRanges(shards: number): KeyRangeTable {
  const block = blockOf(shards);
  return { base: shards, ranges: Array.from({ length: shards }, (_, g) => ({ start: g * block, group: g })) };
}

/** The group whose range holds `key` (binary search over the starts). */
export function groupOfKey(table: KeyRangeTable, key: number): number {
  const r = table.ranges;
  let lo = 0;
  let hi = r.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (r[mid].start <= key) lo = mid;
    else hi = mid - 1;
  }
  return r[lo].group;
}

/** The group that holds a user under a table. */
export function groupOfUser(table: KeyRangeTable, userId: string): number {
  return groupOfKey(table, rangeKey(fnv1a32(userId), table.base));
}

/** Pure: why a table cannot be recorded (a proposer bug, refused deterministically), or null. */
export function invalidTable(t: KeyRangeTable): string | null {
  if (!Number.isSafeInteger(t?.base) || t.base < 1 || t.base > MAX_GROUPS) return `base must be an integer from 1 to ${MAX_GROUPS}`;
  if (!Array.isArray(t.ranges) || t.ranges.length === 0) return 'ranges must be a non-empty list';
  const end = keySpaceEnd(t.base);
  for (const [i, r] of t.ranges.entries()) {
    if (!Number.isSafeInteger(r?.start) || !Number.isSafeInteger(r.group) || r.group < 0 || r.group >= MAX_GROUPS) return `range ${i} needs an integer start and a group id`;
    if (i === 0 ? r.start !== 0 : r.start <= t.ranges[i - 1].start || r.start >= end) return `range ${i} must start ${i === 0 ? 'at 0' : 'after the previous range and within the key space'}`;
  }
  return null;
}

/** Where a group's keys are: the ranges it owns, each from `start` to `end` (exclusive). */
export function rangesOfGroup(table: KeyRangeTable, group: number): { start: number; end: number }[] {
  const end = keySpaceEnd(table.base);
  return table.ranges.flatMap((r, i) => (r.group === group ? [{ start: r.start, end: i + 1 < table.ranges.length ? table.ranges[i + 1].start : end }] : []));
}

/**
 * A split of a group at a key point: the keys of the group's range from `point` on (to the range's
 * end) go to the new group `new_group`, the keys before it stay.
 */
export interface KeySplit {
  group: number;
  point: number;
  new_group: number;
  /**
   * A merge (docs/cluster.md "Merging two groups"): the whole range of `group` (from `point`, its start,
   * to `end`, its end) goes to `new_group`, an existing group whose range is adjacent; `group` is retired.
   */
  merge?: { end: number };
}

/** The half that moves in a split: from the point to the end of the range that holds it. */
export function movingRange(table: KeyRangeTable, split: KeySplit): { start: number; end: number } | null {
  const range = rangesOfGroup(table, split.group).find((r) => r.start < split.point && split.point < r.end);
  return range ? { start: split.point, end: range.end } : null;
}

/**
 * Pure: the split point that halves a group's users: the median of their keys (`keys`: the keys of the
 * users of the range, any order). A point at the middle of the range splits the users fairly only if
 * their hashes are spread, and FNV-1a puts ids that differ in their last characters close together
 * (`person-0` … `person-59` within about 1 % of the hash space). Null when fewer than two users sit at
 * different keys inside the range (the caller falls back to the middle).
 */
export function medianPoint(keys: readonly number[], range: { start: number; end: number }): number | null {
  const inside = keys.filter((k) => range.start < k && k < range.end).sort((a, b) => a - b);
  const atStart = keys.filter((k) => k === range.start).length;
  const n = inside.length + atStart;
  if (n < 2 || inside.length === 0) return null;
  // the upper half takes the users from the median on: index ⌊n/2⌋ of the sorted keys, those at the start first
  return inside[Math.max(0, Math.floor(n / 2) - atStart)];
}

/** Pure: the middle of a group's (first) range, the default split point; null when the range holds one key. */
export function middleOf(table: KeyRangeTable, group: number): number | null {
  const range = rangesOfGroup(table, group)[0];
  if (!range || range.end - range.start < 2) return null;
  return range.start + Math.floor((range.end - range.start) / 2);
}

/** Pure: why a split cannot be made on this table (deterministic refusal), or null. */
export function invalidSplit(table: KeyRangeTable, split: KeySplit): string | null {
  if (!Number.isSafeInteger(split?.group) || !Number.isSafeInteger(split.point) || !Number.isSafeInteger(split.new_group)) return 'group, point and new_group must be integers';
  if (split.new_group < 0 || split.new_group >= MAX_GROUPS) return `new_group must be from 0 to ${MAX_GROUPS - 1}`;
  if (table.ranges.some((r) => r.group === split.new_group)) return `group ${split.new_group} already owns a range`;
  if (!table.ranges.some((r) => r.group === split.group)) return `group ${split.group} owns no range`;
  if (!movingRange(table, split)) return `point ${split.point} is not strictly inside a range of group ${split.group}`;
  return null;
}

/** Pure: why `donor` cannot be merged into `group` (its range is not adjacent, it owns none, …), or null. */
export function invalidMerge(table: KeyRangeTable, group: number, donor: number): string | null {
  if (!Number.isSafeInteger(group) || !Number.isSafeInteger(donor)) return 'group and donor must be integers';
  if (group === donor) return 'a group cannot be merged with itself';
  const mine = rangesOfGroup(table, group);
  const theirs = rangesOfGroup(table, donor);
  if (mine.length === 0) return `group ${group} owns no range`;
  if (theirs.length === 0) return `group ${donor} owns no range`;
  if (theirs.length > 1) return `group ${donor} owns more than one range`;
  const d = theirs[0];
  if (!mine.some((r) => r.end === d.start || r.start === d.end)) return `the ranges of groups ${group} and ${donor} are not adjacent`;
  return null;
}

/** Pure: the table after a merge (the caller checked invalidMerge): the donor's range is the group's, adjacent ranges of one group joined. */
export function mergeTable(table: KeyRangeTable, group: number, donor: number): KeyRangeTable {
  const ranges: KeyRange[] = [];
  for (const r of table.ranges) {
    const g = r.group === donor ? group : r.group;
    if (ranges.length > 0 && ranges[ranges.length - 1].group === g) continue; // the previous range goes on
    ranges.push({ start: r.start, group: g });
  }
  return { base: table.base, ranges };
}

/** Pure: the table after a split (the caller checked invalidSplit): the moving half becomes a range of the new group. */
export function splitTable(table: KeyRangeTable, split: KeySplit): KeyRangeTable {
  const ranges = [...table.ranges.map((r) => ({ ...r })), { start: split.point, group: split.new_group }].sort((a, b) => a.start - b.start);
  return { base: table.base, ranges };
}

/** Pure: the lowest group id no range names and no split in flight claims (the new group of a split), or null when none is left. */
export function freeGroupId(table: KeyRangeTable, claimed: readonly number[] = []): number | null {
  const used = new Set([...table.ranges.map((r) => r.group), ...claimed]);
  for (let g = 0; g < MAX_GROUPS; g++) if (!used.has(g)) return g;
  return null;
}
