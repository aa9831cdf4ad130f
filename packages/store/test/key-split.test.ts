/**
 * Splitting a key range (key-ranges.ts) and the split's steps in the key-range directory of shard 0
 * (`cluster.split`, apply/key-ranges.ts): the moving half goes to the new group and nothing else moves;
 * routing changes in the commit's apply only; every step may be retried; refusals change nothing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  StateDb, StateMachine, fnv1a32, freeGroupId, groupOfUser, initialRanges, invalidSplit, keySpaceEnd, middleOf, movingRange, rangeKey,
  rangesOfGroup, readKeyRanges, readKeySplitDrops, readKeySplits, splitTable, type KeyRangeTable, type KeySplit,
} from '../src';

const USERS = Array.from({ length: 4000 }, (_, i) => `user-${i}`);

describe('splitting a range', () => {
  it('moves exactly the keys of the group from the point on to the new group, and no other user', () => {
    for (const base of [1, 3, 12]) {
      const table = initialRanges(base);
      const group = base - 1;
      const point = middleOf(table, group)!;
      const split: KeySplit = { group, point, new_group: freeGroupId(table)! };
      expect(split.new_group).toBe(base);
      expect(invalidSplit(table, split)).toBeNull();
      const next = splitTable(table, split);
      expect(next.base).toBe(base);
      for (const u of USERS) {
        const before = groupOfUser(table, u);
        const after = groupOfUser(next, u);
        const key = rangeKey(fnv1a32(u), base);
        if (before === group && key >= point) expect(after).toBe(split.new_group);
        else expect(after).toBe(before);
      }
      // a fair share of the group's users move (the key is a permutation of the hash, not the hash itself)
      const mine = USERS.filter((u) => groupOfUser(table, u) === group);
      const moved = mine.filter((u) => groupOfUser(next, u) === split.new_group).length;
      expect(moved / mine.length).toBeGreaterThan(0.4);
      expect(moved / mine.length).toBeLessThan(0.6);
    }
  });

  it('knows each group\'s range, the moving half, and splits a half again', () => {
    const one = initialRanges(1);
    expect(rangesOfGroup(one, 0)).toEqual([{ start: 0, end: keySpaceEnd(1) }]);
    const half = keySpaceEnd(1) / 2;
    const two = splitTable(one, { group: 0, point: half, new_group: 1 });
    expect(rangesOfGroup(two, 0)).toEqual([{ start: 0, end: half }]);
    expect(rangesOfGroup(two, 1)).toEqual([{ start: half, end: keySpaceEnd(1) }]);
    expect(movingRange(two, { group: 1, point: half + 10, new_group: 2 })).toEqual({ start: half + 10, end: keySpaceEnd(1) });
    const three = splitTable(two, { group: 0, point: middleOf(two, 0)!, new_group: freeGroupId(two)! });
    expect(three.ranges.map((r) => r.group)).toEqual([0, 2, 1]);
    expect(freeGroupId(three, [3])).toBe(4);
  });

  it('refuses points outside the group, at its start or end, taken group ids and groups with no range', () => {
    const table = initialRanges(4);
    const block = keySpaceEnd(4) / 4;
    expect(invalidSplit(table, { group: 1, point: block, new_group: 9 })).toMatch(/strictly inside/); // its start
    expect(invalidSplit(table, { group: 1, point: 2 * block, new_group: 9 })).toMatch(/strictly inside/); // its end
    expect(invalidSplit(table, { group: 1, point: 3 * block, new_group: 9 })).toMatch(/strictly inside/); // another group's
    expect(invalidSplit(table, { group: 1, point: block + 1, new_group: 2 })).toMatch(/already owns/);
    expect(invalidSplit(table, { group: 7, point: 1, new_group: 9 })).toMatch(/owns no range/);
    expect(invalidSplit(table, { group: 1, point: block + 1, new_group: 256 })).toMatch(/new_group/);
    expect(invalidSplit(table, { group: 1, point: 1.5, new_group: 9 })).toMatch(/integers/);
    expect(middleOf({ base: 1, ranges: [{ start: 0, group: 0 }, { start: 1, group: 1 }] }, 0)).toBeNull();
  });
});

describe('cluster.split apply', () => {
  let dir: string;
  let db: StateDb;
  let sm: StateMachine;
  let index = 0;
  const at = '2026-01-01T00:00:00.000Z';
  const apply = (phase: 'begin' | 'commit' | 'abort' | 'dropped', split: KeySplit) => sm.apply(++index, { type: 'cluster.split', at, phase, split });
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'strata-split-'));
    db = await StateDb.open(join(dir, 'state'));
    sm = await StateMachine.open(db);
  });
  afterAll(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('begins (routing unchanged), commits once (routing switched in that apply), and answers retries', async () => {
    const split: KeySplit = { group: 0, point: keySpaceEnd(2) / 4, new_group: 2 };
    expect(await apply('begin', split)).toMatchObject({ error: { code: 'conflict' } }); // no table recorded yet
    expect(await sm.apply(++index, { type: 'cluster.ranges', at, table: initialRanges(2) })).toEqual({ status: 'recorded' });
    expect(await apply('begin', split)).toEqual({ status: 'begun' });
    expect(await apply('begin', split)).toEqual({ status: 'already_begun' });
    expect(await readKeySplits(db)).toEqual([split]);
    expect(await readKeyRanges(db)).toEqual(initialRanges(2)); // nothing routes to the new group before the commit
    // another split of the same group, or one claiming the same new group, waits for this one
    expect(await apply('begin', { ...split, point: split.point + 1 })).toMatchObject({ error: { code: 'conflict' } });
    expect(await apply('begin', { group: 1, point: (keySpaceEnd(2) * 3) / 4, new_group: 2 })).toMatchObject({ error: { code: 'conflict' } });
    expect(await apply('commit', { ...split, point: split.point + 1 })).toMatchObject({ error: { code: 'conflict' } });
    const seen: KeyRangeTable[] = [];
    sm.onApplied((_i, command, result) => {
      if (command.type === 'cluster.split' && (result as { status?: string }).status === 'committed') seen.push((result as { table: KeyRangeTable }).table);
    });
    const committed = await apply('commit', split);
    expect(committed).toMatchObject({ status: 'committed' });
    const table = (await readKeyRanges(db))!;
    expect(table).toEqual(splitTable(initialRanges(2), split));
    expect(seen).toEqual([table]);
    expect(await readKeySplits(db)).toEqual([]);
    expect(await readKeySplitDrops(db)).toEqual([split]); // the old group still holds the moved records
    expect(await apply('commit', split)).toEqual({ status: 'already_committed' });
    expect(await apply('begin', split)).toEqual({ status: 'already_committed' });
    expect(await apply('abort', split)).toMatchObject({ error: { code: 'conflict' } });
    expect(await readKeyRanges(db)).toEqual(table);
    expect(await apply('dropped', split)).toEqual({ status: 'dropped' });
    expect(await apply('dropped', split)).toEqual({ status: 'not_dropping' });
    expect(await readKeySplitDrops(db)).toEqual([]);
  });

  it('aborts a split in flight (routing never changed), and refuses an invalid one without change', async () => {
    const before = await readKeyRanges(db);
    const split: KeySplit = { group: 1, point: (keySpaceEnd(2) * 3) / 4, new_group: 3 };
    expect(await apply('begin', split)).toEqual({ status: 'begun' });
    expect(await apply('abort', split)).toEqual({ status: 'aborted' });
    expect(await apply('abort', split)).toEqual({ status: 'not_in_flight' });
    expect(await apply('commit', split)).toMatchObject({ error: { code: 'conflict' } });
    expect(await apply('begin', { group: 1, point: keySpaceEnd(2) / 2, new_group: 3 })).toMatchObject({ error: { code: 'invalid_command' } });
    expect(await sm.apply(++index, { type: 'cluster.split', at, phase: 'sideways' as 'begin', split })).toMatchObject({ error: { code: 'invalid_command' } });
    expect(await readKeyRanges(db)).toEqual(before);
    expect(await readKeySplits(db)).toEqual([]);
  });
});
