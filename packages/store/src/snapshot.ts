/**
 * A snapshot of the state machine is the raw contents of its LevelDB (every sublevel, keys and values
 * as stored bytes) at one applied index. It is what a Raft group installs on a far-behind or new
 * follower and what lets the log be compacted. The image is plain data: encode/decode are pure.
 *
 * Format: magic "SSN1", then records [u32 key length][key][u32 value length][value], big-endian.
 */
import type { StateDb } from './db';

const MAGIC = Buffer.from('SSN1');
/** records per LevelDB batch while restoring (bounded memory per write) */
const RESTORE_CHUNK = 2000;

export type ImagePair = [key: Buffer, value: Buffer];

export function encodeImage(pairs: Iterable<ImagePair>): Buffer {
  const parts: Buffer[] = [MAGIC];
  for (const [k, v] of pairs) {
    const head = Buffer.allocUnsafe(4);
    head.writeUInt32BE(k.length, 0);
    const mid = Buffer.allocUnsafe(4);
    mid.writeUInt32BE(v.length, 0);
    parts.push(head, k, mid, v);
  }
  return Buffer.concat(parts);
}

export function* decodeImage(image: Buffer): Generator<ImagePair> {
  if (image.length < MAGIC.length || !image.subarray(0, MAGIC.length).equals(MAGIC)) throw new Error('not a Strata state snapshot (bad magic)');
  let at = MAGIC.length;
  while (at < image.length) {
    if (at + 4 > image.length) throw new Error(`truncated snapshot at byte ${at}`);
    const kl = image.readUInt32BE(at);
    const k = image.subarray(at + 4, at + 4 + kl);
    at += 4 + kl;
    if (at + 4 > image.length) throw new Error(`truncated snapshot at byte ${at}`);
    const vl = image.readUInt32BE(at);
    const v = image.subarray(at + 4, at + 4 + vl);
    at += 4 + vl;
    if (k.length !== kl || v.length !== vl) throw new Error(`truncated snapshot at byte ${at}`);
    yield [k, v];
  }
}

const RAW = { keyEncoding: 'buffer', valueEncoding: 'buffer' } as const;

/** Reads the whole database through one iterator (a LevelDB iterator sees one consistent version). */
export async function snapshotImage(db: StateDb): Promise<Buffer> {
  const pairs: ImagePair[] = [];
  for await (const [k, v] of db.level.iterator<Buffer, Buffer>(RAW)) pairs.push([k, v]);
  return encodeImage(pairs);
}

/**
 * Replaces the database's contents by an image. The meta keys named in `lastKeys` (the applied index)
 * are written in the final batch, so an interrupted restore reads as "applied 0" and is redone.
 */
export async function restoreImage(db: StateDb, image: Buffer, lastKeys: string[]): Promise<void> {
  const pairs = [...decodeImage(image)]; // validates the whole image before anything is deleted
  await db.level.clear();
  const late = new Set(lastKeys.map((k) => Buffer.from(db.meta.prefix + k, 'utf8').toString('latin1')));
  const deferred: ImagePair[] = [];
  let batch: ImagePair[] = [];
  const flush = async (items: ImagePair[]) => {
    if (items.length) await db.level.batch(items.map(([key, value]) => ({ type: 'put' as const, key, value, ...RAW })) as never);
  };
  for (const pair of pairs) {
    if (late.has(pair[0].toString('latin1'))) {
      deferred.push(pair);
      continue;
    }
    batch.push(pair);
    if (batch.length >= RESTORE_CHUNK) {
      await flush(batch);
      batch = [];
    }
  }
  await flush(batch);
  await flush(deferred);
}
