/**
 * Retrieval in the index worker (packages/server/src/indexes/worker/): a user with at least
 * `retrieval.worker_min_units` units has its indexes held by a thread, which answers its queries. Its
 * answers must be the main thread's, to the last digit and signal: the same memory (seeded units with
 * edges, org units of another user, pending events searched raw) is asked of two retrieval services over
 * one node's LevelDB, one holding every index on the event loop, one with a worker, at one clock. Then
 * over HTTP: the node's own worker answers the large user (its `worker` stage is observed), never with
 * another user's data, and users evicted from a tiny index cache are built again with the same answers.
 */
import { StrataClient } from '@strata/client';
import { loadConfig, StrataNode } from '@strata/server';
import { DerivedIndexes } from '../../packages/server/src/indexes/derived';
import { RetrievalService, type RetrieveFields } from '../../packages/server/src/indexes/retrieval-service';
import { IndexCache } from '../../packages/server/src/indexes/index-cache';
import { IndexWorker } from '../../packages/server/src/indexes/worker/index-worker';
import { removeDir, tempDir } from '../helpers/server-process';
import { edge, seedMemory, unit } from '../helpers/seed-memory';
import pino from 'pino';

const KEY = 'retrieve-worker-admin-key';
const S1 = '11111111-1111-4111-8111-111111111111';
const S2 = '22222222-2222-4222-8222-222222222222';
const ORG = 'acme';
const NOW = Date.parse('2026-06-01T00:00:00.000Z');
const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const PEER = new Set(Array.from({ length: 30 }, (_, i) => id(200 + i)));
const TINY = new Set(Array.from({ length: 3 }, (_, i) => id(300 + i)));

/** The indexes fed by the shard's applied commands, as the node's own are. */
function attached(shard: { sm: Parameters<DerivedIndexes['attach']>[0] }, indexes: DerivedIndexes): DerivedIndexes {
  indexes.attach(shard.sm);
  return indexes;
}

const TOPICS = ['orchard', 'lantern', 'harbour', 'violin', 'glacier', 'bakery', 'quartz', 'comet'];
/** Units of one user: varied words, streams, times and kinds, so fusion has ties to break and lists to merge. */
function memoryOf(user: string, base: number, count: number, org: string | null = null) {
  return Array.from({ length: count }, (_, i) => unit({
    id: id(base + i), user_id: user, org_id: org, stream_id: i % 3 === 0 ? S2 : S1,
    content: `${user} talked about the ${TOPICS[i % TOPICS.length]} and the ${TOPICS[(i * 3 + 1) % TOPICS.length]} on day ${i}.`,
    valid_time: new Date(Date.parse('2026-01-01T00:00:00.000Z') + i * 86_400_000).toISOString(),
    // pairs of units split out of one event: one result per source (collapseBySource)
    importance: 0.3 + (i % 5) / 10, references: [id(9000 + base + i - (i % 2))],
    ...(i % 7 === 0 ? { subject: user, attribute: 'hobby' } : {}),
  }));
}

