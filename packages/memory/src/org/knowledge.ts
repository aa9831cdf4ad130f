/**
 * Organization knowledge records (CONTRACT §9) built from memory units, on each shard (pure).
 *
 * Decisions:
 * - A unit is knowledge of org O when its `org_id` is O and it is current (not retired: superseded or
 *   forgotten memory is not published knowledge).
 * - An L1 unit contributes itself: one contribution by its user, `activated_at` = its transaction time.
 * - An L2 insight's contributions are the L1 knowledge units it was drawn from (`sourcesOf`; by
 *   default the org's L1 units sharing at least one source event with it); with none found it
 *   contributes itself, so every item has at least one contribution.
 * - `published_at` is the unit's transaction time (when it became knowledge).
 * - `source_content_preview` is the first 160 characters, cut at a word.
 */
import type { MemoryUnit } from '@strata/store';
import { clip, squash } from '../text';

export interface OrgUnitView {
  id: string;
  content: string;
  keywords: string[];
  level: number;
  transaction_time: string;
}

export interface Contribution {
  source_id: string;
  contributor_user_id: string;
  source_memory_type: string;
  source_level: number;
  source_content_preview: string;
  activated_at: string;
}

export interface OrgKnowledgeRecord {
  unit: OrgUnitView;
  contributions: Contribution[];
}

/** A list item of `GET /organizations/:org_id/knowledge`. */
export interface KnowledgeItem {
  unit: OrgUnitView;
  contributor_user_ids: string[];
  contribution_count: number;
  source_memory_types: string[];
  published_at: string;
}

export const PREVIEW_CHARS = 160;

export function orgUnitView(u: Pick<MemoryUnit, 'id' | 'content' | 'keywords' | 'level' | 'transaction_time'>): OrgUnitView {
  return { id: u.id, content: u.content, keywords: [...u.keywords], level: u.level, transaction_time: u.transaction_time };
}

export function contributionOf(source: MemoryUnit): Contribution {
  return {
    source_id: source.id,
    contributor_user_id: source.user_id,
    source_memory_type: source.memory_type,
    source_level: source.level,
    source_content_preview: clip(squash(source.content), PREVIEW_CHARS),
    activated_at: source.transaction_time,
  };
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The knowledge records of `orgId` among `units` (one shard's units, any users). */
export function orgKnowledgeFromUnits(
  orgId: string,
  units: readonly MemoryUnit[],
  sourcesOf?: (insight: MemoryUnit) => MemoryUnit[],
): OrgKnowledgeRecord[] {
  const current = units.filter((u) => u.org_id === orgId && u.retired_at === null);
  const l1 = current.filter((u) => u.level === 1);
  const byDefault = (insight: MemoryUnit): MemoryUnit[] => {
    const refs = new Set(insight.references);
    return l1.filter((u) => u.references.some((r) => refs.has(r)));
  };
  return current.map((u) => {
    const sources = u.level === 2 ? (sourcesOf ?? byDefault)(u) : [];
    const contributions = (sources.length > 0 ? sources : [u]).map(contributionOf)
      .sort((a, b) => cmp(a.activated_at, b.activated_at) || cmp(a.source_id, b.source_id));
    return { unit: orgUnitView(u), contributions };
  });
}

function uniqueSorted(values: Iterable<string>): string[] {
  return [...new Set(values)].sort(cmp);
}

export function knowledgeItem(r: OrgKnowledgeRecord): KnowledgeItem {
  return {
    unit: r.unit,
    contributor_user_ids: uniqueSorted(r.contributions.map((c) => c.contributor_user_id)),
    contribution_count: r.contributions.length,
    source_memory_types: uniqueSorted(r.contributions.map((c) => c.source_memory_type)),
    published_at: r.unit.transaction_time,
  };
}

/** The body of `GET /organizations/:org_id/knowledge/:id`. */
export function knowledgeDetail(r: OrgKnowledgeRecord): { unit: OrgUnitView; knowledge: { contributions: Contribution[] } } {
  return { unit: r.unit, knowledge: { contributions: r.contributions } };
}
