/**
 * Fusion and reranking: from the retrievers' ranked lists to one ranked list of units with scores in
 * [0, 1] that mean the same thing from one query to the next.
 *
 * 1. Weighted reciprocal rank fusion: fused(d) = Σ_l w_l · s_l(d) / (k + rank_l(d)), where s_l(d) ∈ [0,1]
 *    is the item's strength in list l (1 for the vector and text lists; the path strength for graph
 *    neighbours, so a neighbour's score decays per hop and with edge weight). Divided by its theoretical
 *    maximum Σ_l w_l / (k + 1) (rank 1 everywhere at full strength), never by the query's best hit, so
 *    a query whose best match is mediocre does not get a 1.0.
 * 2. Graph expansion (graph_depth > 0): seeds are the top results of step 1; linked units form the
 *    `graph` list, and step 1 is redone with it.
 * 3. Rerank: score = fused · (1 − α − β + α·recency + β·importance), both signals in [0,1], α = β = 0.1
 *    by default: a bounded nudge (at most −20 %) that never lifts a score above 1. With
 *    `importanceHalfLifeDays`, importance is the effective one (decay.ts): stored importance halving
 *    every half-life since the unit was stored or last retrieved.
 * 4. Boosts: the requested agent's procedural units and, in user scope, the current stream:
 *    s ← s + γ·s·(1 − s), which stays in [0,1], keeps order among boosted units, and is largest mid-range.
 * 5. De-duplication (same normalized content: the best-scored copy stays; optionally one unit per
 *    `collapseKey`), `min_score`, non-increasing order (ties by id, for determinism), `limit`.
 */
import { importanceAt, storedImportance } from './decay';
import { effectiveTimeMs } from './filters';
import { expandGraph, type ExpansionOptions } from './graph';
import { normalizeSpeaker, type TimeRange } from './query';
import { matchedStems, versionTerms, type QueryIntent } from './intent';
import { isFacet, SINGLE_VALUED_FACETS, type Facet } from '../text';
import { summarizesSuperseded } from './outdated-insights';
import { traitsOf, type UnitTraits } from './unit-traits';
import type { Neighbors, RankedList, RetrievalUnit, ScoredUnit, ScoreSignals } from './types';

export interface FusionOptions {
  /**
   * RRF rank constant (default 10). Cormack et al. used 60 for deep TREC lists; over a user's memory the
   * top few ranks matter more, and on LoCoMo dev k=10 gave recall@10 0.661 against 0.627 for k=60.
   */
  rrfK?: number;
  /** weight of the graph list (default 0.5) */
  graphWeight?: number;
  /** hops of expansion; 0 = none, capped at 3 (default 1) */
  graphDepth?: number;
  /** how many top fused results seed the expansion (default 20) */
  graphSeeds?: number;
  graphDecay?: number;
  relationFactors?: ExpansionOptions['relationFactors'];
  /** α (default 0.1) */
  recencyWeight?: number;
  /** half-life of recency in days (default 90) */
  recencyHalfLifeDays?: number;
  /** β (default 0.1) */
  importanceWeight?: number;
  /** half-life of importance in days (decay.ts); unset: stored importance as is */
  importanceHalfLifeDays?: number;
  /** "now" in ms since the epoch (passed in: fusion keeps no clock) */
  now: number;
  agentId?: string | null;
  /** γ for the agent's procedural units (default 0.3) */
  agentBoost?: number;
  /** the current stream, boosted in user scope */
  streamId?: string | null;
  scope?: 'user' | 'stream';
  /** γ for the current stream (default 0.1) */
  streamBoost?: number;
  minScore?: number;
  /** results wanted (default 10) */
  limit?: number;
  /** drop units whose normalized content repeats a better-scored one (default true) */
  dedupe?: boolean;
  /**
   * Keep only the best-scored unit per key (e.g. per source event: the statements split out of one
   * turn answer the same question, and a list of siblings crowds out other evidence). null: no key.
   */
  collapseKey?: (unit: RetrievalUnit) => string | null;
  /**
   * The people the query names (normalized, query.ts `speakersNamedIn`): a unit said by another named
   * person is scaled by `factor` (a bounded demotion, never a filter: an answer sometimes sits in the
   * other person's words). Units of roles (`user`, `assistant`…) and without a speaker are left alone.
   */
  speakerFocus?: { named: ReadonlySet<string>; factor: number } | null;
  /** scale of L1 units that are questions (query.ts `isQuestion`; default 1: none) */
  questionFactor?: number;
  /**
   * Scale of insights (level ≥ 2; default 1: none). An insight summarizes many memories ("Recurring
   * topic: … (445 memories) Key points: …"): its long, mixed text shares some word with most queries,
   * while a pointed question is answered by one of the memories it summarizes.
   */
  insightFactor?: number;
  /**
   * The time windows the query names (query.ts `queryTimeRanges`): a unit whose effective time falls in
   * none of them is scaled by `factor`.
   */
  timeFocus?: { ranges: TimeRange[]; factor: number } | null;
  /**
   * What the query asks for (intent.ts): the kind of answer (a time, a number, a person) and which
   * version of a fact. Versions of one fact are candidates with the same subject and attribute. For a
   * question about now, older versions and statements that a value ended are scaled by
   * `VERSION_FACTOR`; for one about before, the newest version of a fact that has older ones is.
   */
  answerFocus?: QueryIntent | null;
  /**
   * The kinds of fact the query asks about (text/facets.ts): when some candidate is a fact stored under
   * one of them (its `attribute`), a fact stored under another kind is scaled by `factor` ("Where does
   * Dana live?" wants the residence, not the job that shares the question's other words).
   */
  facetFocus?: { facets: ReadonlySet<string>; factor: number } | null;
}

