import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  commandVector, settle, decodeVector, getUnitVector, storedVectorOf, withCommandVectors,
  type Command, type ConsolidateCommand, type InsightsCommand, type MemoryUnit,
} from '../src';
import { jsonCopy } from '../src/json-copy';
import { dump, openNode } from './helpers/local-node';

/**
 * Vectors in consolidation commands as float32 base64 (issue 27): the bits survive the trip from the
 * embedder through the log into the state, and a log written by an earlier version (vectors as JSON
 * numbers) replays to the state that version made.
 */

const FIXTURE = join(__dirname, 'fixtures', 'consolidate-numbers-v1.json');
/**
 * SHA-256 of every key and value of the state after the fixture's log, as the version that wrote the
 * log (main at cb2ad5b, vectors as numbers) computed it with `digest` below.
 */
const EARLIER_STATE_SHA256 = 'c597686e22bf11968f3aaa0ef4aa49b4a0184e3229aa70c442f2ab3a063b8ace';

function digest(entries: [string, unknown][]): string {
  const h = createHash('sha256');
  for (const e of entries) h.update(JSON.stringify(e) + '\n');
  return h.digest('hex');
}

/**
 * A log with `memory.insights` commands (community insights and stream reflections planned by the
 * planners of `main` at b495e2d with the hashing embedder, created and updated units, with and without
 * vectors), their vectors as JSON numbers, and the SHA-256 of the state that version made of it.
 */
const INSIGHTS_FIXTURE = join(__dirname, 'fixtures', 'insights-numbers-v1.json');
const EARLIER_INSIGHTS_STATE_SHA256 = '4f20901627889a5583fec95b51ceee197e2a7939843c31b0f31f87a350dbc175';

/** The fixture's commands with every insight's vector in today's form. */
function newInsightsForm(commands: Command[]): Command[] {
  return commands.map((c) => {
    if (c.type !== 'memory.insights') return c;
    return {
      ...c,
      create: c.create.map(({ vector, ...rest }) => ({ ...rest, ...commandVector(vector ?? null) })),
      update: c.update.map(({ vector, ...rest }) => ({ ...rest, ...commandVector(vector ?? null) })),
    };
  });
}

/** The fixture's commands with every consolidation's vectors in today's form. */
function newForm(commands: Command[]): Command[] {
  return commands.map((c) => {
    if (c.type !== 'memory.consolidate') return c;
    return { ...c, units: withCommandVectors(c.units.map((u) => ({ unit: u.unit, vector: u.vector as number[] }))) };
  });
}

const bits = (v: Float32Array): number[] => Array.from(new Uint32Array(v.buffer, v.byteOffset, v.length));

/** Float32 values of every kind an embedder could give, and random bit patterns (NaN aside: no embedder gives one). */
function awkwardVector(seed: number, dims: number): Float32Array {
  const v = new Float32Array(dims);
  const raw = new Uint32Array(v.buffer);
  let x = seed;
  for (let i = 0; i < dims; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    raw[i] = x;
    if (Number.isNaN(v[i])) raw[i] = x & 0x807fffff; // exponent cleared: a subnormal instead
  }
  const specials = [0, -0, 1, -1, 1e-45, -1e-45, 1.1754942e-38, 3.4028235e38, -3.4028235e38, Infinity, -Infinity, 0.1, 1 / 3];
  specials.forEach((s, i) => { if (i < dims) v[i] = s; });
  return v;
}

function unit(id: string): MemoryUnit {
  const at = '2026-01-01T00:00:00.000Z';
  return {
    id, user_id: 'ann', stream_id: 's1', org_id: null, agent_id: null, level: 1, memory_type: 'factual', content: `unit ${id}`, keywords: [],
    speaker: 'user', valid_time: at, transaction_time: at, references: [], assets: [], importance: 0.5, subject: null, attribute: null,
    retired_at: null, retired_reason: null, superseded_by: null,
  };
}

