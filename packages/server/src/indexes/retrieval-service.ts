/**
 * The query side of retrieval (CONTRACT.md §3): from a validated request to ranked units. One domain
 * call for the retrieve and context routes: read barrier when asked, the derived indexes of the user
 * (and of the org on every shard), the query embedding, near-duplicate images, then the pure pipeline
 * (`@strata/memory` retrieval) over them.
 *
 * The org's units of a shard group this node does not hold (placement) are fetched from a node that
 * holds it (cluster/read-queries.ts `orgIndexEntries`: records, stored vectors, source contexts) and
 * indexed in memory for this request only, by the user's shard's manager (same options, same kind of
 * set). That costs a transfer proportional to the org's units in those groups on every org-scoped
 * retrieval: no copy is kept, since nothing here would tell when it went stale (a cache needs a
 * per-org version from the holder's indexes; not done yet).
 */
import { retrieval, type Embedder } from '@strata/memory';
import { badRequest, getEvents, join, payloadTooLarge, readMany, recentPendingOfUser, type EventRecord, type MemoryUnit, type StateDb } from '@strata/store';
import type { Config } from '../config';
import type { Metrics } from '../metrics';
import { RetrievalStages } from '../telemetry/retrieval-stages';
import type { Tracing } from '../telemetry/tracing';
import type { Body } from '../schemas';
import type { ShardReads } from '../cluster/shard-reads';
import type { ShardRouter } from '../shards';
import { indexEntriesOf, orgIndexEntries, type DerivedIndexes, type HeldIndex } from './derived';
import { LoopTurns } from './loop-turns';
import type { PendingEventsCache } from './pending-cache';
import type { WholeRecordCache } from './record-cache';
import { collapseBySource, pendingSetOf, retrievalSources, type Ranked } from './sources';
import { IndexGoneError } from './worker/index-worker';
import { RemoteUserIndex } from './worker/remote-index';
import type { WorkerQuery } from './worker/protocol';

export { collapseBySource } from './sources';

const { decodeBase64Media, MediaError, imagePhash, isSearchablePending, isSlimRecord, rawHitOf, retrieveAsync, timeMs } = retrieval;
type RetrievalConfig = retrieval.RetrievalConfig;
type RetrieveRequest = retrieval.RetrieveRequest;
type UnitSet = retrieval.UnitSet;
type RawHit = retrieval.RawHit;
type Scored = retrieval.ScoredUnit<Ranked>;

/** How many of a user's most recent pending events a query searches raw (include_pending). */
export const PENDING_SEARCHED = 256;
/** Vectors of pending events kept between queries (an event's content never changes). */
const PENDING_VECTOR_CACHE = 10_000;

/**
 * The retrieve fields of a request body (the retrieve route's body, and the context route's, which
 * adds its own): the type of the Retrieve schema (schemas.ts), so the schema is their one definition.
 */
export type RetrieveFields = Body<'Retrieve'>;

export interface RetrievedUnit {
  /** a unit, or (include_pending) an event not consolidated yet as a level-0 raw hit */
  unit: MemoryUnit | RawHit;
  /** why it scored what it did (the fused lists and reranking signals) */
  signals: retrieval.ScoreSignals;
  score: number;
}

export interface RetrievalAnswer {
  /** the text finally searched */
  query: string;
  results: RetrievedUnit[];
  query_time_ms: number;
}

