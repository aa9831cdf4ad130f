import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import pino, { type Logger } from 'pino';
import { LocalLog, StateDb, StateMachine, pendingSummary } from '@strata/store';
import { createApp } from './app';
import { AuthService } from './auth/service';
import type { Config } from './config';
import type { RouteSpec } from './http/route';
import { Metrics } from './metrics';
import { authRoutes } from './routes/auth';
import { eventRoutes } from './routes/events';
import { healthRoutes } from './routes/health';
import { metricsRoutes } from './routes/metrics';
import { statusRoutes } from './routes/status';
import { memoryRoutes } from './routes/memories';
import { edgeRoutes } from './routes/edges';
import { memoryMaintenanceRoutes } from './routes/memory-maintenance';
import { orgRoutes } from './routes/org';
import { taskRoutes } from './routes/tasks';
import { DerivedIndexes } from './indexes/derived';
import { RetrievalService } from './indexes/retrieval-service';
import { contextRoutes } from './routes/context';
import { retrieveRoutes } from './routes/retrieve';
import { createProviders } from './providers';
import { ConsolidationWorker } from './workers/consolidation';
import { PruningWorker, pruningSettings } from './workers/pruning';
import { ReinforcementBatcher, reinforcementSettings } from './workers/reinforcement';
import type { Services } from './services';
import { ShardRouter, type Shard } from './shards';
import { Validator } from './validation';

/** Refuses to open a data directory made with another shard count: users would land on the wrong shard. */
function checkLayout(dataDir: string, shards: number): void {
  const file = join(dataDir, 'strata.json');
  if (existsSync(file)) {
    const layout = JSON.parse(readFileSync(file, 'utf8')) as { shards: number };
    if (layout.shards !== shards) {
      throw new Error(`The data directory ${dataDir} was created with ${layout.shards} shard(s), but cluster.shards is ${shards}; start with the same shard count.`);
    }
  } else {
    writeFileSync(file, JSON.stringify({ format: 1, shards }) + '\n');
  }
}

async function openShard(dataDir: string, id: number): Promise<Shard> {
  const dir = join(dataDir, `shard-${id}`);
  mkdirSync(dir, { recursive: true });
  const db = await StateDb.open(join(dir, 'state'));
  const sm = await StateMachine.open(db);
  const log = await LocalLog.open(join(dir, 'log'), sm);
  return { id, db, sm, log };
}

/**
 * One Strata node: its shards (state machine + command log each), services, and HTTP server. A node
 * is a plain object: tests create several in one process.
 */
export class StrataNode {
  private stopping: Promise<void> | null = null;

  private constructor(
    readonly config: Config,
    readonly logger: Logger,
    readonly services: Services,
    private readonly server: Server,
  ) {}

