/** Invariant violations are bugs: they throw with a message saying which rule broke. */
export class InvariantError extends Error {
  override name = 'InvariantError';
}

export function invariant(cond: unknown, msg: string | (() => string)): asserts cond {
  if (!cond) throw new InvariantError(typeof msg === 'function' ? msg() : msg);
}
