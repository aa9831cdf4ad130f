/**
 * The store-backed lookups consolidation asks for: a user's current L1 units most similar to a vector,
 * and the units stating a fact about a subject+attribute. Similarity is exact cosine over the user's
 * stored vectors, loaded once per batch (a snapshot: the planner handles the batch's own new units).
 */
import type { SimilarUnit } from '@strata/memory/consolidation';
import { dot, l2norm } from '@strata/memory';
import { allUnits, unitsBySubjectAttribute, userVectors, type MemoryUnit, type StateDb } from '@strata/store';

interface Entry {
  unit: MemoryUnit;
  vector: Float32Array;
  norm: number;
}

/** Ranks (similarity, id) before `than`: higher similarity first, then the smaller id. */
function better(similarity: number, id: string, than: SimilarUnit): boolean {
  return similarity > than.similarity || (similarity === than.similarity && id < than.unit.id);
}

export class UserMemoryView {
  private constructor(private readonly db: StateDb, readonly userId: string, private readonly entries: Entry[]) {}

  /** Current L1 units of the user that have a vector of this embedder (vectors of another model are not comparable). */
  static async load(db: StateDb, userId: string, embedderId: string): Promise<UserMemoryView> {
    const [units, vectors] = await Promise.all([allUnits(db, userId), userVectors(db, userId)]);
    const entries: Entry[] = [];
    for (const unit of units) {
      if (unit.level !== 1 || unit.retired_at !== null) continue;
      const v = vectors.get(unit.id);
      if (!v || v.embedder_id !== embedderId) continue;
      entries.push({ unit, vector: v.vector, norm: l2norm(v.vector) });
    }
    return new UserMemoryView(db, userId, entries);
  }

  get size(): number {
    return this.entries.length;
  }

  /** The k most similar current units, best first (ties by id, so the answer is deterministic). */
  findSimilar = async (userId: string, vector: Float32Array, k: number): Promise<SimilarUnit[]> => {
    if (userId !== this.userId || k <= 0) return [];
    const qn = l2norm(vector);
    if (qn === 0) return [];
    // Top-k by insertion into a short sorted list: one pass over the user's units, no full sort.
    const top: SimilarUnit[] = [];
    for (const e of this.entries) {
      if (e.norm === 0 || e.vector.length !== vector.length) continue;
      // memory's cosine, with both norms computed once per batch rather than once per pair
      const similarity = dot(vector, e.vector) / (qn * e.norm);
      if (top.length === k && !better(similarity, e.unit.id, top[k - 1])) continue;
      let at = top.length;
      while (at > 0 && better(similarity, e.unit.id, top[at - 1])) at--;
      top.splice(at, 0, { unit: e.unit, similarity });
      if (top.length > k) top.pop();
    }
    return top;
  };

  findBySubjectAttribute = (userId: string, subject: string, attribute: string): Promise<MemoryUnit[]> =>
    unitsBySubjectAttribute(this.db, userId, subject, attribute);
}
