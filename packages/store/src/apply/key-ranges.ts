import type { ApplyContext } from '../apply-context';
import type { KeyRangesCommand, KeySplitCommand, RemoveGroupCommand } from '../commands';
import { placementKey, REMOVED_GROUPS_KEY } from './placement';
import type { StateDb } from '../db';
import { conflict, failure, StrataError, type ApplyFailure } from '../errors';
import { invalidMerge, invalidSplit, invalidTable, mergeTable, rangesOfGroup, splitTable, type KeyRangeTable, type KeySplit } from '../key-ranges';

/** `meta` key of the key-range directory (shard 0). */
const RANGES_KEY = 'key_ranges';

/** `cluster.ranges`: records the table unless one is recorded already (the first one stays). */
export async function applyKeyRanges(db: StateDb, ctx: ApplyContext, cmd: KeyRangesCommand): Promise<{ status: 'recorded' | 'already_recorded' } | ApplyFailure> {
  const why = invalidTable(cmd.table);
  if (why) return failure(new StrataError('invalid_command', `cluster.ranges: ${why}`));
  if ((await ctx.get(db.meta, RANGES_KEY)) !== undefined) return { status: 'already_recorded' };
  ctx.put(db.meta, RANGES_KEY, { base: cmd.table.base, ranges: cmd.table.ranges.map((r) => ({ start: r.start, group: r.group })) } satisfies KeyRangeTable);
  return { status: 'recorded' };
}

/** The recorded key-range directory, or null when none is recorded yet. */
export async function readKeyRanges(db: StateDb): Promise<KeyRangeTable | null> {
  return ((await db.meta.get(RANGES_KEY)) as KeyRangeTable | undefined) ?? null;
}

/** `meta` key of the splits in flight (begun, not committed or aborted), in the order they began. */
const SPLITS_KEY = 'key_splits';
/** `meta` key of the committed splits whose old group still holds the moved records (until `dropped`). */
const DROPS_KEY = 'key_split_drops';
/** `meta` key of the aborted splits whose groups are being put back (until `cleared`): their new group ids stay claimed. */
const ABORTS_KEY = 'key_split_aborts';
/** `meta` key of the groups merged away: they own no range and their ids are never given again (their replicas may still hold state). */
const RETIRED_KEY = 'key_retired_groups';
/** `meta` key of the retired groups removed (`cluster.remove_group`): no node opens them again. */
const REMOVED_KEY = REMOVED_GROUPS_KEY;

const sameSplit = (a: KeySplit, b: KeySplit): boolean => a.group === b.group && a.point === b.point && a.new_group === b.new_group;

/**
 * `cluster.split`: begin records a split in flight (at most one per group, each new group claimed once),
 * commit switches the moving half to the new group (and notes that the old group must drop the moved
 * records), abort takes a split not committed out of flight and notes that its groups must be put back
 * (the old group unfenced, the new group cleared) until `cleared`, dropped notes that the old group has
 * deleted the moved records. A step that was applied already answers `already_…`, so the loop that
 * drives a split may retry any step.
 *
 * A merge is the same hand-over with `merge` set (docs/cluster.md "Merging two groups"): the old group
 * (`group`) gives its whole range, from its start (`point`), to `new_group`, an existing group whose
 * range is adjacent; the commit joins the two ranges and retires the old group's id.
 */
