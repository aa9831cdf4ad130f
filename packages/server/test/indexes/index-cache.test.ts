/**
 * The byte budget of the per-user derived indexes (index-cache.ts, derived.ts): least-recently-used
 * eviction, no entry for a user without memory, and an evicted user rebuilt from LevelDB answers exactly
 * as one never evicted (real LevelDB, real log; two managers over the same state machine).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { HashingEmbedder } from '@strata/memory';
import { LocalLog, StateDb, StateMachine, settle, type Edge, type MemoryUnit } from '@strata/store';
import type { retrieval } from '@strata/memory';
import { DerivedIndexes } from '../../src/indexes/derived';

type UserIndex = retrieval.UserIndex;
import { IndexCache } from '../../src/indexes/index-cache';

const T0 = '2026-01-01T00:00:00.000Z';
const WORDS = 'kite garden violin harbour lantern pepper orchard falcon marble canyon'.split(' ');
const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

function unit(user: string, n: number): MemoryUnit {
  return {
    id: uuid(n), user_id: user, stream_id: n % 2 === 0 ? 's1' : 's2', org_id: null, agent_id: null, level: 1, memory_type: 'factual',
    content: `${user} remembers the ${WORDS[n % WORDS.length]} and the ${WORDS[(n * 3) % WORDS.length]} (${n})`, keywords: [WORDS[(n * 7) % WORDS.length]],
    speaker: null, valid_time: T0, transaction_time: T0, references: [], assets: [], importance: 0.5, subject: null, attribute: null,
    retired_at: null, retired_reason: null, superseded_by: null,
  };
}

describe('IndexCache', () => {
  it('evicts the least recently used entries beyond the budget, never the one being resized', () => {
    const cache = new IndexCache(100);
    const evicted: string[] = [];
    const [a, b, c] = [{}, {}, {}];
    cache.touch(a, () => evicted.push('a'));
    cache.resize(a, 60);
    cache.touch(b, () => evicted.push('b'));
    cache.resize(b, 30);
    cache.touch(a, () => evicted.push('a')); // a is now the most recent
    cache.touch(c, () => evicted.push('c'));
    cache.resize(c, 50); // 140 > 100: b goes (least recent), then 110 > 100: a goes
    expect(evicted).toEqual(['b', 'a']);
    expect([cache.size, cache.bytes, cache.evictions]).toEqual([1, 50, 2]);
    cache.resize(c, 500); // alone over the budget: kept (it is the one in use)
    expect([cache.size, cache.bytes]).toEqual([1, 500]);
    cache.remove(c);
    expect([cache.size, cache.bytes, cache.evictions, cache.builds]).toEqual([0, 0, 2, 3]);
  });
});

describe('DerivedIndexes within a byte budget', () => {
  let dir: string;
  let db: StateDb;
  let log: LocalLog;
  let next = 1;
  const managers: DerivedIndexes[] = [];

  const manager = (cache: IndexCache) => {
    const m = new DerivedIndexes({ db, embedder: new HashingEmbedder(), logger: pino({ level: 'silent' }), cache });
    managers.push(m);
    return m;
  };

  /** Adds `count` units to a user, each linked to the previous one by an edge. */
  async function write(user: string, count: number): Promise<void> {
    const units = Array.from({ length: count }, () => unit(user, next++));
    const edges: Edge[] = units.slice(1).map((u, i) => ({
      edge_id: uuid(900_000 + next + i), user_id: user, source_id: units[i].id, target_id: u.id, relation: 'RelatedTo', weight: 0.5, created_at: T0,
    }));
    const vectors = await new HashingEmbedder().embed(units.map((u) => u.content));
    settle(await log.propose({
      type: 'memory.consolidate', user_id: user, at: T0, consumed: [], embedder_id: new HashingEmbedder().id, method: 'offline',
      units: units.map((u, i) => ({ unit: u, vector: Array.from(vectors[i]) })), reinforced: [], retired: [], edges, dropped: [],
    }));
  }

  /** What retrieval reads of a user's indexes: records, text and vector rankings, graph, streams. */
  async function answers(index: UserIndex) {
    const [queryVector] = await new HashingEmbedder().embed(['the kite in the garden']);
    return {
      units: [...index.units.values()].sort((a, b) => a.id.localeCompare(b.id)),
      text: index.text.search('kite garden violin', 50),
      own: index.fields.own.search('harbour lantern', 50),
      vector: index.vector.search(queryVector, 50),
      neighbors: [...index.units.keys()].sort().map((id) => [...index.neighbors(id)].map((n) => `${n.relation}:${n.direction}:${n.id}`).sort()),
      streams: [...index.byStream].map(([s, ids]) => [s, [...ids].sort()]).sort(),
    };
  }

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'strata-index-cache-'));
    db = await StateDb.open(join(dir, 'state'));
    const sm = await StateMachine.open(db);
    log = await LocalLog.open(join(dir, 'log'), sm);
    sm.onApplied((_i, _command, _result, effects) => managers.forEach((m) => m.onApplied(effects)));
  });
  afterEach(async () => {
    await Promise.all(managers.splice(0).map((m) => m.idle()));
    await log.close();
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates no entry for users without memory, and answers them from an empty index', async () => {
    const cache = new IndexCache(1 << 30);
    const m = manager(cache);
    await write('ann', 2);
    for (let i = 0; i < 200; i++) {
      const index = await m.localIndex(`nobody-${i}`);
      expect(index.size).toBe(0);
      expect(m.holds(`nobody-${i}`)).toBe(false);
    }
    // a user id that is a prefix of a real one, or extends it, holds nothing either
    for (const id of ['an', 'ann ', 'annie']) expect((await m.localIndex(id)).size).toBe(0);
    expect([cache.size, cache.builds]).toEqual([0, 0]); // nothing built, not only nothing kept
    expect((await m.localIndex('ann')).size).toBe(2);
    expect(m.holds('ann')).toBe(true);
    expect([cache.size, cache.bytes > 0]).toEqual([1, true]);
  });

  it('drops a user whose last unit is deleted', async () => {
    const cache = new IndexCache(1 << 30);
    const m = manager(cache);
    await write('gus', 2);
    const ids = [...(await m.localIndex('gus')).units.keys()];
    expect(cache.size).toBe(1);
    settle(await log.propose({ type: 'memory.delete', user_id: 'gus', at: T0, unit_ids: ids, event_ids: [], require_units: true }));
    expect((await m.localIndex('gus')).size).toBe(0); // the refresh, awaited
    await new Promise((r) => setImmediate(r)); // sizes are measured once per turn of the event loop
    expect([m.holds('gus'), cache.size, cache.bytes]).toEqual([false, 0, 0]);
  });

  it('serves users round-robin under a tiny budget with the same answers as under a large one', async () => {
    const users = ['ann', 'bob', 'cy', 'dee', 'eve', 'fay'];
    for (const [i, user] of users.entries()) await write(user, 3 + i);
    const tinyCache = new IndexCache(1);
    const bigCache = new IndexCache(1 << 30);
    const tiny = manager(tinyCache);
    const big = manager(bigCache);
    for (let round = 0; round < 3; round++) {
      for (const user of users) {
        // a change of the user while it is not held (evicted) must be there when it is built again
        await write(user, 1);
        expect(await answers(await tiny.localIndex(user))).toEqual(await answers(await big.localIndex(user)));
        expect(tiny.holds(user)).toBe(true);
      }
    }
    await Promise.all([tiny.idle(), big.idle()]);
    expect(tinyCache.size).toBe(1);
    expect(tinyCache.evictions).toBeGreaterThanOrEqual(3 * users.length - 1);
    expect(bigCache.size).toBe(users.length);
    expect(bigCache.evictions).toBe(0);
    expect(users.filter((u) => big.holds(u))).toEqual(users);
  });

  it('gives an estimate that grows with what a user holds (vectors, text, graph)', async () => {
    await write('small', 2);
    await write('large', 60);
    const m = manager(new IndexCache(1 << 30));
    const small = (await m.localIndex('small')).estimatedBytes();
    const large = (await m.localIndex('large')).estimatedBytes();
    // 256 floats a vector alone is 1 KiB a unit
    expect(large - small).toBeGreaterThan(58 * 1024);
    expect(large).toBeLessThan(60 * 64 * 1024);
  });
});
