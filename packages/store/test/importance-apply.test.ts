import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  StateDb, StateMachine, edgesOfUnit, getEvent, getUnit, unitStatsOf, userUnitStats,
  type Command, type ConsolidateCommand, type Edge, type InsightsCommand, type MemoryUnit, type PruneAnswer, type PruneCommand,
  type ReinforceAnswer, type ReinforceCommand,
} from '../src';

const T0 = '2026-01-01T00:00:00.000Z';
const T1 = '2026-01-01T01:00:00.000Z';
const T2 = '2026-01-01T02:00:00.000Z';
const LATER = '2026-06-01T00:00:00.000Z';

function unit(user: string, id: string, extra: Partial<MemoryUnit> = {}): MemoryUnit {
  return {
    id, user_id: user, stream_id: 's1', org_id: null, agent_id: null, level: 1, memory_type: 'factual', content: `unit ${id}`, keywords: [],
    speaker: null, valid_time: T0, transaction_time: T0, references: [], assets: [], importance: 0.5, subject: null, attribute: null,
    retired_at: null, retired_reason: null, superseded_by: null, ...extra,
  };
}

const edge = (user: string, id: string, source: string, target: string, relation: Edge['relation']): Edge =>
  ({ edge_id: id, user_id: user, source_id: source, target_id: target, relation, weight: 1, created_at: T0 });

function consolidate(user: string, units: MemoryUnit[], edges: Edge[] = []): ConsolidateCommand {
  return {
    type: 'memory.consolidate', user_id: user, at: T0, consumed: [], embedder_id: 'e', method: 'offline',
    units: units.map((u) => ({ unit: u, vector: [0.5, 0.5] })), reinforced: [], retired: [], edges, dropped: [],
  };
}

function insights(user: string, units: MemoryUnit[], edges: Edge[]): InsightsCommand {
  return {
    type: 'memory.insights', user_id: user, at: T0, embedder_id: 'e', create: units.map((u) => ({ unit: u, vector: null })), update: [],
    edges, removed_edges: [], reflected: [],
  };
}

const reinforce = (users: ReinforceCommand['users'], at = T1): ReinforceCommand => ({ type: 'memory.reinforce', at, users });

async function dump(db: StateDb): Promise<[string, unknown][]> {
  const out: [string, unknown][] = [];
  for await (const [k, v] of db.level.iterator()) out.push([k, v]);
  return out;
}

