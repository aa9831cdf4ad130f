/**
 * Whether an insight quotes a memory replaced since it was planned: one of its `DerivedFrom` members is
 * superseded (fusion.ts scales such an insight for a question about now). An insight links to every memory
 * it summarizes (hundreds), so asking it of every insight a query scores walked all of them, query after
 * query (0.5 ms of a query at 20 users × 1,000 events); a user's index keeps the answers until its members'
 * retirement or its edges change (`OutdatedInsights`).
 */
import type { Neighbors, RetrievalUnit } from './types';

/** Does the insight `id` summarize a memory that a newer one has replaced since? */
export function summarizesSuperseded(id: string, neighbors: Neighbors, getUnit: (id: string) => RetrievalUnit | undefined): boolean {
  for (const nb of neighbors(id)) {
    if (nb.relation !== 'DerivedFrom' || nb.direction !== 'out') continue;
    if (isSuperseded(getUnit(nb.id))) return true;
  }
  return false;
}

function isSuperseded(member: RetrievalUnit | undefined): boolean {
  return !!member?.retired_at && member.retired_reason === 'superseded';
}

/**
 * `summarizesSuperseded` over one set's own records, kept until the set says its state changed
 * (`invalidate`: a record's retirement, an edge, a unit put or deleted). A query looks its units up in the
 * user's set first, so an answer made from the set's records alone is the query's; when a member is not
 * in the set (a query may find it elsewhere: an org set, a pending event) nothing is kept and `known`
 * answers null, so the caller asks `summarizesSuperseded` with its own lookup.
 */
export class OutdatedInsights {
  private readonly kept = new Map<string, boolean>();

  constructor(private readonly neighbors: Neighbors, private readonly units: ReadonlyMap<string, RetrievalUnit> | (() => ReadonlyMap<string, RetrievalUnit>)) {}

  /** true / false as `summarizesSuperseded` answers with a lookup that tries this set first, or null when that depends on other sets. */
  known(id: string): boolean | null {
    const kept = this.kept.get(id);
    if (kept !== undefined) return kept;
    const units = typeof this.units === 'function' ? this.units() : this.units;
    let missing = false;
    for (const nb of this.neighbors(id)) {
      if (nb.relation !== 'DerivedFrom' || nb.direction !== 'out') continue;
      const member = units.get(nb.id);
      if (member === undefined) missing = true;
      else if (isSuperseded(member)) {
        this.kept.set(id, true);
        return true;
      }
    }
    if (missing) return null;
    this.kept.set(id, false);
    return false;
  }

  /** The set's records or edges changed in a way that may change an answer. */
  invalidate(): void {
    this.kept.clear();
  }

  get size(): number {
    return this.kept.size;
  }
}