/** Scale of a version of a fact the question does not ask about (see `answerFocus`). */
export const VERSION_FACTOR = 0.75;
/** Scale of a statement that a value ended, for a question about now (see `answerFocus`). */
export const ENDING_FACTOR = 0.5;
/** Scale of a superseded unit for a past-tense question that does not say "before" (intent.ts `past`). */
export const PAST_SUPERSEDED_FACTOR = 0.9;


function versionKey(unit: RetrievalUnit): string | null {
  return unit.subject && unit.attribute && unit.level === 1 ? `${unit.subject}\u0000${unit.attribute}` : null;
}

export interface FusionInput<U extends RetrievalUnit> {
  /** retriever lists (vector, text, image...), best first; pass empty lists too: their weight counts in the maximum */
  lists: RankedList[];
  getUnit: (id: string) => U | undefined;
  /** may this unit appear (filters.ts)? applied to every candidate, graph neighbours included */
  accept: (unit: U) => boolean;
  neighbors?: Neighbors;
  /**
   * `summarizesSuperseded` as kept by the user's index (outdated-insights.ts `OutdatedInsights.known`): null
   * when it cannot tell (then asked of `neighbors` and `getUnit`)
   */
  outdatedInsight?: (id: string) => boolean | null;
  options: FusionOptions;
}

interface Fused {
  raw: number;
  ranks: Record<string, number>;
}

/** Weighted RRF; returns raw sums and the normalizing maximum. Unknown-weight or empty lists are fine. */
export function weightedRrf(lists: RankedList[], k = 10): { fused: Map<string, Fused>; max: number } {
  if (!(k >= 0)) throw new RangeError('rrfK must be ≥ 0');
  const sums = { fused: new Map<string, Fused>(), max: 0 };
  for (const list of lists) addRrfList(sums, list, k);
  return sums;
}

/**
 * One more list into `weightedRrf`'s sums, as if it had been the last of its lists: the same sums, entries
 * and order (fusion adds the graph list to the sums of the others instead of summing them all again).
 */
