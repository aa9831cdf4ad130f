/**
 * `cluster.placement` on a real LevelDB state machine: each record replaces its group's, the directory
 * reads back in group order, and a record without voters is refused as a whole (nothing stored).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StateDb, StateMachine, readPlacement, type GroupPlacementRecord, type PlacementCommand } from '../src';

const at = '2026-01-01T00:00:00.000Z';
const rec = (group_id: number, voters: number[], move: GroupPlacementRecord['move'] = null): GroupPlacementRecord =>
  ({ group_id, voters, learners: [], leader: voters[0] ?? null, move });

describe('cluster.placement apply', () => {
  let dir: string;
  let db: StateDb;
  let sm: StateMachine;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'strata-placement-'));
    db = await StateDb.open(join(dir, 'state'));
    sm = await StateMachine.open(db);
  });
  afterAll(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('stores each group record, replaces it on the next command, and lists the directory in group order', async () => {
    const first: PlacementCommand = { type: 'cluster.placement', at, groups: [rec(11, [4, 5, 6]), rec(2, [1, 2, 3])] };
    expect(await sm.apply(1, first)).toEqual({ groups: 2 });
    const move = { to: 7, from: 1, reason: 'balance' as const };
    expect(await sm.apply(2, { type: 'cluster.placement', at, groups: [{ ...rec(2, [1, 2, 3], move), learners: [7] }] })).toEqual({ groups: 1 });
    expect(await readPlacement(db)).toEqual([{ ...rec(2, [1, 2, 3], move), learners: [7] }, rec(11, [4, 5, 6])]);
  });

  it('refuses a command with a record without voters, storing none of its records', async () => {
    const answer = await sm.apply(3, { type: 'cluster.placement', at, groups: [rec(3, [1, 2, 3]), rec(4, [])] });
    expect(answer).toMatchObject({ error: { code: 'invalid_command' } });
    expect((await readPlacement(db)).map((g) => g.group_id)).toEqual([2, 11]);
    expect(sm.appliedIndex()).toBe(3);
  });
});