export async function applyKeySplit(db: StateDb, ctx: ApplyContext, cmd: KeySplitCommand): Promise<{ status: string; table?: KeyRangeTable; split?: KeySplit } | ApplyFailure> {
  const table = (await ctx.get(db.meta, RANGES_KEY)) as KeyRangeTable | undefined;
  if (!table) return failure(conflict('cluster.split: the key-range directory is not recorded yet'));
  const splits = ((await ctx.get(db.meta, SPLITS_KEY)) as KeySplit[] | undefined) ?? [];
  const merge = cmd.split?.merge !== undefined;
  const s: KeySplit = { group: cmd.split?.group, point: cmd.split?.point, new_group: cmd.split?.new_group };
  const mine = splits.find((x) => x.group === s.group);
  const drops = ((await ctx.get(db.meta, DROPS_KEY)) as KeySplit[] | undefined) ?? [];
  const aborts = ((await ctx.get(db.meta, ABORTS_KEY)) as KeySplit[] | undefined) ?? [];
  const retired = ((await ctx.get(db.meta, RETIRED_KEY)) as number[] | undefined) ?? [];
  // a merged-away group never owns a range again, so "owns none" after a merge's begin means committed
  const committed = merge ? retired.includes(s.group) : table.ranges.some((r) => r.start === s.point && r.group === s.new_group);
  const keep = (key: string, list: unknown[]) => (list.length ? ctx.put(db.meta, key, list) : ctx.del(db.meta, key));
  const busy = (g: number) => [...splits, ...drops, ...aborts].some((x) => x.group === g || x.new_group === g);
  switch (cmd.phase) {
    case 'begin': {
      if (mine && sameSplit(mine, s)) return { status: 'already_begun', split: mine };
      if (committed) return { status: 'already_committed' };
      if (mine) return failure(conflict(`cluster.split: group ${s.group} is being ${mine.merge ? 'merged' : 'split'} already (at ${mine.point})`));
      if (busy(s.group) || (merge && busy(s.new_group))) return failure(conflict(`cluster.split: group ${busy(s.group) ? s.group : s.new_group} is in another split or merge not finished yet`));
      let begun: KeySplit;
      if (merge) {
        const why = invalidMerge(table, s.new_group, s.group);
        if (why) return failure(new StrataError('invalid_command', `cluster.split: ${why}`));
        const range = rangesOfGroup(table, s.group)[0];
        if (s.point !== range.start || cmd.split.merge?.end !== range.end) return failure(new StrataError('invalid_command', `cluster.split: a merge moves group ${s.group}'s whole range, from ${range.start} to ${range.end}`));
        begun = { ...s, merge: { end: range.end } };
      } else {
        const why = invalidSplit(table, s);
        if (why) return failure(new StrataError('invalid_command', `cluster.split: ${why}`));
        if (aborts.some((x) => x.new_group === s.new_group) || retired.includes(s.new_group)) return failure(conflict(`cluster.split: group ${s.new_group} is not free yet`));
        begun = s;
      }
      if (splits.some((x) => x.new_group === s.new_group)) return failure(conflict(`cluster.split: group ${s.new_group} is claimed by another split`));
      keep(SPLITS_KEY, [...splits, begun]);
      return { status: 'begun', split: begun };
    }
    case 'commit': {
      if (committed) return { status: 'already_committed' };
      if (!mine || !sameSplit(mine, s)) return failure(conflict('cluster.split: no such split in flight'));
      const next = mine.merge ? mergeTable(table, s.new_group, s.group) : splitTable(table, s);
      ctx.put(db.meta, RANGES_KEY, next);
      keep(SPLITS_KEY, splits.filter((x) => x !== mine));
      ctx.put(db.meta, DROPS_KEY, [...drops, mine]);
      if (mine.merge) ctx.put(db.meta, RETIRED_KEY, [...retired, s.group]);
      return { status: 'committed', table: next };
    }
    case 'abort': {
      if (committed) return failure(conflict('cluster.split: the split is committed; it cannot be aborted'));
      if (aborts.some((x) => sameSplit(x, s))) return { status: 'already_aborted' };
      if (!mine || !sameSplit(mine, s)) return { status: 'not_in_flight' };
      keep(SPLITS_KEY, splits.filter((x) => x !== mine));
      ctx.put(db.meta, ABORTS_KEY, [...aborts, mine]);
      return { status: 'aborted', split: mine };
    }
    case 'cleared': {
      const rest = aborts.filter((x) => !sameSplit(x, s));
      if (rest.length === aborts.length) return { status: 'not_aborting' };
      keep(ABORTS_KEY, rest);
      return { status: 'cleared' };
    }
    case 'dropped': {
      const rest = drops.filter((x) => !sameSplit(x, s));
      if (rest.length === drops.length) return { status: 'not_dropping' };
      keep(DROPS_KEY, rest);
      return { status: 'dropped' };
    }
    default:
      return failure(new StrataError('invalid_command', 'cluster.split: phase must be begin, commit, abort, cleared or dropped'));
  }
}

/** The splits in flight, recorded in shard 0. */
export async function readKeySplits(db: StateDb): Promise<KeySplit[]> {
  return ((await db.meta.get(SPLITS_KEY)) as KeySplit[] | undefined) ?? [];
}

/** The committed splits whose old group has not dropped the moved records yet. */
export async function readKeySplitDrops(db: StateDb): Promise<KeySplit[]> {
  return ((await db.meta.get(DROPS_KEY)) as KeySplit[] | undefined) ?? [];
}

/** The aborted splits whose groups are not put back yet. */
export async function readKeySplitAborts(db: StateDb): Promise<KeySplit[]> {
  return ((await db.meta.get(ABORTS_KEY)) as KeySplit[] | undefined) ?? [];
}

/** The groups merged away (never given again). */
export async function readRetiredGroups(db: StateDb): Promise<number[]> {
  return ((await db.meta.get(RETIRED_KEY)) as number[] | undefined) ?? [];
}

/** The retired groups removed (no node opens them; their replicas are wiped). */
export async function readRemovedGroups(db: StateDb): Promise<number[]> {
  return ((await db.meta.get(REMOVED_KEY)) as number[] | undefined) ?? [];
}

/** `cluster.remove_group` (RemoveGroupCommand): a retired group listed as removed, its placement record deleted. */
export async function applyRemoveGroup(db: StateDb, ctx: ApplyContext, cmd: RemoveGroupCommand): Promise<{ status: 'removed' | 'already_removed' } | ApplyFailure> {
  const g = cmd.group;
  if (!Number.isSafeInteger(g) || g <= 0) return failure(new StrataError('invalid_command', 'cluster.remove_group: group must be a positive integer'));
  const removed = ((await ctx.get(db.meta, REMOVED_KEY)) as number[] | undefined) ?? [];
  if (removed.includes(g)) return { status: 'already_removed' };
  const retired = ((await ctx.get(db.meta, RETIRED_KEY)) as number[] | undefined) ?? [];
  if (!retired.includes(g)) return failure(conflict(`cluster.remove_group: group ${g} is not retired (only a group merged away is removed)`));
  const unfinished = await Promise.all([SPLITS_KEY, DROPS_KEY, ABORTS_KEY].map(async (k) => ((await ctx.get(db.meta, k)) as KeySplit[] | undefined) ?? []));
  if (unfinished.flat().some((x) => x.group === g || x.new_group === g)) return failure(conflict(`cluster.remove_group: group ${g} is in a split or merge not finished yet`));
  ctx.put(db.meta, REMOVED_KEY, [...removed, g].sort((a, b) => a - b));
  ctx.del(db.meta, placementKey(g));
  return { status: 'removed' };
}
