/**
 * The key-range directory (key-ranges.ts): the initial table of N groups routes every user exactly as
 * the `fnv1a32 mod N` layout did (so data directories made before ranges keep their users where they
 * are), the table is validated, and `cluster.ranges` records the first table only, on a real LevelDB
 * state machine.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { seededRandom } from '@strata/raft';
import {
  StateDb, StateMachine, fnv1a32, groupOfKey, groupOfUser, initialRanges, invalidTable, keySpaceEnd, rangeKey, readKeyRanges,
} from '../src';

const COUNTS = [1, 2, 3, 4, 5, 7, 8, 12, 16, 64, 100, 255, 256];

describe('the initial table is the modulus layout', () => {
  it('routes every user id to fnv1a32 mod N, for shard counts 1 to 256', () => {
    const rnd = seededRandom(30);
    const users = [
      ...Array.from({ length: 3000 }, (_, i) => `user-${i}`),
      ...Array.from({ length: 2000 }, () => Math.floor(rnd() * 2 ** 48).toString(36)),
      '', 'é', '用户', 'a'.repeat(300),
    ];
    for (const n of COUNTS) {
      const table = initialRanges(n);
      const differ = users.filter((u) => groupOfUser(table, u) !== fnv1a32(u) % n);
      expect([n, differ]).toEqual([n, []]);
    }
  });

  it('maps every hash, the edges of the 32-bit space included, to the group hash mod N, inside the key space', () => {
    const rnd = seededRandom(31);
    for (const n of COUNTS) {
      const table = initialRanges(n);
      const hashes = [0, 1, n - 1, n, 2 ** 32 - 1, 2 ** 32 - n, 2 ** 31, ...Array.from({ length: 2000 }, () => Math.floor(rnd() * 2 ** 32))];
      for (const h of hashes) {
        const key = rangeKey(h, n);
        expect(key).toBeGreaterThanOrEqual(0);
        expect(key).toBeLessThan(keySpaceEnd(n));
        if (groupOfKey(table, key) !== h % n) throw new Error(`hash ${h} with ${n} groups: group ${groupOfKey(table, key)}, not ${h % n}`);
      }
    }
  });

  it('permutes the hashes: two hashes never share a key', () => {
    for (const n of [3, 7, 12]) {
      const keys = new Set(Array.from({ length: 50_000 }, (_, h) => rangeKey(h * 85_899 + 17, n)));
      expect(keys.size).toBe(50_000);
    }
  });
});

describe('table validation', () => {
  it('accepts the initial tables and refuses broken ones', () => {
    for (const n of COUNTS) expect(invalidTable(initialRanges(n))).toBeNull();
    expect(invalidTable({ base: 0, ranges: [{ start: 0, group: 0 }] })).toMatch(/base/);
    expect(invalidTable({ base: 4, ranges: [] })).toMatch(/non-empty/);
    expect(invalidTable({ base: 4, ranges: [{ start: 1, group: 0 }] })).toMatch(/at 0/);
    expect(invalidTable({ base: 2, ranges: [{ start: 0, group: 0 }, { start: 0, group: 1 }] })).toMatch(/after the previous/);
    expect(invalidTable({ base: 2, ranges: [{ start: 0, group: 0 }, { start: keySpaceEnd(2), group: 1 }] })).toMatch(/within the key space/);
    expect(invalidTable({ base: 2, ranges: [{ start: 0, group: -1 }] })).toMatch(/group id/);
  });
});

describe('cluster.ranges apply', () => {
  let dir: string;
  let db: StateDb;
  let sm: StateMachine;
  const at = '2026-01-01T00:00:00.000Z';
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'strata-ranges-'));
    db = await StateDb.open(join(dir, 'state'));
    sm = await StateMachine.open(db);
  });
  afterAll(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('records the first valid table, keeps it against later ones, and refuses an invalid one without change', async () => {
    expect(await readKeyRanges(db)).toBeNull();
    const bad = await sm.apply(1, { type: 'cluster.ranges', at, table: { base: 4, ranges: [{ start: 5, group: 0 }] } });
    expect(bad).toMatchObject({ error: { code: 'invalid_command' } });
    expect(await readKeyRanges(db)).toBeNull();
    expect(await sm.apply(2, { type: 'cluster.ranges', at, table: initialRanges(4) })).toEqual({ status: 'recorded' });
    expect(await sm.apply(3, { type: 'cluster.ranges', at, table: initialRanges(9) })).toEqual({ status: 'already_recorded' });
    expect(await readKeyRanges(db)).toEqual(initialRanges(4));
  });
});
