import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readMany, StateDb, SYNC_READ_MAX } from '../src';

describe('readMany (a few keys synchronously, more in one getMany)', () => {
  let dir: string;
  let db: StateDb;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'strata-read-many-'));
    db = await StateDb.open(join(dir, 'state'));
    for (let i = 0; i < 40; i += 2) await db.meta.put(`k${i}`, i);
  });
  afterAll(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers what getMany answers, in key order, for small and large key lists, missing keys included', async () => {
    for (const n of [0, 1, SYNC_READ_MAX, SYNC_READ_MAX + 1, 40]) {
      const keys = Array.from({ length: n }, (_, i) => `k${(i * 7) % 40}`);
      expect(await readMany(db.meta, keys)).toEqual(await db.meta.getMany(keys));
    }
  });

  it('sees a write made just before it', async () => {
    await db.meta.put('fresh', 'value');
    expect(await readMany(db.meta, ['fresh', 'k1'])).toEqual(['value', undefined]);
  });
});
