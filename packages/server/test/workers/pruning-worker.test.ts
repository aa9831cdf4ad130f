import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import {
  LocalLog, StateDb, StateMachine, allUnits, settle, type Command, type ConsolidateCommand, type Edge, type MemoryUnit, type ReinforceCommand,
} from '@strata/store';
import { loadConfig } from '../../src/config';
import { PruningWorker, pruningSettings, type PruningOptions } from '../../src/workers/pruning';

const DAY = 86_400_000;
const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

function unit(user: string, id: string, extra: Partial<MemoryUnit> = {}): MemoryUnit {
  return {
    id, user_id: user, stream_id: 's1', org_id: null, agent_id: null, level: 1, memory_type: 'factual', content: `unit ${id}`, keywords: [],
    speaker: null, valid_time: iso(T0), transaction_time: iso(T0), references: [], assets: [], importance: 0.2, subject: null, attribute: null,
    retired_at: null, retired_reason: null, superseded_by: null, ...extra,
  };
}

const edge = (user: string, id: string, source: string, target: string, relation: Edge['relation']): Edge =>
  ({ edge_id: id, user_id: user, source_id: source, target_id: target, relation, weight: 1, created_at: iso(T0) });

describe('PruningWorker (real LevelDB and log, virtual clock)', () => {
  let dir: string;
  let db: StateDb;
  let log: LocalLog;
  let clock: number;
  /** every command proposed through the log, in order */
  let proposed: Command[];

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'strata-prune-'));
    db = await StateDb.open(join(dir, 'state'));
    const sm = await StateMachine.open(db);
    log = await LocalLog.open(join(dir, 'log'), sm);
    proposed = [];
    const propose = log.propose.bind(log);
    log.propose = <C extends Command>(command: C) => {
      proposed.push(command);
      return propose(command);
    };
    clock = T0;
  });
  afterEach(async () => {
    await log.close();
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const apply = async (command: Command) => settle(await log.propose(command));

  async function seed(): Promise<void> {
    const consolidate = (user: string, units: MemoryUnit[], edges: Edge[] = []): ConsolidateCommand => ({
      type: 'memory.consolidate', user_id: user, at: iso(T0), consumed: [], embedder_id: 'e', method: 'offline',
      units: units.map((u) => ({ unit: u, vector: [] })), reinforced: [], retired: [], edges, dropped: [],
    });
    await apply(consolidate('ann', [
      unit('ann', 'faded'), // 0.2: below 0.05 after 60 days
      unit('ann', 'member'), // as faded, but an insight derives from it
      unit('ann', 'important', { importance: 0.9 }), // 0.9 · 0.5^(120/30) = 0.056: above 0.05 at day 120
      unit('ann', 'shared', { org_id: 'acme' }), // organization knowledge
      unit('ann', 'forgotten', { retired_at: iso(T0), retired_reason: 'forgotten' }),
      unit('ann', 'young', { transaction_time: iso(T0 + 100 * DAY) }),
      unit('ann', 'used'), // retrieved at day 100
    ], [edge('ann', 'r1', 'faded', 'important', 'RelatedTo')]));
    await apply(consolidate('bob', [unit('bob', 'b-faded', { importance: 0.1 })]));
    await apply({
      type: 'memory.insights', user_id: 'ann', at: iso(T0), embedder_id: 'e', update: [], removed_edges: [], reflected: [],
      create: [{ unit: unit('ann', 'insight', { level: 2, importance: 0.01 }), vector: null }],
      edges: [edge('ann', 'd1', 'insight', 'member', 'DerivedFrom')],
    });
    const reinforce: ReinforceCommand = {
      type: 'memory.reinforce', at: iso(T0 + 100 * DAY), users: [{ user_id: 'ann', units: [{ unit_id: 'used', delta: 0, retrievals: 1, at: iso(T0 + 100 * DAY) }] }],
    };
    await apply(reinforce);
  }

  const ids = async (user: string) => (await allUnits(db, user)).map((u) => u.id).sort();

  function worker(extra: Partial<PruningOptions> = {}) {
    return new PruningWorker({
      shard: { id: 0, db, sm: undefined as never, log }, logger: pino({ level: 'silent' }), now: () => clock,
      enabled: true, below: 0.05, minAgeDays: 30, halfLifeDays: 30, intervalMs: 1000, scanPerPass: 1000, maxPerPass: 100, ...extra,
    });
  }

  it('prunes nothing with the default configuration, however old and faded the memory', async () => {
    await seed();
    const settings = pruningSettings(loadConfig({ env: {} }));
    expect(settings.enabled).toBe(false);
    const w = new PruningWorker({ shard: { id: 0, db, sm: undefined as never, log }, logger: pino({ level: 'silent' }), now: () => clock, ...settings });
    clock = T0 + 3650 * DAY;
    const before = proposed.length;
    expect(await w.tick()).toEqual({ scanned: 0, candidates: 0, protected_by_insight: 0, pruned: 0, kept: {}, errors: 0 });
    expect(proposed.length).toBe(before);
    expect(await ids('ann')).toHaveLength(8);
  });

  it('prunes faded old L1 units, never one an insight derives from, org knowledge, retired, young or recently used units', async () => {
    await seed();
    clock = T0 + 120 * DAY;
    const report = await worker().tick();
    expect(report).toEqual({ scanned: 9, candidates: 3, protected_by_insight: 1, pruned: 2, kept: {}, errors: 0 });
    expect(await ids('ann')).toEqual(['forgotten', 'important', 'insight', 'member', 'shared', 'used', 'young']);
    expect(await ids('bob')).toEqual([]);
    // one command per user, each naming what it judged and the threshold
    const prunes = proposed.filter((c) => c.type === 'memory.prune');
    expect(prunes.map((c) => c.type === 'memory.prune' && [c.user_id, c.below, c.units.map((u) => [u.unit_id, u.effective_importance])])).toEqual([
      ['ann', 0.05, [['faded', 0.2 / 16]]],
      ['bob', 0.05, [['b-faded', 0.1 / 16]]],
    ]);
    // the edge of the pruned unit went with it
    expect(await db.counter('edges')).toBe(1);

    // Ten days later `important` has faded below (0.9 · 0.5^(130/30) ≈ 0.045); the units stored or used at
    // day 100 are old enough but still at 0.2 · 0.5 = 0.1.
    clock = T0 + 130 * DAY;
    expect((await worker().tick()).pruned).toBe(1);
    expect(await ids('ann')).not.toContain('important');
    clock = T0 + 230 * DAY; // `used` and `young`: 0.2 · 0.5^(130/30) ≈ 0.0099
    const late = await worker().tick();
    expect(late.pruned).toBe(2);
    expect(late.protected_by_insight).toBe(1);
    expect(await ids('ann')).toEqual(['forgotten', 'insight', 'member', 'shared']);
  });

  it('does bounded work per pass and resumes where it stopped', async () => {
    await seed();
    clock = T0 + 400 * DAY;
    const w = worker({ scanPerPass: 3, maxPerPass: 1 });
    const reports = [];
    for (let i = 0; i < 12; i++) reports.push(await w.tick());
    for (const r of reports) {
      expect(r.scanned).toBeLessThanOrEqual(3);
      expect(r.pruned).toBeLessThanOrEqual(1);
    }
    // everything forgettable went (faded, important, young, used, b-faded), nothing protected did
    expect(reports.reduce((n, r) => n + r.pruned, 0)).toBe(5);
    expect(await ids('ann')).toEqual(['forgotten', 'insight', 'member', 'shared']);
    expect(await ids('bob')).toEqual([]);
  });

  it('keeps a unit that an insight started deriving from between the pass and the apply', async () => {
    await seed();
    clock = T0 + 120 * DAY;
    // The insight lands in the log just before the prune command: apply sees it and keeps the unit.
    const propose = log.propose;
    let injected = false;
    const injectInsight = async (): Promise<void> => {
      injected = true;
      await propose({
        type: 'memory.insights', user_id: 'ann', at: iso(clock), embedder_id: 'e', create: [], update: [], removed_edges: [], reflected: [],
        edges: [edge('ann', 'd2', 'insight', 'faded', 'DerivedFrom')],
      });
    };
    log.propose = <C extends Command>(command: C) =>
      (command.type === 'memory.prune' && !injected ? injectInsight() : Promise.resolve()).then(() => propose(command));
    const report = await worker().tick();
    expect(report.kept).toEqual({ 'an insight derives from it': 1 });
    expect(report.pruned).toBe(1); // bob's
    expect(await ids('ann')).toContain('faded');
  });

  it('does nothing where the shard log cannot propose (not the leader)', async () => {
    await seed();
    clock = T0 + 400 * DAY;
    const follower = { ...log, isLeader: () => false, propose: log.propose.bind(log) } as unknown as LocalLog;
    const w = new PruningWorker({
      shard: { id: 0, db, sm: undefined as never, log: follower }, logger: pino({ level: 'silent' }), now: () => clock,
      enabled: true, below: 0.05, minAgeDays: 30, halfLifeDays: 30, intervalMs: 1000, scanPerPass: 1000, maxPerPass: 100,
    });
    expect((await w.tick()).scanned).toBe(0);
    expect(await ids('ann')).toHaveLength(8);
  });
});
