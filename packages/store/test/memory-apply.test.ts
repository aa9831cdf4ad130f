import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  LocalLog, StateDb, StateMachine, allUnits, droppedEvent, edgesOfUnit, getUnit, getUnitVector, listFailed, listUnits, listUserEdges,
  pendingOfUser, pendingSummary, pendingUsersFrom, reflectionsDue, unitsBySubjectAttribute, userVectors,
  type Command, type ConsolidateAnswer, type ConsolidateCommand, type Edge, type IngestCommand, type InsightsCommand, type MemoryUnit,
  type ProposedEvent,
} from '../src';

const T0 = '2026-01-01T00:00:00.000Z';
const T1 = '2026-01-01T01:00:00.000Z';

function event(user: string, stream: string, id: string, at = T0): ProposedEvent {
  return {
    event_id: id, user_id: user, stream_id: stream, content: `content ${id}`, content_type: 'text', org_id: null, agent_id: null, role: null,
    level: null, parent_id: null, task_status: null, task_progress: null, valid_time: at, transaction_time: at, metadata: null, assets: [],
  };
}

function ingest(user: string, stream: string, ids: string[], at = T0): IngestCommand {
  return { type: 'events.ingest', user_id: user, stream_id: stream, at, idempotency: null, events: ids.map((id) => event(user, stream, id, at)), assets: [] };
}

function unit(user: string, id: string, refs: string[], extra: Partial<MemoryUnit> = {}): MemoryUnit {
  return {
    id, user_id: user, stream_id: 's1', org_id: null, agent_id: null, level: 1, memory_type: 'factual', content: `unit ${id}`, keywords: [id],
    speaker: 'user', valid_time: T0, transaction_time: T1, references: refs, assets: [], importance: 0.5, subject: null, attribute: null,
    retired_at: null, retired_reason: null, superseded_by: null, ...extra,
  };
}

const edge = (user: string, id: string, source: string, target: string, relation: Edge['relation'] = 'RelatedTo'): Edge =>
  ({ edge_id: id, user_id: user, source_id: source, target_id: target, relation, weight: 0.7, created_at: T1 });

function consolidate(user: string, consumed: { seq: string; event_id: string }[], plan: Partial<ConsolidateCommand> = {}): ConsolidateCommand {
  return {
    type: 'memory.consolidate', user_id: user, at: T1, consumed, embedder_id: 'test-embedder', method: 'offline',
    units: [], reinforced: [], retired: [], edges: [], dropped: [], ...plan,
  };
}

async function openNode(dir: string) {
  const db = await StateDb.open(join(dir, 'state'));
  const sm = await StateMachine.open(db);
  const log = await LocalLog.open(join(dir, 'log'), sm);
  return { db, sm, log, close: async () => { await log.close(); await db.close(); } };
}

/** Every key and value of the state, the applied index aside: two states are equal when their dumps are. */
async function dump(db: StateDb): Promise<[string, unknown][]> {
  const out: [string, unknown][] = [];
  for await (const [k, v] of db.level.iterator()) if (!k.endsWith('applied_index')) out.push([k, v]);
  return out;
}

async function counters(db: StateDb) {
  return { pending: await db.counter('pending'), units: await db.counter('units'), failed: await db.counter('failed'), dropped: await db.counter('dropped'), edges: await db.counter('edges') };
}

async function pendingRefs(db: StateDb, user: string) {
  return (await pendingOfUser(db, user, 100)).map((p) => ({ seq: p.seq, event_id: p.event_id }));
}

