import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type RequestListener, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import pino, { type Logger } from 'pino';
import { prepareTokenCounter } from '@strata/memory/context';
import { StateDb, StateMachine } from '@strata/store';
import { Forwarder, routeWrites, targetShard, targetUser } from './cluster/forward';
import { ClusterService } from './cluster/membership';
import { PeerSigner } from './cluster/peer-auth';
import { RemoteGroups } from './cluster/remote-groups';
import { PlacementDirectory } from './cluster/placement/directory';
import { KeyRangeDirectory } from './cluster/placement/range-directory';
import { PlacementExecutor } from './cluster/placement/executor';
import { GroupRouting } from './cluster/placement/routing';
import { ShardReads } from './cluster/shard-reads';
import { Readiness } from './cluster/readiness';
import { RemovalWatch, removedMarkerExists } from './cluster/removal';
import { deleteReplica, keepClosed, namedFor, replicaDir, sweepSetAside } from './cluster/replica-drop';
import { shardReadRoutes } from './routes/shard-reads';
import { ClusterRuntime, RAFT_PREFIX, selfUrlOf } from './cluster/runtime';
import { startCluster } from './cluster/start';
import { clusterRoutes } from './routes/cluster';
import { groupDataRoutes } from './routes/cluster-groups';
import { createApp } from './app';
import type { Express } from 'express';
import { answerClientErrors } from './http/client-errors';
import { mountDashboard } from './http/dashboard';
import { expressShapes } from './http/express-shapes';
import { prepareDataDir } from './data-dir';
import { removeLeftoverSpools } from './operations/import';
import { ScopeGuard } from './auth/scope';
import { AuthService } from './auth/service';
import { UserOrgs } from './auth/user-orgs';
import type { Config } from './config';
import type { RouteSpec } from './http/route';
import { Metrics } from './metrics';
import { registerRaftMetrics } from './telemetry/raft-metrics';
import { latencyObserver, observeAll } from './telemetry/raft-latency';
import { InstrumentedLog, traceObserver } from './telemetry/raft-tracing';
import { Tracing } from './telemetry/tracing';
import { authRoutes } from './routes/auth';
import { userRoutes } from './routes/users';
import { eventRoutes } from './routes/events';
import { healthRoutes } from './routes/health';
import { metricsRoutes } from './routes/metrics';
import { statusRoutes } from './routes/status';
import { mountMcp } from './mcp/mount';
import { forwardingGate } from './mcp/leader';
import { memoryRoutes } from './routes/memories';
import { edgeRoutes } from './routes/edges';
import { memoryMaintenanceRoutes } from './routes/memory-maintenance';
import { orgRoutes } from './routes/org';
import { taskRoutes } from './routes/tasks';
import { createProviders } from './providers';
import { DerivedIndexes } from './indexes/derived';
import { IndexWorker } from './indexes/worker/index-worker';
import { PendingEventsCache } from './indexes/pending-cache';
import { WholeRecordCache } from './indexes/record-cache';
import { IndexCache } from './indexes/index-cache';
import { RetrievalService } from './indexes/retrieval-service';
import { contextRoutes } from './routes/context';
import { exportRoutes } from './routes/export';
import { webhookRoutes } from './routes/webhooks';
import { WebhookDispatcher, dispatcherSettings } from './webhooks/dispatcher';
import { WebhookMetrics } from './webhooks/metrics';
import { WebhookSender } from './webhooks/sender';
import { retrieveRoutes } from './routes/retrieve';
import { ConsolidationWorker } from './workers/consolidation';
import { PruningWorker, pruningSettings } from './workers/pruning';
import { ReinforcementBatcher, reinforcementSettings } from './workers/reinforcement';
import type { Services } from './services';
import { ShardRouter, type Shard } from './shards';
import { GroupFences } from './cluster/split/fences';
import { SplitDriver } from './cluster/split/driver';
import { AutoScaler } from './cluster/split/auto';
import { Validator } from './validation';

/**
 * How long a client may take to send a request (Node's defaults keep a dribbled request open for
 * 300 s). Node checks these at an interval (default 30 s); checking at a quarter of the headers
 * timeout (at most every second) keeps the actual limit close to the configured one.
 */
function serverTimeouts(config: Config) {
  const { headers_timeout_ms: headersTimeout, request_timeout_ms: requestTimeout } = config.server;
  return { headersTimeout, requestTimeout, connectionsCheckingInterval: Math.max(25, Math.min(1000, Math.floor(headersTimeout / 4))) };
}

/**
 * The number of shard groups of a data directory: `cluster.shards` (STRATA_SHARDS) when it is created,
 * then the count it was created with, whatever `cluster.shards` says later (it is the initial count
 * only: users are routed by the key-range directory in shard 0, key-ranges.ts); `ignored` when they differ.
 */
