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
  rangesOfGroup, readKeyRanges, readKeySplitAborts, readKeySplitDrops, readKeySplits, readRemovedGroups, readRetiredGroups, readPlacement, splitTable, invalidMerge, mergeTable, medianPoint,
  type KeyRangeTable, type KeySplit,
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
  const apply = (phase: 'begin' | 'commit' | 'abort' | 'cleared' | 'dropped', split: KeySplit) => sm.apply(++index, { type: 'cluster.split', at, phase, split });
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
    expect(await apply('begin', split)).toEqual({ status: 'begun', split });
    expect(await apply('begin', split)).toEqual({ status: 'already_begun', split });
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

  it('aborts a split in flight (routing never changed): its new group stays claimed until it is cleared; refuses an invalid one without change', async () => {
    const before = await readKeyRanges(db);
    const split: KeySplit = { group: 1, point: (keySpaceEnd(2) * 3) / 4, new_group: 3 };
    expect(await apply('begin', split)).toEqual({ status: 'begun', split });
    expect(await apply('abort', split)).toEqual({ status: 'aborted', split });
    expect(await apply('abort', split)).toEqual({ status: 'already_aborted' });
    expect(await apply('commit', split)).toMatchObject({ error: { code: 'conflict' } });
    expect(await readKeySplits(db)).toEqual([]);
    expect(await readKeySplitAborts(db)).toEqual([split]);
    // while its groups are put back: neither the group nor the new group id may be taken by another split
    expect(await apply('begin', { ...split, point: split.point + 1 })).toMatchObject({ error: { code: 'conflict' } });
    expect(await apply('begin', { group: 0, point: keySpaceEnd(2) / 8, new_group: 3 })).toMatchObject({ error: { code: 'conflict' } });
    expect(await apply('cleared', split)).toEqual({ status: 'cleared' });
    expect(await apply('cleared', split)).toEqual({ status: 'not_aborting' });
    expect(await readKeySplitAborts(db)).toEqual([]);
    expect(await apply('abort', split)).toEqual({ status: 'not_in_flight' });
    expect(await apply('begin', { group: 1, point: keySpaceEnd(2) / 2, new_group: 3 })).toMatchObject({ error: { code: 'invalid_command' } });
    expect(await sm.apply(++index, { type: 'cluster.split', at, phase: 'sideways' as 'begin', split })).toMatchObject({ error: { code: 'invalid_command' } });
    expect(await readKeyRanges(db)).toEqual(before);
    expect(await readKeySplits(db)).toEqual([]);
    // once cleared, the group may be split again, into the same new group id
    expect(await apply('begin', split)).toEqual({ status: 'begun', split });
    expect(await apply('abort', split)).toEqual({ status: 'aborted', split });
    expect(await apply('cleared', split)).toEqual({ status: 'cleared' });
  });

  it('merges a group into its neighbour: the whole range, adjacent only; the commit joins the ranges and retires the id for good', async () => {
    // the table now: [0, ¼) group 0, [¼, ½) group 2, [½, 1) group 1 (the first test's split)
    const table = (await readKeyRanges(db))!;
    const two = rangesOfGroup(table, 2)[0];
    const merge: KeySplit = { group: 2, point: two.start, new_group: 0, merge: { end: two.end } };
    expect(await apply('begin', { ...merge, merge: { end: two.end - 1 } })).toMatchObject({ error: { code: 'invalid_command' } }); // the range as it is not
    expect(await apply('begin', { ...merge, point: two.start + 1 })).toMatchObject({ error: { code: 'invalid_command' } }); // not from its start
    expect(await apply('begin', { group: 0, point: 0, new_group: 1, merge: { end: two.start } })).toMatchObject({ error: { code: 'invalid_command' } }); // not adjacent
    expect(await apply('begin', merge)).toEqual({ status: 'begun', split: merge });
    expect(await apply('begin', merge)).toMatchObject({ status: 'already_begun' });
    // the receiving group is busy too: not split meanwhile
    expect(await apply('begin', { group: 0, point: keySpaceEnd(2) / 8, new_group: 5 })).toMatchObject({ error: { code: 'conflict' } });
    expect(await readKeyRanges(db)).toEqual(table);
    expect(await apply('commit', merge)).toMatchObject({ status: 'committed' });
    const merged = (await readKeyRanges(db))!;
    expect(merged).toEqual(mergeTable(table, 0, 2));
    expect(merged.ranges).toEqual([{ start: 0, group: 0 }, { start: two.end, group: 1 }]);
    expect(await readRetiredGroups(db)).toEqual([2]);
    expect(await readKeySplitDrops(db)).toEqual([merge]);
    expect(await apply('commit', merge)).toEqual({ status: 'already_committed' });
    expect(await apply('begin', merge)).toEqual({ status: 'already_committed' });
    expect(await apply('abort', merge)).toMatchObject({ error: { code: 'conflict' } });
    expect(await apply('dropped', merge)).toEqual({ status: 'dropped' });
    // a retired id is never a new group again
    expect(await apply('begin', { group: 0, point: keySpaceEnd(2) / 8, new_group: 2 })).toMatchObject({ error: { code: 'conflict' } });
    expect(freeGroupId(merged, await readRetiredGroups(db))).toBe(3);
  });

  it('removes a retired group once its merge is dropped: listed as removed, its placement record gone, its id still never given again', async () => {
    const remove = (group: number) => sm.apply(++index, { type: 'cluster.remove_group', at, group });
    const record = (group: number) => ({ group_id: group, voters: [1, 2, 3], learners: [], leader: 1, move: null });
    expect(await sm.apply(++index, { type: 'cluster.placement', at, groups: [record(1), record(2)] })).toEqual({ groups: 2 });
    expect(await remove(0)).toMatchObject({ error: { code: 'invalid_command' } });
    expect(await remove(1.5)).toMatchObject({ error: { code: 'invalid_command' } });
    expect(await remove(1)).toMatchObject({ error: { code: 'conflict' } }); // not retired
    expect(await remove(2)).toEqual({ status: 'removed' });
    expect(await remove(2)).toEqual({ status: 'already_removed' });
    expect(await readRemovedGroups(db)).toEqual([2]);
    expect((await readPlacement(db)).map((g) => g.group_id)).toEqual([1]);
    expect(await readRetiredGroups(db)).toEqual([2]);
    // a placement round begun before the removal may name it still: not stored again
    expect(await sm.apply(++index, { type: 'cluster.placement', at, groups: [record(2), record(1)] })).toEqual({ groups: 2 });
    expect((await readPlacement(db)).map((g) => g.group_id)).toEqual([1]);
    // group 1 merged into 0: retired at the commit, but not removed while its merge is still dropping
    const table = (await readKeyRanges(db))!;
    const one = rangesOfGroup(table, 1)[0];
    const merge: KeySplit = { group: 1, point: one.start, new_group: 0, merge: { end: one.end } };
    expect(await apply('begin', merge)).toMatchObject({ status: 'begun' });
    expect(await apply('commit', merge)).toMatchObject({ status: 'committed' });
    expect(await remove(1)).toMatchObject({ error: { code: 'conflict' } });
    expect(await readPlacement(db)).toHaveLength(1);
    expect(await apply('dropped', merge)).toEqual({ status: 'dropped' });
    expect(await remove(1)).toEqual({ status: 'removed' });
    expect(await readRemovedGroups(db)).toEqual([1, 2]);
    expect(await readPlacement(db)).toEqual([]);
    expect(freeGroupId((await readKeyRanges(db))!, await readRetiredGroups(db))).toBe(3);
  });
});