function addRrfList(sums: { fused: Map<string, Fused>; max: number }, list: RankedList, k: number): void {
  const { fused } = sums;
  const w = Math.max(0, list.weight);
  sums.max += w / (k + 1);
  if (w === 0) return;
  const seen = new Set<string>();
  let rank = 0;
  for (const item of list.items) {
    if (seen.has(item.id)) continue; // a list naming an id twice counts it once, at its best rank
    seen.add(item.id);
    rank++;
    const strength = item.strength === undefined ? 1 : Math.min(1, Math.max(0, item.strength));
    const entry = fused.get(item.id) ?? { raw: 0, ranks: {} };
    entry.raw += (w * strength) / (k + rank);
    entry.ranks[list.name] = rank;
    fused.set(item.id, entry);
  }
}

export { dedupeKey } from './unit-traits';

/** 0.5^(age / half-life), age from the unit's effective time; future times count as now. */
export function recencyOf(unit: Pick<RetrievalUnit, 'valid_time' | 'transaction_time'>, now: number, halfLifeDays: number): number {
  return recencyAt(effectiveTimeMs(unit), now, halfLifeDays);
}

/** `recencyOf` from the unit's effective time (ms), when the caller keeps it. */
export function recencyAt(t: number, now: number, halfLifeDays: number): number {
  if (!Number.isFinite(t)) return 0;
  const ageDays = Math.max(0, now - t) / 86_400_000;
  return Math.pow(0.5, ageDays / Math.max(1e-9, halfLifeDays));
}

/** The bounded boost s + γ·s·(1 − s). */
export function boost(score: number, gamma: number): number {
  const g = Math.min(1, Math.max(0, gamma));
  return score + g * score * (1 - score);
}

