/**
 * Writes memory units and edges through a node's command log: the same `memory.consolidate` command
 * the consolidation worker proposes, with contents, times and edges the test chooses. Tests of retrieval
 * use it where they need exact control of the graph and of versions (consolidation's own linking is
 * similarity-driven and tested on its own).
 */
import { settle, type Command, type ConsolidateCommand, type InsightsCommand, type Edge, type MemoryUnit, type Relation } from '@strata/store';

export type SeedUnit = Partial<MemoryUnit> & Pick<MemoryUnit, 'id' | 'content'>;

export function unit(u: SeedUnit & { user_id?: string }): MemoryUnit {
  return {
    user_id: 'seeded', stream_id: '33333333-3333-4333-8333-333333333333', org_id: null, agent_id: null, level: 1, memory_type: 'factual',
    keywords: [], speaker: null, valid_time: '2026-01-01T00:00:00.000Z', transaction_time: '2026-01-01T00:00:00.000Z', references: [],
    assets: [], importance: 0.5, subject: null, attribute: null, retired_at: null, retired_reason: null, superseded_by: null, ...u,
  };
}

export function edge(userId: string, edgeId: string, source: string, target: string, relation: Relation, weight = 1): Edge {
  return { edge_id: edgeId, user_id: userId, source_id: source, target_id: target, relation, weight, created_at: '2026-01-01T00:00:00.000Z' };
}

/** Applies one consolidate command per user through `propose` (a node's log); units without stored vectors: the node embeds them when it indexes. */
export async function seedMemory(propose: (userId: string, command: Command) => Promise<unknown>, users: Array<{ user_id: string; units: MemoryUnit[]; edges?: Edge[] }>): Promise<void> {
  for (const u of users) {
    const l1 = u.units.filter((x) => x.level === 1);
    const l2 = u.units.filter((x) => x.level === 2);
    const command: ConsolidateCommand = {
      type: 'memory.consolidate', user_id: u.user_id, at: '2026-01-01T00:00:00.000Z', consumed: [], embedder_id: 'none', method: 'offline',
      units: l1.map((x) => ({ unit: x, vector: [] })), reinforced: [], retired: [], edges: l2.length === 0 ? u.edges ?? [] : [], dropped: [],
    };
    const answer = settle(await propose(u.user_id, command)) as { applied: boolean; units_created: number; edges: number };
    if (!answer.applied || answer.units_created !== l1.length || answer.edges !== command.edges.length) {
      throw new Error(`seeding ${u.user_id} failed: ${JSON.stringify(answer)}`);
    }
    if (l2.length > 0) {
      // insights (L2) are made by their own command; edges go last so they may touch them
      const insights: InsightsCommand = {
        type: 'memory.insights', user_id: u.user_id, at: '2026-01-01T00:00:00.000Z', embedder_id: 'none',
        create: l2.map((x) => ({ unit: x, vector: null })), update: [], edges: u.edges ?? [], removed_edges: [], reflected: [],
      };
      const a = settle(await propose(u.user_id, insights)) as { created: number; edges: number };
      if (a.created !== l2.length || a.edges !== insights.edges.length) throw new Error(`seeding ${u.user_id} insights failed: ${JSON.stringify(a)}`);
    }
  }
}