describe('merging ranges and choosing a split point', () => {
  it('joins a group and its left or right neighbour, and refuses others', () => {
    const table = initialRanges(4);
    expect(invalidMerge(table, 1, 2)).toBeNull();
    expect(invalidMerge(table, 2, 1)).toBeNull();
    expect(invalidMerge(table, 0, 2)).toMatch(/not adjacent/);
    expect(invalidMerge(table, 1, 1)).toMatch(/itself/);
    expect(invalidMerge(table, 1, 7)).toMatch(/owns no range/);
    expect(mergeTable(table, 1, 2).ranges.map((r) => r.group)).toEqual([0, 1, 3]);
    expect(mergeTable(table, 2, 1).ranges).toEqual([{ start: 0, group: 0 }, { start: table.ranges[1].start, group: 2 }, table.ranges[3]]);
    for (const u of USERS) {
      const g = groupOfUser(table, u);
      expect(groupOfUser(mergeTable(table, 1, 2), u)).toBe(g === 2 ? 1 : g);
    }
  });

  it("takes the median of the users' keys, so clustered ids split in halves where the middle would not", () => {
    const table = initialRanges(1);
    const range = rangesOfGroup(table, 0)[0];
    const people = Array.from({ length: 60 }, (_, i) => `person-${i}`);
    const keys = people.map((u) => rangeKey(fnv1a32(u), 1));
    const point = medianPoint(keys, range)!;
    expect(people.filter((u) => rangeKey(fnv1a32(u), 1) >= point)).toHaveLength(30);
    // the middle of the range moves a lopsided share of these (the reason for the median)
    const middle = middleOf(table, 0)!;
    const atMiddle = people.filter((u) => rangeKey(fnv1a32(u), 1) >= middle).length;
    expect(Math.abs(atMiddle - 30)).toBeGreaterThan(10);
    expect(invalidSplit(table, { group: 0, point, new_group: 1 })).toBeNull();
    // odd counts, users at the range's start (they cannot move), too few users
    expect(medianPoint([5, 1, 9], { start: 0, end: 10 })).toBe(5);
    expect(medianPoint([0, 0, 0, 7], { start: 0, end: 10 })).toBe(7);
    expect(medianPoint([0, 0], { start: 0, end: 10 })).toBeNull();
    expect(medianPoint([4], { start: 0, end: 10 })).toBeNull();
    expect(medianPoint([4, 4, 4], { start: 0, end: 10 })).toBe(4); // one key: all move or none; the point is inside, so valid
  });
});