describe('retrieval in the index worker', () => {
  let node: StrataNode;
  let client: StrataClient;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = tempDir();
    node = await StrataNode.start(loadConfig({
      env: {
        STRATA_API_KEY: KEY, STRATA__EMBEDDING__PROVIDER: 'hashing', STRATA__CONSOLIDATION__ENABLED: 'false', STRATA_PORT: '0', STRATA_HOST: '127.0.0.1',
        STRATA__LOG__LEVEL: 'silent', STRATA_DATA_DIR: dataDir, STRATA__MEMORY__REINFORCE_TOP: '0',
        // 'big' (40 units) and 'peer' (30) are held by the worker, 'tiny' (3) on the event loop
        STRATA__RETRIEVAL__WORKER_MIN_UNITS: '20',
      },
    }));
    client = new StrataClient({ baseUrl: node.url, apiKey: KEY });
    const big = memoryOf('big', 100, 40);
    await seedMemory((user, command) => node.services.shards.forUser(user).log.propose(command), [
      { user_id: 'big', units: big, edges: [edge('big', id(801), id(100), id(105), 'RelatedTo'), edge('big', id(802), id(105), id(111), 'RelatedTo')] },
      { user_id: 'peer', units: memoryOf('peer', 200, 30, ORG) },
      { user_id: 'tiny', units: memoryOf('tiny', 300, 3) },
    ]);
    // pending events (consolidation is off): searched raw beside the units
    await client.ingestBatch('big', S1, [{ content: 'big heard the violin near the harbour tonight' }, { content: 'the comet was bright' }]);
  });
  afterAll(async () => {
    await client?.close();
    await node?.stop();
    removeDir(dataDir);
  });

  const BODIES: RetrieveFields[] = [
    { query: 'orchard lantern', limit: 10 },
    { query: 'what about the violin at the harbour?', limit: 5, graph_depth: 2 },
    { query: 'quartz comet glacier', limit: 20, scope: 'stream' },
    { query: 'bakery', limit: 8, org_id: ORG },
    { query: 'what is big\'s hobby?', limit: 10, enable_arbitration: true },
    { query: 'harbour', limit: 10, start_time: '2026-01-05T00:00:00.000Z', end_time: '2026-01-30T00:00:00.000Z', include_pending: false },
  ];

  it('answers exactly as the main thread does', async () => {
    const services = node.services;
    const logger = pino({ level: 'silent' });
    const worker = new IndexWorker({ embedder: { dimensions: services.providers.embedder.dimensions } }, logger);
    const serviceOf = (withWorker: boolean) => new RetrievalService({
      shards: services.shards, embedder: services.providers.embedder, config: services.config, now: () => NOW,
      indexes: new Map(services.shards.all().map((s) => [s.id, attached(s, new DerivedIndexes({
        db: s.db, embedder: services.providers.embedder, logger, ...(withWorker ? { worker, workerMinUnits: 20 } : {}),
      }))])),
    });
    const here = serviceOf(false);
    const there = serviceOf(true);
    try {
      for (const user of ['big', 'tiny']) {
        for (const body of BODIES) {
          const a = await here.retrieve(user, S1, body);
          const b = await there.retrieve(user, S1, body);
          if (user === 'big') expect({ body, found: b.results.length > 0 }).toEqual({ body, found: true });
          expect(b.results).toEqual(a.results);
        }
      }
      // the large user's were answered by the worker, the small one's on the event loop
      expect(worker.held).toBe(1);

      // changes after the build reach the worker in apply order: new units and an edge, a hard delete
      await seedMemory((user, command) => services.shards.forUser(user).log.propose(command), [
        { user_id: 'big', units: memoryOf('big', 150, 5).map((u) => ({ ...u, content: `${u.content} The orchard lantern again.` })), edges: [edge('big', id(803), id(150), id(101), 'RelatedTo')] },
      ]);
      await client.deleteMemory('big', id(100));
      for (const body of BODIES) {
        const a = await here.retrieve('big', S1, body);
        expect((await there.retrieve('big', S1, body)).results).toEqual(a.results);
      }
      expect((await there.retrieve('big', S1, BODIES[0])).results.some((r) => r.unit.id === id(150))).toBe(true);
    } finally {
      await worker.close();
    }
  });

  it('builds an evicted user again and answers the same (a tiny cache: the two large users evict each other)', async () => {
    const services = node.services;
    const logger = pino({ level: 'silent' });
    const worker = new IndexWorker({ embedder: { dimensions: services.providers.embedder.dimensions } }, logger);
    const here = new RetrievalService({
      shards: services.shards, embedder: services.providers.embedder, config: services.config, now: () => NOW,
      indexes: new Map(services.shards.all().map((s) => [s.id, new DerivedIndexes({ db: s.db, embedder: services.providers.embedder, logger })])),
    });
    const cache = new IndexCache(1);
    const there = new RetrievalService({
      shards: services.shards, embedder: services.providers.embedder, config: services.config, now: () => NOW,
      indexes: new Map(services.shards.all().map((s) => [s.id, new DerivedIndexes({ db: s.db, embedder: services.providers.embedder, logger, cache, worker, workerMinUnits: 20 })])),
    });
    try {
      for (let round = 0; round < 3; round++) {
        for (const user of ['big', 'peer']) {
          // both asked at once: one's build evicts the other, whose query may find its index given up
          const [a, b] = await Promise.all([here.retrieve(user, S1, BODIES[0]), there.retrieve(user, S1, BODIES[0]), there.retrieve(user === 'big' ? 'peer' : 'big', S1, BODIES[1])]);
          expect(b.results).toEqual(a.results);
        }
      }
      expect(cache.evictions).toBeGreaterThan(0);
      expect(worker.held).toBeLessThanOrEqual(1);
    } finally {
      await worker.close();
    }
  });

  it('answers the large user from the node\'s worker over HTTP, within the caller\'s scope', async () => {
    const workerStage = async () => {
      const res = await client.raw<string>('GET', '/metrics', { auth: false });
      return Number(/^strata_retrieval_stage_seconds_count\{stage="worker"\} (\S+)$/m.exec(String(res.body))?.[1] ?? 0);
    };
    const before = await workerStage();
    for (const body of BODIES) {
      const res = await client.retrieve('big', S1, body as never);
      expect(res.results.length).toBeGreaterThan(0);
      // the user's own units and events, and the org's: nothing of 'tiny', nothing of 'peer' outside the org query
      const foreign = res.results.map((r) => r.unit.id).filter((u) => TINY.has(u) || (PEER.has(u) && body.org_id !== ORG));
      expect({ body, foreign }).toEqual({ body, foreign: [] });
      if (body.org_id === ORG) expect(res.results.some((r) => PEER.has(r.unit.id))).toBe(true);
    }
    expect(await workerStage()).toBe(before + BODIES.length);
    const tiny = await client.retrieve('tiny', S1, { query: 'orchard lantern' });
    expect(tiny.results.length).toBeGreaterThan(0);
    expect(tiny.results.every((r) => TINY.has(r.unit.id))).toBe(true);
    expect(await workerStage()).toBe(before + BODIES.length);
  });
});
