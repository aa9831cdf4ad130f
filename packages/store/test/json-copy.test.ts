/**
 * jsonCopy: the proposer applies its copy of a command instead of parsing back the JSON it wrote, so
 * the copy must be exactly what the other replicas parse. Checked over tricky values and over every
 * command type the store simulator's workload builds (from a real, evolving state), and through a
 * real Raft group: the proposer parses nothing back when the command round-trips, and does when not.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LevelStorage, LocalTransportHub, RaftHost } from '@strata/raft';
import { RaftApplier, RaftCommandLog, StateDb, StateMachine, type Command } from '../src';
import { jsonCopy } from '../src/json-copy';
import { Draw } from '../src/sim/draw';
import { COMMAND_KINDS, Workload } from '../src/sim/workload';

/** Exact sameness: Object.is at the leaves, same prototypes, same own keys in the same order. */
function same(a: unknown, b: unknown): boolean {
  if (typeof a !== 'object' || a === null || typeof b !== 'object' || b === null) return Object.is(a, b);
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  const ka = Reflect.ownKeys(a);
  const kb = Reflect.ownKeys(b);
  if (ka.length !== kb.length || ka.some((k, i) => k !== kb[i])) return false;
  return ka.every((k) => same((a as Record<PropertyKey, unknown>)[k], (b as Record<PropertyKey, unknown>)[k]));
}

/** No object or array of the copy is one of the original's. */
function shares(copy: unknown, original: unknown, seen = new Set<unknown>()): boolean {
  const collect = (v: unknown) => {
    if (typeof v !== 'object' || v === null) return;
    seen.add(v);
    for (const x of Object.values(v)) collect(x);
  };
  collect(original);
  const find = (v: unknown): boolean => typeof v === 'object' && v !== null && (seen.has(v) || Object.values(v).some(find));
  return find(copy);
}

function roundTrip(v: unknown): unknown {
  return JSON.parse(JSON.stringify(v)) as unknown;
}

function check(v: unknown): 'copied' | 'refused' {
  const c = jsonCopy(v);
  if (c === undefined) return 'refused';
  expect(same(c, roundTrip(v))).toBe(true);
  expect(JSON.stringify(c)).toBe(JSON.stringify(v));
  expect(shares(c, v)).toBe(false);
  return 'copied';
}

