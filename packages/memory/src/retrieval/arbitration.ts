/**
 * Arbitration (offline rule): among results that are versions of one fact, keep the current version,
 * unless the query asks about history, change, or the first/original value; then keep every version,
 * oldest first.
 *
 * Versions of one fact are results connected by `EvolvedTo` or `Contradicts` edges, by `superseded_by`,
 * or sharing a (subject, attribute) pair. Version order: explicit succession first (`A EvolvedTo B`,
 * `A.superseded_by = B` put A before B), then time (valid time, then transaction time). The current
 * version is the last one. Under `as_of` the newer versions were filtered out before, so the version
 * current at that time wins, as it should.
 *
 * Scores: the group takes its best member's score (the fact matched the query; which wording matched
 * best does not matter), so the output stays in non-increasing order and the group sits where its best
 * member was.
 */
import { effectiveTimeMs } from './filters';
import type { Neighbors, RetrievalUnit, ScoredUnit } from './types';

const HISTORY_WORDS = [
  'histor(?:y|ic|ical)', 'chang(?:e|ed|es|ing)', 'evolv(?:e|ed|es|ing)', 'evolution', 'used to', 'previous(?:ly)?',
  'before', 'earlier', 'first', 'original(?:ly)?', 'initial(?:ly)?', 'former(?:ly)?', 'prior', 'past', 'over time',
  'no longer', 'any ?more', 'timeline', 'switch(?:ed)?', 'back then', 'all (?:the )?versions',
  'how (?:has|have|did) .+ (?:develop|grow|progress)(?:ed)?',
];
/** Whole words only: "firstly" or "prioritize" must not count. */
const HISTORY_RE = new RegExp(`(?:^|[^\\p{L}\\p{N}])(?:${HISTORY_WORDS.join('|')})(?![\\p{L}\\p{N}])`, 'iu');

/** Does the query ask about how something was, or how it changed, rather than how it is? */
export function asksAboutHistory(query: string): boolean {
  return HISTORY_RE.test(query.normalize('NFKC').replace(/\s+/g, ' '));
}

export interface ArbitrationOptions {
  /** force a mode instead of reading it from the query */
  mode?: 'current' | 'history';
}

export interface ArbitrationResult<U extends RetrievalUnit> {
  results: ScoredUnit<U>[];
  mode: 'current' | 'history';
  /** ids dropped as superseded versions (current mode) */
  dropped: string[];
}

export function arbitrate<U extends RetrievalUnit>(
  results: ScoredUnit<U>[],
  query: string,
  neighbors?: Neighbors,
  options: ArbitrationOptions = {},
): ArbitrationResult<U> {
  const mode = options.mode ?? (asksAboutHistory(query) ? 'history' : 'current');
  const n = results.length;
  const index = new Map(results.map((r, i) => [r.unit.id, i]));
  const parent = results.map((_, i) => i);
  const find = (i: number): number => (parent[i] === i ? i : (parent[i] = find(parent[i])));
  const union = (a: number, b: number) => {
    const ra = find(a);
    const rb = find(b);
    if (ra !== rb) parent[Math.max(ra, rb)] = Math.min(ra, rb);
  };
  /** before[i] = members that precede i explicitly */
  const before: Array<Set<number>> = results.map(() => new Set());

  const bySubject = new Map<string, number>();
  results.forEach((r, i) => {
    const u = r.unit;
    if (u.subject && u.attribute) {
      const key = `${norm(u.subject)}\u0000${norm(u.attribute)}`;
      const j = bySubject.get(key);
      if (j === undefined) bySubject.set(key, i);
      else union(i, j);
    }
    if (u.superseded_by) {
      const j = index.get(u.superseded_by);
      if (j !== undefined && j !== i) {
        union(i, j);
        before[j].add(i);
      }
    }
    if (neighbors) {
      for (const nb of neighbors(u.id)) {
        if (nb.relation !== 'EvolvedTo' && nb.relation !== 'Contradicts') continue;
        const j = index.get(nb.id);
        if (j === undefined || j === i) continue;
        union(i, j);
        if (nb.relation === 'EvolvedTo') {
          if (nb.direction === 'out') before[j].add(i);
          else before[i].add(j);
        }
      }
    }
  });

  const groups = new Map<number, number[]>();
  for (let i = 0; i < n; i++) {
    const root = find(i);
    const g = groups.get(root);
    if (g) g.push(i);
    else groups.set(root, [i]);
  }

  // Each group becomes a block at its best member's place: blocks by score, then by where their best
  // member stood (the input is sorted); members of a history block stay together in version order.
  const blocks: Array<{ score: number; first: number; items: ScoredUnit<U>[] }> = [];
  const dropped: string[] = [];
  for (const members of groups.values()) {
    const first = Math.min(...members);
    if (members.length === 1) {
      blocks.push({ score: results[first].score, first, items: [results[first]] });
      continue;
    }
    const ordered = versionOrder(members, results, before);
    const best = Math.max(...members.map((i) => results[i].score));
    if (mode === 'history') {
      blocks.push({ score: best, first, items: ordered.map((i) => ({ ...results[i], score: best })) });
    } else {
      const current = ordered[ordered.length - 1];
      blocks.push({ score: best, first, items: [{ ...results[current], score: best }] });
      for (const i of ordered) if (i !== current) dropped.push(results[i].unit.id);
    }
  }
  blocks.sort((a, b) => b.score - a.score || a.first - b.first);
  return { results: blocks.flatMap((b) => b.items), mode, dropped };
}

/** Topological order of explicit succession, ties (and cycles) broken by time. */
function versionOrder<U extends RetrievalUnit>(members: number[], results: ScoredUnit<U>[], before: Array<Set<number>>): number[] {
  const inGroup = new Set(members);
  const time = (i: number) => [effectiveTimeMs(results[i].unit), Date.parse(results[i].unit.transaction_time)] as const;
  const earlier = (a: number, b: number) => {
    const [va, ta] = time(a);
    const [vb, tb] = time(b);
    return va - vb || ta - tb || (results[a].unit.id < results[b].unit.id ? -1 : 1);
  };
  const pending = new Map(members.map((i) => [i, new Set([...before[i]].filter((j) => inGroup.has(j)))]));
  const order: number[] = [];
  while (pending.size > 0) {
    let ready = [...pending.entries()].filter(([, deps]) => deps.size === 0).map(([i]) => i);
    if (ready.length === 0) ready = [...pending.keys()]; // a cycle of edges: time decides
    ready.sort(earlier);
    const next = ready[0];
    order.push(next);
    pending.delete(next);
    for (const deps of pending.values()) deps.delete(next);
  }
  return order;
}

function norm(s: string): string {
  return s.normalize('NFKC').toLowerCase().replace(/\s+/g, ' ').trim();
}
