/** Majority arithmetic over a voter set. */
import type { NodeId } from './types';

export function majority(n: number): number {
  return Math.floor(n / 2) + 1;
}

/** The highest index stored on a majority of voters (0 with no voters). */
export function quorumIndex(voters: NodeId[], matchOf: (id: NodeId) => number): number {
  if (voters.length === 0) return 0;
  const m = voters.map(matchOf).sort((a, b) => b - a);
  return m[majority(voters.length) - 1];
}

export type VoteResult = 'won' | 'lost' | 'pending';

export function voteResult(voters: NodeId[], votes: Map<NodeId, boolean>): VoteResult {
  let yes = 0;
  let no = 0;
  for (const v of voters) {
    const g = votes.get(v);
    if (g === true) yes++;
    else if (g === false) no++;
  }
  const q = majority(voters.length);
  if (yes >= q) return 'won';
  if (no > voters.length - q) return 'lost';
  return 'pending';
}

export function hasQuorum(voters: NodeId[], active: (id: NodeId) => boolean): boolean {
  let n = 0;
  for (const v of voters) if (active(v)) n++;
  return n >= majority(voters.length);
}
