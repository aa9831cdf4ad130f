/**
 * A node's side of a split's hand-over, over real state machines: the key-range directory follows the
 * split's steps in shard 0 (the new group named at the begin, routing switched at the commit only), a
 * group's fences decide what it serves (split/fences.ts: writes refused while the range moves,
 * everything once it has moved, nothing after an abort), and the bodies of the driver's requests
 * between nodes are validated (split/wire.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StateDb, StateMachine, StrataError, fnv1a32, keySpaceEnd, middleOf, rangeKey, type KeySplit, type RangeFenceSpec } from '@strata/store';
import { KeyRangeDirectory } from '../../src/cluster/placement/range-directory';
import { GroupFences } from '../../src/cluster/split/fences';
import { removableGroups } from '../../src/cluster/split/driver';
import { parseGroupId, parseRangeCommand, parseRangeMedian, parseRangeRead } from '../../src/cluster/split/wire';
import type { Shard } from '../../src/shards';

const at = '2026-01-01T00:00:00.000Z';
const USERS = Array.from({ length: 400 }, (_, i) => `handover-${i * 7919}`);
let dir: string;
const dbs: StateDb[] = [];
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'strata-handover-'));
});
afterAll(async () => {
  for (const db of dbs) await db.close();
  rmSync(dir, { recursive: true, force: true });
});
async function machine(name: string) {
  const db = await StateDb.open(join(dir, name));
  dbs.push(db);
  return { db, sm: await StateMachine.open(db) };
}
/** Waits until `cond` holds (the directory and the fences read their state again after an apply, asynchronously). */
async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 2000 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
}
/** The code a check throws, or 'serve'. */
function verdict(run: () => void): string {
  try {
    run();
    return 'serve';
  } catch (err) {
    return (err as StrataError).code;
  }
}

