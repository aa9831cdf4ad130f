/**
 * One retrieval, end to end, over in-memory derived indexes: candidates from the vector and text indexes
 * (and near-duplicate images), filtered by visibility/time/as_of at the source so filtered searches
 * still fill the list, fused and reranked (fusion.ts), optionally arbitrated (arbitration.ts).
 *
 * Synchronous and I/O-free: the caller embeds the query first (embedding is the only slow step and is
 * provider I/O) and owns the clock (`now`).
 */
import type { TextIndex, VectorIndex } from '@strata/store/indexes';
import { arbitrate } from './arbitration';
import { buildUnitFilter, type RetrievalScope } from './filters';
import { fuse, type FusionOptions } from './fusion';
import { MAX_GRAPH_DEPTH } from './graph';
import { facetGroup, facetsOf, type Facet } from '../text';
import { queryTimeRanges, speakersNamedIn } from './query';
import { traitsOf } from './unit-traits';
import { namesForRelations, relationsAsked } from './bridge';
import { queryIntent, type QueryIntent } from './intent';
import type { Neighbors, RankedList, RetrievalUnit, ScoredUnit } from './types';

export interface RetrieveRequest extends RetrievalScope {
  query: string;
  /** the embedded query; without it the vector list is empty (text-only retrieval) */
  queryVector?: Float32Array | null;
  /** default 10 */
  limit?: number;
  min_score?: number;
  /** default 1, capped at 3 */
  graph_depth?: number;
  agent_id?: string | null;
  enable_arbitration?: boolean;
}

export interface RetrievalSources<U extends RetrievalUnit> {
  /** the user's index, and the org's when org knowledge is requested (results are merged by score) */
  vectorIndexes: VectorIndex[];
  textIndexes: TextIndex[];
  getUnit: (id: string) => U | undefined;
  neighbors?: Neighbors;
  /** what the user's index keeps of which insights quote a replaced memory (fusion.ts `FusionInput.outdatedInsight`) */
  outdatedInsight?: (id: string) => boolean | null;
  /**
   * Fields of the units' documents indexed alone (e.g. `own` words and `context` turns): each is searched
   * with the query and enters fusion as a list of its own, weighted by `weights[name]`
   * (DEFAULT_WEIGHTS, else 0.5).
   */
  fieldTextIndexes?: Array<{ name: string; indexes: TextIndex[] }>;
  /** units whose image assets are near-duplicates of the query image, closest first (phash.ts) */
  imageMatches?: Array<{ id: string }>;
  /**
   * Optional narrowing from a derived index (e.g. the ids of the current stream for scope=stream, or of a
   * time range): only these ids can match. Makes very selective searches fast; the filter still applies.
   */
  restrictTo?: Set<string>;
}

export interface RetrievalConfig {
  weights?: { vector?: number; text?: number; image?: number; graph?: number; [field: string]: number | undefined };
  /** candidates taken from each index (default max(50, 3 × limit), at most 300) */
  candidates?: number;
  /** the `retrieval.max_limit` of the configuration (default 100) */
  maxLimit?: number;
  fusion?: Omit<FusionOptions, 'now' | 'limit' | 'minScore' | 'graphDepth' | 'agentId' | 'streamId' | 'scope' | 'graphWeight' | 'speakerFocus' | 'timeFocus' | 'answerFocus' | 'facetFocus'>;
  /**
   * Scale of units said by another person than the one(s) the query names (default
   * DEFAULT_SPEAKER_FACTOR; 1 turns it off). See query.ts.
   */
  speakerFactor?: number;
  /** Scale of units outside the dates a query names (default DEFAULT_DATE_FACTOR; 1 turns it off). See query.ts. */
  dateFactor?: number;
  /** false: no ranking by the kind of answer and the time the query asks about (intent.ts); default on */
  answerFocus?: boolean;
}

/** LoCoMo dev, L1-evidence recall@10 by factor: see docs/retrieval-tuning.md. */
export const DEFAULT_SPEAKER_FACTOR = 0.5;

