/**
 * Real Strata node processes on 127.0.0.1 forming a cluster, for fault tests: fixed ports reserved
 * first (ports.ts: held for the cluster's life, so no other process takes one before its node binds it
 * or while it is down), optionally a FaultProxy on every directed link (node i reaches node j through
 * proxy i>j, so a partition is a matter of proxy modes), plus the HTTP helpers the tests share.
 */
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { FaultProxy } from './fault-proxy';
import { testPorts, type PortPool } from './ports';
import { removeDir, startServer, tempDir, type ServerProcess } from './server-process';

export const API_KEY = 'cluster-test-admin-key';
export const SECRET = 'cluster-test-secret-0123456789';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` until it returns a value other than undefined/false, or fails after `timeoutMs`. */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 20_000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown = null;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined && v !== false) return v as T;
    } catch (err) {
      last = err;
    }
    if (Date.now() >= deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await sleep(everyMs);
  }
}

export interface ClusterNode {
  id: number;
  port: number;
  url: string;
  dataDir: string;
  env: Record<string, string>;
  proc: ServerProcess | null;
}

export interface ClusterOptions {
  nodes: number;
  shards?: number;
  /** put a FaultProxy on every directed link between the initial nodes */
  proxies?: boolean;
  env?: Record<string, string>;
  /** where the nodes' ports come from (default: the test process's pool) */
  ports?: PortPool;
}

export async function api(url: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}, timeoutMs = 10_000) {
  const res = await fetch(url + path, {
    method,
    headers: { 'x-api-key': API_KEY, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body !== undefined ? JSON.stringify(body) : undefined,
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await res.text();
  let json: unknown = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = text;
  }
  return { status: res.status, body: json as Record<string, unknown>, headers: res.headers };
}

export interface ShardStatus {
  shard_id: number;
  leader: number | null;
  term: number;
  role: string;
  commit_index: number;
  applied_index: number;
  members: { node_id: number; url: string; voter: boolean; match_index: number | null }[];
}

export class TestCluster {
  readonly nodes = new Map<number, ClusterNode>();
  readonly proxies = new Map<string, FaultProxy>();
  /** node processes spawned and not yet serving (a start under way when stop() runs is stopped too) */
  private readonly starting = new Set<ChildProcess>();
  private readonly ports: PortPool;

  private constructor(readonly opts: ClusterOptions) {
    this.ports = opts.ports ?? testPorts;
  }

  /**
   * Starts every node; when any start fails, stops what was started (the other nodes, those still
   * starting, the proxies) before rejecting: a failed beforeAll leaves the test no cluster to stop,
   * and a node left running kept jest from exiting.
   */
  static async start(opts: ClusterOptions): Promise<TestCluster> {
    const c = new TestCluster(opts);
    try {
      const ids = Array.from({ length: opts.nodes }, (_, i) => i + 1);
      for (const id of ids) await c.addNode(id, () => ({}));
      if (opts.proxies) {
        for (const i of ids) for (const j of ids) if (i !== j) c.proxies.set(`${i}>${j}`, await FaultProxy.start(c.nodes.get(j)!.port));
      }
      for (const id of ids) {
        const peers = ids.map((j) => `${j}=${j === id || !opts.proxies ? c.nodes.get(j)!.url : c.proxies.get(`${id}>${j}`)!.url}`).join(',');
        c.nodes.get(id)!.env = { STRATA_PEERS: peers };
      }
      // every start ends (served or failed) before a failure is reported, so none is left behind
      const starts = await Promise.allSettled(ids.map((id) => c.startNode(id)));
      const failed = starts.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
    } catch (err) {
      await c.stop();
      throw err;
    }
    return c;
  }

  /** A node entry on a port reserved for this cluster (not started). */
  private async addNode(id: number, env: (port: number) => Record<string, string>): Promise<ClusterNode> {
    const port = await this.ports.reserve();
    const node: ClusterNode = { id, port, url: `http://127.0.0.1:${port}`, dataDir: tempDir(`strata-cluster-${id}-`), env: env(port), proc: null };
    this.nodes.set(id, node);
    return node;
  }

  baseEnv(node: ClusterNode): Record<string, string> {
    return {
      STRATA_NODE_ID: String(node.id),
      STRATA_PORT: String(node.port),
      STRATA_CLUSTER_SECRET: SECRET,
      STRATA_API_KEY: API_KEY,
      STRATA_ADMIN_PASSWORD: 'cluster-admin-pw',
      STRATA_SHARDS: String(this.opts.shards ?? 1),
      STRATA__EMBEDDING__PROVIDER: 'hashing',
      STRATA__CONSOLIDATION__ENABLED: 'false',
      STRATA__CLUSTER__FORWARD_TIMEOUT_MS: '3000',
      ...this.opts.env,
      ...node.env,
    };
  }

  async startNode(id: number): Promise<ServerProcess> {
    const node = this.nodes.get(id)!;
    // generous: on a busy shared machine a node (tsx compiling its sources) may take minutes to start (seen: over 90 s at a load of 25 on 2 cores)
    let child: ChildProcess | null = null;
    try {
      node.proc = await startServer({
        dataDir: node.dataDir, env: this.baseEnv(node), timeoutMs: 180_000,
        onSpawn: (c) => this.starting.add((child = c)),
      });
    } finally {
      if (child) this.starting.delete(child);
    }
    return node.proc;
  }

  /** A new node that asks `via` to join it (STRATA_JOIN); it has no STRATA_PEERS. */
  async addJoiningNode(id: number, via: number): Promise<ClusterNode> {
    const node = await this.addNode(id, () => ({ STRATA_JOIN: this.nodes.get(via)!.url }));
    await this.startNode(id);
    return node;
  }

  /** A new node with neither peers nor STRATA_JOIN: it waits until an operator joins it (`strata cluster join`). */
  async addWaitingNode(id: number): Promise<ClusterNode> {
    const node = await this.addNode(id, (port) => ({ STRATA_ADVERTISE_URL: `http://127.0.0.1:${port}` }));
    await this.startNode(id);
    return node;
  }

  node(id: number): ClusterNode {
    return this.nodes.get(id)!;
  }

  /** The error lines (level ≥ 50) every running node has logged: what a test that saw a 500 prints, with their request ids. */
  errorLog(): string {
    return this.live().flatMap((n) => (n.proc?.output() ?? '').split('\n').filter((l) => /"level":(?:5\d|60)\b/.test(l)).map((l) => `node ${n.id}: ${l.slice(0, 2000)}`)).join('\n');
  }

  live(): ClusterNode[] {
    return [...this.nodes.values()].filter((n) => n.proc !== null);
  }

  async kill(id: number, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const node = this.node(id);
    await node.proc?.kill(signal);
    node.proc = null;
  }

  /** SIGSTOP / SIGCONT without waiting for an exit. */
  signal(id: number, signal: 'SIGSTOP' | 'SIGCONT'): void {
    process.kill(this.node(id).proc!.pid, signal);
  }

  async status(id: number): Promise<ShardStatus[]> {
    const r = await api(this.node(id).url, 'GET', '/v1/cluster/status', undefined, {}, 2000);
    if (r.status !== 200) throw new Error(`status of node ${id}: ${r.status}`);
    return (r.body as { shards: ShardStatus[] }).shards;
  }

  /** Waits until the given nodes agree on one leader of `shard` (among them) and returns its id. */
  async leader(shard = 0, among: number[] = this.live().map((n) => n.id), timeoutMs = 20_000): Promise<number> {
    return waitFor(`a leader of shard ${shard} agreed by nodes ${among.join(',')}`, async () => {
      const views = await Promise.all(among.map(async (id) => (await this.status(id)).find((s) => s.shard_id === shard)!));
      const leader = views[0].leader;
      if (leader === null || !among.includes(leader) || views.some((v) => v.leader !== leader)) return undefined;
      const own = views[among.indexOf(leader)];
      return own.role === 'leader' ? leader : undefined;
    }, timeoutMs);
  }

  /** Stops every process of the cluster (serving or still starting), the proxies, and frees its ports and directories. */
  async stop(): Promise<void> {
    const exits: Promise<unknown>[] = [];
    for (const node of this.nodes.values()) {
      if (!node.proc) continue;
      try {
        process.kill(node.proc.pid, 'SIGCONT'); // a node a test paused (SIGSTOP)
      } catch {
        // already gone
      }
      exits.push(node.proc.kill('SIGKILL'));
      node.proc = null;
    }
    // a start under way: its startServer rejects once the child is gone (startNode's caller sees that)
    for (const child of this.starting) {
      if (child.exitCode === null && child.signalCode === null) {
        exits.push(new Promise((resolve) => child.once('exit', resolve)));
        child.kill('SIGKILL');
      }
    }
    await Promise.allSettled(exits);
    await Promise.allSettled([...this.proxies.values()].map((p) => p.close()));
    for (const node of this.nodes.values()) {
      removeDir(node.dataDir);
      this.ports.release(node.port);
    }
  }
}

