/**
 * A private copy of a value that is exactly what a JSON round trip (`JSON.parse(JSON.stringify(v))`)
 * gives back, or undefined when the round trip would change anything. The Raft log carries commands as
 * JSON and every replica but the proposer applies the parsed bytes; the proposer applies this copy
 * instead of parsing back what it just wrote (and the bytes are written from the copy), so its apply
 * sees the same values as everyone else's, and nothing the proposer does to its own object afterwards
 * reaches the state.
 *
 * Accepted: null, booleans, strings, finite numbers other than -0, arrays without holes (their
 * elements accepted), objects whose prototype is Object.prototype (their own enumerable string keys,
 * values accepted, no `__proto__` key). Anything else (undefined, -0, NaN, Infinity, functions,
 * bigints, symbols, Dates and other class instances, Buffers and typed arrays, objects with a null
 * prototype, sparse arrays) makes the whole value refused: the caller falls back to the round trip.
 * Walking stops at depth 256 (refused) rather than growing the stack.
 */
const MAX_DEPTH = 256;
const REFUSED = Symbol('refused');

export function jsonCopy<T>(value: T): T | undefined {
  const out = copy(value, 0);
  return out === REFUSED ? undefined : (out as T);
}

function copy(v: unknown, depth: number): unknown {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return v;
    case 'number':
      return Number.isFinite(v) && !Object.is(v, -0) ? v : REFUSED;
    case 'object':
      break;
    default:
      return REFUSED;
  }
  if (v === null) return null;
  if (depth >= MAX_DEPTH) return REFUSED;
  const proto = Object.getPrototypeOf(v) as unknown;
  if (proto === Array.prototype) {
    const a = v as unknown[];
    const out: unknown[] = [];
    for (let i = 0; i < a.length; i++) {
      if (!(i in a)) return REFUSED;
      const x = copy(a[i], depth + 1);
      if (x === REFUSED) return REFUSED;
      out.push(x);
    }
    return out;
  }
  if (proto !== Object.prototype) return REFUSED;
  const o = v as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(o)) {
    if (k === '__proto__') return REFUSED;
    const x = copy(o[k], depth + 1);
    if (x === REFUSED) return REFUSED;
    out[k] = x;
  }
  return out;
}
