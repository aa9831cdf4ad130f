import type { ApplyContext } from '../apply-context';
import type { KeyRangesCommand } from '../commands';
import type { StateDb } from '../db';
import { failure, StrataError, type ApplyFailure } from '../errors';
import { invalidTable, type KeyRangeTable } from '../key-ranges';

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