export interface RetrievalServiceOptions {
  shards: ShardRouter;
  /** where the org units of a group not held here come from (absent: every group is held here) */
  reads?: ShardReads;
  /** shard id → its derived indexes */
  indexes: Map<number, DerivedIndexes>;
  embedder: Embedder;
  config: Config;
  retrieval?: RetrievalConfig;
  now?: () => number;
  /**
   * Told of every answer, after it is computed (retrieval reinforcement, workers/reinforcement.ts).
   * Must be synchronous and cheap: the answer does not wait for anything it starts, and its errors are
   * swallowed (a lost reinforcement is harmless).
   */
  onRetrieved?: (userId: string, results: RetrievedUnit[]) => void;
  /**
   * The users' pending events kept between queries (fed by every shard's applied effects and cleared on a
   * snapshot install by whoever wires it, node.ts); absent: read from LevelDB for every query.
   */
  pendingCache?: PendingEventsCache;
  /**
   * The whole records answered, kept between queries (fed by every shard's applied effects and cleared on a
   * snapshot install by whoever wires it, node.ts); absent: read from LevelDB for every answer.
   */
  recordCache?: WholeRecordCache;
  /**
   * Milliseconds of searches and fusion that concurrent retrievals may run back to back before the event
   * loop is let through to other work (loop-turns.ts; default 8; 0: a turn of the loop per retrieval)
   */
  turnBudgetMs?: number;
  /** the stage latency histogram (strata_retrieval_stage_seconds) */
  metrics?: Metrics;
  /** a `retrieval` span per call with a span per stage (tracing on) */
  tracing?: Tracing;
}

const invalid = (path: string, message: string) => badRequest('validation_failed', `${path.slice(1)} ${message}.`, [{ path, message }]);

/** What one retrieval ranks with, read by `run` wherever the user's indexes are held. */
interface RankInput {
  userId: string;
  streamId: string | null;
  scope: string;
  orgId: string | null;
  /** the org's shard ids in order (the same sources in the same order on every node), those held here, the others */
  orgShards: number[];
  localOrg: number[];
  remoteOrg: number[];
  home: number;
  linearizable: boolean;
  queryHash: string | null;
  pendingEvents: EventRecord[] | null;
  /** the pending events' vectors (aligned with pendingEvents) */
  pendingVectors: (Float32Array | null)[];
  request: RetrieveRequest;
  config: RetrievalConfig;
}

/** Ranked results, and which of them are slim records whose whole record the answer reads. */
interface Ranking {
  results: Scored[];
  slim: (r: Scored, i: number) => boolean;
}

export class RetrievalService {
  /** event id → its embedding, for pending events searched raw (insertion order: oldest first) */
  private readonly pendingVectors = new Map<string, Float32Array>();
  /** the searches and fusion of concurrent queries, one query at a time, in turns of the event loop (loop-turns.ts) */
  private readonly turns: LoopTurns;

  constructor(private readonly options: RetrievalServiceOptions) {
    this.turns = new LoopTurns(options.turnBudgetMs);
  }

  private indexesOf(shardId: number): DerivedIndexes {
    const ix = this.options.indexes.get(shardId);
    if (!ix) throw new Error(`no derived indexes for shard ${shardId}`);
    return ix;
  }

  /** Users whose vector graph is being built, over every shard (strata_index_graphs_building). */
  graphsBuilding(): number {
    let n = 0;
    for (const ix of this.options.indexes.values()) n += ix.graphsBuilding();
    return n;
  }

  /** The record a user's indexes hold for a unit, if they are held (tests). */
  heldRecord(userId: string, unitId: string): retrieval.IndexedRecord | undefined {
    return this.indexesOf(this.options.shards.forUser(userId).id).heldRecord(userId, unitId);
  }

  /** Resolves when every shard's index builds and refreshes, vector graphs included, are done (benchmarks, tests). */
  async settled(): Promise<void> {
    await Promise.all([...this.options.indexes.values()].map((ix) => ix.settled()));
  }

  /**
   * Ranked units for a request. `streamId` is the current stream (null from the context route without
   * one). Throws 400/413 StrataErrors for bad input that the schema cannot express.
   */
  retrieve(userId: string, streamId: string | null, body: RetrieveFields): Promise<RetrievalAnswer> {
    const { tracing } = this.options;
    if (!tracing) return this.run(userId, streamId, body, new RetrievalStages(this.options.metrics, undefined));
    const attributes = { 'strata.retrieval.scope': body.scope ?? 'user', 'strata.retrieval.limit': body.limit ?? 10 };
    return tracing.span('retrieval', { attributes }, () => this.run(userId, streamId, body, new RetrievalStages(this.options.metrics, tracing)));
  }