describe('memory.reinforce and memory.prune apply', () => {
  let dir: string;
  const open: StateDb[] = [];

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'strata-importance-'));
  });
  afterEach(async () => {
    for (const db of open.splice(0)) await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function node(name: string) {
    const db = await StateDb.open(join(dir, name));
    open.push(db);
    const sm = await StateMachine.open(db);
    let index = 0;
    const apply = (command: Command) => sm.apply(++index, command);
    return { db, sm, apply };
  }

  it('adds the delta to stored importance, caps at 1, and keeps retrieval stats', async () => {
    const { db, apply } = await node('a');
    await apply(consolidate('ann', [unit('ann', 'u1', { importance: 0.4 }), unit('ann', 'u2', { importance: 0.98 })]));
    const answer = await apply(reinforce([{ user_id: 'ann', units: [
      { unit_id: 'u1', delta: 0.059, retrievals: 2, at: T1 },
      { unit_id: 'u2', delta: 0.2, retrievals: 1, at: T1 },
    ] }])) as ReinforceAnswer;
    expect(answer).toEqual({ reinforced: [{ user_id: 'ann', unit_ids: ['u1', 'u2'] }], skipped: 0 });
    expect((await getUnit(db, 'ann', 'u1'))!.importance).toBe(0.459);
    expect((await getUnit(db, 'ann', 'u2'))!.importance).toBe(1);
    expect(await unitStatsOf(db, 'ann', 'u1')).toEqual({ retrievals: 2, last_retrieved_at: T1 });

    // counts add up; the last retrieval never moves back (a late batch from another node)
    await apply(reinforce([{ user_id: 'ann', units: [{ unit_id: 'u1', delta: 0.03, retrievals: 1, at: T0 }] }], T2));
    expect(await unitStatsOf(db, 'ann', 'u1')).toEqual({ retrievals: 3, last_retrieved_at: T1 });
    expect((await getUnit(db, 'ann', 'u1'))!.importance).toBe(0.489);
    await apply(reinforce([{ user_id: 'ann', units: [{ unit_id: 'u1', delta: 0.01, retrievals: 1, at: T2 }] }], T2));
    expect(await unitStatsOf(db, 'ann', 'u1')).toEqual({ retrievals: 4, last_retrieved_at: T2 });
    expect([...(await userUnitStats(db, 'ann')).keys()]).toEqual(['u1', 'u2']);
  });

  it('skips missing and retired units and ignores negative or broken deltas', async () => {
    const { db, apply } = await node('a');
    await apply(consolidate('ann', [unit('ann', 'u1'), unit('ann', 'old', { retired_at: T0, retired_reason: 'superseded', superseded_by: 'u1' })]));
    await apply(consolidate('bob', [unit('bob', 'b1', { importance: 0.3 })]));
    const answer = await apply(reinforce([
      { user_id: 'ann', units: [
        { unit_id: 'gone', delta: 0.1, retrievals: 1, at: T1 },
        { unit_id: 'old', delta: 0.1, retrievals: 1, at: T1 },
        { unit_id: 'u1', delta: -0.4, retrievals: 1, at: T1 },
      ] },
      { user_id: 'bob', units: [{ unit_id: 'b1', delta: Number.NaN, retrievals: 1, at: T1 }] },
      { user_id: 'nobody', units: [{ unit_id: 'x', delta: 0.1, retrievals: 1, at: T1 }] },
    ])) as ReinforceAnswer;
    expect(answer).toEqual({ reinforced: [{ user_id: 'ann', unit_ids: ['u1'] }, { user_id: 'bob', unit_ids: ['b1'] }], skipped: 3 });
    expect((await getUnit(db, 'ann', 'u1'))!.importance).toBe(0.5);
    expect((await getUnit(db, 'bob', 'b1'))!.importance).toBe(0.3);
    expect((await getUnit(db, 'ann', 'old'))!.importance).toBe(0.5);
    expect(await unitStatsOf(db, 'ann', 'old')).toBeUndefined();
    expect(await unitStatsOf(db, 'nobody', 'x')).toBeUndefined();
    expect(await unitStatsOf(db, 'bob', 'b1')).toEqual({ retrievals: 1, last_retrieved_at: T1 });
  });

  it('is deterministic: two replicas applying the same log hold the same bytes', async () => {
    const log: Command[] = [
      consolidate('ann', [unit('ann', 'u1', { importance: 0.123 }), unit('ann', 'u2')]),
      reinforce([{ user_id: 'ann', units: [{ unit_id: 'u1', delta: 0.0437, retrievals: 3, at: T1 }, { unit_id: 'u2', delta: 0.9, retrievals: 1, at: T1 }] }]),
      reinforce([{ user_id: 'ann', units: [{ unit_id: 'u1', delta: 0.333, retrievals: 1, at: T2 }] }], T2),
      { type: 'memory.prune', user_id: 'ann', at: LATER, below: 0.05, units: [{ unit_id: 'u2', importance: 1, last_retrieved_at: T1, effective_importance: 0.01 }] },
    ];
    const a = await node('a');
    const b = await node('b');
    for (const c of log) await a.apply(c);
    for (const c of log) await b.apply(c);
    expect(await dump(a.db)).toEqual(await dump(b.db));
    expect((await getUnit(a.db, 'ann', 'u1'))!.importance).toBe(0.5);
    expect(await getUnit(a.db, 'ann', 'u2')).toBeUndefined();
  });

  describe('memory.prune', () => {
    const candidate = (id: string, importance = 0.5, last: string | null = null) =>
      ({ unit_id: id, importance, last_retrieved_at: last, effective_importance: 0.01 });
    const prune = (user: string, units: PruneCommand['units']): PruneCommand => ({ type: 'memory.prune', user_id: user, at: LATER, below: 0.05, units });

    it('deletes forgettable units everywhere (record, vector, stats, edges) and keeps their events', async () => {
      const { db, apply } = await node('a');
      await apply({
        type: 'events.ingest', user_id: 'ann', stream_id: 's1', at: T0, idempotency: null, assets: [],
        events: [{
          event_id: 'ev1', user_id: 'ann', stream_id: 's1', content: 'said once', content_type: 'text', org_id: null, agent_id: null, role: null,
          level: null, parent_id: null, task_status: null, task_progress: null, valid_time: T0, transaction_time: T0, metadata: null, assets: [],
        }],
      });
      await apply(consolidate('ann', [unit('ann', 'u1', { references: ['ev1'] }), unit('ann', 'u2')], [edge('ann', 'e1', 'u1', 'u2', 'RelatedTo')]));
      await apply(reinforce([{ user_id: 'ann', units: [{ unit_id: 'u1', delta: 0, retrievals: 1, at: T1 }] }]));
      const answer = await apply(prune('ann', [candidate('u1', 0.5, T1)])) as PruneAnswer;
      expect(answer).toEqual({ deleted_unit_ids: ['u1'], deleted_event_ids: [], deleted_edge_ids: ['e1'], kept: [] });
      expect(await getUnit(db, 'ann', 'u1')).toBeUndefined();
      expect(await db.vectors.get('ann\x00u1')).toBeUndefined();
      expect(await unitStatsOf(db, 'ann', 'u1')).toBeUndefined();
      expect(await edgesOfUnit(db, 'ann', 'u2')).toEqual([]);
      expect(await db.counter('units')).toBe(1);
      expect(await db.counter('edges')).toBe(0);
      expect((await getEvent(db, 'ann', 'ev1'))?.content).toBe('said once');
    });

    it('never removes a unit an insight derives from, org knowledge, L2, retired units, or units changed since judged', async () => {
      const { db, apply } = await node('a');
      await apply(consolidate('ann', [
        unit('ann', 'member'), unit('ann', 'org', { org_id: 'acme' }), unit('ann', 'old', { retired_at: T0, retired_reason: 'forgotten' }),
        unit('ann', 'bumped'), unit('ann', 'used'), unit('ann', 'free'),
      ]));
      await apply(insights('ann', [unit('ann', 'insight', { level: 2 })], [edge('ann', 'd1', 'insight', 'member', 'DerivedFrom')]));
      await apply(reinforce([{ user_id: 'ann', units: [{ unit_id: 'bumped', delta: 0.1, retrievals: 1, at: T1 }, { unit_id: 'used', delta: 0, retrievals: 1, at: T1 }] }]));
      const answer = await apply(prune('ann', [
        candidate('member'), candidate('org'), candidate('old'), candidate('insight'),
        candidate('bumped', 0.5, T1), // judged before the bump: importance is now 0.6
        candidate('used', 0.5, null), // judged before it was retrieved
        candidate('missing'), candidate('free'), candidate('free'),
      ])) as PruneAnswer;
      expect(answer.deleted_unit_ids).toEqual(['free']);
      expect(answer.kept).toEqual([
        { unit_id: 'member', reason: 'an insight derives from it' },
        { unit_id: 'org', reason: 'organization knowledge' },
        { unit_id: 'old', reason: 'retired (kept as history)' },
        { unit_id: 'insight', reason: 'not an L1 unit' },
        { unit_id: 'bumped', reason: 'importance changed since judged' },
        { unit_id: 'used', reason: 'retrieved since judged' },
        { unit_id: 'missing', reason: 'gone' },
      ]);
      for (const id of ['member', 'org', 'old', 'insight', 'bumped', 'used']) expect(await getUnit(db, 'ann', id)).toBeDefined();
      expect((await edgesOfUnit(db, 'ann', 'member')).map((e) => e.edge_id)).toEqual(['d1']);
    });
  });
});
