/**
 * The state image of a replica for comparison: every key and value of every sublevel, as stored bytes,
 * in LevelDB order. Two replicas agree when their digests are equal; when they do not, `firstDifference`
 * names the first key where their dumps part (what a human needs to find the apply that diverged).
 */
import { createHash } from 'node:crypto';
import type { StateDb } from '../db';

const RAW = { keyEncoding: 'buffer', valueEncoding: 'buffer' } as const;

export type RawPair = [key: Buffer, value: Buffer];

/** Every pair of the database, through one iterator (one consistent LevelDB version). */
export async function dumpState(db: StateDb): Promise<RawPair[]> {
  const out: RawPair[] = [];
  for await (const [k, v] of db.level.iterator<Buffer, Buffer>(RAW)) out.push([k, v]);
  return out;
}

/** sha256 over [u32 key length][key][u32 value length][value]...: lengths make the framing unambiguous. */
export function digestPairs(pairs: readonly RawPair[]): string {
  const h = createHash('sha256');
  const len = Buffer.alloc(4);
  for (const [k, v] of pairs) {
    len.writeUInt32BE(k.length, 0);
    h.update(len).update(k);
    len.writeUInt32BE(v.length, 0);
    h.update(len).update(v);
  }
  return h.digest('hex');
}

/** A key as text a human can read: the NUL separators shown as `\0`, other control bytes escaped. */
export function showKey(key: Buffer): string {
  // eslint-disable-next-line no-control-regex
  return key.toString('utf8').replace(/[\x00-\x1f]/g, (c) => (c === '\x00' ? '\\0' : `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`));
}

function showValue(value: Buffer | undefined): string {
  if (value === undefined) return '(absent)';
  const text = value.toString('utf8');
  return text.length > 300 ? `${text.slice(0, 300)}… (${value.length} bytes)` : text;
}

export interface ReplicaDifference {
  /** position in the dumps where they first part */
  position: number;
  /** per replica: the key at that position (or `(end)`) and its value */
  at: { key: string; value: string }[];
}

/**
 * The first position where the dumps differ (a key or a value), with each replica's pair there; null
 * when all dumps are identical.
 */
export function firstDifference(dumps: readonly (readonly RawPair[])[]): ReplicaDifference | null {
  const longest = Math.max(...dumps.map((d) => d.length));
  for (let i = 0; i < longest; i++) {
    const pairs = dumps.map((d) => d[i]);
    const [first] = pairs;
    const same = pairs.every((p) => p !== undefined && first !== undefined && p[0].equals(first[0]) && p[1].equals(first[1]));
    if (!same) {
      return { position: i, at: pairs.map((p) => ({ key: p ? showKey(p[0]) : '(end)', value: showValue(p?.[1]) })) };
    }
  }
  return null;
}
