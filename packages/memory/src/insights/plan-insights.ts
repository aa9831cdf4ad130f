/**
 * L2 insights from communities of a user's memory graph. Pure apart from the injected embedder: returns
 * insight units to create, updates of existing insights whose community changed (matched by member overlap,
 * Jaccard ≥ 0.5, so a growing topic keeps one insight), and the DerivedFrom edges insight → member.
 */
import { commandVector, type Edge, type InsightUnitFields, type InsightUnitUpdate, type MemoryUnit, type MemoryType } from '@strata/store';
import type { Embedder } from '../providers/types';
import { buildGraph, type GraphOptions } from './graph';
import { labelPropagation, DEFAULT_COMMUNITY_OPTIONS, type CommunityOptions } from './communities';
import { summarizeCommunity, timeSpan } from './summarize';

export interface InsightOptions extends GraphOptions, CommunityOptions {
  /** Smallest community that becomes an insight. */
  minCommunitySize: number;
  /** Member overlap (Jaccard) at or above which a community is the same as an existing insight's. */
  matchJaccard: number;
  /** At most this many units are clustered (the most important); bounds the O(n²) similarity pass. */
  maxUnits: number;
}

export const DEFAULT_INSIGHT_OPTIONS: InsightOptions = {
  similarityThreshold: 0.5, similarityK: 5, minCommunitySize: 3, matchJaccard: 0.5, maxUnits: 2000, ...DEFAULT_COMMUNITY_OPTIONS,
};

/** Marks reflection insights (see reflection.ts) so community planning leaves them alone. */
export const REFLECTION_ATTRIBUTE = 'reflection';

export interface InsightInput {
  /** The user's memory units (L1 used; retired and L2 units are ignored). */
  units: MemoryUnit[];
  /** The user's edges (stored relations among units and DerivedFrom edges of existing insights). */
  edges: Edge[];
  /** Existing L2 insights of the user; their members are the targets of their DerivedFrom edges. */
  existingInsights: MemoryUnit[];
  now: string;
  newId: () => string;
  embedder: Embedder;
  /** Stored vectors by unit id; units without one are embedded. */
  vectors?: Map<string, ArrayLike<number>>;
  options?: Partial<InsightOptions>;
}

/**
 * The planner's update of an existing L2 unit: the command's update (`memory.insights`, store/commands.ts)
 * itself, with the fields the planner always fills made required, plus the membership change it derives.
 */
export interface InsightUpdate extends InsightUnitFields {
  memory_type: MemoryType;
  vector: number[];
  /** Members joining and leaving; DerivedFrom edges for joiners are in `edges`, leavers' edge ids in `removed_edges`. */
  added_members: string[];
  removed_members: string[];
}

/** The command's update for a planned one: membership is the planner's working data, not replicated state. */
export function insightCommandUpdate(update: InsightUpdate): InsightUnitUpdate {
  const { added_members: _added, removed_members: _removed, vector, ...command } = update;
  return { ...command, ...commandVector(vector) };
}

export interface InsightPlan {
  create: { unit: MemoryUnit; vector: number[] }[];
  update: InsightUpdate[];
  edges: Edge[];
  /** Ids of DerivedFrom edges from updated insights to members that left their community. */
  removed_edges: string[];
}

export function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  let inter = 0;
  for (const x of a) if (b.has(x)) inter++;
  const union = a.size + b.size - inter;
  return union === 0 ? 0 : inter / union;
}

const round3 = (x: number): number => Math.round(x * 1000) / 1000;