test('the directory names the new group at the begin, routes to it from the commit, and forgets the split once dropped', async () => {
  const meta = await machine('meta');
  const ranges = await KeyRangeDirectory.open(meta, 1);
  const opened: number[] = [];
  ranges.onNewGroup((id) => opened.push(id));
  let i = 0;
  await meta.sm.apply(++i, { type: 'cluster.ranges', at, table: ranges.initialTable() });
  const split: KeySplit = { group: 0, point: middleOf(ranges.table(), 0)!, new_group: 1 };
  const before = USERS.map((u) => ranges.groupOf(u));
  await meta.sm.apply(++i, { type: 'cluster.split', at, phase: 'begin', split });
  await until(() => ranges.splits().length === 1);
  expect(ranges.splits()).toEqual([split]);
  expect(ranges.groupIds()).toEqual([0, 1]);
  expect(opened).toContain(1);
  expect(USERS.map((u) => ranges.groupOf(u))).toEqual(before); // nothing routed to the new group yet
  await meta.sm.apply(++i, { type: 'cluster.split', at, phase: 'commit', split });
  await until(() => ranges.drops().length === 1);
  const after = USERS.map((u) => ranges.groupOf(u));
  expect(after).toEqual(USERS.map((u) => (rangeKey(fnv1a32(u), 1) >= split.point ? 1 : 0)));
  expect(new Set(after)).toEqual(new Set([0, 1]));
  expect([ranges.splits(), ranges.drops()]).toEqual([[], [split]]);
  await meta.sm.apply(++i, { type: 'cluster.split', at, phase: 'dropped', split });
  await until(() => ranges.drops().length === 0);
  expect(ranges.drops()).toEqual([]);
  // a node opened later reads the same
  const later = await KeyRangeDirectory.open(meta, 1);
  expect(USERS.map((u) => later.groupOf(u))).toEqual(after);

  // an aborted split of group 1: its new group stays named (opened, claimed) until it is cleared
  const aborted: KeySplit = { group: 1, point: middleOf(ranges.table(), 1)!, new_group: 2 };
  await meta.sm.apply(++i, { type: 'cluster.split', at, phase: 'begin', split: aborted });
  await meta.sm.apply(++i, { type: 'cluster.split', at, phase: 'abort', split: aborted });
  await until(() => ranges.aborts().length === 1);
  expect([ranges.splits(), ranges.aborts(), ranges.groupIds(), ranges.claimed()]).toEqual([[], [aborted], [0, 1, 2], [2]]);
  expect(USERS.map((u) => ranges.groupOf(u))).toEqual(after);
  await meta.sm.apply(++i, { type: 'cluster.split', at, phase: 'cleared', split: aborted });
  await until(() => ranges.aborts().length === 0);
  expect([ranges.groupIds(), ranges.claimed()]).toEqual([[0, 1], []]);

  // a merge of group 1 back into group 0: routed back at the commit, group 1 retired (still named: it runs on)
  const one = ranges.table().ranges.find((r) => r.group === 1)!;
  const merge: KeySplit = { group: 1, point: one.start, new_group: 0, merge: { end: keySpaceEnd(1) } };
  await meta.sm.apply(++i, { type: 'cluster.split', at, phase: 'begin', split: merge });
  await until(() => ranges.splits().length === 1);
  expect(USERS.map((u) => ranges.groupOf(u))).toEqual(after);
  await meta.sm.apply(++i, { type: 'cluster.split', at, phase: 'commit', split: merge });
  await until(() => ranges.retired().length === 1);
  expect(USERS.every((u) => ranges.groupOf(u) === 0)).toBe(true);
  expect([ranges.table().ranges, ranges.retired(), ranges.claimed(), ranges.groupIds()]).toEqual([[{ start: 0, group: 0 }], [1], [1], [0, 1]]);

  // removing it: not while its merge is dropping, nor before its leader reported an empty outbox; then
  // every node is told (onRemoved), it is no longer opened, and its id stays claimed
  expect(removableGroups(ranges, new Set([1]))).toEqual([]);
  await meta.sm.apply(++i, { type: 'cluster.split', at, phase: 'dropped', split: merge });
  await until(() => ranges.drops().length === 0);
  expect(removableGroups(ranges, new Set())).toEqual([]);
  expect(removableGroups(ranges, new Set([1]))).toEqual([1]);
  const removed: number[] = [];
  ranges.onRemoved((id) => removed.push(id));
  expect(await meta.sm.apply(++i, { type: 'cluster.remove_group', at, group: 1 })).toEqual({ status: 'removed' });
  await until(() => ranges.removed().length === 1);
  expect([ranges.removed(), removed, ranges.groupIds(), ranges.claimed()]).toEqual([[1], [1], [0], [1]]);
  expect(removableGroups(ranges, new Set([1]))).toEqual([]);
  const reopened = await KeyRangeDirectory.open(meta, 1);
  expect([reopened.removed(), reopened.groupIds()]).toEqual([[1], [0]]);
});

test("a group's fences: writes refused while the range moves, reads too once it moved, nothing after an abort", async () => {
  const g = await machine('group');
  const shard = { id: 0, db: g.db, sm: g.sm } as Shard;
  const fences = new GroupFences();
  await fences.follow(shard);
  const fence: RangeFenceSpec = { base: 1, start: keySpaceEnd(1) / 2, end: keySpaceEnd(1), new_group: 1 };
  const mover = USERS.find((u) => rangeKey(fnv1a32(u), 1) >= fence.start)!;
  const stayer = USERS.find((u) => rangeKey(fnv1a32(u), 1) < fence.start)!;
  const fenced = (state: string | null) => until(() => (fences.of(0)[0]?.state ?? null) === state);
  let i = 0;
  expect([verdict(() => fences.check(0, mover, 'write')), verdict(() => fences.check(0, mover, 'read'))]).toEqual(['serve', 'serve']);
  await g.sm.apply(++i, { type: 'range.fence', at, fence });
  await fenced('moving');
  expect([verdict(() => fences.check(0, mover, 'write')), verdict(() => fences.check(0, mover, 'read'))]).toEqual(['range_moving', 'serve']);
  expect([verdict(() => fences.check(0, stayer, 'write')), verdict(() => fences.check(1, mover, 'write'))]).toEqual(['serve', 'serve']);
  await g.sm.apply(++i, { type: 'range.unfence', at, fence });
  await fenced(null);
  expect(verdict(() => fences.check(0, mover, 'write'))).toBe('serve');
  await g.sm.apply(++i, { type: 'range.fence', at, fence });
  await g.sm.apply(++i, { type: 'range.drop', at, fence, limit: 10 });
  await fenced('moved');
  expect([verdict(() => fences.check(0, mover, 'write')), verdict(() => fences.check(0, mover, 'read')), verdict(() => fences.check(0, stayer, 'read'))])
    .toEqual(['range_moving', 'range_moving', 'serve']);
  expect(fences.of(0).map((f) => f.state)).toEqual(['moved']);
});