export function fuse<U extends RetrievalUnit>(input: FusionInput<U>): ScoredUnit<U>[] {
  const o = input.options;
  const k = o.rrfK ?? 10;
  const limit = Math.max(0, Math.floor(o.limit ?? 10));
  const depth = Math.max(0, Math.min(3, Math.floor(o.graphDepth ?? 1)));
  const graphWeight = o.graphWeight ?? 0.5;

  // Only candidates the caller may see take part, so ranks are ranks among visible units.
  const unitCache = new Map<string, U | null>();
  const visible = (id: string): U | undefined => {
    let u = unitCache.get(id);
    if (u === undefined) {
      const found = input.getUnit(id);
      u = found && input.accept(found) ? found : null;
      unitCache.set(id, u);
    }
    return u ?? undefined;
  };
  const lists = input.lists.map((l) => ({ ...l, items: l.items.filter((it) => visible(it.id)) }));

  const sums = weightedRrf(lists, k);
  const graphInfo = new Map<string, { from: string; hops: number; strength: number }>();
  if (depth > 0 && input.neighbors && graphWeight > 0) {
    const max = sums.max;
    const seeds = [...sums.fused.entries()]
      .map(([id, f]) => ({ id, score: max > 0 ? f.raw / max : 0 }))
      .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
      .slice(0, o.graphSeeds ?? 20);
    const expansion = expandGraph(seeds, input.neighbors, {
      depth,
      decay: o.graphDecay,
      relationFactors: o.relationFactors,
      accept: (id) => !!visible(id),
    });
    for (const h of expansion) graphInfo.set(h.id, { from: h.from, hops: h.hops, strength: h.strength });
    // the seeds were read: the graph list goes into the same sums, after the others
    addRrfList(sums, { name: 'graph', weight: graphWeight, items: expansion.map((h) => ({ id: h.id, strength: h.strength })) }, k);
  }
  const { fused, max } = sums;

  const alpha = o.recencyWeight ?? 0.1;
  const beta = o.importanceWeight ?? 0.1;
  if (alpha < 0 || beta < 0 || alpha + beta > 1) throw new RangeError('recency and importance weights must be ≥ 0 and sum to ≤ 1');
  const halfLife = o.recencyHalfLifeDays ?? 90;
  const focus = o.speakerFocus && o.speakerFocus.named.size > 0 ? { named: o.speakerFocus.named, factor: Math.min(1, Math.max(0, o.speakerFocus.factor)) } : null;
  const questionFactor = Math.min(1, Math.max(0, o.questionFactor ?? 1));
  const insightFactor = Math.min(1, Math.max(0, o.insightFactor ?? 1));
  const timeFocus = o.timeFocus && o.timeFocus.ranges.length > 0 && o.timeFocus.factor < 1
    ? { ranges: o.timeFocus.ranges, factor: Math.max(0, o.timeFocus.factor) } : null;
  const intent = o.answerFocus ?? null;
  const askedFacets = singleValuedOf(o.facetFocus?.facets);
  const versions = intent && intent.tense !== 'past' ? findVersions(fused, visible, intent, focus?.named ?? null, askedFacets) : null;
  let facetFocus = o.facetFocus && o.facetFocus.facets.size > 0 && o.facetFocus.factor < 1 ? o.facetFocus : null;
  if (facetFocus) {
    const wanted = facetFocus.facets;
    let stated = false;
    for (const id of fused.keys()) {
      const u = visible(id);
      if (u && u.level === 1 && u.attribute && wanted.has(u.attribute)) { stated = true; break; }
    }
    if (!stated) facetFocus = null;
  }
  const agentGamma = o.agentBoost ?? 0.3;
  const streamGamma = o.streamBoost ?? 0.1;
  /** The full score of one candidate: the fused score reranked, scaled and boosted (steps 3 and 4). */
  const scoreOf = (id: string, f: Fused, unit: U, base: number): ScoredUnit<U> => {
    const traits = traitsOf(unit);
    const recency = recencyAt(traits.timeMs, o.now, halfLife);
    const stored = storedImportance(unit);
    const importance = o.importanceHalfLifeDays === undefined ? stored : importanceAt(stored, traits.anchorMs, o.now, o.importanceHalfLifeDays);
    let score = base * (1 - alpha - beta + alpha * recency + beta * importance);
    const boosts: string[] = [];
    if (timeFocus) {
      const t = traits.timeMs;
      if (!timeFocus.ranges.some((r) => t >= r.start && t < r.end)) {
        score *= timeFocus.factor;
        boosts.push('other_time');
      }
    }
    if (insightFactor < 1 && unit.level >= 2) {
      score *= insightFactor;
      boosts.push('insight');
    }
    if (questionFactor < 1 && unit.level === 1 && traits.question) {
      score *= questionFactor;
      boosts.push('question');
    }
    if (intent) {
      // a statement that holds none of the question's words matched by its document alone: the turns
      // around it ("Congratulations both!" after the birth announcement; "i will not" in a thread about
      // internet providers). It may be the reply that answers, so it is scaled, not dropped.
      // (a version of a fact the question matched is about the asked thing, whatever its words: "I moved
      // my runs to Tuesday, Thursday and Sunday" for "Which days does Hana train now?")
      if (unit.level === 1 && contextOnly(intent, traits) && !versions?.later.has(unit.id) && !versions?.earlier.has(unit.id)) {
        score *= CONTEXT_ONLY_FACTOR;
        boosts.push('context_only');
      }
      const kf = traits.kindFactorBeyond(intent.kind, intent.names);
      if (kf < 1) {
        score *= kf;
        boosts.push(`not_${intent.kind}`);
      }
      // (a question about when asks about the event, and the ending may be it: "When is Helen's last day?")
      if (intent.tense === 'current' && intent.kind !== 'time' && traits.cue() === 'end' && !traits.endsWithNewValue()) {
        // "I quit the cafe" says what no longer holds: it answers "what did she do before?", never "now"
        score *= ENDING_FACTOR;
        boosts.push('ended');
      } else if (intent.tense === 'current' && versions?.earlier.has(unit.id)) {
        score *= VERSION_FACTOR;
        boosts.push('earlier_version');
      } else if (intent.tense === 'history' && (versions?.later.has(unit.id) || (intent.earlier && traits.givesOnlyNewValue() && !firstVersion(versions, unit.id)))) {
        // the newest version, or a statement that gives a new value and not the old one, for "what was it before?"
        // (unless it is the first of versions among the candidates: "1640 now" before "1712 now")
        score *= VERSION_FACTOR;
        boosts.push('current_version');
      } else if (intent.tense === 'past' && unit.retired_at) {
        score *= PAST_SUPERSEDED_FACTOR;
        boosts.push('superseded');
      }
    }
    if (intent?.tense === 'current' && unit.level >= 2 && input.neighbors
      && (input.outdatedInsight?.(unit.id) ?? summarizesSuperseded(unit.id, input.neighbors, input.getUnit))) {
      // an insight planned before one of its memories was replaced quotes the old value until it is planned
      // again (workers/insights-cadence.ts: up to a minute): for a question about now it is an earlier state
      score *= VERSION_FACTOR;
      boosts.push('outdated_insight');
    }
    // stored under another kind, and its words speak first of another kind too ("I moved my runs to Tuesday
    // … because of my new job schedule" is stored as work, and speaks first of days: it answers "which days";
    // "sold my bike too, I take the train to the office now" speaks of the commute, not of work)
    if (facetFocus && unit.level === 1 && unit.attribute && isFacet(unit.attribute) && !facetFocus.facets.has(unit.attribute)
      && !facetFocus.facets.has(traits.firstFacet())) {
      score *= facetFocus.factor;
      boosts.push('other_fact');
    }
    // another's statement that speaks of the asked person answers about them too ("Carla sent photos, baby
    // Mateo arrived 27 Oct, 3.4 kg" told by Nkechi for "When was Carla's baby born?")
    if (focus && traits.namedSpeaker !== null && !focus.named.has(traits.namedSpeaker) && !speaksOf(traits.mentioned(), focus.named)) {
      score *= focus.factor;
      boosts.push('other_speaker');
    }
    if (o.agentId && unit.agent_id === o.agentId && unit.memory_type === 'procedural') {
      score = boost(score, agentGamma);
      boosts.push('agent');
    }
    if ((o.scope ?? 'user') === 'user' && o.streamId && unit.stream_id === o.streamId) {
      score = boost(score, streamGamma);
      boosts.push('stream');
    }
    const signals: ScoreSignals = { ranks: f.ranks, fused: base, recency, importance, boosts };
    const g = graphInfo.get(id);
    if (g && f.ranks.graph !== undefined) signals.graph = g;
    return { unit, score: Math.min(1, Math.max(0, score)), signals };
  };
  /**
   * The most a candidate of fused score `base` can score: steps 3 and 4 only scale it by factors ≤ 1,
   * then boost it (monotone). A hair of margin covers floating-point rounding in the products.
   */
  const ceiling = (base: number) => Math.min(1, boost(boost(base, agentGamma), streamGamma)) * (1 + 1e-9) + 1e-12;

  // Candidates are scored best fused score first, in growing batches, until the next one's ceiling is
  // below the last result kept (or below min_score): every candidate left would sort after the results,
  // so the answer is the one scoring them all gives. Graph expansion can bring a thousand candidates of
  // which a few dozen can still rank.
  const candidates: Array<{ id: string; f: Fused; unit: U; base: number }> = [];
  for (const [id, f] of fused) {
    const unit = visible(id);
    if (unit) candidates.push({ id, f, unit, base: max > 0 ? Math.min(1, f.raw / max) : 0 });
  }
  candidates.sort((a, b) => b.base - a.base);
  const minScore = o.minScore ?? 0;
  if (limit === 0) return [];
  const scored: ScoredUnit<U>[] = [];
  let next = 0;
  for (let batch = Math.max(4 * limit, 64); ; batch *= 2) {
    for (const end = Math.min(candidates.length, next + batch); next < end; next++) {
      const c = candidates[next];
      scored.push(scoreOf(c.id, c.f, c.unit, c.base));
    }
    const out = selectResults(scored, limit, minScore, o.dedupe !== false, o.collapseKey);
    if (next >= candidates.length) return out;
    const rest = ceiling(candidates[next].base);
    if (rest < minScore || (out.length >= limit && rest < out[out.length - 1].score)) return out;
  }
}

