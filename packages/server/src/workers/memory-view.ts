/**
 * The store-backed lookups consolidation asks for: a user's current L1 units most similar to a vector,
 * and the units stating a fact about a subject+attribute. Reads the user's units and vectors once per
 * batch (a snapshot: the planner handles the batch's own new units); the ranking is memory's
 * `SimilarUnits` (exact cosine, top-k).
 */
import { SimilarUnits, type SimilarUnit } from '@strata/memory/consolidation';
import { allUnits, unitsBySubjectAttribute, userVectors, type MemoryUnit, type StateDb } from '@strata/store';

export class UserMemoryView {
  private constructor(private readonly db: StateDb, readonly userId: string, private readonly units: SimilarUnits) {}

  /** Current L1 units of the user that have a vector of this embedder (vectors of another model are not comparable). */
  static async load(db: StateDb, userId: string, embedderId: string): Promise<UserMemoryView> {
    const [units, vectors] = await Promise.all([allUnits(db, userId), userVectors(db, userId)]);
    return new UserMemoryView(db, userId, SimilarUnits.of(units, vectors, embedderId));
  }

  get size(): number {
    return this.units.size;
  }

  /** The k most similar current units, best first (ties by id, so the answer is deterministic). */
  findSimilar = async (userId: string, vector: Float32Array, k: number): Promise<SimilarUnit[]> =>
    (userId === this.userId ? this.units.topK(vector, k) : []);

  findBySubjectAttribute = (userId: string, subject: string, attribute: string): Promise<MemoryUnit[]> =>
    unitsBySubjectAttribute(this.db, userId, subject, attribute);
}
