/**
 * Org knowledge counts as a mergeable partial: each shard computes `knowledgePartial` over its own
 * records, the answering node merges the partials (associative and commutative, so any order and
 * any grouping of shards gives the same result) and finalizes. Contributors are carried as a set of
 * ids, not a count, so a user counted on two shards (e.g. during a shard move) is counted once.
 *
 * `source_type_distribution` counts contributions by their source memory type (so its values add up
 * to `contribution_count`), largest first, then by key. Extensions beyond the contract's fields:
 * `level_distribution` (knowledge items by level) and `latest_published_at`.
 */
import type { OrgKnowledgeRecord } from './knowledge';

export interface KnowledgePartial {
  knowledge_count: number;
  contribution_count: number;
  /** Sorted, unique. */
  contributor_user_ids: string[];
  source_type_counts: Record<string, number>;
  level_counts: Record<string, number>;
  latest_published_at: string | null;
}

export interface KnowledgeSummary {
  knowledge_count: number;
  contribution_count: number;
  contributor_count: number;
}

export interface KeyValue {
  key: string;
  value: number;
}

export interface KnowledgeMetrics extends KnowledgeSummary {
  org_id: string;
  source_type_distribution: KeyValue[];
  level_distribution: KeyValue[];
  latest_published_at: string | null;
}

export function emptyPartial(): KnowledgePartial {
  return { knowledge_count: 0, contribution_count: 0, contributor_user_ids: [], source_type_counts: {}, level_counts: {}, latest_published_at: null };
}

function bump(counts: Record<string, number>, key: string, by = 1): void {
  counts[key] = (counts[key] ?? 0) + by;
}

function laterOf(a: string | null, b: string | null): string | null {
  if (a === null) return b;
  if (b === null) return a;
  return a > b ? a : b;
}

export function knowledgePartial(records: readonly OrgKnowledgeRecord[]): KnowledgePartial {
  const p = emptyPartial();
  const users = new Set<string>();
  for (const r of records) {
    p.knowledge_count += 1;
    bump(p.level_counts, String(r.unit.level));
    p.latest_published_at = laterOf(p.latest_published_at, r.unit.transaction_time);
    for (const c of r.contributions) {
      p.contribution_count += 1;
      users.add(c.contributor_user_id);
      bump(p.source_type_counts, c.source_memory_type);
    }
  }
  p.contributor_user_ids = [...users].sort();
  return p;
}

export function mergePartials(parts: readonly KnowledgePartial[]): KnowledgePartial {
  const out = emptyPartial();
  const users = new Set<string>();
  for (const p of parts) {
    out.knowledge_count += p.knowledge_count;
    out.contribution_count += p.contribution_count;
    for (const u of p.contributor_user_ids) users.add(u);
    for (const [k, v] of Object.entries(p.source_type_counts)) bump(out.source_type_counts, k, v);
    for (const [k, v] of Object.entries(p.level_counts)) bump(out.level_counts, k, v);
    out.latest_published_at = laterOf(out.latest_published_at, p.latest_published_at);
  }
  out.contributor_user_ids = [...users].sort();
  return out;
}

export function summaryOf(p: KnowledgePartial): KnowledgeSummary {
  return { knowledge_count: p.knowledge_count, contribution_count: p.contribution_count, contributor_count: p.contributor_user_ids.length };
}

function distribution(counts: Record<string, number>): KeyValue[] {
  return Object.entries(counts).map(([key, value]) => ({ key, value }))
    .sort((a, b) => b.value - a.value || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** The body of `GET /organizations/:org_id/knowledge/metrics` from the merged partial. */
export function metricsOf(orgId: string, p: KnowledgePartial): KnowledgeMetrics {
  return {
    org_id: orgId,
    ...summaryOf(p),
    source_type_distribution: distribution(p.source_type_counts),
    level_distribution: distribution(p.level_counts),
    latest_published_at: p.latest_published_at,
  };
}
