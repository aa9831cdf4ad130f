/**
 * The current L1 units of a user nearest to a vector: what consolidation's `findSimilar` answers (pure).
 * Exact cosine with memory's `dot`/`l2norm`, over a snapshot of the user's units and stored vectors taken
 * once per batch (the planner handles the batch's own new units); each unit's norm is computed once per
 * batch rather than once per pair.
 */
import type { MemoryUnit } from '@strata/store';
import { dot, l2norm } from '../embedding/vector-math';
import type { SimilarUnit } from './types';

interface Entry {
  unit: MemoryUnit;
  vector: Float32Array;
  norm: number;
}

/** Ranks (similarity, id) before `than`: higher similarity first, then the smaller id. */
function better(similarity: number, id: string, than: SimilarUnit): boolean {
  return similarity > than.similarity || (similarity === than.similarity && id < than.unit.id);
}

export class SimilarUnits {
  private constructor(private readonly entries: Entry[]) {}

  /** Current L1 units that have a vector of this embedder (vectors of another model are not comparable). */
  static of(units: Iterable<MemoryUnit>, vectors: ReadonlyMap<string, { vector: Float32Array; embedder_id: string }>, embedderId: string): SimilarUnits {
    const entries: Entry[] = [];
    for (const unit of units) {
      if (unit.level !== 1 || unit.retired_at !== null) continue;
      const v = vectors.get(unit.id);
      if (!v || v.embedder_id !== embedderId) continue;
      entries.push({ unit, vector: v.vector, norm: l2norm(v.vector) });
    }
    return new SimilarUnits(entries);
  }

  get size(): number {
    return this.entries.length;
  }

  /** The k most similar units, best first (ties by id, so the answer is deterministic); none for a zero vector. */
  topK(vector: Float32Array, k: number): SimilarUnit[] {
    if (k <= 0) return [];
    const qn = l2norm(vector);
    if (qn === 0) return [];
    // Top-k by insertion into a short sorted list: one pass over the user's units, no full sort.
    const top: SimilarUnit[] = [];
    for (const e of this.entries) {
      if (e.norm === 0 || e.vector.length !== vector.length) continue;
      const similarity = dot(vector, e.vector) / (qn * e.norm);
      if (top.length === k && !better(similarity, e.unit.id, top[k - 1])) continue;
      let at = top.length;
      while (at > 0 && better(similarity, e.unit.id, top[at - 1])) at--;
      top.splice(at, 0, { unit: e.unit, similarity });
      if (top.length > k) top.pop();
    }
    return top;
  }
}