/**
 * Scale of memories that are questions (query.ts `isQuestion`), unless `fusion.questionFactor` says
 * otherwise. LoCoMo dev, L1-evidence recall@10: 1 → 0.749, 0.7 → 0.761 (docs/retrieval-tuning.md).
 */
export const DEFAULT_QUESTION_FACTOR = 0.7;

/**
 * Scale of insights (fusion.ts `insightFactor`), unless `fusion.insightFactor` says otherwise. LoCoMo
 * dev, L1-evidence recall@10: 1 → 0.776, 0.7 → 0.784, 0.5 → 0.787, 0.3 → 0.789; 0.5 keeps an insight
 * that matches clearly better than any memory above them.
 */
export const DEFAULT_INSIGHT_FACTOR = 0.5;

/** LoCoMo dev, L1-evidence recall@10 by factor: see docs/retrieval-tuning.md. */
export const DEFAULT_DATE_FACTOR = 0.3;

/**
 * Scale of a fact stored under another kind than the one the query asks about, when some candidate is
 * stored under the asked kind (fusion.ts `facetFocus`). Neutral on the offline suite (its facts rarely
 * carry a stored attribute: 0.495 top-1 at 1, 0.8 and 0.6); with `[llm]` a model names every fact's kind,
 * and this is what lets "Where does Dana live now?" pass over her job (test/api/conversations-llm.test.ts).
 */
export const DEFAULT_OTHER_FACT_FACTOR = 0.8;

export interface RetrieveOutcome<U extends RetrievalUnit> {
  results: ScoredUnit<U>[];
  /** present when arbitration ran */
  arbitration?: { mode: 'current' | 'history'; dropped: string[] };
}

/**
 * Tuned for the default local embedder (SIF word vectors, weaker than BM25 alone on LoCoMo: recall@10
 * 0.43 vs 0.65); text 1 / vector 0.7 fused beat BM25 alone at every k and budget. With a stronger
 * embedder configure a higher vector weight.
 */
export const DEFAULT_WEIGHTS: Record<string, number> & { vector: number; text: number; image: number; graph: number; facet: number; bridge: number } = {
  vector: 0.7, text: 1, image: 1, graph: 0.5,
  // field lists (derived indexes' `own` and `context`): LoCoMo dev, own 0.3-0.7 × context 0.3-0.5 all
  // within ±0.004 of recall@10 0.781; 0.5 each
  own: 0.5, context: 0.5,
  // units stating the kind of fact the query asks about (text/facets.ts): see docs/retrieval-tuning.md
  facet: 1,
  // the query searched again with the names of the relations it asks through (bridge.ts)
  bridge: 1,
};

/** The candidates of `lists` whose own words state one of `wanted`, ordered by their best rank in any list. */
function facetList<U extends RetrievalUnit>(lists: RankedList[], wanted: ReadonlySet<Facet>, getUnit: (id: string) => U | undefined): RankedList['items'] {
  const best = new Map<string, number>();
  for (const list of lists) {
    list.items.forEach((item, rank) => {
      const before = best.get(item.id);
      if (before === undefined || rank < before) best.set(item.id, rank);
    });
  }
  const out: { id: string; rank: number }[] = [];
  for (const [id, rank] of best) {
    const unit = getUnit(id);
    if (!unit) continue;
    for (const f of traitsOf(unit).facets()) {
      if (wanted.has(f)) {
        out.push({ id, rank });
        break;
      }
    }
  }
  return out.sort((a, b) => a.rank - b.rank || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).map(({ id }) => ({ id, score: 1 }));
}

/** The stages of one retrieval that `retrieve` reports the end of (the caller measures: metrics, traces). */
export type RetrievalStage = 'search' | 'fuse' | 'arbitrate';

/**
 * Told when each stage ends, in order (`search`, then `fuse`, then `arbitrate` when it runs), so the
 * caller can time them from its own clock; the pipeline stays free of clocks and telemetry.
 */