describe('memory apply: consolidate, failures, insights', () => {
  let dir: string;
  beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'strata-memory-')); });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('indexes pending entries by user, in acceptance order, and serves users round-robin', async () => {
    const node = await openNode(dir);
    await node.log.propose(ingest('bob', 's1', ['b1']));
    await node.log.propose(ingest('alice', 's1', ['a1', 'a2']));
    await node.log.propose(ingest('carol', 's2', ['c1']));
    await node.log.propose(ingest('alice', 's2', ['a3']));
    expect((await pendingOfUser(node.db, 'alice', 10)).map((p) => p.event_id)).toEqual(['a1', 'a2', 'a3']);
    expect((await pendingOfUser(node.db, 'alice', 2)).map((p) => p.stream_id)).toEqual(['s1', 's1']);
    expect(await pendingUsersFrom(node.db, null, 10)).toEqual(['alice', 'bob', 'carol']);
    expect(await pendingUsersFrom(node.db, 'alice', 10)).toEqual(['bob', 'carol', 'alice']);
    expect(await pendingUsersFrom(node.db, 'bob', 2)).toEqual(['carol', 'alice']);
    expect(await pendingUsersFrom(node.db, 'zed', 10)).toEqual(['alice', 'bob', 'carol']);
    await node.close();
  });

  it('writes a plan atomically: units, vectors, subject index, edges, drops, pending removed, counters exact', async () => {
    const node = await openNode(dir);
    await node.log.propose(ingest('u1', 's1', ['e1', 'e2', 'e3']));
    await node.log.propose(ingest('u2', 's1', ['x1']));
    const consumed = await pendingRefs(node.db, 'u1');
    const vector = [0.1, -0.25, 1 / 3];
    const answer = await node.log.propose(consolidate('u1', consumed, {
      units: [
        { unit: unit('u1', 'm1', ['e1'], { subject: 'user', attribute: 'home city' }), vector },
        { unit: unit('u1', 'm2', ['e2']), vector: [1, 0, 0] },
      ],
      edges: [edge('u1', 'g1', 'm2', 'm1'), edge('u1', 'g2', 'm2', 'missing-unit')],
      dropped: [{ event_id: 'e3', reason: 'noise: thanks' }],
    })) as ConsolidateAnswer;
    expect(answer).toEqual({ applied: true, stale: null, consumed: 3, units_created: 2, reinforced: 0, retired: 0, edges: 1, dropped: 1 });
    expect(await counters(node.db)).toEqual({ pending: 1, units: 2, failed: 0, dropped: 1, edges: 1 });
    expect(await pendingOfUser(node.db, 'u1', 10)).toEqual([]);
    expect((await pendingSummary(node.db)).pending).toBe(1);
    expect(await getUnit(node.db, 'u1', 'm1')).toEqual(unit('u1', 'm1', ['e1'], { subject: 'user', attribute: 'home city' }));
    expect(Array.from((await getUnitVector(node.db, 'u1', 'm1'))!)).toEqual(Array.from(new Float32Array(vector)));
    expect((await userVectors(node.db, 'u1')).get('m2')?.embedder_id).toBe('test-embedder');
    expect((await unitsBySubjectAttribute(node.db, 'u1', 'user', 'home city')).map((u) => u.id)).toEqual(['m1']);
    expect(await unitsBySubjectAttribute(node.db, 'u1', 'user', 'home')).toEqual([]);
    expect((await listUserEdges(node.db, 'u1')).map((e) => e.edge_id)).toEqual(['g1']);
    expect(await edgesOfUnit(node.db, 'u1', 'm1')).toEqual([{ edge_id: 'g1', other_id: 'm2', relation: 'RelatedTo', out: false }]);
    expect(await edgesOfUnit(node.db, 'u1', 'm2')).toEqual([{ edge_id: 'g1', other_id: 'm1', relation: 'RelatedTo', out: true }]);
    expect(await droppedEvent(node.db, 'u1', 'e3')).toEqual({ reason: 'noise: thanks', at: T1 });
    expect(await reflectionsDue(node.db, 10)).toEqual([{ user_id: 'u1', stream_id: 's1', last_event_at: T0 }]);
    expect((await allUnits(node.db, 'u2'))).toEqual([]);
    await node.close();
  });

  it('is idempotent: the same plan proposed twice changes nothing the second time', async () => {
    const node = await openNode(dir);
    await node.log.propose(ingest('u1', 's1', ['e1', 'e2']));
    const cmd = consolidate('u1', await pendingRefs(node.db, 'u1'), { units: [{ unit: unit('u1', 'm1', ['e1', 'e2']), vector: [1, 0] }] });
    expect(((await node.log.propose(cmd)) as ConsolidateAnswer).applied).toBe(true);
    const before = await dump(node.db);
    const again = (await node.log.propose(cmd)) as ConsolidateAnswer;
    expect(again).toMatchObject({ applied: false, consumed: 0, units_created: 0 });
    expect(again.stale).toMatch(/no longer pending/);
    expect(await dump(node.db)).toEqual(before);
    expect(await counters(node.db)).toEqual({ pending: 0, units: 1, failed: 0, dropped: 0, edges: 0 });
    await node.close();
  });

  it('writes nothing for a plan of which one event is gone (all or nothing); the rest stays pending', async () => {
    const node = await openNode(dir);
    await node.log.propose(ingest('u1', 's1', ['e1', 'e2']));
    const refs = await pendingRefs(node.db, 'u1');
    await node.log.propose(consolidate('u1', [refs[0]], { units: [{ unit: unit('u1', 'm1', ['e1']), vector: [1, 0] }] }));
    const before = await dump(node.db);
    const answer = (await node.log.propose(consolidate('u1', refs, {
      units: [{ unit: unit('u1', 'm2', ['e1']), vector: [0, 1] }], dropped: [{ event_id: 'e2', reason: 'noise' }],
    }))) as ConsolidateAnswer;
    expect(answer.applied).toBe(false);
    expect(await dump(node.db)).toEqual(before);
    expect((await pendingOfUser(node.db, 'u1', 10)).map((p) => p.event_id)).toEqual(['e2']);
    expect(await node.db.counter('pending')).toBe(1);
    await node.close();
  });

  it('reinforces and retires existing units; a reinforced unit that is gone makes the plan stale', async () => {
    const node = await openNode(dir);
    await node.log.propose(ingest('u1', 's1', ['e1']));
    await node.log.propose(consolidate('u1', await pendingRefs(node.db, 'u1'), {
      units: [{ unit: unit('u1', 'old', ['e1'], { subject: 'user', attribute: 'city' }), vector: [1, 0] }],
    }));
    await node.log.propose(ingest('u1', 's1', ['e2', 'e3']));
    const refs = await pendingRefs(node.db, 'u1');

    const stale = (await node.log.propose(consolidate('u1', refs, {
      reinforced: [{ unit_id: 'nope', add_references: ['e2'], importance: 0.9 }], dropped: [{ event_id: 'e3', reason: 'noise' }],
    }))) as ConsolidateAnswer;
    expect(stale).toMatchObject({ applied: false });
    expect(stale.stale).toMatch(/nope/);
    expect(await node.db.counter('pending')).toBe(2);

    const answer = (await node.log.propose(consolidate('u1', refs, {
      units: [{ unit: unit('u1', 'new', ['e3'], { subject: 'user', attribute: 'city' }), vector: [0, 1] }],
      reinforced: [{ unit_id: 'old', add_references: ['e1', 'e2'], importance: 0.8 }],
      retired: [{ unit_id: 'old', retired_at: T1, reason: 'superseded', superseded_by: 'new' }, { unit_id: 'ghost', retired_at: T1, reason: 'superseded', superseded_by: 'new' }],
      edges: [edge('u1', 'ev', 'old', 'new', 'EvolvedTo')],
    }))) as ConsolidateAnswer;
    expect(answer).toMatchObject({ applied: true, consumed: 2, units_created: 1, reinforced: 1, retired: 1, edges: 1 });
    expect(await getUnit(node.db, 'u1', 'old')).toMatchObject({ references: ['e1', 'e2'], importance: 0.8, retired_at: T1, retired_reason: 'superseded', superseded_by: 'new' });
    expect((await listUnits(node.db, 'u1', { limit: 10 })).units.map((u) => u.id)).toEqual(['new']);
    expect((await listUnits(node.db, 'u1', { limit: 10, includeRetired: true })).units.map((u) => u.id)).toEqual(['new', 'old']);
    expect((await unitsBySubjectAttribute(node.db, 'u1', 'user', 'city')).map((u) => u.id).sort()).toEqual(['new', 'old']);
    expect(await counters(node.db)).toEqual({ pending: 0, units: 2, failed: 0, dropped: 0, edges: 1 });
    await node.close();
  });

  it('refuses a plan with a unit of another user as a whole, deterministically', async () => {
    const node = await openNode(dir);
    await node.log.propose(ingest('u1', 's1', ['e1']));
    const before = await dump(node.db);
    const answer = await node.log.propose(consolidate('u1', await pendingRefs(node.db, 'u1'), { units: [{ unit: unit('u2', 'm1', ['e1']), vector: [1] }] }));
    expect(answer).toEqual({ error: expect.objectContaining({ code: 'invalid_command', status: 400 }) });
    expect(await dump(node.db)).toEqual(before);
    await node.close();
  });

  it('moves failed events from pending to failed once, with exact counters', async () => {
    const node = await openNode(dir);
    await node.log.propose(ingest('u1', 's1', ['e1', 'e2', 'e3']));
    const refs = await pendingRefs(node.db, 'u1');
    const cmd: Command = { type: 'memory.consolidation_failed', user_id: 'u1', at: T1, entries: refs.slice(0, 2), error: 'embedder down', attempts: 3 };
    expect(await node.log.propose(cmd)).toEqual({ failed: 2 });
    expect(await node.log.propose(cmd)).toEqual({ failed: 0 });
    expect(await counters(node.db)).toMatchObject({ pending: 1, failed: 2 });
    expect(await pendingSummary(node.db)).toMatchObject({ pending: 1, failed: 2 });
    expect((await listFailed(node.db, 10)).map((f) => [f.event_id, f.error, f.attempts])).toEqual([['e1', 'embedder down', 3], ['e2', 'embedder down', 3]]);
    expect((await pendingOfUser(node.db, 'u1', 10)).map((p) => p.event_id)).toEqual(['e3']);
    await node.close();
  });

  it('applies insights: creates with DerivedFrom edges, updates, removes edges, clears reflection marks only when covered', async () => {
    const node = await openNode(dir);
    await node.log.propose(ingest('u1', 's1', ['e1', 'e2', 'e3']));
    await node.log.propose(consolidate('u1', await pendingRefs(node.db, 'u1'), {
      units: ['a', 'b', 'c'].map((id, i) => ({ unit: unit('u1', id, [`e${i + 1}`]), vector: [1, i] })),
    }));
    const insights = (plan: Partial<InsightsCommand>): InsightsCommand => ({
      type: 'memory.insights', user_id: 'u1', at: T1, embedder_id: 'test-embedder', create: [], update: [], edges: [], removed_edges: [], reflected: [], ...plan,
    });
    const l2 = unit('u1', 'i1', ['e1', 'e2'], { level: 2, content: 'about a and b' });
    expect(await node.log.propose(insights({
      create: [{ unit: l2, vector: [0.5, 0.5] }],
      edges: [edge('u1', 'd1', 'i1', 'a', 'DerivedFrom'), edge('u1', 'd2', 'i1', 'b', 'DerivedFrom')],
      reflected: [{ stream_id: 's1', through: '2025-12-31T00:00:00.000Z' }],
    }))).toEqual({ created: 1, updated: 0, edges: 2, removed_edges: 0 });
    expect(await reflectionsDue(node.db, 10)).toHaveLength(1);
    expect(await node.log.propose(insights({
      update: [{ unit_id: 'i1', content: 'about b and c', keywords: ['b', 'c'], references: ['e2', 'e3'], importance: 0.7, valid_time: T1, vector: [0, 1] }, { unit_id: 'a', content: 'x', keywords: [], references: [], importance: 1, valid_time: T1, vector: null }],
      edges: [edge('u1', 'd3', 'i1', 'c', 'DerivedFrom')], removed_edges: ['d1', 'unknown'],
      reflected: [{ stream_id: 's1', through: T0 }],
    }))).toEqual({ created: 0, updated: 1, edges: 1, removed_edges: 1 });
    expect(await getUnit(node.db, 'u1', 'i1')).toMatchObject({ content: 'about b and c', references: ['e2', 'e3'], importance: 0.7, level: 2 });
    expect(await getUnit(node.db, 'u1', 'a')).toMatchObject({ content: 'unit a' });
    expect(Array.from((await getUnitVector(node.db, 'u1', 'i1'))!)).toEqual([0, 1]);
    expect((await edgesOfUnit(node.db, 'u1', 'i1')).map((e) => e.other_id).sort()).toEqual(['b', 'c']);
    expect(await edgesOfUnit(node.db, 'u1', 'a')).toEqual([]);
    expect(await reflectionsDue(node.db, 10)).toEqual([]);
    expect(await counters(node.db)).toEqual({ pending: 0, units: 4, failed: 0, dropped: 0, edges: 2 });
    expect((await listUnits(node.db, 'u1', { limit: 10, level: 2 })).units.map((u) => u.id)).toEqual(['i1']);
    await node.close();
  });

  it('is deterministic: the same log applied to two fresh states gives identical states, also after a restart replay', async () => {
    const commands: Command[] = [
      ingest('u1', 's1', ['e1', 'e2', 'e3']),
      ingest('u2', 's9', ['z1']),
      consolidate('u1', [{ seq: '000000000000000100000', event_id: 'e1' }, { seq: '000000000000000100001', event_id: 'e2' }], {
        units: [{ unit: unit('u1', 'm1', ['e1', 'e2']), vector: [0.6, 0.8] }],
      }),
      consolidate('u1', [{ seq: '000000000000000100002', event_id: 'e3' }], { reinforced: [{ unit_id: 'm1', add_references: ['e3'], importance: 0.6 }] }),
      { type: 'memory.consolidation_failed', user_id: 'u2', at: T1, entries: [{ seq: '000000000000000200000', event_id: 'z1' }], error: 'boom', attempts: 3 },
      consolidate('u1', [{ seq: '000000000000000100002', event_id: 'e3' }], { units: [{ unit: unit('u1', 'dup', ['e3']), vector: [1, 0] }] }),
    ];
    const states: [string, unknown][][] = [];
    for (const name of ['a', 'b']) {
      const db = await StateDb.open(join(dir, name));
      const sm = await StateMachine.open(db);
      for (let i = 0; i < commands.length; i++) await sm.apply(i + 1, commands[i]);
      states.push(await dump(db));
      await db.close();
    }
    expect(states[1]).toEqual(states[0]);
    // Through the log: apply, close, reopen (replays nothing already applied), same state again.
    const node = await openNode(join(dir, 'c'));
    for (const c of commands) await node.log.propose(c);
    await node.close();
    const reopened = await openNode(join(dir, 'c'));
    expect(await dump(reopened.db)).toEqual(states[0]);
    expect(await counters(reopened.db)).toEqual({ pending: 0, units: 1, failed: 1, dropped: 0, edges: 0 });
    expect((await getUnit(reopened.db, 'u1', 'm1'))?.references).toEqual(['e1', 'e2', 'e3']);
    await reopened.close();
  });
});

