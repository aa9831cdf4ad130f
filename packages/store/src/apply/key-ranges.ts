import type { ApplyContext } from '../apply-context';
import type { KeyRangesCommand, KeySplitCommand } from '../commands';
import type { StateDb } from '../db';
import { conflict, failure, StrataError, type ApplyFailure } from '../errors';
import { invalidSplit, invalidTable, splitTable, type KeyRangeTable, type KeySplit } from '../key-ranges';

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

const sameSplit = (a: KeySplit, b: KeySplit): boolean => a.group === b.group && a.point === b.point && a.new_group === b.new_group;

/**
 * `cluster.split`: begin records a split in flight (at most one per group, each new group claimed once),
 * commit switches the moving half to the new group (and notes that the old group must drop the moved
 * records), abort forgets it, dropped notes that the old group has. A step that was applied already
 * answers `already_…`, so the loop that drives a split may retry any step.
 */
export async function applyKeySplit(db: StateDb, ctx: ApplyContext, cmd: KeySplitCommand): Promise<{ status: string; table?: KeyRangeTable } | ApplyFailure> {
  const table = (await ctx.get(db.meta, RANGES_KEY)) as KeyRangeTable | undefined;
  if (!table) return failure(conflict('cluster.split: the key-range directory is not recorded yet'));
  const splits = ((await ctx.get(db.meta, SPLITS_KEY)) as KeySplit[] | undefined) ?? [];
  const s: KeySplit = { group: cmd.split?.group, point: cmd.split?.point, new_group: cmd.split?.new_group };
  const mine = splits.find((x) => x.group === s.group);
  const drops = ((await ctx.get(db.meta, DROPS_KEY)) as KeySplit[] | undefined) ?? [];
  const committed = table.ranges.some((r) => r.start === s.point && r.group === s.new_group);
  const keep = (list: KeySplit[]) => (list.length ? ctx.put(db.meta, SPLITS_KEY, list) : ctx.del(db.meta, SPLITS_KEY));
  switch (cmd.phase) {
    case 'begin': {
      if (mine && sameSplit(mine, s)) return { status: 'already_begun' };
      if (committed) return { status: 'already_committed' };
      if (mine) return failure(conflict(`cluster.split: group ${s.group} is being split already (at ${mine.point})`));
      const why = invalidSplit(table, s);
      if (why) return failure(new StrataError('invalid_command', `cluster.split: ${why}`));
      if (splits.some((x) => x.new_group === s.new_group)) return failure(conflict(`cluster.split: group ${s.new_group} is claimed by another split`));
      keep([...splits, s]);
      return { status: 'begun' };
    }
    case 'commit': {
      if (committed) return { status: 'already_committed' };
      if (!mine || !sameSplit(mine, s)) return failure(conflict('cluster.split: no such split in flight'));
      const next = splitTable(table, s);
      ctx.put(db.meta, RANGES_KEY, next);
      keep(splits.filter((x) => x !== mine));
      ctx.put(db.meta, DROPS_KEY, [...drops, s]);
      return { status: 'committed', table: next };
    }
    case 'abort': {
      if (committed) return failure(conflict('cluster.split: the split is committed; it cannot be aborted'));
      if (!mine || !sameSplit(mine, s)) return { status: 'not_in_flight' };
      keep(splits.filter((x) => x !== mine));
      return { status: 'aborted' };
    }
    case 'dropped': {
      const rest = drops.filter((x) => !sameSplit(x, s));
      if (rest.length === drops.length) return { status: 'not_dropping' };
      if (rest.length) ctx.put(db.meta, DROPS_KEY, rest);
      else ctx.del(db.meta, DROPS_KEY);
      return { status: 'dropped' };
    }
    default:
      return failure(new StrataError('invalid_command', 'cluster.split: phase must be begin, commit, abort or dropped'));
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