export interface StageClock {
  end(stage: RetrievalStage): void;
}

export function retrieve<U extends RetrievalUnit>(
  sources: RetrievalSources<U>,
  request: RetrieveRequest,
  config: RetrievalConfig = {},
  now: number = Date.now(),
  stages?: StageClock,
): RetrieveOutcome<U> {
  const plan = planSearch(sources, request, config);
  const vectorHits = request.queryVector
    ? mergeByScore(sources.vectorIndexes.map((ix) => ix.search(request.queryVector!, plan.candidates, vectorSearchOptions(plan, ix))), plan.candidates)
    : [];
  return finishRetrieval(plan, vectorHits, now, stages);
}

/**
 * The same retrieval, for a caller that can wait: the vector search may run in slices between which
 * the event loop turns (VectorIndex.searchAsync: an index of 100,000 vectors whose HNSW graph is still
 * building is scanned exactly, ~30 ms), so concurrent requests are not held behind it. Same answer.
 */
export async function retrieveAsync<U extends RetrievalUnit>(
  sources: RetrievalSources<U>,
  request: RetrieveRequest,
  config: RetrievalConfig = {},
  now: number = Date.now(),
  stages?: StageClock,
): Promise<RetrieveOutcome<U>> {
  const plan = planSearch(sources, request, config);
  const lists: Array<Array<{ id: string; score: number }>> = [];
  if (request.queryVector) {
    for (const ix of sources.vectorIndexes) lists.push(await ix.searchAsync(request.queryVector, plan.candidates, vectorSearchOptions(plan, ix)));
    // Records may have changed while the event loop turned: the verdicts are made again on the records
    // as they are now, so fusion (which checks every candidate, vector hits included) sees one state.
    plan.verdicts.clear();
  }
  return finishRetrieval(plan, request.queryVector ? mergeByScore(lists, plan.candidates) : [], now, stages);
}

/** What one retrieval decides before searching: limits, weights, and the one filter every stage shares. */
interface SearchPlan<U extends RetrievalUnit> {
  sources: RetrievalSources<U>;
  request: RetrieveRequest;
  config: RetrievalConfig;
  limit: number;
  weights: { vector: number; text: number; image: number; graph: number; facet: number; bridge: number; [list: string]: number | undefined };
  candidates: number;
  idFilter: (id: string) => boolean;
  /** idFilter of a unit `sources.getUnit` gave */
  unitFilter: (unit: U) => boolean;
  /** idFilter's verdicts, one per id */
  verdicts: Map<string, boolean>;
  intent: QueryIntent;
}

function vectorSearchOptions<U extends RetrievalUnit>(plan: SearchPlan<U>, ix: VectorIndex): { filter: (id: string) => boolean; among?: Set<string> } {
  const restrict = plan.sources.restrictTo;
  return {
    filter: plan.idFilter,
    // score a small candidate set directly instead of walking the graph
    among: restrict && restrict.size * 4 < ix.size ? restrict : undefined,
  };
}