function groupsOfDataDir(dataDir: string, configured: number): { groups: number; ignored: boolean } {
  const file = join(dataDir, 'strata.json');
  if (!existsSync(file)) {
    writeFileSync(file, JSON.stringify({ format: 1, shards: configured }) + '\n');
    return { groups: configured, ignored: false };
  }
  const layout = JSON.parse(readFileSync(file, 'utf8')) as { shards: number };
  return { groups: layout.shards, ignored: layout.shards !== configured };
}

async function openShard(dataDir: string, id: number, cluster: ClusterRuntime): Promise<Shard> {
  const dir = join(dataDir, `shard-${id}`);
  if (existsSync(join(dir, 'log'))) {
    throw new Error(`${dir} holds a single-node command log of an earlier format; this build keeps every shard's log in Raft (${join(dataDir, 'raft')}). Start with an empty data directory.`);
  }
  mkdirSync(dir, { recursive: true });
  const db = await StateDb.open(join(dir, 'state'));
  const sm = await StateMachine.open(db);
  const log = await cluster.openShard(id, sm);
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

  /**
   * `adminPassword`: the admin password and its hash, begun by the entry on a new data directory (used
   * when the admin account is created here; see AuthService.prepareBootstrap).
   */
  static async start(configured: Config, options: { logger?: Logger; adminPassword?: Promise<{ password: string; hash: string }> } = {}): Promise<StrataNode> {
    const logger = options.logger ?? pino({ level: configured.log.level, base: { node_id: configured.cluster.node_id } });
    prepareDataDir(configured.storage.data_dir); // 0700, refused when open to others (before any store opens)
    const spools = removeLeftoverSpools(configured.storage.data_dir);
    if (spools.length > 0) logger.info({ removed: spools }, 'removed the spools of imports a stop interrupted');
    const layout = groupsOfDataDir(configured.storage.data_dir, configured.cluster.shards);
    if (layout.ignored) {
      logger.warn({ data_directory_groups: layout.groups, configured: configured.cluster.shards }, 'cluster.shards (STRATA_SHARDS) is the initial group count only: this data directory has its own');
    }
    const config: Config = { ...configured, cluster: { ...configured.cluster, shards: layout.groups } };
    // Before any storage is opened: a provider that cannot be built (e.g. local vectors not prepared) stops the start.
    const providers = await createProviders(config);
    logger.info({ embedder: providers.embedder.id, llm: providers.llm?.id ?? 'none' }, 'providers ready');

    // Listen first (peers need this node's URL, and port 0 is known only now); requests get 503 until ready.
    let serve: RequestListener = (_req, res) => {
      res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '1' }).end('{"error":"The node is starting; retry shortly.","code":"unavailable"}');
    };
    let raft: RequestListener = serve;
    const shapes = expressShapes();
    const server = createServer({ ...serverTimeouts(config), IncomingMessage: shapes.IncomingMessage, ServerResponse: shapes.ServerResponse },
      (req, res) => ((req.url ?? '').startsWith(RAFT_PREFIX) ? raft(req, res) : serve(req, res)));
    // Peer streams open as HTTP upgrades; nothing else on the API upgrades (no handler: closed at once)
    let raftUpgrade: ((req: IncomingMessage, socket: Duplex, head: Buffer) => void) | null = null;
    // Upgraded connections are outside the server's keep-alive bookkeeping: stop() ends them itself.
    const upgraded = new Set<Duplex>();
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      if (!raftUpgrade || !(req.url ?? '').startsWith(RAFT_PREFIX)) return void socket.destroy();
      upgraded.add(socket);
      socket.once('close', () => upgraded.delete(socket));
      raftUpgrade(req, socket, head);
    });
    answerClientErrors(server);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.server.port, config.server.host, () => resolve());
    });
    const metrics = new Metrics();
    // OTLP traces when [telemetry] otlp_endpoint is set; otherwise the no-op tracer (telemetry/tracing.ts)
    const tracing = Tracing.start(config);
    const cluster = await ClusterRuntime.open(config, selfUrlOf(config, (server.address() as AddressInfo).port), logger, {
      onPeerRoundTrip: (peer, seconds) => metrics.raftPeerRtt.observe({ peer: String(peer) }, seconds),
    });
    raft = cluster.handle;
    raftUpgrade = cluster.handleUpgrade;
    // Every group this node knows, by id (a split adds one while the node runs: addGroup below). The
    // arrays built from it (metrics, workers) are the same objects, so they follow.
    const shards: Shard[] = [];
    const openGroup = async (id: number): Promise<Shard> => {
      const shard = await openShard(config.storage.data_dir, id, cluster);
      // proposals counted (failures), timed (commit and apply histograms) and traced (propose → commit → apply spans) on every surface
      observeAll(cluster.group(id), [latencyObserver(id, metrics), traceObserver(id, tracing)]);
      return { ...shard, log: new InstrumentedLog(shard.log, id, metrics, tracing) };
    };
    shards.push(await openGroup(0));
    registerRaftMetrics(metrics.registry, {
      shardIds: () => cluster.shardIds(), group: (id) => cluster.group(id),
      hostStats: () => cluster.host.stats, transportStats: () => cluster.transportStats(),
    });
    // users to groups: the key-range directory in shard 0 (its initial table until recorded: start.ts records it)
    const ranges = await KeyRangeDirectory.open(shards[0], config.cluster.shards);
    // Where each shard group lives (shard 0 on every node, the others on replication_factor nodes), and
    // the loop that moves replicas, run by the leader of shard 0 (docs/cluster.md "Placement").
    const directory = await PlacementDirectory.open(shards[0], cluster.initialPlacement());
    // A retired group removed from the cluster is not opened; one whose removal a stop or a crash
    // interrupted here (its directory is still on disk) is finished first (docs/cluster.md "Removing a retired group").
    const shardDir = (id: number) => replicaDir(config.storage.data_dir, id);
    // A replica moved off this node is closed here, its directory and log deleted (cluster/replica-drop.ts,
    // docs/cluster.md "Disk reclaimed"): it stays closed until the placement names this node for the group
    // again. So does, on a node removed from the cluster, every group it holds nothing of. What a drop a
    // crash interrupted left set aside goes first.
    for (const left of await sweepSetAside(config.storage.data_dir)) logger.info({ directory: left }, 'a dropped replica\'s directory left set aside by a stop or a crash: deleted');
    const closedHere = new Set<number>();
    // groups this node dropped a replica of (since the start, or before: the removal mark in its storage)
    const droppedHere = new Set<number>();
    let removedFromCluster = () => removedMarkerExists(config.storage.data_dir);
    // a node removed from the cluster is named for nothing (its copy of the directory stopped at its removal)
    const named = (id: number) => !removedFromCluster() && namedFor(directory.get(id), config.cluster.node_id);
    /** Whether a live group not open here stays closed (and its directory, if any, goes); false: open it. */
    const keptClosed = async (id: number): Promise<boolean> => {
      const disk = await cluster.inspectShard(id);
      if (disk.removedAt > 0) droppedHere.add(id);
      const closed = await keepClosed(shardDir(id), disk, { named: named(id), removedFromCluster: removedFromCluster() });
      if (closed) closedHere.add(id);
      else closedHere.delete(id);
      return closed;
    };
    // what is left on disk of a removed group that is not open here: its Raft state, then its directory
    const deleteRemains = async (id: number): Promise<void> => {
      if (!existsSync(shardDir(id))) return;
      await cluster.removeShard(id);
      await rm(shardDir(id), { recursive: true, force: true });
      logger.info({ shard: id }, 'removed group: the rest of its replica deleted');
    };
    for (const id of ranges.removed()) await deleteRemains(id);
    for (let id = 1; id < config.cluster.shards; id++) if (!ranges.removed().includes(id) && !(await keptClosed(id))) shards.push(await openGroup(id));
    const router = new ShardRouter(shards, ranges);
    // Derived indexes per shard, kept current by each state machine's applied-command listener. A
    // Raft snapshot install replaces the whole state: the shard then gets a fresh manager (built
    // lazily from LevelDB), and the one listener always feeds the current manager.
    const indexes = new Map<number, DerivedIndexes>();
    // One byte budget for the users' indexes of every shard (memory.index_cache_bytes).
    const indexCache = new IndexCache(config.memory.index_cache_bytes);
    // The large users' indexes live in a thread that answers their queries (retrieval.worker_min_units).
    const indexWorker = config.retrieval.worker_min_units > 0
      ? new IndexWorker({ embedder: { dimensions: providers.embedder.dimensions } }, logger)
      : undefined;
    // The users' pending events searched raw by retrieval, read again only when they change (pending-cache.ts).
    const pendingCache = new PendingEventsCache();
    // The whole records retrieval answers with, read again only when a command wrote them (record-cache.ts).
    const recordCache = new WholeRecordCache();
    // which ranges each group is handing over (a split): requests about those users go elsewhere (cluster/split/fences.ts)
    const fences = new GroupFences();
    const wireShard = (shard: Shard) => {
      shard.sm.onApplied((_index, _command, _result, effects) => pendingCache.onApplied(effects));
      shard.sm.onRestored(() => pendingCache.clear());
      shard.sm.onApplied((_index, command, _result, effects) => recordCache.onApplied(shard.db, effects, command));
      shard.sm.onRestored(() => recordCache.clear(shard.db));
      const fresh = () => new DerivedIndexes({
        db: shard.db, embedder: providers.embedder, logger, cache: indexCache, worker: indexWorker, workerMinUnits: config.retrieval.worker_min_units,
      });
      indexes.set(shard.id, fresh());
      shard.sm.onApplied((_index, _command, _result, effects) => indexes.get(shard.id)!.onApplied(effects));
      shard.sm.onRestored(() => {
        indexes.get(shard.id)?.release(); // its entries leave the shared budget
        indexes.set(shard.id, fresh());
      });
      return fences.follow(shard);
    };
    for (const shard of shards) await wireShard(shard);
    // Retrieval reinforcement: answers note their top units; every few seconds a shard's batch is proposed as memory.reinforce commands of at most 64 units.
   
    const reinforcement = new ReinforcementBatcher({ shardOf: (userId) => router.byId(router.groupOf(userId)), logger, ...reinforcementSettings(config) });
    // Cross-shard reads: local where this node holds a group, else from a holder (attached below, once routing exists).
    const reads = new ShardReads(router, config.cluster.forward_timeout_ms);
    const retrieval = new RetrievalService({
      shards: router, indexes, reads, embedder: providers.embedder, config, pendingCache, recordCache, onRetrieved: (_userId, results) => reinforcement.record(results),
      metrics, tracing,
    });
    const auth = new AuthService(config, router.meta().db, router.meta().log, logger);
    auth.prepareBootstrap(options.adminPassword); // a first start hashes the admin password meanwhile (off the main thread)
    let open = true;
    const userOrgs = new UserOrgs(router, reads);
    const services: Services = {
      config, logger, metrics, auth, scope: new ScopeGuard(userOrgs), userOrgs, shards: router, reads, retrieval, providers,
      readiness: (strict) => readiness.check(strict),
    };
    const sumCounter = async (name: string) => (await Promise.all(shards.map((s) => s.db.counter(name)))).reduce((a, b) => a + b, 0);
    // The counter, not pendingSummary: its oldest entry is a walk through the consumed entries' tombstones.
    metrics.gauge('strata_pending_events', 'Events waiting for consolidation on this node', () => sumCounter('pending'));
    metrics.gauge('strata_failed_events', 'Events consolidation gave up on (on this node)', () => sumCounter('failed'));
    metrics.gauge('strata_memory_units', 'L1 and L2 memory units stored on this node', () => sumCounter('units'));
    metrics.gauge('strata_index_cache_bytes', "Estimated bytes of the users' derived indexes held (budget: memory.index_cache_bytes)", () => indexCache.bytes);
    metrics.gauge('strata_index_cache_entries', 'Users whose derived indexes are held', () => indexCache.size);
    metrics.gauge('strata_index_cache_evictions', 'Users dropped from the index cache to stay within its budget, since start', () => indexCache.evictions);
    metrics.gauge('strata_index_graphs_building', "Users whose vector graph is being built (their vector search is exact until it is live)", () => retrieval.graphsBuilding());
    metrics.gauge('strata_index_worker_users', "Users whose derived indexes the index worker holds (their queries run in it)", () => indexWorker?.held ?? 0);
    metrics.gauge('strata_index_cache_builds', "Users' derived indexes built from LevelDB (first use or after eviction), since start", () => indexCache.builds);
    // once per id (a group closed here and opened again keeps its gauge), reading the replica open now (0 when none)
    const appliedGauge = (shard: Shard) => {
      const name = `strata_applied_index_shard_${shard.id}`;
      if (!metrics.registry.getSingleMetric(name)) metrics.gauge(name, `Applied log index of shard ${shard.id}`, () => router.byId(shard.id)?.sm.appliedIndex() ?? 0);
    };
    for (const shard of shards) appliedGauge(shard);
    const backlog = shards.map((shard) => ({ shard: shard.id, read: () => shard.db.counter('pending') }));
    metrics.perShard('strata_consolidation_backlog', 'Events waiting for consolidation, by shard (replicated: every member reports it)', backlog);
    const routing = new GroupRouting(cluster, directory);
    const forwarder = new Forwarder({ timeoutMs: config.cluster.forward_timeout_ms, tracing, view: routing });
    const peerSigner = new PeerSigner(cluster.secret, config.cluster.node_id, config.cluster.peer_clock_skew_s * 1000);
    reads.attach({ routing, signer: peerSigner, forwarder });
    // A removed node that still runs finds out, and then refuses requests about data (cluster/removal.ts).
    const removal = new RemovalWatch({ rt: cluster, fwd: forwarder, signer: peerSigner, dataDir: config.storage.data_dir, logger });
    removedFromCluster = () => removal.isRemoved();
    // /readyz for a load balancer: most groups served, one group electing takes no node out (cluster/readiness.ts).
    const readiness = new Readiness({
      open: () => open,
      failed: () => (cluster.host.failure() ? 'it stopped serving after a storage or apply failure (its log names it); restart it.' : null),
      notMember: () => {
        if (removal.isRemoved()) return 'it was removed from the cluster.';
        return cluster.group(0).status().members.some((m) => m.id === config.cluster.node_id) ? null : 'it is not initialized or joined yet.';
      },
      groups: () => shards.map((s) => ({ id: s.id, serves: s.id === 0 || routing.holds(s.id), leaderKnown: s.log.isLeader() || s.log.status().leader !== null })),
    }, config.cluster.forward_timeout_ms);
    readiness.start();
    removal.start();
    // an import's chunks proposed on their group's leader, an export reading the groups not held here from a holder
    services.groups = new RemoteGroups({
      view: routing, leaderOf: (shard, deadline) => forwarder.leaderOf(shard, deadline), signer: peerSigner,
      timeoutMs: config.cluster.forward_timeout_ms, requestTimeoutMs: config.server.request_timeout_ms, maxLineBytes: config.import.max_bytes,
    });
    const clusterService = new ClusterService(cluster, forwarder, routing, directory, peerSigner, {
      // declared below, before anything can ask (no await between here and there after requests are served)
      // decided and wiped in the queue that opens and closes groups: nothing changes the replica in between
      serial: (decideAndWipe) => inOrder(decideAndWipe),
      wipe: (group, removedAt) => dropGroupNow(group, removedAt),
      live: () => ranges.groupIds(),
      onWiped: (group, removedAt) => logger.info({ shard: group, removed_at: removedAt }, 'replica moved away: deleted from this node (closed until the placement names this node for it again)'),
    });
    const placement = new PlacementExecutor({
      rt: cluster, meta: router.meta(), directory, fwd: forwarder, signer: peerSigner, logger,
      localStatus: () => clusterService.status(), groupIds: () => ranges.groupIds(),
      onStep: (step, outcome) => metrics.placementSteps.inc({ kind: step.kind, outcome }),
    });
    clusterService.executor = placement;
    metrics.gauge('strata_placement_groups_held', 'Shard groups this node holds (is a voter of, by its own Raft state and the directory)', () => shards.filter((s) => routing.holds(s.id)).length);
    metrics.gauge('strata_placement_moves_in_flight', 'Replica moves under way (learner added, not yet promoted and the old member removed); reported by the leader of shard 0, 0 elsewhere', () => placement.last?.moves_in_flight ?? 0);
    metrics.gauge('strata_placement_under_replicated_groups', 'Groups with fewer live voters than the replication factor; reported by the leader of shard 0, 0 elsewhere', () => placement.last?.under_replicated ?? 0);
    clusterService.ranges = ranges;
    // Started, not awaited yet: a single node's start waits here for its admin account (a Raft commit,
    // and on a first start the password hash), and the routes and the app are built meanwhile.
    const clusterStarting = startCluster(cluster, clusterService, router.meta(), auth, ranges, logger);
    clusterStarting.catch(() => undefined); // awaited below, after the app is built

    const routes: RouteSpec[] = [];
    routes.push(
      ...healthRoutes(services, () => routes),
      ...metricsRoutes(services),
      ...authRoutes(services),
      ...userRoutes(services),
      ...eventRoutes(services),
      ...statusRoutes(services),
      ...memoryRoutes(services),
      ...taskRoutes(services),
      ...edgeRoutes(services),
      ...orgRoutes(services),
      ...memoryMaintenanceRoutes(services),
      ...clusterRoutes({ auth, cluster: clusterService, secret: config.cluster.secret, shardIds: () => cluster.shardIds() }),
      ...shardReadRoutes({ reads, peers: peerSigner }),
      ...groupDataRoutes({ services, signer: peerSigner, holds: (shard) => routing.holds(shard) }),
      ...retrieveRoutes(services),
      ...contextRoutes(services),
      ...exportRoutes(services),
      ...webhookRoutes(services),
    );
    const validator = new Validator();
    let mcp: { close(): Promise<void> } | null = null;
    const app = createApp({
      routes, auth, validator, metrics, logger, tracing,
      // the web app of CONTRACT §15 at /dashboard/, and MCP at /mcp when enabled
      mounts: [mountDashboard, ...(config.mcp.enabled ? [(express: Express) => {
        mcp = mountMcp(express, {
          services, auth, validator, bodyLimit: config.server.body_limit,
          leader: forwardingGate(forwarder, router.groups),
        });
      }] : [])],
      bodyLimit: config.server.body_limit, rateLimitPerSecond: config.server.rate_limit_per_s,
      // A write reaching a node that does not lead its shard runs on the leader (CONTRACT.md §10).
      // A read of a user's data reaching a node that does not hold the user's group is served by one that does.
      forward: (route, ctx, run) => {
        // a removed node's copy is no longer kept current: only its health, metrics and cluster routes answer
        if (removal.isRemoved() && route.tag !== 'operations' && route.tag !== 'cluster') throw removal.refusal();
        // the user's group now (a write asks again before each attempt: a split or merge may hand the user over meanwhile)
        const groupNow = () => targetShard(ctx.params, ctx.body, router.groups);
        const shard = groupNow();
        const user = targetUser(ctx.params, ctx.body);
        // a user whose group is handing it over: answered once the directory names its new group (503 range_moving meanwhile);
        // checked against the group the operation will use (its user's group when it runs)
        const here = user === undefined ? run : () => {
          fences.check(groupNow(), user, routeWrites(route) ? 'write' : 'read');
          return run();
        };
        if (routeWrites(route)) return forwarder.route(groupNow, ctx.req, ctx.res, here, { keyed: route.idempotencyKey === true });
        return user === undefined ? run() : forwarder.read(shard, ctx.req, ctx.res, here);
      },
    });
    shapes.adopt(app);
    const clusterStart = await clusterStarting;
    placement.start();
    // The context route's BPE table costs about 1 s of CPU to build (most of a second start-up on a busy
    // machine). Built on the first context request, that request took 6-8 s there, and a node that had
    // forwarded it here gave up first (cluster.forward_timeout_ms) and answered 503; built in one piece
    // just after serving, it stalled the first requests of a restarted node. So it is built now, in
    // slices of a few milliseconds between requests (tokenizer.ts): readiness does not wait for it (a
    // count needs no storage or leader, and one asked for before the last slice finishes the table).
    void prepareTokenCounter();
    serve = app;
    // Keep-alive sockets idle longer than typical client pools, so clients don't race a server-side close.
    server.keepAliveTimeout = 65_000;
    // Background consolidation, one worker per shard (each proposes only while its shard's log can).
    const workers = config.consolidation.enabled
      ? shards.map((shard) => new ConsolidationWorker({
        shard, embedder: providers.embedder, llm: providers.llm, logger,
        intervalMs: config.consolidation.interval_ms, batchSize: config.consolidation.batch_size, gatherMs: config.consolidation.gather_ms,
        metrics, tracing,
      }))
      : [];
    for (const worker of workers) worker.start();
    // Pruning (only with memory.prune_enabled), one per shard, proposing only where its shard's log can.
    const pruners = shards.map((shard) => new PruningWorker({ shard, logger, ...pruningSettings(config) }));
    for (const upkeep of [reinforcement, ...pruners]) upkeep.start();
    // Webhooks (CONTRACT §13): one dispatcher per shard, sending only while this node leads the shard.
    const webhookSender = new WebhookSender({ timeoutMs: config.webhooks.timeout_ms, allowPrivate: config.webhooks.allow_private });
    const webhookMetrics = new WebhookMetrics(metrics, shards);
    const dispatchers = shards.map((shard) => new WebhookDispatcher({
      shard, meta: router.meta(), poster: webhookSender, logger, metrics: webhookMetrics, settings: dispatcherSettings(config),
    }));
    for (const dispatcher of dispatchers) dispatcher.start();
    // each group's workers, so a removed group's stop (removeGroup below)
    const groupWorkers = new Map<number, { stop(): Promise<void> }[]>();
    const ownWorkers = (id: number, ...list: ({ stop(): Promise<void> } | undefined)[]) =>
      groupWorkers.set(id, [...(groupWorkers.get(id) ?? []), ...list.filter((w): w is { stop(): Promise<void> } => w !== undefined)]);
    shards.forEach((shard, i) => ownWorkers(shard.id, workers[i], pruners[i], dispatchers[i]));
    // A group made by a split, opened on every node when shard 0 begins the split (or at start, for
    // one begun earlier): empty until its voters are initialized and seeded (cluster/split/driver.ts).
    let adding = Promise.resolve();
    // groups are opened and removed one at a time, in the order asked; one that fails does not stop the next
    const inOrder = <T>(step: () => Promise<T>): Promise<T> => {
      const run = adding.then(step);
      adding = run.then(() => undefined, () => undefined);
      return run;
    };
    // The workers of a new group start once the directory routes users to it: before the commit its
    // records are a copy being made (a new leader of shard 0 copies them again), which nothing else may change.
    const waiting = new Map<number, Shard>();
    const startWorkersOnceRouted = () => {
      for (const [id, shard] of waiting) {
        if (!ranges.table().ranges.some((r) => r.group === id)) continue;
        waiting.delete(id);
        startWorkers(shard);
      }
    };
    const addGroup = (id: number): Promise<void> => inOrder(async () => {
      if (!open) return;
      if (shards.some((s) => s.id === id)) return startWorkersOnceRouted();
      if (ranges.removed().includes(id)) return;
      // a replica moved off this node: opened again (blank) once the placement names this node for the group
      const reopened = closedHere.has(id);
      if (reopened && !named(id)) return;
      if (!reopened && (await keptClosed(id))) return;
      closedHere.delete(id);
      const shard = await openGroup(id);
      shards.push(shard);
      await wireShard(shard);
      appliedGauge(shard);
      backlog.push({ shard: shard.id, read: () => shard.db.counter('pending') });
      waiting.set(id, shard);
      startWorkersOnceRouted();
      logger.info({ shard: id }, reopened ? 'shard group opened again: the placement names this node for it' : 'shard group opened (a split made it)');
    });
    const startWorkers = (shard: Shard) => {
      if (config.consolidation.enabled) {
        const worker = new ConsolidationWorker({
          shard, embedder: providers.embedder, llm: providers.llm, logger,
          intervalMs: config.consolidation.interval_ms, batchSize: config.consolidation.batch_size, gatherMs: config.consolidation.gather_ms,
          metrics, tracing,
        });
        workers.push(worker);
        ownWorkers(shard.id, worker);
        worker.start();
      }
      const pruner = new PruningWorker({ shard, logger, ...pruningSettings(config) });
      pruners.push(pruner);
      pruner.start();
      const dispatcher = new WebhookDispatcher({ shard, meta: router.meta(), poster: webhookSender, logger, metrics: webhookMetrics, settings: dispatcherSettings(config) });
      dispatchers.push(dispatcher);
      dispatcher.start();
      ownWorkers(shard.id, pruner, dispatcher);
    };
    // a group's workers stop (it is removed, or its replica moved away)
    const stopGroupWorkers = async (id: number): Promise<void> => {
      const own = groupWorkers.get(id) ?? [];
      groupWorkers.delete(id);
      await Promise.all(own.map((w) => w.stop()));
      for (const list of [workers, pruners, dispatchers] as { stop(): Promise<void> }[][]) {
        for (let i = list.length - 1; i >= 0; i--) if (own.includes(list[i])) list.splice(i, 1);
      }
      waiting.delete(id);
    };
    // A retired group removed (cluster.remove_group applied in shard 0): its workers stop, its Raft group
    // closes for good (messages for it are ignored from then on), its log and state are deleted.
    const removeGroup = (id: number): Promise<void> => inOrder(async () => {
      if (!open) return;
      const at = shards.findIndex((s) => s.id === id);
      // not open here: what is left of it on disk (a removal a stop or a crash interrupted) goes
      if (at < 0) {
        closedHere.delete(id);
        return deleteRemains(id);
      }
      const shard = shards[at];
      await stopGroupWorkers(id);
      await cluster.removeShard(id);
      shards.splice(at, 1);
      const queued = backlog.findIndex((b) => b.shard === id);
      if (queued >= 0) backlog.splice(queued, 1);
      indexes.get(id)?.release();
      indexes.delete(id);
      await shard.db.close();
      await rm(shardDir(id), { recursive: true, force: true });
      logger.info({ shard: id }, 'retired group removed: its replica is deleted from this node');
    });
    // A replica moved off this node (the placement loop asked, and this node's own replica says it is no
    // longer a member: cluster/replica-drop.ts): its Raft group closes and its workers stop; once no apply
    // of it runs it leaves the node's groups, its state closes and its directory is renamed aside (one
    // atomic rename), then its log and snapshot files are deleted (the removal's index kept), then the
    // directory set aside. A crash before the rename leaves the whole replica (opened at start: the drop,
    // asked again, deletes it); after it, the log rebuilds the state at start, or, deleted too, the group
    // stays closed; never a replica missing part of its state. `onlyIfBlank` (with `removedAt` 0): a group
    // open here with nothing in it, closed if the placement does not name this node (closeUnnamedBlank).
    const dropGroupNow = async (id: number, removedAt: number, onlyIfBlank = false): Promise<void> => {
      if (!open) throw new Error('the node is stopping');
      const shard = shards.find((s) => s.id === id);
      if (!shard) return; // not open here: nothing of it is held
      if (onlyIfBlank && !(blankHere(id) && !named(id))) return;
      // the Raft group leaves the host at once (no message reaches it from here on), then the workers stop
      const deleting = deleteReplica({
        dir: shardDir(id),
        removeGroup: (beforeStorage) => cluster.dropShard(id, removedAt, beforeStorage),
        // the group is closed and no apply of it runs: it leaves the node's groups, then its state closes
        closeState: async () => {
          shards.splice(shards.indexOf(shard), 1);
          const queued = backlog.findIndex((b) => b.shard === id);
          if (queued >= 0) backlog.splice(queued, 1);
          indexes.get(id)?.release();
          indexes.delete(id);
          fences.forget(id);
          closedHere.add(id);
          await shard.db.close();
        },
      });
      deleting.catch(() => undefined); // awaited below, after the workers stop
      await stopGroupWorkers(id);
      await deleting;
      droppedHere.add(id);
      // named again meanwhile (added back before this drop was answered): it opens again, blank
      if (named(id)) void addGroup(id).catch((err) => logger.error({ err, shard: id }, 'opening a group this node was named for failed'));
    };
    const dropGroup = (id: number, removedAt: number, onlyIfBlank = false): Promise<void> => inOrder(() => dropGroupNow(id, removedAt, onlyIfBlank));
    /** The group is open here and its replica holds nothing (no entry, no membership): never held, or dropped and opened again. */
    function blankHere(id: number): boolean {
      const st = cluster.findGroup(id)?.status();
      return !!st && st.lastIndex === 0 && st.members.length === 0;
    }
    /**
     * Closes the groups open here with nothing in them that the placement no longer names this node for,
     * among those it dropped before (opened again when named, by a directory that then moved on), and on a
     * node removed from the cluster every one (never held, or dropped): their directories go.
     */
    const closeUnnamedBlank = () => {
      for (const shard of shards) {
        if (shard.id === 0 || !(droppedHere.has(shard.id) || removedFromCluster()) || named(shard.id) || !blankHere(shard.id)) continue;
        void dropGroup(shard.id, 0, true).catch((err) => logger.error({ err, shard: shard.id }, 'closing an empty group failed'));
      }
    };
    for (const id of ranges.groupIds()) await addGroup(id);
    // a group closed here is opened again when the placement names this node for it (a replica added back)
    directory.onChange(() => {
      for (const id of closedHere) if (named(id)) void addGroup(id).catch((err) => logger.error({ err, shard: id }, 'opening a group this node was named for failed'));
      closeUnnamedBlank();
    });
    ranges.onNewGroup((id) => void addGroup(id).catch((err) => logger.error({ err, shard: id }, 'opening a group made by a split failed')));
    ranges.onRemoved((id) => void removeGroup(id).catch((err) => logger.error({ err, shard: id }, 'removing a retired group failed')));
    // removed while this node was opening; and every few seconds, so nothing of a removed group stays on disk.
    // Also every few seconds (and on each change of the placement): closeUnnamedBlank.
    const sweepRemoved = () => {
      ranges.removed().forEach((id) => void removeGroup(id).catch((err) => logger.error({ err, shard: id }, 'removing a retired group failed')));
      closeUnnamedBlank();
    };
    sweepRemoved();
    const removedSweep = setInterval(sweepRemoved, 5000);
    removedSweep.unref();
    const splits = new SplitDriver({
      rt: cluster, meta: router.meta(), ranges, directory, fwd: forwarder, signer: peerSigner, logger, shards: () => shards,
      outboxEmpty: () => placement.outboxEmpty,
    });
    clusterService.splits = splits;
    splits.start();
    const autoscaler = new AutoScaler({
      settings: { splitAbove: config.cluster.auto_split_records, mergeBelow: config.cluster.auto_merge_records },
      isLeader: () => router.meta().log.isLeader(),
      busy: () => ranges.splits().length + ranges.drops().length + ranges.aborts().length > 0,
      table: () => ranges.table(),
      sizes: () => placement.sizes,
      split: (group) => clusterService.autoSplit(group),
      merge: async (group, donor) => void (await clusterService.merge(group, donor)),
      logger,
      onDecision: (d) => metrics.autoscaleDecisions.inc({ kind: d.kind }),
    }, Math.max(100, config.cluster.placement_interval_ms));
    clusterService.autoscaler = autoscaler;
    autoscaler.start();
    const node = new StrataNode(config, logger, services, server);
    node.endPeerStreams = () => upgraded.forEach((socket) => socket.destroy());
    node.onStop = async () => {
      open = false;
      clearInterval(removedSweep);
      readiness.stop();
      removal.stop();
      await mcp?.close();
      // The batch in flight finishes (its proposal commits) before the logs close.
      await Promise.all(workers.map((w) => w.stop()));
      await Promise.all([reinforcement, ...pruners].map((w) => w.stop()));
      await Promise.all(dispatchers.map((d) => d.stop()));
      await webhookSender.close();
      await Promise.all([...indexes.values()].map((ix) => ix.idle()));
      await indexWorker?.close();
      await providers.close();
      await placement.stop();
      await autoscaler.stop();
      await splits.stop();
      await adding;
      await clusterStart.stop();
      await forwarder.close();
      await services.groups?.close();
      await cluster.close();
      for (const shard of shards) {
        await shard.log.close();
        await shard.db.close();
      }
      await tracing.shutdown(); // exports the spans still buffered
    };
    logger.info({ url: node.url, shards: shards.length, data_dir: config.storage.data_dir }, 'strata node serving');
    return node;
  }

  private onStop: () => Promise<void> = async () => undefined;
  private endPeerStreams: () => void = () => undefined;

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
        // as idle peer connections were closed above: peers fall back to POSTs, refused from now on
        this.endPeerStreams();
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
