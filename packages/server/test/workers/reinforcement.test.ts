import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import {
  LocalLog, StateDb, StateMachine, getUnit, settle, unavailable, unitStatsOf, type Command, type MemoryUnit, type ReinforceCommand,
} from '@strata/store';
import type { Shard } from '../../src/shards';
import { buildReinforceCommand, buildReinforceCommands, ReinforcementBatcher, type ShardBatch } from '../../src/workers/reinforcement';

const T0 = Date.parse('2026-02-01T12:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

function unit(user: string, id: string, importance: number, extra: Partial<MemoryUnit> = {}): MemoryUnit {
  return {
    id, user_id: user, stream_id: 's1', org_id: null, agent_id: null, level: 1, memory_type: 'factual', content: `unit ${id}`, keywords: [],
    speaker: null, valid_time: iso(T0), transaction_time: iso(T0), references: [], assets: [], importance, subject: null, attribute: null,
    retired_at: null, retired_reason: null, superseded_by: null, ...extra,
  };
}

describe('buildReinforceCommand', () => {
  it('makes one command for the shard: users and units in id order, deltas from the importance seen', () => {
    const batch: ShardBatch = new Map([
      ['zoe', new Map([['z1', { retrievals: 1, at: T0 + 5, importance: 0.5 }]])],
      ['ann', new Map([
        ['a2', { retrievals: 2, at: T0 + 9, importance: 0.4 }],
        ['a1', { retrievals: 1, at: T0 + 1, importance: 1 }],
      ])],
    ]);
    expect(buildReinforceCommand(batch, 0.05, T0 + 10)).toEqual({
      type: 'memory.reinforce', at: iso(T0 + 10),
      users: [
        { user_id: 'ann', units: [
          { unit_id: 'a1', delta: 0, retrievals: 1, at: iso(T0 + 1) },
          { unit_id: 'a2', delta: 0.059, retrievals: 2, at: iso(T0 + 9) },
        ] },
        { user_id: 'zoe', units: [{ unit_id: 'z1', delta: 0.025, retrievals: 1, at: iso(T0 + 5) }] },
      ],
    });
  });

  it('cuts the same units, in the same order, into commands of at most maxUnits (a user may go on in the next)', () => {
    const batch: ShardBatch = new Map([
      ['zoe', new Map([['z1', { retrievals: 1, at: T0 + 5, importance: 0.5 }]])],
      ['ann', new Map(['a3', 'a1', 'a2', 'a4'].map((id, i) => [id, { retrievals: i + 1, at: T0 + i, importance: 0.4 }]))],
    ]);
    const one = buildReinforceCommand(batch, 0.05, T0 + 10)!;
    const flat = (users: { user_id: string; units: { unit_id: string }[] }[]) => users.flatMap((u) => u.units.map((x) => ({ user: u.user_id, ...x })));
    for (const max of [1, 2, 3, 4, 5, 100]) {
      const commands = buildReinforceCommands(batch, 0.05, T0 + 10, max);
      expect(commands).toHaveLength(Math.ceil(5 / max));
      for (const c of commands) {
        expect(c.type).toBe('memory.reinforce');
        expect(c.at).toBe(one.at);
        expect(flat(c.users).length).toBeLessThanOrEqual(max);
        expect(c.users.every((u) => u.units.length > 0)).toBe(true);
      }
      expect(commands.flatMap((c) => flat(c.users))).toEqual(flat(one.users));
    }
    expect(buildReinforceCommands(batch, 0.05, T0 + 10, 2).map((c) => c.users.map((u) => [u.user_id, u.units.map((x) => x.unit_id)]))).toEqual([
      [['ann', ['a1', 'a2']]], [['ann', ['a3', 'a4']]], [['zoe', ['z1']]],
    ]);
    expect(buildReinforceCommands(new Map(), 0.05, T0, 2)).toEqual([]);
  });

  it('is null for an empty batch', () => {
    expect(buildReinforceCommand(new Map(), 0.05, T0)).toBeNull();
    expect(buildReinforceCommand(new Map([['ann', new Map()]]), 0.05, T0)).toBeNull();
  });
});

describe('ReinforcementBatcher (real LevelDB and logs, two shards)', () => {
  let dir: string;
  let shards: Shard[];
  let proposed: Command[][];
  let clock: number;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'strata-reinforce-'));
    shards = [];
    proposed = [];
    for (const id of [0, 1]) {
      const db = await StateDb.open(join(dir, `s${id}`, 'state'));
      const sm = await StateMachine.open(db);
      const log = await LocalLog.open(join(dir, `s${id}`, 'log'), sm);
      const seen: Command[] = [];
      proposed.push(seen);
      const propose = log.propose.bind(log);
      log.propose = <C extends Command>(command: C) => {
        seen.push(command);
        return propose(command);
      };
      shards.push({ id, db, sm, log });
    }
    clock = T0;
    // ann's memory on shard 0, bob's on shard 1
    for (const [shard, user, units] of [[0, 'ann', [unit('ann', 'a1', 0.4), unit('ann', 'a2', 0.5), unit('ann', 'a3', 0.6)]], [1, 'bob', [unit('bob', 'b1', 0.3, { org_id: 'acme' })]]] as const) {
      settle(await shards[shard].log.propose({
        type: 'memory.consolidate', user_id: user, at: iso(T0), consumed: [], embedder_id: 'e', method: 'offline',
        units: units.map((u) => ({ unit: u, vector: [] })), reinforced: [], retired: [], edges: [], dropped: [],
      }));
    }
    for (const p of proposed) p.length = 0;
  });
  afterEach(async () => {
    for (const s of shards) {
      await s.log.close();
      await s.db.close();
    }
    rmSync(dir, { recursive: true, force: true });
  });

  function batcher(top = 2, commandUnits?: number) {
    return new ReinforcementBatcher({
      shardOf: (userId) => shards[userId === 'bob' ? 1 : 0], logger: pino({ level: 'silent' }), top, gain: 0.05, intervalMs: 1000, now: () => clock, commandUnits,
    });
  }
  const answer = async (shard: number, user: string, ids: string[]) =>
    Promise.all(ids.map(async (id) => ({ unit: (await getUnit(shards[shard].db, user, id))!, score: 0.5 })));

  it('reinforces the top units of each answer with one command per shard per flush', async () => {
    const b = batcher();
    const first = await answer(0, 'ann', ['a1', 'a2', 'a3']);
    // an answer of ann's that brought in bob's org knowledge: it is reinforced on bob's shard
    const withOrg = [(await answer(1, 'bob', ['b1']))[0], ...(await answer(0, 'ann', ['a1']))];
    b.record(first);
    clock += 1000;
    b.record(first);
    b.record(withOrg);
    expect(b.pendingUnits()).toBe(3); // a1, a2 (a3 is below the top 2), b1
    expect(proposed.flat()).toEqual([]); // nothing is written until a flush

    expect(await b.flush()).toEqual({ commands: 2, units: 3, dropped: 0 });
    expect(proposed.map((p) => p.length)).toEqual([1, 1]);
    const a = shards[0].db;
    // a1 returned 3 times: 1 − 0.6·0.95³ = 0.4856 (delta 0.086); a2 twice: 1 − 0.5·0.95² = 0.54875 (delta 0.049)
    expect((await getUnit(a, 'ann', 'a1'))!.importance).toBe(0.486);
    expect((await getUnit(a, 'ann', 'a2'))!.importance).toBe(0.549);
    expect((await getUnit(a, 'ann', 'a3'))!.importance).toBe(0.6);
    expect(await unitStatsOf(a, 'ann', 'a1')).toEqual({ retrievals: 3, last_retrieved_at: iso(T0 + 1000) });
    expect(await unitStatsOf(a, 'ann', 'a2')).toEqual({ retrievals: 2, last_retrieved_at: iso(T0 + 1000) });
    expect(await unitStatsOf(a, 'ann', 'a3')).toBeUndefined();
    expect((await getUnit(shards[1].db, 'bob', 'b1'))!.importance).toBe(0.335);

    // nothing pending: the next flush proposes nothing
    expect(await b.flush()).toEqual({ commands: 0, units: 0, dropped: 0 });
    expect(proposed.flat()).toHaveLength(2);
  });

  it('proposes a large batch as commands of commandUnits units, each once the one before is applied, to the same state', async () => {
    const b = batcher(3, 1);
    const log = shards[0].log;
    const propose = log.propose.bind(log);
    let inFlight = 0;
    let most = 0;
    log.propose = <C extends Command>(command: C) => {
      most = Math.max(most, ++inFlight);
      return propose(command).finally(() => inFlight--);
    };
    const first = await answer(0, 'ann', ['a1', 'a2', 'a3']);
    b.record(first);
    clock += 1000;
    b.record(first);
    b.record(await answer(0, 'ann', ['a1']));
    expect(await b.flush()).toEqual({ commands: 3, units: 3, dropped: 0 });
    expect(proposed[0].map((c) => (c as ReinforceCommand).users.map((u) => [u.user_id, u.units.map((x) => x.unit_id)]))).toEqual([
      [['ann', ['a1']]], [['ann', ['a2']]], [['ann', ['a3']]],
    ]);
    expect(most).toBe(1); // one after another
    const a = shards[0].db;
    // as one command leaves them (the test above): a1 returned 3 times, a2 and a3 twice (a3: 1 − 0.4·0.95² = 0.639)
    expect((await getUnit(a, 'ann', 'a1'))!.importance).toBe(0.486);
    expect((await getUnit(a, 'ann', 'a2'))!.importance).toBe(0.549);
    expect((await getUnit(a, 'ann', 'a3'))!.importance).toBe(0.639);
    expect(await unitStatsOf(a, 'ann', 'a3')).toEqual({ retrievals: 2, last_retrieved_at: iso(T0 + 1000) });
  });

  it('drops the rest of a shard\'s batch once one of its commands fails', async () => {
    const b = batcher(3, 1);
    const log = shards[0].log;
    const propose = log.propose.bind(log);
    let calls = 0;
    log.propose = <C extends Command>(command: C) => (++calls === 2 ? Promise.reject(unavailable('no leader')) : propose(command));
    b.record(await answer(0, 'ann', ['a1', 'a2', 'a3']));
    expect(await b.flush()).toEqual({ commands: 1, units: 1, dropped: 2 });
    expect(calls).toBe(2);
    expect((await getUnit(shards[0].db, 'ann', 'a1'))!.importance).toBe(0.43);
    expect((await getUnit(shards[0].db, 'ann', 'a2'))!.importance).toBe(0.5);
  });

  it('drops the batch of a shard this node does not lead, and a batch whose proposal fails, without throwing', async () => {
    const b = batcher();
    shards[1].log.isLeader = () => false;
    shards[0].log.propose = () => Promise.reject(unavailable('no leader'));
    b.record(await answer(0, 'ann', ['a1', 'a2']));
    b.record(await answer(1, 'bob', ['b1']));
    expect(await b.flush()).toEqual({ commands: 0, units: 0, dropped: 3 });
    expect((await getUnit(shards[0].db, 'ann', 'a1'))!.importance).toBe(0.4);
    expect((await getUnit(shards[1].db, 'bob', 'b1'))!.importance).toBe(0.3);
    expect(b.pendingUnits()).toBe(0);
  });

  it('records nothing with reinforce_top = 0, and proposes what is pending when stopped', async () => {
    const off = batcher(0);
    off.record(await answer(0, 'ann', ['a1']));
    expect(off.pendingUnits()).toBe(0);

    const b = batcher();
    b.record(await answer(0, 'ann', ['a1']));
    await b.stop();
    expect((await getUnit(shards[0].db, 'ann', 'a1'))!.importance).toBe(0.43);
    b.record(await answer(0, 'ann', ['a1']));
    expect(b.pendingUnits()).toBe(0); // stopped
  });
});