function consolidate(units: ConsolidateCommand['units']): ConsolidateCommand {
  return {
    type: 'memory.consolidate', user_id: 'ann', at: '2026-01-01T00:00:00.000Z', consumed: [], embedder_id: 'emb', method: 'offline',
    units, reinforced: [], retired: [], edges: [], dropped: [],
  };
}

describe('consolidation commands carry vectors as float32 base64', () => {
  let dir: string;
  beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'strata-command-vectors-')); });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps every bit from the embedder, through the log, into the state', async () => {
    const vectors = [1, 2, 3, 4, 5].map((seed) => awkwardVector(seed, 384));
    // What the worker proposes: the plan's numbers (Array.from of the embedder's Float32Array) in the command form.
    const command = consolidate(withCommandVectors(vectors.map((v, i) => ({ unit: unit(`u${i}`), vector: Array.from(v) }))));
    // What a follower applies (the log's JSON parsed) and what the proposer applies (its private copy).
    for (const form of [JSON.parse(JSON.stringify(command)) as ConsolidateCommand, jsonCopy(command) as ConsolidateCommand]) {
      form.units.forEach((u, i) => expect(bits(decodeVector(storedVectorOf(u, 'emb')!))).toEqual(bits(vectors[i])));
    }
    const node = await openNode(dir);
    try {
      await node.log.propose(JSON.parse(JSON.stringify(command)) as Command);
      for (const [i, v] of vectors.entries()) expect(bits((await getUnitVector(node.db, 'ann', `u${i}`))!)).toEqual(bits(v));
    } finally {
      await node.close();
    }
  });

  it('stores the same record for either form, and none for an empty vector', () => {
    const v = awkwardVector(9, 100);
    // -0 and ±Infinity do not survive JSON numbers (they were never sent that way); the rest is the same record.
    const finite = Array.from(v).map((x) => (Number.isFinite(x) && !Object.is(x, -0) ? x : 0.5));
    expect(storedVectorOf(commandVector(finite), 'emb')).toEqual(storedVectorOf({ vector: JSON.parse(JSON.stringify(finite)) as number[] }, 'emb'));
    expect(storedVectorOf(commandVector([]), 'emb')).toBeNull();
    expect(storedVectorOf({ vector: [] }, 'emb')).toBeNull();
  });

  it('replays a log written with vectors as numbers to the state the earlier version made, and today\'s form to the same', async () => {
    const commands = JSON.parse(readFileSync(FIXTURE, 'utf8')) as Command[];
    expect(commands.filter((c) => c.type === 'memory.consolidate' && c.units.some((u) => Array.isArray(u.vector))).length).toBe(2);
    const states: [string, unknown][][] = [];
    for (const [n, log] of [commands, newForm(commands)].entries()) {
      const node = await openNode(join(dir, String(n)));
      try {
        for (const c of log) settle(await node.log.propose(c));
        states.push(await dump(node.db));
      } finally {
        await node.close();
      }
    }
    expect(digest(states[0])).toBe(EARLIER_STATE_SHA256);
    expect(states[1]).toEqual(states[0]);
    // today's form is the smaller log
    expect(JSON.stringify(newForm(commands)).length).toBeLessThan(JSON.stringify(commands).length);
  });

  it('refuses a vector that encodeVector could not have made, writing nothing', async () => {
    const good = commandVector([0.25, -1]).f32_b64;
    const bad = [
      good.slice(0, -1), // cut padding: not canonical
      Buffer.from([1, 2, 3, 4, 5, 6]).toString('base64'), // 6 bytes: not whole float32s
      'AAAAAB==', // padding bits set: decodes, but encodes otherwise
      ' ' + good,
    ];
    const node = await openNode(dir);
    try {
      for (const f32_b64 of bad) {
        const before = await dump(node.db);
        const answer = await node.log.propose(consolidate([{ unit: unit('u1'), f32_b64 }]));
        expect(answer).toEqual({ error: expect.objectContaining({ code: 'invalid_command', status: 400 }) });
        expect((await dump(node.db)).filter(([k]) => !k.endsWith('applied_index'))).toEqual(before.filter(([k]) => !k.endsWith('applied_index')));
      }
    } finally {
      await node.close();
    }
  });

  describe('memory.insights', () => {
    it('replays a log written with vectors as numbers to the state the earlier version made, and today\'s form to the same', async () => {
      const commands = JSON.parse(readFileSync(INSIGHTS_FIXTURE, 'utf8')) as Command[];
      const insights = commands.filter((c): c is InsightsCommand => c.type === 'memory.insights');
      const old = [...insights.flatMap((c) => c.create), ...insights.flatMap((c) => c.update)];
      expect(insights.length).toBe(5);
      // created and updated units, with vectors (numbers) and without (null)
      expect(insights.flatMap((c) => c.create).map((u) => Array.isArray(u.vector))).toEqual([true, true, false]);
      expect(insights.flatMap((c) => c.update).map((u) => Array.isArray(u.vector))).toEqual([true, false, true, true]);
      expect(old.every((u) => u.f32_b64 === undefined)).toBe(true);
      const states: [string, unknown][][] = [];
      for (const [n, log] of [commands, newInsightsForm(commands)].entries()) {
        const node = await openNode(join(dir, String(n)));
        try {
          for (const c of log) settle(await node.log.propose(JSON.parse(JSON.stringify(c)) as Command));
          states.push(await dump(node.db));
        } finally {
          await node.close();
        }
      }
      expect(digest(states[0])).toBe(EARLIER_INSIGHTS_STATE_SHA256);
      expect(states[1]).toEqual(states[0]);
      const bytes = (log: Command[]) => log.filter((c) => c.type === 'memory.insights').reduce((n, c) => n + JSON.stringify(c).length, 0);
      expect(bytes(newInsightsForm(commands))).toBeLessThan(bytes(commands) * 0.6);
    });

    it('keeps every bit of a created or updated insight\'s vector, and refuses one encodeVector could not have made, writing nothing', async () => {
      const node = await openNode(dir);
      try {
        const l2 = { ...unit('i1'), level: 2 as const };
        const insightsOf = (create: InsightsCommand['create'], update: InsightsCommand['update']): InsightsCommand => ({
          type: 'memory.insights', user_id: 'ann', at: '2026-01-01T00:00:00.000Z', embedder_id: 'emb', create, update, edges: [], removed_edges: [], reflected: [],
        });
        const [a, b] = [awkwardVector(3, 64), awkwardVector(4, 64)];
        settle(await node.log.propose(JSON.parse(JSON.stringify(insightsOf([{ unit: l2, ...commandVector(Array.from(a)) }], []))) as Command));
        expect(bits((await getUnitVector(node.db, 'ann', 'i1'))!)).toEqual(bits(a));
        const update = { unit_id: 'i1', content: 'changed', keywords: [], references: [], importance: 0.5, valid_time: '2026-01-01T00:00:00.000Z' };
        settle(await node.log.propose(JSON.parse(JSON.stringify(insightsOf([], [{ ...update, ...commandVector(Array.from(b)) }]))) as Command));
        expect(bits((await getUnitVector(node.db, 'ann', 'i1'))!)).toEqual(bits(b));
        // '' keeps the stored vector, as null did
        settle(await node.log.propose(insightsOf([], [{ ...update, content: 'again', f32_b64: '' }])));
        expect(bits((await getUnitVector(node.db, 'ann', 'i1'))!)).toEqual(bits(b));
        const before = (await dump(node.db)).filter(([k]) => !k.endsWith('applied_index'));
        for (const command of [
          insightsOf([{ unit: { ...l2, id: 'i2' }, f32_b64: 'AAAAAB==' }], []),
          insightsOf([{ unit: { ...l2, id: 'i2' }, ...commandVector([1, 2]) }], [{ ...update, f32_b64: commandVector([1, 2]).f32_b64.slice(0, -1) }]),
        ]) {
          expect(await node.log.propose(command)).toEqual({ error: expect.objectContaining({ code: 'invalid_command', status: 400 }) });
          expect((await dump(node.db)).filter(([k]) => !k.endsWith('applied_index'))).toEqual(before);
        }
      } finally {
        await node.close();
      }
    });
  });
});