  private async run(userId: string, streamId: string | null, body: RetrieveFields, stages: RetrievalStages): Promise<RetrievalAnswer> {
    const started = performance.now();
    const { config } = this.options;
    const query = body.query.trim();
    if (query.length === 0) throw invalid('/query', 'must not be empty');
    const limit = body.limit ?? 10;
    if (!Number.isInteger(limit) || limit < 1) throw invalid('/limit', 'must be an integer ≥ 1');
    const scope = body.scope ?? 'user';
    if (scope === 'stream' && !streamId) throw invalid('/scope', '"stream" needs a stream_id');
    for (const name of ['start_time', 'end_time', 'as_of'] as const) {
      const v = body[name];
      if (v) {
        try {
          timeMs(v, name);
        } catch {
          throw invalid(`/${name}`, 'must be an RFC 3339 date-time');
        }
      }
    }
    if (body.start_time && body.end_time && Date.parse(body.start_time) > Date.parse(body.end_time)) {
      throw invalid('/start_time', 'must not be after end_time');
    }
    const queryHash = this.decodeMedia(body);

    const home = this.options.shards.forUser(userId);
    const { reads } = this.options;
    // every live group (a replica moved away is not open here)
    const orgGroups = body.org_id ? this.options.shards.groupIds() : [];
    // the org's groups held here are read from their indexes; the others from a node holding them
    const remoteOrg = reads ? orgGroups.filter((g) => !reads.holds(g)) : [];
    const localOrg = orgGroups.filter((g) => !remoteOrg.includes(g));
    const linearizable = body.consistency === 'linearizable';
    if (linearizable) {
      const barriers = new Set([home.id, ...localOrg]);
      await Promise.all([...barriers].map((g) => this.options.shards.here(g).log.readBarrier()));
    }
    // The pending events are read BEFORE the user's index: the index awaits every command applied before
    // it is asked, so an event consolidated in between is in the index, and nothing falls between the two
    // reads (read after, an event consolidated while the index loaded was in neither). Such an event may
    // then be in both: collapseBySource keeps one of the two (never both answer).
    const pendingEvents = body.include_pending === false ? null : await stages.time('pending', () => this.pendingEventsOf(home.db, userId));
    // one embedder call (one round trip to a remote embedder): the query and the pending events not embedded before
    const unembedded = pendingEvents?.filter((e) => !this.pendingVectors.has(e.event_id)) ?? [];
    const [user, vectors] = await Promise.all([
      stages.time('index_load', () => this.indexesOf(home.id).forUser(userId)),
      stages.time('embed', () => this.options.embedder.embed([query, ...unembedded.map((e) => e.content)])),
    ]);
    const request: RetrieveRequest = {
      query, queryVector: vectors[0] ?? null, user_id: userId, stream_id: streamId, scope, org_id: body.org_id ?? null,
      start_time: body.start_time ?? null, end_time: body.end_time ?? null, as_of: body.as_of ?? null,
      limit: Math.min(limit, config.retrieval.max_limit), min_score: body.min_score ?? 0,
      graph_depth: body.graph_depth ?? 1, agent_id: body.agent_id ?? null,
      enable_arbitration: body.enable_arbitration === true || config.reranker.type === 'arbitrator',
    };
    const base = this.options.retrieval ?? {};
    const retrievalConfig: RetrievalConfig = {
      ...base,
      maxLimit: config.retrieval.max_limit,
      // One result per source event leaves room for other evidence (LoCoMo, with the source-turn documents
      // of derived.ts: L1-evidence recall@10 0.64 → 0.74 over the three dev conversations).
      // Effective importance: stored importance decaying from when the unit was stored or last retrieved.
      fusion: { collapseKey: collapseBySource, importanceHalfLifeDays: config.memory.importance_half_life_days, ...base.fusion },
    };
    const input: RankInput = {
      userId, streamId, scope, orgId: body.org_id ?? null, orgShards: orgGroups, localOrg, remoteOrg, home: home.id, linearizable, queryHash,
      pendingEvents, pendingVectors: pendingEvents ? this.pendingVectorsOf(pendingEvents, unembedded, vectors.slice(1)) : [],
      request, config: retrievalConfig,
    };
    const ranking = await this.rank(user, input, stages);
    // a slim record is of an index held here, so its owner's group is open here (one closed a moment ago: left out)
    const results = await stages.time('records', () => wholeRecords(userId, ranking.results, (owner) => this.options.shards.byId(this.options.shards.groupOf(owner))?.db, ranking.slim, this.options.recordCache));
    try {
      // raw hits are events, not units: nothing to reinforce
      this.options.onRetrieved?.(userId, results.filter((r): r is RetrievedUnit & { unit: MemoryUnit } => r.unit.level !== 0));
    } catch {
      // reinforcement is best effort; the answer stands
    }
    stages.finish();
    return { query, results, query_time_ms: Math.round((performance.now() - started) * 1000) / 1000 };
  }