function planSearch<U extends RetrievalUnit>(sources: RetrievalSources<U>, request: RetrieveRequest, config: RetrievalConfig): SearchPlan<U> {
  const maxLimit = config.maxLimit ?? 100;
  const limit = Math.min(maxLimit, Math.floor(request.limit ?? 10));
  if (!(limit >= 1)) throw new RangeError('limit must be ≥ 1');
  const weights = { ...DEFAULT_WEIGHTS, ...config.weights };
  const candidates = config.candidates ?? Math.min(300, Math.max(50, 3 * limit));
  const intent = queryIntent(request.query);
  // An earlier value is in memory as a superseded unit: searched only when the question may want it.
  const accept = buildUnitFilter({ ...request, include_superseded: intent.tense !== 'current' && !request.as_of });
  // One verdict per id per request: the vector search, the text search and fusion ask about the same ids.
  const verdicts = new Map<string, boolean>();
  const restrict = sources.restrictTo;
  const idFilter = (id: string) => {
    if (restrict && !restrict.has(id)) return false; // cheapest test first, not worth caching
    let ok = verdicts.get(id);
    if (ok === undefined) {
      const u = sources.getUnit(id);
      ok = !!u && accept(u);
      verdicts.set(id, ok);
    }
    return ok;
  };
  // idFilter for a unit already looked up with sources.getUnit (fusion asks of every candidate, graph
  // neighbours included: ~2,000 a query): the same verdict, without looking it up again
  const unitFilter = (u: U) => {
    if (restrict && !restrict.has(u.id)) return false;
    let ok = verdicts.get(u.id);
    if (ok === undefined) {
      ok = accept(u);
      verdicts.set(u.id, ok);
    }
    return ok;
  };
  return { sources, request, config, limit, weights, candidates, idFilter, unitFilter, verdicts, intent };
}

/** The text searches, the lists, fusion and arbitration, given the vector hits. */
function finishRetrieval<U extends RetrievalUnit>(
  plan: SearchPlan<U>,
  vectorHits: Array<{ id: string; score: number }>,
  now: number,
  stages?: StageClock,
): RetrieveOutcome<U> {
  const { sources, request, config, limit, weights, candidates, idFilter, unitFilter } = plan;
  const textHits = mergeByScore(sources.textIndexes.map((ix) => ix.search(request.query, candidates, { filter: idFilter })), candidates);

  const lists: RankedList[] = [
    { name: 'vector', weight: weights.vector, items: vectorHits },
    { name: 'text', weight: weights.text, items: textHits },
  ];
  for (const field of sources.fieldTextIndexes ?? []) {
    const items = mergeByScore(field.indexes.map((ix) => ix.search(request.query, candidates, { filter: idFilter })), candidates);
    lists.push({ name: field.name, weight: weights[field.name] ?? 0.5, items });
  }
  // A question asked through a relation ("Siddharth's wife"): searched again with the names the best
  // candidates give for it ("my wife Meera"), so the statement about that person can rank (bridge.ts).
  const bridge = bridgeSearch(plan, [vectorHits, textHits]);
  if (bridge) lists.push({ name: 'bridge', weight: weights.bridge, items: bridge });
  stages?.end('search');
  // Facets (text/facets.ts): among the candidates, the units stating the kind of fact the query asks
  // about, best first by their best rank elsewhere. Only when the query asks about a kind of fact.
  // a job and where it is held are one fact (facetGroup): "What does Marek do for work?" is answered by
  // "working for a solar installer now", "Where does Lena work?" by "she's a nurse at the Royal"
  const queryFacets = new Set([...facetsOf(request.query)].flatMap(facetGroup));
  if (queryFacets.size > 0) lists.push({ name: 'facet', weight: weights.facet, items: facetList(lists, queryFacets, sources.getUnit) });
  // The image list only counts (in the maximum too) when the query carries an image.
  if (sources.imageMatches) lists.push({ name: 'image', weight: weights.image, items: sources.imageMatches });

  // The people the query names, among the speakers of the candidates (a name that no candidate was said
  // by cannot steer anything, so the candidates are enough and no per-user speaker list is needed).
  const speakerFactor = config.speakerFactor ?? DEFAULT_SPEAKER_FACTOR;
  let speakerFocus: FusionOptions['speakerFocus'] = null;
  if (speakerFactor < 1) {
    const speakers = new Set<string>();
    for (const list of [vectorHits, textHits]) {
      for (const h of list) {
        const u = sources.getUnit(h.id);
        if (u && traitsOf(u).namedSpeaker !== null) speakers.add(u.speaker!);
      }
    }
    const named = speakersNamedIn(request.query, speakers);
    if (named.size > 0) speakerFocus = { named, factor: speakerFactor };
  }

  const arbitration = request.enable_arbitration === true;
  const fused = fuse({
    lists,
    getUnit: sources.getUnit,
    accept: unitFilter,
    neighbors: sources.neighbors,
    outdatedInsight: sources.outdatedInsight,
    options: {
      questionFactor: DEFAULT_QUESTION_FACTOR,
      insightFactor: DEFAULT_INSIGHT_FACTOR,
      ...config.fusion,
      now,
      graphDepth: Math.min(MAX_GRAPH_DEPTH, Math.max(0, Math.floor(request.graph_depth ?? 1))),
      graphWeight: weights.graph,
      agentId: request.agent_id ?? null,
      streamId: request.stream_id ?? null,
      scope: request.scope ?? 'user',
      minScore: request.min_score ?? 0,
      // arbitration may drop versions: keep a margin so the answer still has `limit` results
      limit: arbitration ? limit * 3 : limit,
      speakerFocus,
      timeFocus: { ranges: queryTimeRanges(request.query), factor: config.dateFactor ?? DEFAULT_DATE_FACTOR },
      answerFocus: config.answerFocus === false ? null : plan.intent,
      facetFocus: config.answerFocus === false ? null : { facets: queryFacets, factor: DEFAULT_OTHER_FACT_FACTOR },
    },
  });
  stages?.end('fuse');
  if (!arbitration) return { results: fused };
  const a = arbitrate(fused, request.query, sources.neighbors);
  stages?.end('arbitrate');
  return { results: a.results.slice(0, limit), arbitration: { mode: a.mode, dropped: a.dropped } };
}

