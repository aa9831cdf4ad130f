/**
 * The query side of retrieval (CONTRACT.md §3): from a validated request to ranked units. One domain
 * call for the retrieve and context routes: read barrier when asked, the derived indexes of the user
 * (and of the org on every shard), the query embedding, near-duplicate images, then the pure pipeline
 * (`@strata/memory` retrieval) over them.
 */
import { retrieval, type Embedder } from '@strata/memory';
import { badRequest, payloadTooLarge, type MemoryUnit } from '@strata/store';
import type { TextIndex, VectorIndex } from '@strata/store/indexes';
import type { Config } from '../config';
import type { Body } from '../schemas';
import type { ShardRouter } from '../shards';
import type { DerivedIndexes } from './derived';

const { decodeBase64Media, MediaError, findNearDuplicates, imagePhash, retrieve, timeMs, TEXT_FIELDS } = retrieval;
type RetrievalConfig = retrieval.RetrievalConfig;
type RetrievalSources<U extends retrieval.RetrievalUnit> = retrieval.RetrievalSources<U>;
type RetrieveRequest = retrieval.RetrieveRequest;
type UnitSet = retrieval.UnitSet;

/**
 * The retrieve fields of a request body (the retrieve route's body, and the context route's, which
 * adds its own): the type of the Retrieve schema (schemas.ts), so the schema is their one definition.
 */
export type RetrieveFields = Body<'Retrieve'>;

export interface RetrievedUnit {
  unit: MemoryUnit;
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
}

const invalid = (path: string, message: string) => badRequest('validation_failed', `${path.slice(1)} ${message}.`, [{ path, message }]);

/** One result per source event of L1 units (the statements split out of one turn), see FusionOptions.collapseKey. */
export const collapseBySource = (u: { level: number; user_id: string; references?: string[] }): string | null =>
  u.level === 1 && u.references && u.references.length > 0 ? `${u.user_id}\u0000${u.references[0]}` : null;

export class RetrievalService {
  constructor(private readonly options: RetrievalServiceOptions) {}

  private indexesOf(shardId: number): DerivedIndexes {
    const ix = this.options.indexes.get(shardId);
    if (!ix) throw new Error(`no derived indexes for shard ${shardId}`);
    return ix;
  }

  /**
   * Ranked units for a request. `streamId` is the current stream (null from the context route without
   * one). Throws 400/413 StrataErrors for bad input that the schema cannot express.
   */
  async retrieve(userId: string, streamId: string | null, body: RetrieveFields): Promise<RetrievalAnswer> {
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
    const orgShards = body.org_id ? this.options.shards.all() : [];
    if (body.consistency === 'linearizable') {
      const barriers = new Set([home, ...orgShards]);
      await Promise.all([...barriers].map((s) => s.log.readBarrier()));
    }
    const [user, orgSets, vectors] = await Promise.all([
      this.indexesOf(home.id).forUser(userId),
      Promise.all(orgShards.map((s) => this.indexesOf(s.id).forOrg(body.org_id!))),
      this.options.embedder.embed([query]),
    ]);
    const orgs = orgSets.filter((s): s is UnitSet => !!s && s.size > 0);

    const getUnit = orgs.length === 0
      ? (id: string) => user.units.get(id)
      : (id: string) => {
        const own = user.units.get(id);
        if (own) return own;
        for (const o of orgs) {
          const u = o.units.get(id);
          if (u) return u;
        }
        return undefined;
      };
    const sources: RetrievalSources<MemoryUnit> = {
      vectorIndexes: [user.vector, ...orgs.map((o) => o.vector)] as VectorIndex[],
      textIndexes: [user.text, ...orgs.map((o) => o.text)] as TextIndex[],
      getUnit,
      neighbors: user.neighbors,
      fieldTextIndexes: TEXT_FIELDS.map((name) => ({ name, indexes: [user.fields[name], ...orgs.map((o) => o.fields[name])] })),
    };
    if (scope === 'stream') sources.restrictTo = user.byStream.get(streamId!) ?? new Set();
    if (queryHash) {
      const candidates = [user, ...orgs].flatMap((s) => [...s.images].flatMap(([id, hashes]) => hashes.map((phash) => ({ id, phash }))));
      sources.imageMatches = findNearDuplicates(queryHash, candidates);
    }
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
    const outcome = retrieve(sources, request, retrievalConfig, this.options.now?.() ?? Date.now());
    const results = outcome.results.map((r) => ({ unit: r.unit, score: r.score }));
    try {
      this.options.onRetrieved?.(userId, results);
    } catch {
      // reinforcement is best effort; the answer stands
    }
    return { query, results, query_time_ms: Math.round((performance.now() - started) * 1000) / 1000 };
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
