/**
 * The state snapshot image, streamed: written from a LevelDB iterator in bounded pieces, decoded from
 * pieces of any size (records spanning pieces), verified by its digest before a restore deletes
 * anything, and restored in bounded batches to the same bytes.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BufferSnapshotWriter, bufferSnapshotReader } from '@strata/raft';
import { ImageDecoder, StateDb, decodeImage, encodeImage, restoreImage, snapshotImage, verifyImage, writeImage, type ImagePair } from '../src';

const RAW = { keyEncoding: 'buffer', valueEncoding: 'buffer' } as const;
const pairs: ImagePair[] = [
  [Buffer.from('!meta!applied_index'), Buffer.from('17')],
  [Buffer.from('empty'), Buffer.alloc(0)],
  [Buffer.from('k'), Buffer.alloc(300, 7)],
];

/** Deterministic piece sizes 1..max. */
function sizes(max: number, seed = 1): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return 1 + (s % max);
  };
}

describe('snapshot image codec', () => {
  it('decodes the same records from pieces of any size, and refuses a corrupted, truncated or extended image', async () => {
    const image = encodeImage(pairs);
    expect([...decodeImage(image)]).toEqual(pairs);
    for (const max of [1, 3, 17, 1000]) {
      const dec = new ImageDecoder();
      const got: ImagePair[] = [];
      for await (const piece of bufferSnapshotReader(image, 0, sizes(max, max)).chunks()) got.push(...dec.push(piece));
      dec.finish();
      expect(got).toEqual(pairs);
    }
    const flipped = Buffer.from(image);
    flipped[image.length - 50] ^= 1; // inside the last value: every record still parses
    await expect(verifyImage(bufferSnapshotReader(flipped, 7))).rejects.toThrow(/digest/);
    await expect(verifyImage(bufferSnapshotReader(image.subarray(0, image.length - 1), 7))).rejects.toThrow(/truncated/);
    await expect(verifyImage(bufferSnapshotReader(Buffer.concat([image, Buffer.from([0])]), 7))).rejects.toThrow(/after its digest/);
    expect(() => [...decodeImage(Buffer.from('nope'))]).toThrow(/magic/);
  });

  it('still reads an SSN1 image (no digest) of an earlier version', () => {
    const parts: Buffer[] = [Buffer.from('SSN1')];
    for (const [k, v] of pairs) {
      const kl = Buffer.alloc(4);
      kl.writeUInt32BE(k.length);
      const vl = Buffer.alloc(4);
      vl.writeUInt32BE(v.length);
      parts.push(kl, k, vl, v);
    }
    expect([...decodeImage(Buffer.concat(parts))]).toEqual(pairs);
  });
});

describe('snapshot image of a LevelDB state', () => {
  let root: string;
  const dbs: StateDb[] = [];
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'strata-image-'));
  });
  afterAll(async () => {
    for (const db of dbs) await db.close();
    rmSync(root, { recursive: true, force: true });
  });
  const open = async (name: string) => {
    const db = await StateDb.open(join(root, name));
    dbs.push(db);
    return db;
  };

  it('streams in bounded pieces and restores to the same bytes; an image that does not verify changes nothing', async () => {
    const a = await open('a');
    // ~6 MiB of state: the image is several pieces of about 1 MiB
    for (let b = 0; b < 6; b++) {
      await a.level.batch(Array.from({ length: 1000 }, (_, i) => ({ type: 'put' as const, key: Buffer.from(`k${b}-${String(i).padStart(4, '0')}`), value: Buffer.alloc(1024, b + i), ...RAW })) as never);
    }
    await a.meta.put('applied_index', 42);
    const out = new BufferSnapshotWriter();
    await writeImage(a, out);
    expect(out.pieces.length).toBeGreaterThan(4);
    expect(Math.max(...out.pieces)).toBeLessThan((1 << 20) + 2048); // one piece is about 1 MiB, never the whole image
    const image = out.bytes();

    const b = await open('b');
    await b.level.put(Buffer.from('old'), Buffer.from('state'), RAW);
    const broken = Buffer.from(image);
    broken[image.length - 40] ^= 0xff;
    await expect(restoreImage(b, bufferSnapshotReader(broken, 64 * 1024), ['applied_index'])).rejects.toThrow(/digest/);
    expect((await b.level.get(Buffer.from('old'), RAW))?.toString()).toBe('state'); // refused before anything was deleted

    await restoreImage(b, bufferSnapshotReader(image, 0, sizes(70_000)), ['applied_index']);
    expect((await snapshotImage(b)).equals(image)).toBe(true);
    expect(await b.meta.get('applied_index')).toBe(42);
  });
});
