/**
 * Key layout. Every per-user key starts with the user id, then NUL, so one user's data is one key
 * range (user ids cannot contain control characters, see the contract). Positions are zero-padded
 * decimal so that lexicographic order is numeric order.
 */
export const SEP = '\x00';

export function join(...parts: string[]): string {
  return parts.join(SEP);
}

/** The key range of everything under a prefix (prefix + SEP + anything). */
export function prefixRange(...parts: string[]): { gt: string; lt: string } {
  const p = join(...parts) + SEP;
  return { gt: p, lt: p + '\xff' };
}

/** Stream position of an event: the log index of its command and its place in that command. */
export function eventSeq(logIndex: number, position: number): string {
  return String(logIndex).padStart(16, '0') + String(position).padStart(5, '0');
}

export function padIndex(index: number): string {
  return String(index).padStart(16, '0');
}