export async function planInsights(input: InsightInput): Promise<InsightPlan> {
  const o: InsightOptions = { ...DEFAULT_INSIGHT_OPTIONS, ...input.options };
  const plan: InsightPlan = { create: [], update: [], edges: [], removed_edges: [] };
  const units = input.units
    .filter((u) => u.level === 1 && u.retired_at === null)
    .sort((a, b) => b.importance - a.importance || (a.id < b.id ? -1 : 1))
    .slice(0, o.maxUnits);
  if (units.length < o.minCommunitySize) return plan;
  const userId = units[0].user_id;
  if (units.some((u) => u.user_id !== userId)) throw new Error('planInsights: units of several users');

  const vectors = new Map(input.vectors ?? []);
  const missing = units.filter((u) => !vectors.has(u.id));
  if (missing.length > 0) {
    const vs = await input.embedder.embed(missing.map((u) => u.content));
    missing.forEach((u, i) => vectors.set(u.id, vs[i]));
  }
  const graph = buildGraph(units, input.edges, vectors, o);
  const byId = new Map(units.map((u) => [u.id, u]));
  const communities = labelPropagation(graph, o).filter((c) => c.length >= o.minCommunitySize);

  // Existing community insights and their members.
  const existing = input.existingInsights
    .filter((i) => i.level === 2 && i.retired_at === null && i.attribute !== REFLECTION_ATTRIBUTE)
    .sort((a, b) => (a.id < b.id ? -1 : 1));
  const memberEdges = new Map<string, Edge[]>();
  for (const e of input.edges) {
    if (e.relation !== 'DerivedFrom') continue;
    memberEdges.set(e.source_id, [...(memberEdges.get(e.source_id) ?? []), e]);
  }
  const membersOf = (id: string): Set<string> => new Set((memberEdges.get(id) ?? []).map((e) => e.target_id));

  // Match communities to insights greedily by best overlap (deterministic: overlap, then ids).
  const pairs: { c: number; i: number; j: number }[] = [];
  communities.forEach((c, ci) => existing.forEach((ins, ii) => {
    const j = jaccard(new Set(c), membersOf(ins.id));
    if (j >= o.matchJaccard) pairs.push({ c: ci, i: ii, j });
  }));
  pairs.sort((a, b) => b.j - a.j || a.c - b.c || a.i - b.i);
  const matched = new Map<number, number>();
  const used = new Set<number>();
  for (const p of pairs) if (!matched.has(p.c) && !used.has(p.i)) { matched.set(p.c, p.i); used.add(p.i); }

  // Summaries first, then one embedding call, then the records (ids are drawn in community order).
  const summaries = communities.map((ids) => summarizeCommunity(ids.map((id) => byId.get(id) as MemoryUnit), graph));
  const changed = communities.map((ids, ci) => {
    const ii = matched.get(ci);
    if (ii === undefined) return true;
    const before = membersOf(existing[ii].id);
    return before.size !== ids.length || ids.some((id) => !before.has(id)) || existing[ii].content !== summaries[ci].content;
  });
  const toEmbed = summaries.filter((_, ci) => changed[ci]).map((s) => s.content);
  const vecs = toEmbed.length > 0 ? await input.embedder.embed(toEmbed) : [];
  let next = 0;
  const edge = (source: string, target: string): Edge => ({
    edge_id: input.newId(), user_id: userId, source_id: source, target_id: target, relation: 'DerivedFrom', weight: 1, created_at: input.now,
  });

  communities.forEach((ids, ci) => {
    if (!changed[ci]) return;
    const vector = Array.from(vecs[next++]);
    const members = ids.map((id) => byId.get(id) as MemoryUnit);
    const summary = summaries[ci];
    const references = [...new Set(summary.ranked.flatMap((m) => m.references))];
    const importance = round3(Math.min(1, members.reduce((s, m) => s + m.importance, 0) / members.length + 0.05 * Math.log2(members.length)));
    const validTime = new Date(timeSpan(members.map((m) => m.valid_time)).to).toISOString();
    const memoryType: MemoryType = members.filter((m) => m.memory_type === 'procedural').length * 2 > members.length ? 'procedural' : 'factual';
    const ii = matched.get(ci);
    if (ii !== undefined) {
      const ins = existing[ii];
      const before = membersOf(ins.id);
      const added = ids.filter((id) => !before.has(id));
      const removed = [...before].filter((id) => !ids.includes(id)).sort();
      plan.update.push({
        unit_id: ins.id, content: summary.content, keywords: summary.keywords, references, importance, valid_time: validTime,
        memory_type: memoryType, vector, added_members: added, removed_members: removed,
      });
      for (const id of added) plan.edges.push(edge(ins.id, id));
      plan.removed_edges.push(...(memberEdges.get(ins.id) ?? []).filter((e) => removed.includes(e.target_id)).map((e) => e.edge_id).sort());
      return;
    }
    const streams = new Map<string, number>();
    for (const m of members) streams.set(m.stream_id, (streams.get(m.stream_id) ?? 0) + 1);
    const stream = [...streams.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0][0];
    const agents = new Set(members.map((m) => m.agent_id));
    const speakers = new Set(members.map((m) => m.speaker));
    const unit: MemoryUnit = {
      id: input.newId(), user_id: userId, stream_id: stream,
      // Communities never cross scopes (graph.ts), so all members share this org (or none): org knowledge stays org knowledge.
      org_id: members[0].org_id,
      agent_id: agents.size === 1 ? members[0].agent_id : null, level: 2, memory_type: memoryType,
      content: summary.content, keywords: summary.keywords, speaker: speakers.size === 1 ? members[0].speaker : null,
      valid_time: validTime, transaction_time: input.now, references, assets: [], importance,
      subject: null, attribute: null, retired_at: null, retired_reason: null, superseded_by: null,
    };
    plan.create.push({ unit, vector });
    for (const id of ids) plan.edges.push(edge(unit.id, id));
  });
  return plan;
}