/** Does a statement name one of `people` (normalized speakers: "carla", "carla diaz") by their first name or in full? */
function speaksOf(mentioned: ReadonlySet<string>, people: ReadonlySet<string>): boolean {
  if (mentioned.size === 0) return false;
  for (const p of people) if (mentioned.has(p) || mentioned.has(p.split(' ')[0])) return true;
  return false;
}

/**
 * Step 5 over scored candidates: non-increasing order (ties by id), de-duplication by content and
 * `collapseKey`, `minScore`, `limit`.
 */
function selectResults<U extends RetrievalUnit>(
  scored: ScoredUnit<U>[],
  limit: number,
  minScore: number,
  dedupe: boolean,
  collapseKey: FusionOptions['collapseKey'],
): ScoredUnit<U>[] {
  scored.sort(compareScored);
  const out: ScoredUnit<U>[] = [];
  const seenContent = new Set<string>();
  const seenKeys = new Set<string>();
  for (const s of scored) {
    if (out.length >= limit) break;
    if (s.score < minScore) break; // sorted: everything after scores lower
    if (dedupe) {
      const key = traitsOf(s.unit).dedupeKey();
      if (key && seenContent.has(key)) continue;
      seenContent.add(key);
    }
    if (collapseKey) {
      const key = collapseKey(s.unit);
      if (key !== null) {
        if (seenKeys.has(key)) continue;
        seenKeys.add(key);
      }
    }
    out.push(s);
  }
  return out;
}

