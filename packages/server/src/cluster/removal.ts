/**
 * A node removed from the cluster while it still runs: the leader stops sending it anything the moment
 * it appends the change (the configuration takes effect on append), so the node never sees its own
 * removal in its log and would go on answering reads from its copy, which no longer receives writes.
 *
 * It finds out by asking: while no leader of shard 0 is known here (which is what a removed node sees
 * once its election timer fires and nobody answers), it asks the other members it knows for their
 * status (a signed `GET /v1/cluster/status`). A member whose shard 0 has applied this node's removal
 * (`removed_nodes`, replicated and never undone: a removed id never comes back) settles it. The node
 * then writes `removed.json` in its data directory (so a restart remembers) and refuses every request
 * about data (503, so clients and balancers go to another node); /readyz answers 503 with the reason.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { unavailable, type StrataError } from '@strata/store';
import type { Forwarder } from './forward';
import type { PeerSigner } from './peer-auth';
import type { ClusterRuntime } from './runtime';

const MARKER = 'removed.json';
const STATUS_PATH = '/v1/cluster/status';

/** Whether the data directory says its node was removed from the cluster (the marker RemovalWatch writes). */
export function removedMarkerExists(dataDir: string): boolean {
  return existsSync(join(dataDir, MARKER));
}

export class RemovalWatch {
  private removed: boolean;
  private timer: NodeJS.Timeout | null = null;
  private asking = false;

  constructor(private readonly o: { rt: ClusterRuntime; fwd: Forwarder; signer: PeerSigner; dataDir: string; logger: Logger; everyMs?: number }) {
    this.removed = removedMarkerExists(o.dataDir);
  }

  isRemoved(): boolean {
    return this.removed;
  }

  /** The answer to any request about data on a removed node. */
  refusal(): StrataError {
    return unavailable(`Node ${this.o.rt.config.cluster.node_id} was removed from the cluster; its copy of the data is no longer kept current. Send requests to another node.`);
  }

  start(): void {
    if (this.removed) return;
    this.timer = setInterval(() => void this.round(), this.o.everyMs ?? 1000);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** One look: only while shard 0 has no leader here and this node has some membership to ask about. */
  async round(): Promise<void> {
    if (this.removed || this.asking) return;
    const { rt } = this.o;
    const meta = rt.group(0);
    if (meta.leaderId() !== null) return;
    const self = rt.config.cluster.node_id;
    const others = meta.status().members.filter((m) => m.id !== self && m.url);
    if (others.length === 0) return;
    this.asking = true;
    try {
      for (const m of others) {
        const url = rt.urlOf(m.id, 0) ?? m.url!;
        try {
          const r = await this.o.fwd.call(url, 'get', STATUS_PATH, this.o.signer.sign(m.id, 'GET', STATUS_PATH, undefined), undefined, Date.now() + 2000);
          const removed = r.status === 200 ? (r.body as { removed_nodes?: unknown }).removed_nodes : undefined;
          if (Array.isArray(removed) && removed.includes(self)) {
            this.markRemoved(m.id);
            return;
          }
        } catch {
          // not reachable: ask the next one, and again next round
        }
      }
    } finally {
      this.asking = false;
    }
  }

  private markRemoved(toldBy: number): void {
    writeFileSync(join(this.o.dataDir, MARKER), JSON.stringify({ node_id: this.o.rt.config.cluster.node_id, removed_seen_at: new Date().toISOString(), told_by: toldBy }) + '\n', { mode: 0o600 });
    this.removed = true;
    this.stop();
    this.o.logger.warn({ told_by: toldBy }, 'this node was removed from the cluster: it refuses requests about data from now on (wipe its data directory to join again under a new id)');
  }
}
