/**
 * Offline summary of a group of memories: the most central statements (by weighted degree inside the
 * group, then importance), the keywords they share, who said them and when. Readable on its own, e.g.
 * `Recurring topic: support group, lgbtq (4 memories, Caroline, 2023-05-07 to 2023-06-02). Key points:
 * Caroline: I went to a LGBTQ support group yesterday (2023-05-07)…; …`
 */
import { isEventRole, type MemoryUnit } from '@strata/store';
import type { Graph } from './graph';

/** Members ordered by centrality within the group, then importance, then id. */
export function rankByCentrality(members: MemoryUnit[], graph: Graph | null): MemoryUnit[] {
  const inGroup = new Set(members.map((m) => m.id));
  const degree = (id: string): number => {
    let s = 0;
    for (const [n, w] of graph?.get(id) ?? []) if (inGroup.has(n)) s += w;
    return s;
  };
  const d = new Map(members.map((m) => [m.id, degree(m.id)]));
  return [...members].sort((a, b) => (d.get(b.id) as number) - (d.get(a.id) as number) || b.importance - a.importance || (a.id < b.id ? -1 : 1));
}

/** Keywords by how many members carry them (shared ones first), then by first appearance in the ranking. */
export function sharedKeywords(ranked: MemoryUnit[], max: number, exclude: ReadonlySet<string> = new Set()): string[] {
  const count = new Map<string, number>();
  const first = new Map<string, number>();
  ranked.forEach((m, i) => {
    for (const k of new Set(m.keywords)) {
      if (exclude.has(k) || /^\d[\d\-.:,]*$/.test(k)) continue; // dates and numbers are not topics
      count.set(k, (count.get(k) ?? 0) + 1);
      if (!first.has(k)) first.set(k, i * 100 + m.keywords.indexOf(k));
    }
  });
  return [...count.keys()].sort((a, b) => (count.get(b) as number) - (count.get(a) as number) || (first.get(a) as number) - (first.get(b) as number)).slice(0, max);
}

export function participants(units: MemoryUnit[]): string[] {
  const seen: string[] = [];
  for (const u of units) if (u.speaker && !seen.includes(u.speaker)) seen.push(u.speaker);
  return seen;
}

export function day(iso: string): string {
  return new Date(iso).toISOString().slice(0, 10);
}

export function timeSpan(times: string[]): { from: string; to: string } {
  const sorted = [...times].sort((a, b) => Date.parse(a) - Date.parse(b));
  return { from: sorted[0], to: sorted[sorted.length - 1] };
}

export function clip(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max - 1).trimEnd()}…`;
}

export interface CommunitySummary {
  content: string;
  keywords: string[];
  ranked: MemoryUnit[];
}

export function summarizeCommunity(members: MemoryUnit[], graph: Graph | null, options = { points: 3, keywords: 8, pointChars: 160 }): CommunitySummary {
  const ranked = rankByCentrality(members, graph);
  const speakers = participants(ranked);
  const names = speakers.filter((s) => !isEventRole(s));
  const keywords = sharedKeywords(ranked, options.keywords, new Set(names.map((n) => n.toLowerCase())));
  const span = timeSpan(members.map((m) => m.valid_time));
  const when = day(span.from) === day(span.to) ? day(span.from) : `${day(span.from)} to ${day(span.to)}`;
  const who = names.length > 0 ? `${names.join(' and ')}, ` : '';
  const topic = keywords.slice(0, 4).join(', ') || 'related memories';
  const points = ranked.slice(0, options.points).map((m) => clip(m.content, options.pointChars).replace(/[.;]+$/, ''));
  const content = `Recurring topic: ${topic} (${members.length} memories, ${who}${when}). Key points: ${points.join('; ')}.`;
  return { content, keywords: [...names.map((n) => n.toLowerCase()), ...keywords].slice(0, options.keywords), ranked };
}
