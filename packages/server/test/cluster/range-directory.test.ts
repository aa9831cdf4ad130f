/**
 * The key-range directory on a node (cluster/placement/range-directory.ts), over a real shard 0 state
 * machine: a data directory made before ranges existed (nothing recorded) routes by its initial table,
 * which is its `fnv1a32 mod shards` layout; recording the table through the log changes no user's group.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StateDb, StateMachine, initialRanges } from '@strata/store';
import { KeyRangeDirectory } from '../../src/cluster/placement/range-directory';
import { ShardRouter, shardOf, type Shard } from '../../src/shards';

test('an existing modulus layout routes every user to the same group before and after its ranges are recorded', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'strata-range-dir-'));
  const db = await StateDb.open(join(dir, 'state'));
  try {
    const sm = await StateMachine.open(db);
    const SHARDS = 12;
    const ranges = await KeyRangeDirectory.open({ db, sm }, SHARDS);
    const shards = Array.from({ length: SHARDS }, (_, id) => ({ id }) as Shard);
    const router = new ShardRouter(shards, ranges);
    const users = Array.from({ length: 5000 }, (_, i) => `existing-user-${i}`);
    const before = users.map((u) => router.forUser(u).id);
    expect(ranges.recorded()).toBe(false);
    expect(before).toEqual(users.map((u) => shardOf(u, SHARDS)));

    expect(await sm.apply(1, { type: 'cluster.ranges', at: '2026-01-01T00:00:00.000Z', table: ranges.initialTable() })).toEqual({ status: 'recorded' });
    expect(ranges.recorded()).toBe(true);
    expect(ranges.table()).toEqual(initialRanges(SHARDS));
    expect(users.map((u) => router.forUser(u).id)).toEqual(before);

    // a node that starts later reads the recorded table
    const reopened = await KeyRangeDirectory.open({ db, sm }, SHARDS);
    expect([reopened.recorded(), users.map((u) => reopened.groupOf(u))]).toEqual([true, before]);
  } finally {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
