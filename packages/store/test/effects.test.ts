/** Typed effects: what each applied command created, changed, retired or deleted, read from its writes. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StateDb, StateMachine, pendingOfUser, type ApplyEffects, type Command, type Edge, type L3Task, type MemoryUnit } from '../src';
import { onlyImportanceMoved } from '../src/effects';

const T0 = '2026-01-01T00:00:00.000Z';
const T1 = '2026-01-01T01:00:00.000Z';

const unit = (id: string, extra: Partial<MemoryUnit> = {}): MemoryUnit => ({
  id, user_id: 'u', stream_id: 's1', org_id: null, agent_id: null, level: 1, memory_type: 'factual', content: `unit ${id}`, keywords: [id],
  speaker: 'user', valid_time: T0, transaction_time: T1, references: [], assets: [], importance: 0.5, subject: null, attribute: null,
  retired_at: null, retired_reason: null, superseded_by: null, ...extra,
});
const edge = (id: string, source: string, target: string): Edge =>
  ({ edge_id: id, user_id: 'u', source_id: source, target_id: target, relation: 'RelatedTo', weight: 0.5, created_at: T1 });
const task = (id: string, extra: Partial<L3Task> = {}): L3Task => ({
  task_id: id, user_id: 'u', org_id: null, agent_id: null, stream_id: 's1', parent_id: null, title: `task ${id}`, description: '',
  status: 'pending', status_reason: null, progress: 0, dependencies: [], context_refs: [], created_at: T1, updated_at: T1, result_summary: null, ...extra,
});

describe('apply effects', () => {
  let dir: string;
  let db: StateDb;
  let sm: StateMachine;
  const seen: ApplyEffects[] = [];
  const run = async (c: Command): Promise<ApplyEffects> => {
    await sm.apply(sm.appliedIndex() + 1, c);
    return seen[seen.length - 1];
  };

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'strata-effects-'));
    db = await StateDb.open(join(dir, 'state'));
    sm = await StateMachine.open(db);
    sm.onApplied((_i, _c, _r, effects) => seen.push(effects));
  });
  afterEach(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function consolidate(units: MemoryUnit[], edges: Edge[] = [], more: Partial<Command> = {}): Promise<ApplyEffects> {
    const ids = units.map((u) => `ev-${u.id}`);
    await run({ type: 'events.ingest', user_id: 'u', stream_id: 's1', at: T0, idempotency: null, assets: [], events: ids.map((id) => ({
      event_id: id, user_id: 'u', stream_id: 's1', content: id, content_type: 'text', org_id: null, agent_id: null, role: null, level: null, parent_id: null,
      task_status: null, task_progress: null, valid_time: T0, transaction_time: T0, metadata: null, assets: [],
    })) });
    const consumed = (await pendingOfUser(db, 'u', 100)).filter((p) => ids.includes(p.event_id)).map((p) => ({ seq: p.seq, event_id: p.event_id }));
    return run({
      type: 'memory.consolidate', user_id: 'u', at: T1, consumed, embedder_id: 'e', method: 'offline',
      units: units.map((u) => ({ unit: u, vector: [1, 0] })), reinforced: [], retired: [], edges, dropped: [], ...more,
    } as Command);
  }

  it('ingest has none; a consolidation creates its units and edges; a correction retires the old unit', async () => {
    expect(await run({ type: 'events.ingest', user_id: 'u', stream_id: 's1', at: T0, idempotency: null, assets: [], events: [] })).toEqual({ units: [], edges: [], l3: [], users: [], events: [], failures: [], pending: [] });
    const created = await consolidate([unit('a'), unit('b')], [edge('e1', 'a', 'b')]);
    expect(created.units).toEqual([
      { user_id: 'u', unit_id: 'a', change: 'created', record_only: false },
      { user_id: 'u', unit_id: 'b', change: 'created', record_only: false },
    ]);
    expect(created.edges).toEqual([{ user_id: 'u', edge_id: 'e1', change: 'created' }]);
    // the consumed events left the user's pending index (retrieval's pending cache reads them again)
    expect(created.pending.map((p) => [p.user_id, p.change])).toEqual([['u', 'removed'], ['u', 'removed']]);
    const corrected = await consolidate([unit('c')], [], { retired: [{ unit_id: 'a', retired_at: T1, reason: 'superseded', superseded_by: 'c' }] } as Partial<Command>);
    expect(corrected.units).toEqual(expect.arrayContaining([
      { user_id: 'u', unit_id: 'c', change: 'created', record_only: false },
      { user_id: 'u', unit_id: 'a', change: 'retired', record_only: false },
    ]));
  });

  it('an ingest adds each event to the pending entries of its user', async () => {
    const e = await run({ type: 'events.ingest', user_id: 'p', stream_id: 's1', at: T0, idempotency: null, assets: [], events: ['x', 'y'].map((id) => ({
      event_id: id, user_id: 'p', stream_id: 's1', content: id, content_type: 'text', org_id: null, agent_id: null, role: null, level: null, parent_id: null,
      task_status: null, task_progress: null, valid_time: T0, transaction_time: T0, metadata: null, assets: [],
    })) } as Command);
    expect(e.pending).toHaveLength(2);
    expect(e.pending.every((p) => p.user_id === 'p' && p.change === 'added')).toBe(true);
  });

  it('a reinforcement changes records only; a reference added by consolidation is a full change', async () => {
    await consolidate([unit('a')]);
    const r = await run({ type: 'memory.reinforce', at: T1, users: [{ user_id: 'u', units: [{ unit_id: 'a', delta: 0.1, retrievals: 1, at: T1 }] }] });
    expect(r.units).toEqual([{ user_id: 'u', unit_id: 'a', change: 'changed', record_only: true }]);
    const refs = await consolidate([unit('b')], [], { reinforced: [{ unit_id: 'a', add_references: ['ev-b'], importance: 0.7 }] } as Partial<Command>);
    expect(refs.units).toContainEqual({ user_id: 'u', unit_id: 'a', change: 'changed', record_only: false });
  });

  it('a delete names the unit and the edges that went with it', async () => {
    await consolidate([unit('a'), unit('b')], [edge('e1', 'a', 'b')]);
    const d = await run({ type: 'memory.delete', user_id: 'u', at: T1, unit_ids: ['a'], event_ids: [], require_units: true });
    expect(d.units).toEqual([{ user_id: 'u', unit_id: 'a', change: 'deleted', record_only: false }]);
    expect(d.edges).toEqual([{ user_id: 'u', edge_id: 'e1', change: 'deleted' }]);
  });

  it('goals and tasks, and a user moving to an org', async () => {
    const plan = await run({ type: 'l3.plan', user_id: 'u', at: T1, planner: 'offline', updates: [], events: [{ event_id: 'e1', goals: [], tasks: [task('t1')] }] });
    expect(plan.l3).toEqual([{ user_id: 'u', kind: 'task', id: 't1', change: 'created', status: 'pending' }]);
    const done = await run({ type: 'l3.task_status', user_id: 'u', at: T1, task_id: 't1', sediment: null, updates: [{ kind: 'task', before: task('t1'), after: task('t1', { status: 'in_progress' }) }] });
    expect(done.l3).toEqual([{ user_id: 'u', kind: 'task', id: 't1', change: 'changed', status: 'in_progress' }]);
    expect((await run({ type: 'user.set_org', user_id: 'u', org_id: 'acme', mode: 'set', at: T1 })).users).toEqual([{ user_id: 'u', change: 'org_changed', org_id: 'acme' }]);
    expect((await run({ type: 'user.set_org', user_id: 'u', org_id: 'acme', mode: 'set', at: T1 })).users).toEqual([]);
  });

  it('a command that fails deterministically has no effects', async () => {
    await consolidate([unit('a')]);
    const stale = await run({ type: 'memory.delete', user_id: 'u', at: T1, unit_ids: ['zzz'], event_ids: [], require_units: true });
    expect(stale.units).toEqual([]);
  });
});

describe('onlyImportanceMoved', () => {
  it('answers as the comparison of the two records written out with importance 0, field by field or not', () => {
    const base = unit('a', { keywords: ['k1', 'k2'], references: ['e1'], assets: [] });
    const json = (x: MemoryUnit, y: MemoryUnit) => JSON.stringify({ ...x, importance: 0 }) === JSON.stringify({ ...y, importance: 0 });
    const reordered = Object.fromEntries(Object.entries(base).reverse()) as unknown as MemoryUnit;
    const { importance: _dropped, ...noImportance } = base;
    const variants: MemoryUnit[] = [
      { ...base, importance: 0.9 }, // a reinforcement: the arrays are the same objects
      { ...base, importance: 0.9, keywords: ['k1', 'k2'] }, // equal arrays, other objects
      { ...base, keywords: ['k1'] },
      { ...base, references: ['e1', 'e2'] },
      { ...base, content: 'other words' },
      { ...base, retired_at: T1 },
      { ...base, superseded_by: 'b' },
      { ...base, subject: 'Ann' },
      { ...base, org_id: undefined as unknown as null }, // a key whose value JSON leaves out
      { ...base, extra: 1 } as MemoryUnit,
      reordered,
      noImportance as MemoryUnit,
      JSON.parse(JSON.stringify({ ...base, importance: 0.7 })) as MemoryUnit, // read back from the store: no object shared
    ];
    for (const v of variants) {
      expect(onlyImportanceMoved(base, v)).toBe(json(base, v));
      expect(onlyImportanceMoved(v, base)).toBe(json(v, base));
    }
    expect(onlyImportanceMoved(base, variants[0])).toBe(true);
    expect(onlyImportanceMoved(base, variants[2])).toBe(false);
  });
});