/** How many of the best vector and text candidates are read for the names of a relation. */
const BRIDGE_POOL = 20;

/** The text hits for the query with the names its relations stand for, or null when it names no relation or none is found. */
function bridgeSearch<U extends RetrievalUnit>(plan: SearchPlan<U>, lists: Array<Array<{ id: string; score: number }>>): RankedList['items'] | null {
  const relations = relationsAsked(plan.request.query);
  // "Who is Tom's sister?", "What is the name of Tom's sister?": the statement that names her is the
  // answer, not a first hop; nothing to search again
  if (relations.length === 0 || plan.intent.kind === 'person' || asksForName(plan.request.query)) return null;
  const asked = plan.request.query.toLowerCase();
  const names = new Set<string>();
  const hops = new Set<string>();
  const seen = new Set<string>();
  for (const list of lists) {
    for (const h of list.slice(0, BRIDGE_POOL)) {
      if (seen.has(h.id)) continue;
      seen.add(h.id);
      const u = plan.sources.getUnit(h.id);
      if (!u) continue;
      const found = namesForRelations(u.content, relations).filter((n) => !asked.includes(n.toLowerCase()));
      if (found.length === 0) continue;
      for (const n of found) names.add(n);
      hops.add(h.id);
    }
  }
  if (names.size === 0) return null;
  // the statements that said who the relation is are the first hop, not the answer: they rank by the
  // question's own words, and the list carries what is said about the person
  const query = `${plan.request.query} ${[...names].sort().join(' ')}`;
  const hits = mergeByScore(plan.sources.textIndexes.map((ix) => ix.search(query, plan.candidates, { filter: plan.idFilter })), plan.candidates);
  return hits.filter((h) => !hops.has(h.id));
}

/** Does the query ask what someone or something is called? */
function asksForName(query: string): boolean {
  return /\b(?:name|named|called)\b/i.test(query);
}

/** Merge per-index hit lists into one list by score, first occurrence of an id winning. */
function mergeByScore(lists: Array<Array<{ id: string; score: number }>>, k: number): Array<{ id: string; score: number }> {
  if (lists.length === 1) return lists[0].slice(0, k);
  const seen = new Set<string>();
  const all = lists.flat().sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1));
  const out: Array<{ id: string; score: number }> = [];
  for (const h of all) {
    if (seen.has(h.id)) continue;
    seen.add(h.id);
    out.push(h);
    if (out.length >= k) break;
  }
  return out;
}
