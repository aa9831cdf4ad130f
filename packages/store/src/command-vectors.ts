import type { InsightVector } from './commands';
import { encodeVector, type StoredVector } from './db';

/**
 * How a consolidation command carries a unit's embedding. Since issue 27 the proposer writes the
 * bytes the state stores (`f32_b64`: little-endian float32, base64, as `encodeVector` makes them), so
 * the log's JSON holds one short string per unit instead of a few hundred decimal numbers (about a
 * quarter of the bytes), and apply stores the string as it is instead of converting each number.
 * Logs written before carry `vector` (JSON numbers); apply still takes them and stores the same bytes.
 * `memory.insights` carries its L2 units' vectors the same way since the session after (InsightVector).
 */
export type CommandVector = { f32_b64: string; vector?: undefined } | { vector: number[]; f32_b64?: undefined };

/** The command form of an embedding (empty or null: the unit has none, as an empty or null `vector` meant). */
export function commandVector(vector: ArrayLike<number> | null): { f32_b64: string } {
  return { f32_b64: vector && vector.length > 0 ? encodeVector(vector, '').f32_b64 : '' };
}

/**
 * The record the state stores for a command's embedding, or null when it carries none. `undefined`
 * when `f32_b64` is not what `encodeVector` could have made (not canonical base64, or not whole
 * float32s): a plan no correct proposer makes, refused as a whole by the caller. Decoding and encoding
 * again is a pure function of the string, so every replica decides alike.
 */
export function storedVectorOf(v: CommandVector | InsightVector, embedderId: string): StoredVector | null | undefined {
  if (v.f32_b64 === undefined) return v.vector && v.vector.length > 0 ? encodeVector(v.vector, embedderId) : null;
  if (typeof v.f32_b64 !== 'string') return undefined;
  if (v.f32_b64 === '') return null;
  const bytes = Buffer.from(v.f32_b64, 'base64');
  if (bytes.length % 4 !== 0 || bytes.toString('base64') !== v.f32_b64) return undefined;
  return { embedder_id: embedderId, dims: bytes.length / 4, f32_b64: v.f32_b64 };
}

/** A plan's new units (vectors as numbers) in the command form. */
export function withCommandVectors<U extends { unit: unknown; vector: ArrayLike<number> }>(units: readonly U[]): ({ unit: U['unit'] } & { f32_b64: string })[] {
  return units.map((u) => ({ unit: u.unit, ...commandVector(u.vector) }));
}