export function newStream(): string {
  return randomUUID();
}

/**
 * Writes one event through `url`, retrying 503s and connection errors with the same Idempotency-Key
 * until acknowledged or the deadline: resolves with the event id (acknowledged) or null.
 */
export async function writeEvent(url: () => string, user: string, stream: string, content: string, deadlineMs = 15_000): Promise<string | null> {
  const key = randomUUID();
  const deadline = Date.now() + deadlineMs;
  while (Date.now() < deadline) {
    try {
      const r = await api(url(), 'POST', `/v1/users/${encodeURIComponent(user)}/streams/${stream}/events`, { content }, { 'idempotency-key': key }, 8000);
      if (r.status === 200) return (r.body as { event_id: string }).event_id;
      if (r.status !== 503) throw new Error(`write answered ${r.status}: ${JSON.stringify(r.body)}`);
    } catch (err) {
      if ((err as Error).message.startsWith('write answered')) throw err;
    }
    await sleep(100);
  }
  return null;
}

/** Every event of a stream on one node (all pages). */
export async function listEvents(url: string, user: string, stream: string, query = ''): Promise<{ event_id: string; content: string }[]> {
  const out: { event_id: string; content: string }[] = [];
  let after = '';
  // A split or merge the load started just before it stopped may still be moving this user: the API
  // answers 503 range_moving until the directory names the user's new group (CONTRACT). The read-back
  // wants the state after the move, so it waits for it, bounded: a fence that never lifts still fails.
  const movingUntil = Date.now() + 120_000;
  for (let page = 0; page < 1000; page++) {
    const r = await api(url, 'GET', `/v1/users/${encodeURIComponent(user)}/streams/${stream}/events?limit=1000${after ? `&after=${after}` : ''}${query}`, undefined, {}, 5000);
    if (r.status === 503 && (r.body as { code?: string } | null)?.code === 'range_moving' && Date.now() < movingUntil) {
      await sleep(500);
      page--;
      continue;
    }
    if (r.status !== 200) throw new Error(`listing on ${url}: ${r.status} ${JSON.stringify(r.body)}`);
    const body = r.body as { events: { event_id: string; content: string }[]; next_cursor: string | null };
    out.push(...body.events);
    if (!body.next_cursor) return out;
    after = body.next_cursor;
  }
  return out;
}
