/**
 * The answer's whole records (retrieval-service.ts `wholeRecords`): the indexes rank slim records, the
 * answer shows the records as LevelDB holds them, leaves out a unit gone since it was ranked, and never
 * shows another user's unit that is no longer in the org it was ranked under.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { retrieval } from '@strata/memory';
import { LocalLog, StateDb, StateMachine, settle, type MemoryUnit } from '@strata/store';
import { wholeRecords } from '../../src/indexes/retrieval-service';

const T0 = '2026-01-01T00:00:00.000Z';
const STREAM = '00000000-0000-4000-8000-000000000001';
const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

const unit = (n: number, userId: string, orgId: string | null, extra: Partial<MemoryUnit> = {}): MemoryUnit => ({
  id: id(n), user_id: userId, stream_id: STREAM, org_id: orgId, agent_id: null, level: 1, memory_type: 'factual',
  content: `memory ${n}`, keywords: [], speaker: null, valid_time: T0, transaction_time: T0, references: [], assets: [],
  importance: 0.5, subject: null, attribute: null, retired_at: null, retired_reason: null, superseded_by: null, ...extra,
});

describe('wholeRecords', () => {
  let dir: string;
  let db: StateDb;
  let log: LocalLog;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'strata-whole-records-'));
    db = await StateDb.open(join(dir, 'state'));
    const sm = await StateMachine.open(db);
    log = await LocalLog.open(join(dir, 'log'), sm);
    const seed = async (userId: string, units: MemoryUnit[]) => settle(await log.propose({
      type: 'memory.consolidate', user_id: userId, at: T0, consumed: [], embedder_id: 'none', method: 'offline',
      units: units.map((u) => ({ unit: u, vector: [] })), reinforced: [], retired: [], edges: [], dropped: [],
    }));
    await seed('ann', [unit(1, 'ann', null, { keywords: ['kite', 'beach'], references: [id(101), id(102)] })]);
    // bob's units as stored now: 2 still in acme, 3 no longer in any org
    await seed('bob', [unit(2, 'bob', 'acme'), unit(3, 'bob', null)]);
  });
  afterAll(async () => {
    await log.close();
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** What the indexes held when they ranked: slim records of these units. */
  const ranked = (units: MemoryUnit[]) => {
    const set = new retrieval.UnitSet({ embedder: { dimensions: 2 } });
    for (const u of units) set.put(u, null);
    return units.map((u, i) => ({ unit: set.units.get(u.id)!, score: 1 - i / 10, signals: { ranks: {}, fused: 1, recency: 1, importance: 0.5, boosts: [] } }));
  };

  it('answers whole records, leaves out the deleted and the units that left the org', async () => {
    const asRanked = ranked([
      unit(1, 'ann', null, { keywords: ['kite', 'beach'], references: [id(101), id(102)] }),
      unit(2, 'bob', 'acme'),
      unit(3, 'bob', 'acme'), // in acme when ranked, moved out since
      unit(4, 'ann', null), // deleted since ranked
    ]);
    expect(asRanked.every((r) => retrieval.isSlimRecord(r.unit) && r.unit.keywords === undefined)).toBe(true);
    const answer = await wholeRecords('ann', asRanked, () => db);
    expect(answer.map((r) => r.unit.id)).toEqual([id(1), id(2)]);
    expect(answer[0].unit).toEqual(unit(1, 'ann', null, { keywords: ['kite', 'beach'], references: [id(101), id(102)] }));
    expect(answer.map((r) => r.score)).toEqual([1, 0.9]);
  });

  it("answers the caller's own unit as it is now, whatever its org", async () => {
    const answer = await wholeRecords('bob', ranked([unit(3, 'bob', 'acme')]), () => db);
    expect(answer.map((r) => [r.unit.id, (r.unit as MemoryUnit).org_id])).toEqual([[id(3), null]]);
  });
});
