/**
 * The whole records retrieval answers with, kept between queries (record-cache.ts): a record is read from
 * LevelDB once until a command writes its unit (a reinforcement included) or a snapshot install replaces
 * the shard's state, and the cache stays within its bytes. Counts the reads; asserts no timing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as pathJoin } from 'node:path';
import { join, LocalLog, StateDb, StateMachine, settle, type MemoryUnit } from '@strata/store';
import { WholeRecordCache } from '../../src/indexes/record-cache';

const T0 = '2026-01-01T00:00:00.000Z';
const STREAM = '00000000-0000-4000-8000-000000000001';
const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

const unit = (n: number, extra: Partial<MemoryUnit> = {}): MemoryUnit => ({
  id: id(n), user_id: 'ann', stream_id: STREAM, org_id: null, agent_id: null, level: 1, memory_type: 'factual',
  content: `memory ${n}`, keywords: ['kite'], speaker: null, valid_time: T0, transaction_time: T0, references: [], assets: [],
  importance: 0.5, subject: null, attribute: null, retired_at: null, retired_reason: null, superseded_by: null, ...extra,
});

describe('WholeRecordCache', () => {
  let dir: string;
  let db: StateDb;
  let log: LocalLog;
  let cache: WholeRecordCache;
  const keys = [1, 2, 3].map((n) => join('ann', id(n)));

  beforeEach(async () => {
    dir = mkdtempSync(pathJoin(tmpdir(), 'strata-record-cache-'));
    db = await StateDb.open(pathJoin(dir, 'state'));
    const sm = await StateMachine.open(db);
    cache = new WholeRecordCache();
    sm.onApplied((_i, _c, _r, effects) => cache.onApplied(db, effects));
    log = await LocalLog.open(pathJoin(dir, 'log'), sm);
    settle(await log.propose({
      type: 'memory.consolidate', user_id: 'ann', at: T0, consumed: [], embedder_id: 'none', method: 'offline',
      units: [unit(1), unit(2), unit(3)].map((u) => ({ unit: u, vector: [] })), reinforced: [], retired: [], edges: [], dropped: [],
    }));
  });
  afterEach(async () => {
    await log.close();
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const reads = () => jest.spyOn(db.units, 'getSync');

  it('reads a record once while no command writes it', async () => {
    const spy = reads();
    const first = await cache.read(db, keys);
    expect(first.map((u) => u?.content)).toEqual(['memory 1', 'memory 2', 'memory 3']);
    expect(spy).toHaveBeenCalledTimes(3);
    const again = await cache.read(db, [...keys, join('ann', id(9))]);
    expect(again.map((u) => u?.content)).toEqual(['memory 1', 'memory 2', 'memory 3', undefined]);
    expect(spy).toHaveBeenCalledTimes(4); // only the unit that does not exist (absent records are not kept)
    expect(cache.stats()).toMatchObject({ records: 3, hits: 3 });
  });

  it('reads again the records a command wrote (a reinforcement: importance only), as they are now', async () => {
    await cache.read(db, keys);
    settle(await log.propose({ type: 'memory.reinforce', at: T0, users: [{ user_id: 'ann', units: [{ unit_id: id(2), delta: 0.25, retrievals: 1, at: T0 }] }] }));
    const spy = reads();
    const after = await cache.read(db, keys);
    expect(spy).toHaveBeenCalledTimes(1);
    expect(spy).toHaveBeenCalledWith(keys[1]);
    expect(after[1]!.importance).toBeCloseTo(0.75, 10);
    expect(after[0]!.importance).toBe(0.5);
  });

  it('forgets a shard on clear (a snapshot install) or a range hand-over, and stays within its bytes', async () => {
    await cache.read(db, keys);
    cache.clear(db);
    const spy = reads();
    await cache.read(db, keys);
    expect(spy).toHaveBeenCalledTimes(3);
    // a split or merge moves records without effects: the shard's records are read anew
    cache.onApplied(db, { units: [] } as unknown as Parameters<WholeRecordCache['onApplied']>[1], { type: 'range.seed' });
    await cache.read(db, keys);
    expect(spy).toHaveBeenCalledTimes(6);
    const small = new WholeRecordCache(1500); // room for two of these records
    await small.read(db, keys);
    expect(small.stats().records).toBe(2);
    expect(small.stats().bytes).toBeLessThanOrEqual(1500);
    spy.mockClear();
    await small.read(db, [keys[2]]); // the most recent is kept, the least recently used was dropped
    expect(spy).toHaveBeenCalledTimes(0);
    await small.read(db, [keys[0]]);
    expect(spy).toHaveBeenCalledTimes(1);
  });

  it('does not keep a read that a command may have overtaken', async () => {
    // more keys than are read synchronously: getMany, during which a command is applied
    const many = Array.from({ length: 20 }, (_, i) => join('ann', id(100 + i)));
    settle(await log.propose({
      type: 'memory.consolidate', user_id: 'ann', at: T0, consumed: [], embedder_id: 'none', method: 'offline',
      units: many.map((_k, i) => ({ unit: unit(100 + i), vector: [] })), reinforced: [], retired: [], edges: [], dropped: [],
    }));
    const reading = cache.read(db, many);
    // applied while the read waits for LevelDB (the listener's call, as the state machine makes it)
    cache.onApplied(db, { units: [{ user_id: 'ann', unit_id: id(1), change: 'changed', record_only: true }] } as unknown as Parameters<WholeRecordCache['onApplied']>[1]);
    expect((await reading).every((u) => u !== undefined)).toBe(true);
    expect(cache.stats().records).toBe(0);
    await cache.read(db, many);
    expect(cache.stats().records).toBe(20);
  });
});
