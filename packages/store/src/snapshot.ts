/**
 * A snapshot of the state machine is the raw contents of its LevelDB (every sublevel, keys and values
 * as stored bytes) at one applied index. It is what a Raft group installs on a far-behind or new
 * follower and what lets the log be compacted. The image is streamed both ways: written from one
 * LevelDB iterator in pieces of about 1 MiB, read back piece by piece; neither side ever holds the
 * whole image, whatever the size of the state.
 *
 * Format SSN2: magic "SSN2", records [u32 key length][key][u32 value length][value] (big-endian),
 * then the end mark (u32 0xFFFFFFFF) and the SHA-256 of every byte before the digest. A restore
 * verifies the digest in a first pass before it deletes anything. SSN1 (the same records, no end
 * mark, no digest) is still read: images stored by earlier versions.
 */
import { createHash } from 'node:crypto';
import { BufferSnapshotWriter, type SnapshotReader, type SnapshotWriter } from '@strata/raft';
import type { StateDb } from './db';

const MAGIC_V1 = Buffer.from('SSN1');
const MAGIC = Buffer.from('SSN2');
const END = 0xffffffff;
const DIGEST_BYTES = 32;
/** bytes gathered before a piece goes to the writer */
const WRITE_PIECE = 1 << 20;
/** a restore writes a LevelDB batch after this many records or bytes, whichever comes first */
const RESTORE_RECORDS = 2000;
const RESTORE_BYTES = 4 << 20;

export type ImagePair = [key: Buffer, value: Buffer];

/** Encodes records into pieces of about WRITE_PIECE bytes, hashing as it goes. */
class ImageEncoder {
  private readonly hash = createHash('sha256');
  private parts: Buffer[] = [];
  private pending = 0;

  constructor() {
    this.add(MAGIC);
  }

  private add(b: Buffer): void {
    this.hash.update(b);
    this.parts.push(b);
    this.pending += b.length;
  }

  /** Adds a record; returns a piece to write once about WRITE_PIECE bytes are gathered. */
  pair(k: Buffer, v: Buffer): Buffer | null {
    const head = Buffer.allocUnsafe(4);
    head.writeUInt32BE(k.length, 0);
    const mid = Buffer.allocUnsafe(4);
    mid.writeUInt32BE(v.length, 0);
    this.add(head);
    this.add(k);
    this.add(mid);
    this.add(v);
    return this.pending >= WRITE_PIECE ? this.take() : null;
  }

  /** The last piece: what is left, the end mark and the digest. */
  end(): Buffer {
    const mark = Buffer.allocUnsafe(4);
    mark.writeUInt32BE(END, 0);
    this.add(mark);
    this.parts.push(this.hash.digest());
    return this.take();
  }

  private take(): Buffer {
    const piece = Buffer.concat(this.parts);
    this.parts = [];
    this.pending = 0;
    return piece;
  }
}

/**
 * Decodes an image fed in pieces of any size (a record may span pieces). push() returns the records
 * completed by the piece; finish() checks that the image ended where it should and that its digest
 * matches.
 */
export class ImageDecoder {
  /** the start of a record not yet complete (not hashed yet) */
  private carry: Buffer = Buffer.alloc(0);
  private version: 1 | 2 | null = null;
  private readonly hash = createHash('sha256');
  /** bytes consumed before `carry` (for error positions) */
  private at = 0;
  /** the end mark was read: only the digest follows */
  private ended = false;
  private digest: Buffer = Buffer.alloc(0);

  push(piece: Uint8Array): ImagePair[] {
    const chunk = Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength);
    const out: ImagePair[] = [];
    if (this.ended) {
      this.takeDigest(chunk, 0);
      return out;
    }
    const buf = this.carry.length ? Buffer.concat([this.carry, chunk]) : chunk;
    let pos = 0;
    if (this.version === null) {
      if (buf.length < 4) {
        this.carry = Buffer.from(buf);
        return out;
      }
      const magic = buf.subarray(0, 4);
      if (magic.equals(MAGIC)) this.version = 2;
      else if (magic.equals(MAGIC_V1)) this.version = 1;
      else throw new Error('not a Strata state snapshot (bad magic)');
      pos = 4;
    }
    while (pos + 4 <= buf.length) {
      const kl = buf.readUInt32BE(pos);
      if (kl === END && this.version === 2) {
        pos += 4;
        this.ended = true;
        break;
      }
      if (pos + 8 + kl > buf.length) break;
      const vl = buf.readUInt32BE(pos + 4 + kl);
      if (pos + 8 + kl + vl > buf.length) break;
      // Copies: the piece's memory may be reused by the reader once we return.
      out.push([Buffer.from(buf.subarray(pos + 4, pos + 4 + kl)), Buffer.from(buf.subarray(pos + 8 + kl, pos + 8 + kl + vl))]);
      pos += 8 + kl + vl;
    }
    // Every byte before the digest is hashed, once: the magic, the records, the end mark.
    this.hash.update(buf.subarray(0, pos));
    this.at += pos;
    if (this.ended) {
      this.carry = Buffer.alloc(0);
      this.takeDigest(buf, pos);
    } else {
      this.carry = Buffer.from(buf.subarray(pos));
    }
    return out;
  }

  private takeDigest(buf: Buffer, pos: number): void {
    const rest = buf.subarray(pos);
    if (this.digest.length + rest.length > DIGEST_BYTES) throw new Error(`snapshot image has bytes after its digest (at byte ${this.at + DIGEST_BYTES})`);
    this.digest = Buffer.concat([this.digest, rest]);
  }

  finish(): void {
    if (this.version === null) throw new Error('not a Strata state snapshot (bad magic)');
    if (this.carry.length) throw new Error(`truncated snapshot at byte ${this.at}`);
    if (this.version === 1) return;
    if (!this.ended || this.digest.length !== DIGEST_BYTES) throw new Error(`truncated snapshot at byte ${this.at}`);
    if (!this.hash.digest().equals(this.digest)) throw new Error('snapshot image does not match its digest (corrupted)');
  }
}

