/**
 * Key layout. Every per-user key starts with the user id, then NUL, so one user's data is one key
 * range (user ids cannot contain control characters, see the contract). Positions are zero-padded
 * decimal so that lexicographic order is numeric order.
 *
 * Range ends are computed from the prefix, never from a "highest character": LevelDB compares the UTF-8
 * bytes of keys, and a bound such as prefix + '\xff' (UTF-8 C3 BF) cuts off every key whose next
 * component starts at U+00FF or above (user ids, org contributors, subjects). Since SEP is the byte 00
 * and no component holds it, every key under `prefix + SEP` sorts below `prefix + '\x01'` and every other
 * key sorts outside [prefix + SEP, prefix + '\x01'): the range is exact for any component, whatever its
 * characters (docs/security.md, "Key encoding").
 */
export const SEP = '\x00';
/** The character right after SEP: `x + SEP_END` bounds every key `x + SEP + …` from above. */
export const SEP_END = '\x01';

export function join(...parts: string[]): string {
  return parts.join(SEP);
}

/** The key range of everything under a prefix (prefix + SEP + anything), exact whatever the parts hold. */
export function prefixRange(...parts: string[]): { gt: string; lt: string } {
  const p = join(...parts);
  return { gt: p + SEP, lt: p + SEP_END };
}

/** The first key after every key of a prefix (prefix + SEP + anything): a seek target to skip past it. */
export function afterPrefix(...parts: string[]): string {
  return join(...parts) + SEP_END;
}

/**
 * Compares two strings as LevelDB orders their keys (UTF-8 bytes, i.e. code points). JavaScript's `<`
 * compares UTF-16 code units, which puts U+E000..U+FFFF after astral characters (surrogates D800-DFFF):
 * code that compares keys it read must use this, or it disagrees with the iteration order.
 */
export function compareKeys(a: string, b: string): number {
  // Up to the first difference without a surrogate, code units order as code points do (so as UTF-8
  // bytes): no encoding. A surrogate on the way (an astral character, or a lone one) takes the bytes.
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if ((x >= 0xd800 && x <= 0xdfff) || (y >= 0xd800 && y <= 0xdfff)) return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
    if (x !== y) return x < y ? -1 : 1;
  }
  // One is a prefix of the other: its bytes are a prefix of the other's.
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

/** Stream position of an event: the log index of its command and its place in that command. */
export function eventSeq(logIndex: number, position: number): string {
  return String(logIndex).padStart(16, '0') + String(position).padStart(5, '0');
}

export function padIndex(index: number): string {
  return String(index).padStart(16, '0');
}
