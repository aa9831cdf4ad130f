/**
 * A node's Raft side: one LevelDB for every shard group's log, the HTTP peer transport (mounted under
 * /raft/ on the API server), the host that drives the groups, and the start-up rules (who initializes,
 * who asks to join). Shards get their CommandLog from here.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { HttpTransport, LevelStorage, RaftHost, type RaftGroup, type TickStall, type Transport } from '@strata/raft';
import { RaftApplier, RaftCommandLog, type ReplicatedState } from '@strata/store';
import type { GroupPlacementRecord } from '@strata/store';
import type { Config } from '../config';
import { initialUserGroups } from './placement/directory';

export const RAFT_PREFIX = '/raft/';

/** Pure: the node that initializes a multi-node cluster (configured, else the lowest listed id). */
export function seedNodeId(config: Pick<Config, 'cluster' | 'raft'>): number {
  if (config.raft.bootstrap_seed_node_id !== null) return config.raft.bootstrap_seed_node_id;
  const ids = config.cluster.peers.map((p) => p.id);
  return ids.length ? Math.min(...ids) : config.cluster.node_id;
}

/** Pure: what a node does at start about initialization. */
export function startPlan(config: Pick<Config, 'cluster' | 'raft'>): 'initialize' | 'join' | 'wait' {
  if (config.cluster.join) return 'join';
  if (!config.raft.auto_initialize) return 'wait';
  return seedNodeId(config) === config.cluster.node_id ? 'initialize' : 'wait';
}

/** Pure: this node's own peer URL. */
export function selfUrlOf(config: Pick<Config, 'cluster'>, port: number): string {
  if (config.cluster.advertise_url) return config.cluster.advertise_url.replace(/\/+$/, '');
  const listed = config.cluster.peers.find((p) => p.id === config.cluster.node_id);
  return listed ? listed.url : `http://127.0.0.1:${port}`;
}

/**
 * Sends to the URLs this node was configured with (STRATA_PEERS) before those in the replicated
 * membership: an operator (or a test's fault proxy) decides how this node reaches each peer.
 */
