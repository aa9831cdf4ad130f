/**
 * Estimates of the memory that in-memory index structures hold, in bytes, for cache budgets (the
 * server's per-user index cache, `memory.index_cache_bytes`). They model V8 on 64-bit without pointer
 * compression (Node's default): a heap string is a 16-byte header plus one byte a character (two when
 * it holds one beyond U+00FF); an object is a 24-byte header plus 8 bytes a property; an array a 32-byte
 * header plus 8 bytes a slot; a Map or Set entry ~40 bytes with its share of the hash table; a typed
 * array its bytes plus ~96 for the view and buffer objects. Checked against measured heap growth by
 * scripts/bench-index-memory.ts (it prints both); an estimate, not an accounting of every byte.
 */
export const SIZE = {
  string: 16,
  object: 24,
  property: 8,
  array: 32,
  slot: 8,
  mapEntry: 40,
  /** an empty Map or Set and its initial table */
  map: 64,
  typedArray: 96,
} as const;

// eslint-disable-next-line no-control-regex
const ONE_BYTE = /^[\u0000-\u00ff]*$/;

export function stringBytes(s: string): number {
  return SIZE.string + (ONE_BYTE.test(s) ? s.length : 2 * s.length);
}

export function typedArrayBytes(a: ArrayBufferView): number {
  return SIZE.typedArray + a.byteLength;
}

/**
 * A plain JSON-like value (a record as the indexes keep it): its strings, arrays and objects. Property
 * names are not counted (V8 shares them through the object's shape).
 */
export function valueBytes(value: unknown, depth = 0): number {
  if (typeof value === 'string') return stringBytes(value);
  if (typeof value === 'number') return Number.isInteger(value) && Math.abs(value) < 2 ** 30 ? 0 : 16;
  if (value === null || typeof value !== 'object' || depth > 8) return 0;
  if (ArrayBuffer.isView(value)) return typedArrayBytes(value);
  if (Array.isArray(value)) {
    let n = SIZE.array + SIZE.slot * value.length;
    for (const v of value) n += valueBytes(v, depth + 1);
    return n;
  }
  let n = SIZE.object;
  for (const v of Object.values(value)) n += SIZE.property + valueBytes(v, depth + 1);
  return n;
}