/**
 * Does a statement hold none of the question's words itself (names aside: every statement of a person's
 * chat shares the name), so that only the turns around it matched (see scoreOf)?
 */
function contextOnly(intent: QueryIntent, traits: UnitTraits): boolean {
  return intent.terms.length > 0 && !intent.terms.some((w) => traits.stems().has(w));
}

/** Scale of a statement that holds none of the question's words itself (see scoreOf). */
const CONTEXT_ONLY_FACTOR = 0.7;

/** Is the unit the first of versions found (earlier than another, later than none)? */
function firstVersion(versions: { earlier: Set<string>; middle: Set<string> } | null, id: string): boolean {
  return !!versions && versions.earlier.has(id) && !versions.middle.has(id);
}

/** How many of the best candidates are compared for versions (a bounded amount of work per query). */
const VERSION_POOL = 12;

/**
 * Versions of what the question asks about, among the best candidates: pairs of an earlier and a later
 * statement (valid time) that speak of the same thing. Either explicitly (the same subject and
 * attribute, consolidation's facts and updates) or by their words: the later one holds every query word
 * the earlier one holds, or all but one of them and announces a change ("Atlas migration deadline is
 * March 31" then "deadline moved. Atlas now has to be done by April 30"). When the query names people,
 * both must be about the same person (every statement of a chat shares a name). A question about now
 * wants the later one (`earlier` are scaled down), one about before the earlier (`later` are).
 */
function findVersions<U extends RetrievalUnit>(fused: Map<string, Fused>, visible: (id: string) => U | undefined, intent: QueryIntent, named: ReadonlySet<string> | null, askedFacets: ReadonlySet<Facet>): { earlier: Set<string>; later: Set<string>; middle: Set<string> } {
  const earlier = new Set<string>();
  const later = new Set<string>();
  const terms = versionTerms(intent).filter((t) => !named || !named.has(t));
  const pool = bestFused(fused, VERSION_POOL)
    .map((id) => visible(id)).filter((u): u is U => !!u && u.level === 1)
    .map((u) => {
      const traits = traitsOf(u);
      return {
        u, t: traits.timeMs, key: versionKey(u), m: matchedStems(terms, traits.stems()), cue: traits.cue(),
        who: u.subject ?? (u.speaker ? normalizeSpeaker(u.speaker) : null), traits,
      };
    });
  const personal = !!named && named.size > 0;
  for (const a of pool) {
    for (const b of pool) {
      if (b === a || !(b.t > a.t)) continue;
      let same = a.key !== null && a.key === b.key && b.m.size > 0;
      if (!same && a.m.size > 0 && (!personal || a.who === b.who)) {
        let missing = 0;
        for (const w of a.m) if (!b.m.has(w)) missing++;
        same = missing === 0 || (missing === 1 && a.m.size >= 2 && b.cue !== null);
      }
      if (!same && askedFacets.size > 0 && a.who !== null && a.who === b.who && b.cue === 'update') {
        same = sharesAskedFacet(a.traits, b.traits, askedFacets);
      }
      if (same && !confirms(saidWords(b.traits, terms), saidWords(a.traits, terms))) {
        earlier.add(a.u.id);
        later.add(b.u.id);
      }
    }
  }
  const middle = new Set<string>();
  for (const id of earlier) if (later.delete(id)) middle.add(id); // a middle version is neither the first nor the last
  return { earlier, later, middle };
}