class OverridingTransport implements Transport {
  constructor(private readonly inner: Transport, private readonly overrides: Map<number, string>) {}
  send(to: number, url: string, msgs: Parameters<Transport['send']>[2]): void {
    this.inner.send(to, this.overrides.get(to) ?? url, msgs);
  }
  setHandler(h: Parameters<Transport['setHandler']>[0]): void {
    this.inner.setHandler(h);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

/**
 * A Raft tick a whole election timeout late: this node's event loop was blocked, or the process starved
 * of CPU, that long; the groups it led sent no heartbeat meanwhile and their followers may elect. Logged
 * at most every 10 s (with how many were not logged), as a warning while it leads groups.
 */
export function tickStallLog(logger: Logger, everyMs = 10_000): (stall: TickStall) => void {
  let lastAt = 0;
  let unlogged = 0;
  return ({ gapMs, electionMs, leading }) => {
    const now = Date.now();
    if (now - lastAt < everyMs) {
      unlogged++;
      return;
    }
    lastAt = now;
    const fields = { gap_ms: gapMs, election_timeout_ms: electionMs, leading, not_logged_since: unlogged };
    unlogged = 0;
    const msg = 'raft ticks stalled for an election timeout or more (event loop blocked or CPU starved); followers of the groups this node leads may elect another leader';
    if (leading > 0) logger.warn(fields, msg);
    else logger.info(fields, msg);
  };
}

export class ClusterRuntime {
  readonly logs = new Map<number, RaftCommandLog>();
  private readonly overrides: Map<number, string>;

  private constructor(
    readonly config: Config,
    readonly selfUrl: string,
    /** the cluster secret (a single node without one has a throwaway one: it never talks to peers) */
    readonly secret: string,
    private readonly storage: LevelStorage,
    private readonly transport: HttpTransport,
    readonly host: RaftHost,
    overrides: Map<number, string>,
  ) {
    this.overrides = overrides;
  }

  /** `onPeerRoundTrip`: the round trip of each answered peer request (metrics). */
  static async open(config: Config, selfUrl: string, logger: Logger, hooks: { onPeerRoundTrip?: (peer: number, seconds: number) => void } = {}): Promise<ClusterRuntime> {
    const storage = await LevelStorage.open(join(config.storage.data_dir, 'raft'));
    // A single node with no configured secret never talks to peers; it gets a throwaway one.
    const secret = config.cluster.secret ?? randomBytes(24).toString('hex');
    let lastError = 0;
    const transport = new HttpTransport({
      nodeId: config.cluster.node_id, selfUrl, secret, prefix: RAFT_PREFIX,
      maxClockSkewMs: config.cluster.peer_clock_skew_s * 1000, maxInflightBytes: config.cluster.peer_inflight_bytes,
      onRoundTrip: hooks.onPeerRoundTrip,
      onError: (peer, err) => {
        if (Date.now() - lastError < 5000) return; // a down peer fails every send: log it at most every 5 s
        lastError = Date.now();
        logger.debug({ peer, err: err.message }, 'raft peer unreachable');
      },
    });
    const overrides = new Map(config.cluster.peers.filter((p) => p.id !== config.cluster.node_id).map((p) => [p.id, p.url] as const));
    const host = new RaftHost({
      nodeId: config.cluster.node_id, selfUrl, storage, transport: new OverridingTransport(transport, overrides),
      tickMs: config.raft.tick_ms,
      raft: { electionTick: config.raft.election_ticks, heartbeatTick: config.raft.heartbeat_ticks },
      peers: Object.fromEntries(config.cluster.peers.map((p) => [p.id, p.url])),
      group: {
        proposeTimeoutMs: Math.max(2000, config.cluster.forward_timeout_ms),
        maxPendingProposals: config.raft.max_pending_proposals, maxPendingBytes: config.raft.max_pending_bytes,
        snapshotEvery: config.raft.snapshot_every, snapshotEveryBytes: config.raft.snapshot_every_bytes,
        compactionMargin: config.raft.compaction_margin, compactionMarginBytes: config.raft.compaction_margin_bytes,
        heldPayloadBytes: config.raft.held_payload_bytes,
      },
      onError: (err) => logger.fatal({ err }, 'raft storage or apply failed; this node stops serving writes'),
      onTickStall: tickStallLog(logger),
    });
    return new ClusterRuntime(config, selfUrl, secret, storage, transport, host, overrides);
  }

  /** Opens shard `id`'s group over its state machine (restoring/replaying as needed). */
  async openShard(id: number, state: ReplicatedState): Promise<RaftCommandLog> {
    const applier = await RaftApplier.open(state);
    const group = await this.host.openGroup(id, applier);
    const log = new RaftCommandLog(group, applier);
    this.logs.set(id, log);
    return log;
  }

  /**
   * Deletes this node's replica of a shard moved away (cluster/replica-drop.ts decides when; node.ts
   * dropGroup): the group closes (its waiters fail), `deleteState` deletes the state machine's storage,
   * then the group's log and snapshot files go, and the group is not open here any more. The storage
   * keeps the removal's index: if the node is named for the group again and opens it, the blank replica
   * has no say in the group until added back (RawNode.removedAt).
   */
  async dropShard(id: number, removedAt: number, deleteState: () => Promise<void>): Promise<void> {
    await this.host.removeGroup(id, { removedAt, beforeStorage: deleteState });
    this.logs.delete(id);
  }

  /** What this node's Raft storage holds of a group not open here (LevelStorage.inspect). */
  inspectShard(id: number): Promise<{ blank: boolean; removedAt: number }> {
    return this.storage.inspect(id);
  }

  /**
   * Stops this node's replica of a removed group for good and deletes its log (open or not: a removal
   * interrupted by a crash is finished at the next start); the caller deletes the state's directory.
   */
  async removeShard(id: number): Promise<void> {
    await this.host.removeGroup(id);
    this.logs.delete(id);
  }

  group(shardId: number): RaftGroup {
    const log = this.logs.get(shardId);
    if (!log) throw new Error(`no shard ${shardId}`);
    return log.group;
  }

  /**
   * This node's replica of a group, or null when it has none open: a retired group removed here
   * (removeShard), or one not opened yet. What a request that named the group a moment ago asks.
   */
  findGroup(shardId: number): RaftGroup | null {
    return this.logs.get(shardId)?.group ?? null;
  }

  shardIds(): number[] {
    return [...this.logs.keys()].sort((a, b) => a - b);
  }

  /** How this node reaches a member: its configured URL, else the one in the replicated membership. */
  urlOf(nodeId: number, shardId = 0): string | null {
    if (nodeId === this.config.cluster.node_id) return this.selfUrl;
    return this.overrides.get(nodeId) ?? this.logs.get(shardId)?.group.addrOf(nodeId) ?? this.host.urlOf(nodeId);
  }

  /** The initial members: the configured peers, or this node alone. */
  initialMembers(): { id: number; url: string }[] {
    const peers = this.config.cluster.peers;
    return peers.length ? peers.map((p) => ({ id: p.id, url: p.url })) : [{ id: this.config.cluster.node_id, url: this.selfUrl }];
  }

  /**
   * The initial placement of the groups other than shard 0 over the initial members (the same on every
   * node configured with the same peers): `cluster.replication_factor` voters each.
   */
  initialPlacement(): GroupPlacementRecord[] {
    return initialUserGroups(this.config.cluster.shards, this.initialMembers().map((m) => m.id), this.config.cluster.replication_factor);
  }

  /**
   * Initializes shard 0 with every initial member, and each other group this node is an initial voter
   * of with its voters (idempotent per group). Returns what it did and the groups it is not in: one of
   * their voters initializes them (ClusterService asks it).
   */
  async initialize(): Promise<{ done: { shard_id: number; status: 'initialized' | 'already_initialized' }[]; elsewhere: GroupPlacementRecord[] }> {
    const members = this.initialMembers();
    const done: { shard_id: number; status: 'initialized' | 'already_initialized' }[] = [{ shard_id: 0, status: await this.group(0).initialize(members) }];
    const elsewhere: GroupPlacementRecord[] = [];
    for (const g of this.initialPlacement()) {
      if (!g.voters.includes(this.config.cluster.node_id)) {
        elsewhere.push(g);
        continue;
      }
      done.push({ shard_id: g.group_id, status: await this.group(g.group_id).initialize(members.filter((m) => g.voters.includes(m.id))) });
    }
    return { done, elsewhere };
  }

  /** True when this node holds no Raft state at all (never initialized, never joined). */
  isBlank(): boolean {
    return this.shardIds().every((id) => {
      const s = this.group(id).status();
      return s.lastIndex === 0 && s.members.length === 0;
    });
  }

  /** Mount point for peer traffic on the API server. */
  readonly handle = (req: IncomingMessage, res: ServerResponse): void => this.transport.handle(req, res);
  /** ...and for peer streams (the server's 'upgrade' event). */
  readonly handleUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => this.transport.handleUpgrade(req, socket, head);

  /** The peer transport's counters (metrics). */
  transportStats(): HttpTransport['stats'] {
    return this.transport.stats;
  }

  async close(): Promise<void> {
    for (const log of this.logs.values()) await log.close();
    await this.host.close();
    await this.storage.close();
  }
}
