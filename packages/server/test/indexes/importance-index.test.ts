import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { HashingEmbedder } from '@strata/memory';
import { LocalLog, StateDb, StateMachine, settle, type ApplyEffects, type Command, type MemoryUnit } from '@strata/store';
import { memoryChangesOf } from '../../src/indexes/changes';
import type { retrieval } from '@strata/memory';
import { DerivedIndexes } from '../../src/indexes/derived';

type IndexedUnit = retrieval.IndexedUnit;

const T0 = '2026-01-01T00:00:00.000Z';
const T1 = '2026-01-05T00:00:00.000Z';
const U1 = '00000000-0000-4000-8000-000000000001';
const U2 = '00000000-0000-4000-8000-000000000002';

function unit(user: string, id: string, extra: Partial<MemoryUnit> = {}): MemoryUnit {
  return {
    id, user_id: user, stream_id: 's1', org_id: null, agent_id: null, level: 1, memory_type: 'factual', content: `the blue kite ${id}`, keywords: [],
    speaker: null, valid_time: T0, transaction_time: T0, references: [], assets: [], importance: 0.4, subject: null, attribute: null,
    retired_at: null, retired_reason: null, superseded_by: null, ...extra,
  };
}

describe('memoryChangesOf: changes made from the effects of real applies', () => {
  let dir: string;
  let db: StateDb;
  let log: LocalLog;
  const seen: ApplyEffects[] = [];

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'strata-effects-index-'));
    db = await StateDb.open(join(dir, 'state'));
    const sm = await StateMachine.open(db);
    log = await LocalLog.open(join(dir, 'log'), sm);
    sm.onApplied((_i, _c, _r, effects) => seen.push(effects));
    settle(await log.propose({
      type: 'memory.consolidate', user_id: 'ann', at: T0, consumed: [], embedder_id: 'e', method: 'offline',
      units: [{ unit: unit('ann', U1), vector: [] }, { unit: unit('ann', U2), vector: [] }], reinforced: [], retired: [], edges: [], dropped: [],
    }));
    seen.length = 0;
  });
  afterEach(async () => {
    await log.close();
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('names, per user, the units a reinforcement wrote, as record-only changes (a unit that does not exist is not named)', async () => {
    settle(await log.propose({
      type: 'memory.reinforce', at: T1, users: [
        { user_id: 'ann', units: [{ unit_id: U1, delta: 0.1, retrievals: 1, at: T1 }] },
        { user_id: 'bob', units: [{ unit_id: U2, delta: 0.1, retrievals: 1, at: T1 }] },
      ],
    }));
    expect(memoryChangesOf(seen[0])).toEqual([{ user_id: 'ann', unit_ids: [U1], edge_ids: [], records_only: true }]);
  });

  it('reads memory.prune like a delete: the units and the edges removed with them', async () => {
    const E = '00000000-0000-4000-8000-0000000000e1';
    settle(await log.propose({ type: 'graph.add_edge', user_id: 'ann', edge: { edge_id: E, user_id: 'ann', source_id: U1, target_id: U2, relation: 'RelatedTo', weight: 1, created_at: T0 } }));
    expect(memoryChangesOf(seen[0])).toEqual([{ user_id: 'ann', unit_ids: [], edge_ids: [E] }]);
    settle(await log.propose({ type: 'memory.prune', user_id: 'ann', at: T1, below: 0.05, units: [{ unit_id: U1, importance: 0.4, last_retrieved_at: null, effective_importance: 0.01 }] }));
    const [change] = memoryChangesOf(seen[1]);
    expect(change.user_id).toBe('ann');
    expect(change.unit_ids).toEqual([U1]);
    expect(change.edge_ids).toEqual([E]);
  });
});

describe('DerivedIndexes and retrieval stats', () => {
  let dir: string;
  let db: StateDb;
  let log: LocalLog;
  let indexes: DerivedIndexes;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'strata-importance-index-'));
    db = await StateDb.open(join(dir, 'state'));
    const sm = await StateMachine.open(db);
    log = await LocalLog.open(join(dir, 'log'), sm);
    indexes = new DerivedIndexes({ db, embedder: new HashingEmbedder(), logger: pino({ level: 'silent' }) });
    indexes.attach(sm);
    settle(await log.propose({
      type: 'memory.consolidate', user_id: 'ann', at: T0, consumed: [], embedder_id: 'e', method: 'offline',
      units: [{ unit: unit('ann', U1), vector: [] }, { unit: unit('ann', U2, { org_id: 'acme' }), vector: [] }],
      reinforced: [], retired: [], edges: [], dropped: [],
    }));
  });
  afterEach(async () => {
    await indexes.idle();
    await log.close();
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const reinforce = (ids: string[]): Command => ({
    type: 'memory.reinforce', at: T1, users: [{ user_id: 'ann', units: ids.map((id) => ({ unit_id: id, delta: 0.2, retrievals: 1, at: T1 })) }],
  });

  it('keeps importance and last_retrieved_at of indexed units current, in user and org sets, text search unchanged', async () => {
    const user = await indexes.localIndex('ann');
    const org = (await indexes.forOrg('acme'))!;
    expect((user.units.get(U1) as IndexedUnit).last_retrieved_at).toBeUndefined();
    const before = user.text.search('kite', 10).map((h) => h.id).sort();
    settle(await log.propose(reinforce([U1, U2])));
    const after = await indexes.localIndex('ann');
    await indexes.forOrg('acme');
    expect(after.units.get(U1)).toMatchObject({ importance: 0.6, last_retrieved_at: T1 });
    expect(org.units.get(U2)).toMatchObject({ importance: 0.6, last_retrieved_at: T1 });
    expect(after.text.search('kite', 10).map((h) => h.id).sort()).toEqual(before);
  });

  it('attaches stored stats when a user is built from LevelDB', async () => {
    settle(await log.propose(reinforce([U1])));
    const fresh = new DerivedIndexes({ db, embedder: new HashingEmbedder(), logger: pino({ level: 'silent' }) });
    const user = await fresh.localIndex('ann');
    expect(user.units.get(U1)).toMatchObject({ importance: 0.6, last_retrieved_at: T1 });
    expect((user.units.get(U2) as IndexedUnit).last_retrieved_at).toBeUndefined();
    expect((await fresh.forOrg('acme'))!.units.get(U2)).toMatchObject({ importance: 0.4 });
    await fresh.idle();
  });
});