/**
 * The ids of the `n` best fused candidates, by raw score and then id: the first `n` of sorting them all
 * (graph expansion brings up to a couple of thousand), by insertion into a list of at most `n`.
 */
function bestFused(fused: Map<string, Fused>, n: number): string[] {
  const top: Array<{ id: string; raw: number }> = [];
  const before = (a: { id: string; raw: number }, b: { id: string; raw: number }) => b.raw - a.raw < 0 || (b.raw - a.raw === 0 && a.id < b.id);
  for (const [id, f] of fused) {
    const c = { id, raw: f.raw };
    if (top.length === n && !before(c, top[n - 1])) continue;
    let i = top.length < n ? top.length : n - 1;
    while (i > 0 && before(c, top[i - 1])) {
      top[i] = top[i - 1];
      i--;
    }
    top[i] = c;
  }
  return top.map((c) => c.id);
}

/** The single-valued facets among those a question asks about: a person holds one value of each at a time. */
function singleValuedOf(facets: ReadonlySet<string> | undefined): ReadonlySet<Facet> {
  const out = new Set<Facet>();
  for (const f of facets ?? []) if (isFacet(f) && SINGLE_VALUED_FACETS.has(f)) out.add(f);
  return out;
}

/** Do two statements both speak of one of the asked (single-valued) facets? */
function sharesAskedFacet(a: UnitTraits, b: UnitTraits, asked: ReadonlySet<Facet>): boolean {
  const fb = b.facets();
  for (const f of a.facets()) if (asked.has(f) && fb.has(f)) return true;
  return false;
}

/** What a statement says beyond the question's words: its content stems and its numbers. */
function saidWords(traits: UnitTraits, queryTerms: readonly string[]): { stems: Set<string>; numbers: ReadonlySet<string> } {
  return { stems: new Set([...traits.stems()].filter((w) => !queryTerms.includes(w) && !/^\d/.test(w))), numbers: traits.numbers() };
}

/**
 * Does a later statement repeat an earlier one rather than replace it? "Done, a vegetarian meal is
 * requested." confirms "I'm vegetarian, please request the meal": it says half or more of what the
 * earlier one says beyond the question's words, and gives no other number. (A new number is a new
 * value: "the GP doubled the amlodipine to 10mg" after "amlodipine 5mg".)
 */
export function confirms(later: { stems: ReadonlySet<string>; numbers: ReadonlySet<string> }, earlier: { stems: ReadonlySet<string>; numbers: ReadonlySet<string> }): boolean {
  if (earlier.stems.size === 0) return false;
  for (const n of later.numbers) if (earlier.numbers.size > 0 && !earlier.numbers.has(n)) return false;
  let shared = 0;
  for (const w of earlier.stems) if (later.stems.has(w)) shared++;
  return shared * 2 >= earlier.stems.size;
}

export function compareScored(a: ScoredUnit, b: ScoredUnit): number {
  return b.score - a.score || (a.unit.id < b.unit.id ? -1 : a.unit.id > b.unit.id ? 1 : 0);
}