/** Encodes a whole image in memory (tests and tools; the node streams with writeImage). */
export function encodeImage(pairs: Iterable<ImagePair>): Buffer {
  const pieces: Buffer[] = [];
  const enc = new ImageEncoder();
  for (const [k, v] of pairs) {
    const piece = enc.pair(k, v);
    if (piece) pieces.push(piece);
  }
  pieces.push(enc.end());
  return Buffer.concat(pieces);
}

/** Decodes and verifies a whole image held in memory. */
export function* decodeImage(image: Buffer): Generator<ImagePair> {
  const dec = new ImageDecoder();
  yield* dec.push(image);
  dec.finish();
}

const RAW = { keyEncoding: 'buffer', valueEncoding: 'buffer' } as const;

/**
 * Streams the whole database through one iterator (a LevelDB iterator sees one consistent version)
 * into `out`, in pieces of about 1 MiB, awaiting each (back-pressure).
 */
export async function writeImage(db: StateDb, out: SnapshotWriter): Promise<void> {
  const enc = new ImageEncoder();
  // Fixed here, before the first await: the image is the state at the call, whatever applies after
  // (the Raft driver writes snapshots while applies go on).
  const view = db.level.snapshot();
  const it = db.level.iterator<Buffer, Buffer>({ ...RAW, snapshot: view });
  try {
    for (;;) {
      const pairs = await it.nextv(1000); // a thousand records per call: far cheaper than one at a time
      if (pairs.length === 0) break;
      for (const [k, v] of pairs) {
        const piece = enc.pair(k, v);
        if (piece) await out.write(piece);
      }
    }
  } finally {
    await it.close();
    await view.close();
  }
  await out.write(enc.end());
}

/** Reads an image through without writing anything: throws unless it is complete and its digest matches. */
export async function verifyImage(image: SnapshotReader): Promise<number> {
  const dec = new ImageDecoder();
  let records = 0;
  for await (const piece of image.chunks()) records += dec.push(piece).length;
  dec.finish();
  return records;
}

/**
 * Replaces the database's contents by an image, streaming. The image is verified whole first (nothing
 * is deleted for an image that would not restore), then read again into batches of bounded size. The
 * meta keys named in `lastKeys` (the applied index) are written in the final batch, so an interrupted
 * restore reads as "applied 0" and is redone.
 */
export async function restoreImage(db: StateDb, image: SnapshotReader, lastKeys: string[]): Promise<void> {
  await verifyImage(image);
  await db.level.clear();
  const late = new Set(lastKeys.map((k) => Buffer.from(db.meta.prefix + k, 'utf8').toString('latin1')));
  const deferred: ImagePair[] = [];
  let batch: ImagePair[] = [];
  let bytes = 0;
  const flush = async () => {
    if (batch.length) await db.level.batch(batch.map(([key, value]) => ({ type: 'put' as const, key, value, ...RAW })) as never);
    batch = [];
    bytes = 0;
  };
  const dec = new ImageDecoder();
  for await (const piece of image.chunks()) {
    for (const pair of dec.push(piece)) {
      if (late.has(pair[0].toString('latin1'))) {
        deferred.push(pair);
        continue;
      }
      batch.push(pair);
      bytes += pair[0].length + pair[1].length;
      if (batch.length >= RESTORE_RECORDS || bytes >= RESTORE_BYTES) await flush();
    }
  }
  dec.finish();
  await flush();
  batch = deferred;
  await flush();
}

/** The whole image in memory: for tests and tools on small states (a node streams with writeImage). */
export async function snapshotImage(db: StateDb): Promise<Buffer> {
  const out = new BufferSnapshotWriter();
  await writeImage(db, out);
  return out.bytes();
}