  /**
   * Ranks on the main thread or, for a user whose indexes the index worker holds, in the worker. An index
   * given up between its load and the query (evicted) is loaded again and asked once more.
   */
  private async rank(user: HeldIndex, input: RankInput, stages: RetrievalStages): Promise<Ranking> {
    for (let attempt = 0; ; attempt++) {
      if (!(user instanceof RemoteUserIndex)) return this.rankHere(user, input, stages);
      try {
        return await this.rankInWorker(user, input, stages);
      } catch (err) {
        if (!(err instanceof IndexGoneError) || attempt > 0) throw err;
      }
      user = await stages.time('index_load', () => this.indexesOf(input.home).forUser(input.userId));
    }
  }

  private async rankHere(user: retrieval.UserIndex, input: RankInput, stages: RetrievalStages): Promise<Ranking> {
    const orgSets = input.orgId
      ? await stages.time('index_load', () => Promise.all([
        Promise.all(input.localOrg.map((id) => this.indexesOf(id).forOrg(input.orgId!))),
        input.remoteOrg.length > 0 ? this.remoteOrgSets(input.orgId!, input.remoteOrg, input.home, input.linearizable) : [],
      ]))
      : null;
    // no set at all without pending events (the usual case once consolidation keeps up): a set is a vector index
    const pending = input.pendingEvents && input.pendingEvents.length > 0
      ? pendingSetOf(this.options.embedder.dimensions, input.pendingEvents.map(rawHitOf), input.pendingVectors)
      : null;
    // in shard order, wherever each came from: the same sources in the same order on every node
    const setOf = new Map<number, UnitSet | undefined>(orgSets ? [...input.localOrg.map((id, i) => [id, orgSets[0][i]] as const), ...input.remoteOrg.map((g, i) => [g, orgSets[1][i]] as const)] : []);
    const orgs = input.orgShards.map((id) => setOf.get(id)).filter((s): s is UnitSet => !!s && s.size > 0);
    const sources = retrievalSources({ user, orgs, pending, scope: input.scope, streamId: input.streamId, queryHash: input.queryHash });
    // the searches and fusion take turns with each other and with the rest of the node (loop-turns.ts)
    const release = await stages.time('turn', () => this.turns.enter());
    try {
      stages.mark();
      // the clock read in the turn, right before the pipeline runs
      const now = this.options.now?.() ?? Date.now();
      // async: a large user's exact vector scan (while its HNSW graph builds) yields between slices
      const outcome = await retrieveAsync(sources, input.request, input.config, now, stages);
      return { results: outcome.results, slim: (r) => isSlimRecord(r.unit) };
    } finally {
      release();
    }
  }

