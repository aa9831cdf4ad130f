import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { seededRandom } from '@strata/raft';
import { compareKeys, StateDb } from '../src';

/** Strings drawn to meet every case of the order: ASCII, BMP below and above the surrogates, astral pairs, lone surrogates, prefixes. */
function randomKey(rnd: () => number): string {
  const pieces = ['a', 'b', 'z', '0', '\x00', '\x7f', 'é', 'ñ', '中', '\ud7ff', '\ue000', '\uffff', '\ufffd', '😀', '𝄞', '\ud800', '\udfff', '\udc00a'];
  let s = '';
  const n = Math.floor(rnd() * 6);
  for (let i = 0; i < n; i++) s += pieces[Math.floor(rnd() * pieces.length)];
  return s;
}

const sign = (x: number): number => (x < 0 ? -1 : x > 0 ? 1 : 0);
const bytes = (a: string, b: string): number => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));

describe('compareKeys (LevelDB key order without encoding where it can)', () => {
  it('orders as the UTF-8 bytes do, for 50,000 pairs of awkward strings', () => {
    const rnd = seededRandom(27_012);
    const wrong: [string, string][] = [];
    for (let i = 0; i < 50_000; i++) {
      const a = randomKey(rnd);
      const b = rnd() < 0.3 ? a + randomKey(rnd) : randomKey(rnd);
      if (sign(compareKeys(a, b)) !== sign(bytes(a, b)) || sign(compareKeys(b, a)) !== sign(bytes(b, a))) wrong.push([a, b]);
    }
    expect(wrong).toEqual([]);
  });

  it('sorts keys as a LevelDB range reads them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'strata-compare-keys-'));
    const db = await StateDb.open(join(dir, 'state'));
    try {
      const rnd = seededRandom(27_013);
      // Lone surrogates are not kept by LevelDB's UTF-8 keys: valid strings only here.
      const keys = [...new Set(Array.from({ length: 400 }, () => randomKey(rnd).replace(/[\ud800-\udfff]/g, (c, at: number, s: string) => (/[\ud800-\udbff][\udc00-\udfff]/.test(s.slice(at, at + 2)) || /[\ud800-\udbff][\udc00-\udfff]/.test(s.slice(at - 1, at + 1)) ? c : 'q'))))].filter((k) => k.length > 0);
      for (const k of keys) await db.meta.put(`cmp\x00${k}`, 1);
      const read: string[] = [];
      for await (const k of db.meta.keys({ gt: 'cmp\x00', lt: 'cmp\x01' })) read.push(k.slice(4));
      expect([...keys].sort(compareKeys)).toEqual(read);
    } finally {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
