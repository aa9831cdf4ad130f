/** Test helpers: events, a counter id source, and an in-memory "existing memory" that can apply a plan. */
import type { EventRecord, MemoryUnit } from '@strata/store';
import type { ConsolidationPlan, SimilarUnit } from '../../src/consolidation';
import { cosine } from '../../src/consolidation';

let seq = 0;
export function event(content: string, over: Partial<EventRecord> = {}): EventRecord {
  seq++;
  return {
    event_id: over.event_id ?? `e${seq}`, user_id: 'u1', stream_id: 's1', seq: String(seq).padStart(8, '0'), content,
    content_type: 'text', org_id: null, agent_id: null, role: 'user', level: null, parent_id: null, task_status: null,
    task_progress: null, valid_time: '2023-05-08T13:56:00.000Z', transaction_time: '2023-05-08T13:56:01.000Z',
    metadata: null, assets: [], ...over,
  };
}

export function counter(prefix = 'id'): () => string {
  let n = 0;
  return () => `${prefix}${++n}`;
}

/** The store side of consolidation in miniature: current units, similarity search, subject lookup, apply. */
export class MemoryFixture {
  units = new Map<string, MemoryUnit>();
  vectors = new Map<string, Float32Array>();

  findSimilar = async (userId: string, vector: Float32Array, k: number): Promise<SimilarUnit[]> => {
    const out: SimilarUnit[] = [];
    for (const u of this.units.values()) {
      if (u.user_id !== userId || u.retired_at !== null) continue;
      out.push({ unit: u, similarity: cosine(vector, this.vectors.get(u.id) as Float32Array) });
    }
    return out.sort((a, b) => b.similarity - a.similarity || (a.unit.id < b.unit.id ? -1 : 1)).slice(0, k);
  };

  findBySubjectAttribute = async (userId: string, subject: string, attribute: string): Promise<MemoryUnit[]> =>
    [...this.units.values()].filter((u) => u.user_id === userId && u.subject === subject && u.attribute === attribute);

  /** What the state machine's apply would do with the plan (enough for tests that run two batches). */
  apply(plan: ConsolidationPlan): void {
    for (const n of plan.units) {
      this.units.set(n.unit.id, structuredClone(n.unit));
      this.vectors.set(n.unit.id, Float32Array.from(n.vector));
    }
    for (const r of plan.reinforced) {
      const u = this.units.get(r.unit_id) as MemoryUnit;
      u.references = [...new Set([...u.references, ...r.add_references])];
      u.importance = r.importance;
    }
    for (const r of plan.retired) {
      const u = this.units.get(r.unit_id) as MemoryUnit;
      u.retired_at = r.retired_at;
      u.retired_reason = r.reason;
      u.superseded_by = r.superseded_by;
    }
  }
}