  /**
   * Ranks in the index worker: it holds the user's indexes; what the main thread read for the query goes
   * with it (pending events and their vectors; the org's units of every shard, whole, read for this query,
   * as for the groups held elsewhere). The pipeline's stages are the worker's measures; `worker` is the wait.
   */
  private async rankInWorker(user: RemoteUserIndex, input: RankInput, stages: RetrievalStages): Promise<Ranking> {
    const { fusion } = input.config;
    // a function cannot cross to the thread: the worker sets collapseBySource itself
    if (fusion?.collapseKey !== collapseBySource) throw new Error('the index worker ranks with collapseBySource only');
    const orgs = input.orgId ? await stages.time('index_load', () => this.orgEntries(input)) : [];
    const query: WorkerQuery = {
      request: input.request, config: { ...input.config, fusion: { ...fusion, collapseKey: undefined } }, now: this.options.now?.() ?? Date.now(),
      scope: input.scope, streamId: input.streamId, queryHash: input.queryHash, orgs,
      pending: input.pendingEvents && input.pendingEvents.length > 0 ? { hits: input.pendingEvents.map(rawHitOf), vectors: input.pendingVectors } : null,
    };
    const answer = await stages.time('worker', () => user.query(query));
    for (const stage of ['search', 'fuse', 'arbitrate'] as const) {
      const ms = answer.stages[stage];
      if (ms !== undefined) stages.add(stage, ms);
    }
    return { results: answer.results, slim: (_r, i) => answer.results[i].slim };
  }

  /** The org's units of every shard, whole and with vectors of the node's embedder, in shard order (for the worker). */
  private async orgEntries(input: RankInput): Promise<retrieval.IndexEntry[][]> {
    const { embedder } = this.options;
    const [local, remote] = await Promise.all([
      Promise.all(input.localOrg.map(async (id) => indexEntriesOf(await orgIndexEntries(this.options.shards.here(id).db, input.orgId!), embedder))),
      input.remoteOrg.length > 0
        ? this.options.reads!.each('orgIndexEntries', { org_id: input.orgId! }, { groups: input.remoteOrg, linearizable: input.linearizable })
          .then((wire) => wire.map((w) => indexEntriesOf(w, embedder)))
        : [],
    ]);
    const setOf = new Map<number, retrieval.IndexEntry[]>([...input.localOrg.map((id, i) => [id, local[i]] as const), ...input.remoteOrg.map((g, i) => [g, remote[i]] as const)]);
    const out = input.orgShards.map((id) => setOf.get(id) ?? []).filter((e) => e.length > 0);
    await this.indexesOf(input.home).embedInto(out.flat().filter((e) => !e.vector));
    return out;
  }

  /** The org's units of groups not held here, from nodes that hold them, each group as a unit set for this request. */
  private async remoteOrgSets(orgId: string, groups: number[], home: number, linearizable: boolean): Promise<(UnitSet | undefined)[]> {
    const wire = await this.options.reads!.each('orgIndexEntries', { org_id: orgId }, { groups, linearizable });
    const { embedder } = this.options;
    return Promise.all(wire.map((entries) => (entries.length > 0 ? this.indexesOf(home).unitSetOf(indexEntriesOf(entries, embedder)) : undefined)));
  }

  /** The user's most recent pending text and JSON events (kept between queries when a cache is wired). */
  private pendingEventsOf(db: StateDb, userId: string): Promise<EventRecord[]> {
    const read = async () => {
      const entries = await recentPendingOfUser(db, userId, PENDING_SEARCHED);
      if (entries.length === 0) return [];
      return (await getEvents(db, userId, entries.map((e) => e.event_id)))
        .filter((e): e is NonNullable<typeof e> => e !== undefined && isSearchablePending(e));
    };
    const cache = this.options.pendingCache;
    return cache ? cache.get(userId, read) : read();
  }