test('the driver\'s requests between nodes: only split steps are proposed, and a range read needs a whole fence and cursor', () => {
  const fence = { base: 1, start: 5, end: 9, new_group: 1 };
  expect(parseRangeCommand({ command: { type: 'range.drop', at, fence, limit: 3 } })).toMatchObject({ type: 'range.drop' });
  for (const bad of [{}, null, { command: { type: 'events.ingest', user_id: 'u' } }, { command: { type: 'cluster.split' } }, { command: 'range.fence' }]) {
    expect(() => parseRangeCommand(bad)).toThrow(expect.objectContaining({ code: 'validation_failed', status: 400 }));
  }
  expect(parseRangeRead({ fence, cursor: { sub: 0, after: null } })).toEqual({ fence, cursor: { sub: 0, after: null } });
  for (const bad of [{}, { fence }, { fence: { ...fence, end: '9' }, cursor: { sub: 0, after: null } }, { fence, cursor: { sub: -1, after: null } }, { fence, cursor: { sub: 0, after: 3 } }]) {
    expect(() => parseRangeRead(bad)).toThrow(expect.objectContaining({ code: 'validation_failed' }));
  }
  for (const type of ['range.receive', 'range.clear']) expect(parseRangeCommand({ command: { type, at, fence } })).toMatchObject({ type });
  expect(parseRangeMedian({ base: 1, start: 0, end: 10 })).toEqual({ base: 1, range: { start: 0, end: 10 } });
  for (const bad of [{}, { base: 0, start: 0, end: 10 }, { base: 1, start: 10, end: 10 }, { base: 1, start: '0', end: 10 }]) {
    expect(() => parseRangeMedian(bad)).toThrow(expect.objectContaining({ code: 'validation_failed', status: 400 }));
  }
  expect(parseGroupId('12')).toBe(12);
  for (const bad of ['x', '0x2', '2e0', '-1', '1234567']) expect(() => parseGroupId(bad)).toThrow(expect.objectContaining({ code: 'invalid_id', status: 400 }));
});

test('a receiving group refuses the incoming range\'s users, reads and writes, until its fence is lifted', async () => {
  const g = await machine('receiving');
  const fences = new GroupFences();
  await fences.follow({ id: 3, db: g.db, sm: g.sm } as unknown as Shard);
  const mover = USERS[0];
  const fence: RangeFenceSpec = { base: 1, start: rangeKey(fnv1a32(mover), 1), end: keySpaceEnd(1), new_group: 3 };
  let i = 0;
  await g.sm.apply(++i, { type: 'range.receive', at, fence, span: 10 });
  await until(() => fences.of(3).length === 1);
  expect([verdict(() => fences.check(3, mover, 'write')), verdict(() => fences.check(3, mover, 'read'))]).toEqual(['range_moving', 'range_moving']);
  await g.sm.apply(++i, { type: 'range.unfence', at, fence });
  await until(() => fences.of(3).length === 0);
  expect([verdict(() => fences.check(3, mover, 'write')), verdict(() => fences.check(3, mover, 'read'))]).toEqual(['serve', 'serve']);
});