describe('jsonCopy', () => {
  test('plain JSON values are copied exactly as a round trip gives them', () => {
    for (const v of [null, true, false, 0, 1.5, -3, 1e21, 5e-324, Number.MAX_VALUE, '', 'é\u2028\ud800 lone', [], {}, [1, [2, [3]]], { b: 1, a: 2, 10: 'x', 2: 'y' }, { nested: { list: [{ x: null }] } }]) {
      expect(check(v)).toBe('copied');
    }
  });

  test('anything a round trip would change is refused', () => {
    class Thing {
      x = 1;
    }
    const sparse = [1, , 3]; // eslint-disable-line no-sparse-arrays
    const withGetter = Object.defineProperty({}, 'g', { get: () => 1, enumerable: true });
    const refused: unknown[] = [
      undefined, -0, NaN, Infinity, () => 1, 10n, Symbol('s'), new Date(0), Buffer.from('x'), new Float32Array(2), new Thing(), Object.create(null), sparse,
      { a: undefined }, [undefined], { a: { b: -0 } }, [[NaN]], { toJSON: () => 1 }, JSON.parse('{"__proto__": 1}'), new Map(), { d: new Date(0) },
    ];
    for (const v of refused) expect(check(v)).toBe('refused');
    // a getter is read once into the copy (the log's bytes are written from the copy)
    expect(jsonCopy(withGetter)).toEqual({ g: 1 });
    let deep: unknown = 1;
    for (let i = 0; i < 300; i++) deep = [deep];
    expect(jsonCopy(deep)).toBeUndefined();
  });

  test('random trees with tricky leaves: whatever is copied equals the round trip', () => {
    const d = new Draw(27);
    const leaves: (() => unknown)[] = [() => d.int(1000) - 500, () => d.int(1000) / 7, () => `s${d.int(9)}`, () => null, () => d.chance(0.5), () => undefined, () => -0, () => NaN, () => new Date(d.int(1e12))];
    const tree = (depth: number): unknown => {
      if (depth > 3 || d.chance(0.3)) return d.chance(0.97) ? leaves[d.int(6)]() : leaves[6 + d.int(3)]();
      if (d.chance(0.5)) return Array.from({ length: d.int(5) }, () => tree(depth + 1));
      const o: Record<string, unknown> = {};
      for (let i = d.int(5); i > 0; i--) o[d.chance(0.2) ? String(d.int(20)) : `k${d.int(20)}`] = tree(depth + 1);
      return o;
    };
    const counts = { copied: 0, refused: 0 };
    for (let i = 0; i < 3000; i++) counts[check(tree(0))]++;
    expect(counts.copied).toBeGreaterThan(500);
    expect(counts.refused).toBeGreaterThan(100);
  });

  test('every command type the workload builds from a live state is copied exactly', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'strata-json-copy-'));
    const db = await StateDb.open(join(dir, 'state'));
    try {
      const sm = await StateMachine.open(db);
      const workload = new Workload(new Draw(2027));
      const seen = new Map<string, { copied: number; refused: number }>();
      let now = Date.parse('2026-01-01T00:00:00.000Z');
      for (let i = 0; i < 1500; i++) {
        now += 1000;
        const command = await workload.next(db, now);
        const n = seen.get(command.type) ?? { copied: 0, refused: 0 };
        n[check(command)]++;
        seen.set(command.type, n);
        await sm.apply(sm.appliedIndex() + 1, roundTrip(command) as Command, 1);
      }
      // every type is seen and checked; the hot ones always take the copy (an optional field left
      // undefined, as the workload's insights updates do, only sends a command the round trip's way)
      expect([...seen.keys()].sort()).toEqual([...COMMAND_KINDS].sort());
      for (const type of ['events.ingest', 'memory.consolidate', 'l3.plan', 'memory.reinforce', 'import.records'] as const) {
        expect({ type, refused: seen.get(type)?.refused }).toEqual({ type, refused: 0 });
      }
      const copied = [...seen.values()].filter((n) => n.refused === 0).length;
      expect(copied).toBeGreaterThanOrEqual(COMMAND_KINDS.length - 2);
    } finally {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the proposer applies its copy', () => {
  test('a command that round-trips is not parsed back on the proposer; one that does not is, and both apply as on a follower', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'strata-json-copy-raft-'));
    const hub = new LocalTransportHub();
    const storage = await LevelStorage.open(join(dir, 'raft'));
    const db = await StateDb.open(join(dir, 'state'));
    const host = new RaftHost({ nodeId: 1, selfUrl: 'local://1', storage, transport: hub.transport(1), tickMs: 10 });
    try {
      const sm = await StateMachine.open(db);
      const applier = await RaftApplier.open(sm);
      const group = await host.openGroup(0, applier);
      await group.initialize([{ id: 1, url: 'local://1' }]);
      for (let i = 0; i < 200 && !group.isLeader(); i++) await new Promise((r) => setTimeout(r, 10));
      const log = new RaftCommandLog(group, applier);
      const applied: unknown[] = [];
      sm.onApplied((_i, command) => applied.push(command));
      const event = (id: string, extra: Record<string, unknown> = {}) => ({
        event_id: id, user_id: 'u', stream_id: 's1', content: `hello ${id}`, content_type: 'text', org_id: null, agent_id: null, role: null, level: null,
        parent_id: null, task_status: null, task_progress: null, valid_time: '2026-01-01T00:00:00.000Z', transaction_time: '2026-01-01T00:00:00.000Z', metadata: null, assets: [], ...extra,
      });
      const ingest = (id: string, extra: Record<string, unknown> = {}) =>
        ({ type: 'events.ingest', user_id: 'u', stream_id: 's1', at: '2026-01-01T00:00:00.000Z', idempotency: null, events: [event(id, extra)], assets: [] }) as unknown as Command;

      const parse = jest.spyOn(JSON, 'parse');
      const plain = ingest('e1');
      await log.propose(plain);
      const parsedPlain = parse.mock.calls.filter(([text]) => typeof text === 'string' && text.includes('"e1"')).length;
      // the metadata's undefined field: JSON drops it, so the proposer must apply what JSON gives
      const odd = ingest('e2', { metadata: { kept: 1, dropped: undefined } });
      await log.propose(odd);
      const parsedOdd = parse.mock.calls.filter(([text]) => typeof text === 'string' && text.includes('"e2"')).length;
      parse.mockRestore();

      expect(parsedPlain).toBe(0);
      expect(parsedOdd).toBe(1);
      // applied: a copy equal to the round trip (never the proposer's object), and the round trip itself
      expect(applied[0]).not.toBe(plain);
      expect(same(applied[0], roundTrip(plain))).toBe(true);
      expect(same(applied[1], roundTrip(odd))).toBe(true);
    } finally {
      await host.close();
      await storage.close();
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