  /**
   * The vectors of a query's pending events, in order. `embedded` are those just embedded (with `vectors`),
   * the others' vectors are cached from earlier queries (an event's content never changes).
   */
  private pendingVectorsOf(events: EventRecord[], embedded: EventRecord[], vectors: Float32Array[]): (Float32Array | null)[] {
    const fresh = new Map(embedded.map((e, i) => [e.event_id, vectors[i]]));
    for (const [id, vector] of fresh) this.pendingVectors.set(id, vector);
    for (const id of this.pendingVectors.keys()) {
      if (this.pendingVectors.size <= PENDING_VECTOR_CACHE) break;
      this.pendingVectors.delete(id);
    }
    return events.map((e) => fresh.get(e.event_id) ?? this.pendingVectors.get(e.event_id) ?? null);
  }

  /**
   * Validates the media fields (bad base64 400, too large 413) and returns the query image's perceptual
   * hash, if an image was sent. Audio and video are checked but do not steer results without a
   * multimodal embedder.
   */
  private decodeMedia(body: RetrieveFields): string | null {
    const max = this.options.config.retrieval.max_media_bytes;
    let hash: string | null = null;
    for (const field of ['image', 'audio', 'video'] as const) {
      const value = body[field];
      if (value === null || value === undefined) continue;
      try {
        const media = decodeBase64Media(value, max);
        if (field === 'image') hash = imagePhash(media.bytes);
      } catch (err) {
        if (!(err instanceof MediaError)) throw err;
        if (err.code === 'payload_too_large') throw payloadTooLarge(`${field} is larger than retrieval.max_media_bytes (${max} bytes).`);
        const message = err.code === 'unsupported_image' ? `is not a decodable PNG or JPEG image (${err.message})` : 'is not valid base64';
        throw badRequest(err.code, `${field} ${message}.`, [{ path: `/${field}`, message }]);
      }
    }
    return hash;
  }
}

/**
 * The results with their whole records: the indexes keep slim ones (unit-set.ts IndexedRecord), so the
 * few answered are read from their user's shard (`dbOf`). A unit deleted since it was ranked is left out
 * (a hard delete removes it from every answer); one changed since is answered as it is now, as a read a
 * moment later would, unless it is another user's unit that left the org it was ranked under (no answer
 * carries data outside the caller's scope). Raw hits and the org units sent by another node are whole.
 */
export async function wholeRecords(
  userId: string,
  ranked: retrieval.ScoredUnit<Ranked>[],
  dbOf: (owner: string) => StateDb | undefined,
  slim: (r: retrieval.ScoredUnit<Ranked>, i: number) => boolean = (r) => isSlimRecord(r.unit),
  cache?: WholeRecordCache,
): Promise<RetrievedUnit[]> {
  const byDb = new Map<StateDb, string[]>();
  for (const [i, r] of ranked.entries()) {
    if (!slim(r, i)) continue;
    const db = dbOf(r.unit.user_id);
    if (!db) continue;
    const keys = byDb.get(db);
    const key = join(r.unit.user_id, r.unit.id);
    if (keys) keys.push(key);
    else byDb.set(db, [key]);
  }
  const whole = new Map<string, MemoryUnit>();
  // a few keys: synchronous reads (memtable or block cache), no thread-pool round trip (store/db.ts readMany)
  await Promise.all([...byDb].map(async ([db, keys]) => {
    const records = await (cache ? cache.read(db, keys) : readMany(db.units, keys));
    records.forEach((u, i) => u && whole.set(keys[i], u));
  }));
  const out: RetrievedUnit[] = [];
  for (const [i, r] of ranked.entries()) {
    const unit = slim(r, i) ? whole.get(join(r.unit.user_id, r.unit.id)) : (r.unit as MemoryUnit | RawHit);
    if (!unit || (unit.user_id !== userId && unit.org_id !== r.unit.org_id)) continue;
    out.push({ unit, score: r.score, signals: r.signals });
  }
  return out;
}