  static async start(config: Config, options: { logger?: Logger } = {}): Promise<StrataNode> {
    const logger = options.logger ?? pino({ level: config.log.level, base: { node_id: config.cluster.node_id } });
    if (config.cluster.peers.length > 1) {
      // Until the Raft-backed log is wired in, several peers would be independent nodes that drift apart.
      throw new Error('STRATA_PEERS lists several nodes, but this build runs single-node only (the Raft-backed cluster log is not wired in yet).');
    }
    mkdirSync(config.storage.data_dir, { recursive: true });
    checkLayout(config.storage.data_dir, config.cluster.shards);
    // Before any storage is opened: a provider that cannot be built (e.g. local vectors not prepared) stops the start.
    const providers = await createProviders(config);
    logger.info({ embedder: providers.embedder.id, llm: providers.llm?.id ?? 'none' }, 'providers ready');
    const shards: Shard[] = [];
    for (let id = 0; id < config.cluster.shards; id++) shards.push(await openShard(config.storage.data_dir, id));
    const router = new ShardRouter(shards);
    // Derived indexes per shard, kept current by each state machine's applied-command listener.
    const indexes = new Map(shards.map((shard) => {
      const derived = new DerivedIndexes({ db: shard.db, embedder: providers.embedder, logger });
      derived.attach(shard.sm);
      return [shard.id, derived] as const;
    }));
    // Retrieval reinforcement: answers note their top units; one memory.reinforce per shard every few seconds.
    const reinforcement = new ReinforcementBatcher({ shardOf: (userId) => router.forUser(userId), logger, ...reinforcementSettings(config) });
    const retrieval = new RetrievalService({
      shards: router, indexes, embedder: providers.embedder, config, onRetrieved: (_userId, results) => reinforcement.record(results),
    });
    const metrics = new Metrics();
    const auth = new AuthService(config, router.meta().db, router.meta().log, logger);
    let open = true;
    const services: Services = {
      config, logger, metrics, auth, shards: router, retrieval, providers,
      isReady: () => open && shards.every((s) => s.log.isLeader() || s.log.status().leader !== null),
    };
    metrics.gauge('strata_pending_events', 'Events waiting for consolidation on this node', async () =>
      (await Promise.all(shards.map((s) => pendingSummary(s.db)))).reduce((n, s) => n + s.pending, 0));
    const sumCounter = async (name: string) => (await Promise.all(shards.map((s) => s.db.counter(name)))).reduce((a, b) => a + b, 0);
    metrics.gauge('strata_failed_events', 'Events consolidation gave up on (on this node)', () => sumCounter('failed'));
    metrics.gauge('strata_memory_units', 'L1 and L2 memory units stored on this node', () => sumCounter('units'));
    for (const shard of shards) {
      metrics.gauge(`strata_applied_index_shard_${shard.id}`, `Applied log index of shard ${shard.id}`, () => shard.sm.appliedIndex());
    }
    await auth.bootstrap();

    const routes: RouteSpec[] = [];
    routes.push(
      ...healthRoutes(services, () => routes),
      ...metricsRoutes(services),
      ...authRoutes(services),
      ...eventRoutes(services),
      ...statusRoutes(services),
      ...memoryRoutes(services),
      ...taskRoutes(services),
      ...edgeRoutes(services),
      ...orgRoutes(services),
      ...memoryMaintenanceRoutes(services),
      ...retrieveRoutes(services.retrieval),
      ...contextRoutes(services.retrieval),
    );
    const app = createApp({
      routes, auth, validator: new Validator(), metrics, logger,
      bodyLimit: config.server.body_limit, rateLimitPerSecond: config.server.rate_limit_per_s,
    });
    const server = await new Promise<Server>((resolve, reject) => {
      const s = app.listen(config.server.port, config.server.host, () => resolve(s));
      s.once('error', reject);
    });
    // Keep-alive sockets idle longer than typical client pools, so clients don't race a server-side close.
    server.keepAliveTimeout = 65_000;
    // Background consolidation, one worker per shard (each proposes only while its shard's log can).
    const workers = config.consolidation.enabled
      ? shards.map((shard) => new ConsolidationWorker({
        shard, embedder: providers.embedder, llm: providers.llm, logger,
        intervalMs: config.consolidation.interval_ms, batchSize: config.consolidation.batch_size,
      }))
      : [];
    for (const worker of workers) worker.start();
    // Pruning (only with memory.prune_enabled), one per shard, proposing only where its shard's log can.
    const pruners = shards.map((shard) => new PruningWorker({ shard, logger, ...pruningSettings(config) }));
    for (const upkeep of [reinforcement, ...pruners]) upkeep.start();
    const node = new StrataNode(config, logger, services, server);
    node.onStop = async () => {
      open = false;
      // The batch in flight finishes (its proposal commits) before the logs close.
      await Promise.all(workers.map((w) => w.stop()));
      await Promise.all([reinforcement, ...pruners].map((w) => w.stop()));
      await Promise.all([...indexes.values()].map((ix) => ix.idle()));
      await providers.close();
      for (const shard of shards) {
        await shard.log.close();
        await shard.db.close();
      }
    };
    logger.info({ url: node.url, shards: shards.length, data_dir: config.storage.data_dir }, 'strata node serving');
    return node;
  }

  private onStop: () => Promise<void> = async () => undefined;

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /**
   * Graceful stop: stop accepting connections, let in-flight requests finish (up to the grace period),
   * then close the logs and the stores cleanly.
   */
  stop(): Promise<void> {
    if (!this.stopping) {
      this.stopping = (async () => {
        const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
        this.server.closeIdleConnections();
        const grace = setTimeout(() => this.server.closeAllConnections(), this.config.server.shutdown_grace_s * 1000);
        await closed;
        clearTimeout(grace);
        await this.onStop();
        this.logger.info('strata node stopped');
      })();
    }
    return this.stopping;
  }
}
