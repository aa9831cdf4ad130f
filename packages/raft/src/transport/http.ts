/**
 * Raft peer transport over HTTP. Outbound: undici with keep-alive, one request in flight per peer and
 * everything queued meanwhile sent as the next batch (so batching grows with load). Inbound: a plain
 * Node request handler to mount under a path prefix on an existing server (no express needed).
 * Every request is signed: HMAC-SHA256 of sender id, sender URL and body under the cluster secret, so
 * the secret never travels and a tampered or unauthenticated batch is refused with 401.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import { Agent, request } from 'undici';
import { decodeBatch, encodeBatch, type GroupMessage } from './codec';
import type { InboundHandler, Transport } from './transport';

export interface HttpTransportOptions {
  nodeId: number;
  /** this node's base URL, sent so that peers that do not know it yet (a new learner) can answer */
  selfUrl: string;
  secret: string;
  /** path prefix the handler is mounted on, e.g. '/raft/' */
  prefix?: string;
  /** max bytes of one request body before splitting */
  maxBatchBytes?: number;
  /** errors (peer down) are reported here, rate-limited by the caller if wanted */
  onError?: (peer: number, err: Error) => void;
}

const MAX_BODY = 64 << 20;

interface PeerQueue {
  url: string;
  queue: GroupMessage[];
  inflight: number;
}

/** Requests in flight per peer, pipelined on one connection (HTTP/1.1 keeps them in order). */
const MAX_INFLIGHT = 4;

export function sign(secret: string, from: number, fromUrl: string, body: Buffer): string {
  return createHmac('sha256', secret).update(`${from}\n${fromUrl}\n`).update(body).digest('hex');
}

export class HttpTransport implements Transport {
  private handler: InboundHandler | null = null;
  private readonly peers = new Map<number, PeerQueue>();
  private readonly agent: Agent;
  private readonly prefix: string;
  private closed = false;
  /** counters for metrics and the benchmark */
  stats = { requestsSent: 0, messagesSent: 0, sendErrors: 0, requestsReceived: 0, rejected: 0 };

  constructor(private readonly opts: HttpTransportOptions) {
    if (!opts.secret) throw new Error('the raft transport needs a cluster secret');
    this.prefix = (opts.prefix ?? '/raft/').replace(/\/?$/, '/');
    // One connection per peer: one batch in flight at a time keeps messages in order, and undici is
    // measurably faster on a single kept-alive connection than spread over several.
    this.agent = new Agent({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 60_000, connections: 1, pipelining: MAX_INFLIGHT });
  }

  setHandler(h: InboundHandler): void {
    this.handler = h;
  }

  send(to: number, url: string, msgs: GroupMessage[]): void {
    if (this.closed) return;
    let p = this.peers.get(to);
    if (!p) {
      p = { url, queue: [], inflight: 0 };
      this.peers.set(to, p);
    }
    p.url = url;
    for (const m of msgs) p.queue.push(m);
    this.pump(to, p);
  }

  private pump(to: number, p: PeerQueue): void {
    while (p.queue.length > 0 && p.inflight < MAX_INFLIGHT && !this.closed) {
      p.inflight++;
      void this.post(to, p, this.takeBatch(p)).finally(() => {
        p.inflight--;
        this.pump(to, p);
      });
    }
  }

  private async post(to: number, p: PeerQueue, batch: GroupMessage[]): Promise<void> {
    const body = encodeBatch(batch);
    try {
      const res = await request(`${p.url.replace(/\/$/, '')}${this.prefix}msgs`, {
        method: 'POST',
        dispatcher: this.agent,
        body,
        headers: {
          'content-type': 'application/octet-stream',
          'x-raft-from': String(this.opts.nodeId),
          'x-raft-from-url': this.opts.selfUrl,
          'x-raft-sig': sign(this.opts.secret, this.opts.nodeId, this.opts.selfUrl, body),
        },
        headersTimeout: 5000,
        bodyTimeout: 5000,
      });
      await res.body.dump();
      this.stats.requestsSent++;
      this.stats.messagesSent += batch.length;
      if (res.statusCode >= 300) throw new Error(`peer ${to} answered ${res.statusCode}`);
    } catch (err) {
      // Messages to an unreachable peer are dropped (and what is queued behind them): Raft resends what matters.
      this.stats.sendErrors++;
      this.opts.onError?.(to, err as Error);
      p.queue = [];
    }
  }

  private takeBatch(p: PeerQueue): GroupMessage[] {
    const max = this.opts.maxBatchBytes ?? 8 << 20;
    let bytes = 0;
    let i = 0;
    while (i < p.queue.length) {
      const m = p.queue[i].msg;
      let size = 100;
      if (m.entries) for (const e of m.entries) size += e.data.byteLength + 25;
      if (m.snap) size += m.snap.data.byteLength + 200;
      if (i > 0 && bytes + size > max) break;
      bytes += size;
      i++;
    }
    return p.queue.splice(0, i);
  }

  /** Request handler for `${prefix}msgs`; answers 404 for other paths under the prefix. */
  readonly handle = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    const url = req.url ?? '';
    if (req.method !== 'POST' || url.split('?')[0] !== `${this.prefix}msgs`) {
      res.writeHead(404).end();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let aborted = false;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        aborted = true;
        res.writeHead(413).end();
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => {
      if (aborted) return;
      const body = Buffer.concat(chunks);
      const from = Number(req.headers['x-raft-from']);
      const fromUrl = String(req.headers['x-raft-from-url'] ?? '');
      const sig = String(req.headers['x-raft-sig'] ?? '');
      const want = sign(this.opts.secret, from, fromUrl, body);
      if (!Number.isInteger(from) || from <= 0 || sig.length !== want.length || !timingSafeEqual(Buffer.from(sig), Buffer.from(want))) {
        this.stats.rejected++;
        res.writeHead(401).end();
        return;
      }
      let msgs: GroupMessage[];
      try {
        msgs = decodeBatch(body);
      } catch {
        res.writeHead(400).end();
        return;
      }
      this.stats.requestsReceived++;
      res.writeHead(204).end();
      this.handler?.(from, fromUrl || null, msgs);
    });
    req.on('error', () => undefined);
  };

  async close(): Promise<void> {
    this.closed = true;
    await this.agent.close();
  }
}

/** A tiny standalone server that serves only the transport (benchmarks, tests). */
export async function startRaftServer(handler: (req: http.IncomingMessage, res: http.ServerResponse) => void, port: number, host = '127.0.0.1'): Promise<http.Server> {
  const server = http.createServer(handler);
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}
