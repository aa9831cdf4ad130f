/**
 * Raft peer transport over HTTP. Outbound: a stream per peer (stream.ts: one upgraded connection
 * carrying authenticated frames, everything queued while a frame is written going as the next one, so
 * batching grows with load); until it is open, or to a peer that serves no streams, POSTs by undici
 * with keep-alive, pipelined. Inbound: a plain Node request handler and an upgrade handler to mount
 * under a path prefix on an existing server (no express needed).
 * Every request is signed in its headers (HMAC-SHA256 under the cluster secret, which never travels)
 * over the method, path, sender id and URL, a timestamp, a nonce and the body's SHA-256. The receiver
 * checks all of it BEFORE reading the body: an unsigned, forged, replayed or stale request is answered
 * 401 at once and its connection closed, so nobody without the secret can make a node buffer bytes;
 * signed bodies in flight are capped too (beyond: 503, the sender drops the batch and Raft resends).
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { Duplex } from 'node:stream';
import type { Agent } from 'undici';
/** undici, required on first use: a single node sends nothing, and its start loads about a fifth less (issue 29). */
let undiciModule: typeof import('undici') | null = null;
const undici = (): typeof import('undici') => (undiciModule ??= require('undici') as typeof import('undici'));

import { decodeBatch, encodeBatch, type GroupMessage } from './codec';
import { ReplayGuard } from './replay';
import { FrameKind, FrameReader, FrameWriter, STREAM_PROTOCOL, streamKey, writeFrame } from './stream';
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
  /** how far a request's timestamp may be from this node's clock (default 30 s) */
  maxClockSkewMs?: number;
  /** bytes of signed request bodies being received at once, all peers together (default 128 MiB) */
  maxInflightBytes?: number;
  /** the clock (tests) */
  now?: () => number;
  /**
   * Told the round trip of every peer request answered 2xx (send to answer read, in seconds), for the
   * application's metrics. Requests are pipelined, so a round trip includes the wait behind the ones
   * ahead of it on the connection. Must be cheap; what it throws is ignored.
   */
  onRoundTrip?: (peer: number, seconds: number) => void;
}

const MAX_BODY = 64 << 20;
const DEFAULT_SKEW_MS = 30_000;
const DEFAULT_INFLIGHT_BYTES = 128 << 20;

/** An open outbound stream to a peer (stream.ts). */
interface OpenStream {
  socket: Duplex;
  writer: FrameWriter;
  /** the socket's buffer is full: frames wait for 'drain' (messages keep queueing, so batches grow) */
  blocked: boolean;
  /** ping id → when it was sent (ms, performance clock), oldest first */
  pings: Map<number, number>;
  lastPingAt: number;
  /** when the socket's buffer filled (ms, performance clock) */
  blockedAt: number;
}

interface PeerQueue {
  url: string;
  queue: GroupMessage[];
  inflight: number;
  stream: OpenStream | null;
  connecting: boolean;
  /** no stream attempt before this time (ms since the epoch): after a failure, batches go by POST meanwhile */
  retryAt: number;
  /** the peer answered the upgrade with 404 (it serves no streams): POST only, until this process restarts */
  noStreams: boolean;
}

/** Pause between failed stream attempts to one peer; messages go by POST meanwhile. */
const STREAM_RETRY_MS = 1000;
/** A ping on each stream at most this often: its pong is the peer round-trip metric, and the stream's pulse. */
const PING_EVERY_MS = 500;
/**
 * A stream whose ping has no pong for this long, or whose buffer stayed full this long, is closed and
 * opened again (POSTs meanwhile): TCP keeps a connection whose path died (a partition that dropped the
 * connection's state, as the partition test's proxies do) open for many minutes, and Raft's messages
 * would vanish into it. Long against Raft's election timeout on purpose: a leader busy with hundreds of
 * clients answered pings late, and a 2 s limit tore healthy streams down under load (elections followed).
 */
const STREAM_STALLED_MS = 10_000;
/** Messages queued for one peer at most; beyond, the oldest are dropped (Raft resends what matters). */
const MAX_QUEUED = 8192;
const EMPTY_DIGEST = createHash('sha256').digest('hex');

/** Requests in flight per peer, pipelined on one connection (HTTP/1.1 keeps them in order). */
const MAX_INFLIGHT = 4;

/** What a peer request's signature covers; every field travels in a header of the same name. */
export interface SignedHeaders {
  method: string;
  path: string;
  from: number;
  fromUrl: string;
  /** ms since the epoch, the sender's clock */
  ts: number;
  /** `<boot id>.<sequence>`: unique per sender process and request */
  nonce: string;
  /** hex SHA-256 of the body */
  digest: string;
}

export function sign(secret: string, h: SignedHeaders): string {
  return createHmac('sha256', secret)
    .update(`raft\n${h.method}\n${h.path}\n${h.from}\n${h.fromUrl}\n${h.ts}\n${h.nonce}\n${h.digest}`)
    .digest('hex');
}

export const bodyDigest = (body: Uint8Array): string => createHash('sha256').update(body).digest('hex');

/** The headers of a signed peer request (also used by tests to forge and replay requests). */
export function signedHeaders(secret: string, h: SignedHeaders): Record<string, string> {
  return {
    'x-raft-from': String(h.from),
    'x-raft-from-url': h.fromUrl,
    'x-raft-ts': String(h.ts),
    'x-raft-nonce': h.nonce,
    'x-raft-digest': h.digest,
    'x-raft-sig': sign(secret, h),
  };
}

function digestMatches(body: Buffer, digest: string): boolean {
  const got = createHash('sha256').update(body).digest();
  return timingSafeEqual(got, Buffer.from(digest, 'hex'));
}

const header = (req: http.IncomingMessage, name: string): string => {
  const v = req.headers[name];
  return typeof v === 'string' ? v : '';
};

/** Answers without reading the body, and closes the connection so the unread body is never drained. */
function refuse(res: http.ServerResponse, status: number): void {
  res.writeHead(status, { connection: 'close', ...(status === 503 ? { 'retry-after': '1' } : {}) }).end();
  res.once('finish', () => res.req.socket.destroy());
}

export class HttpTransport implements Transport {
  private handler: InboundHandler | null = null;
  private readonly peers = new Map<number, PeerQueue>();
  /** made on the first POST (see undici below) */
  private agent: Agent | null = null;
  private readonly prefix: string;
  private closed = false;
  /** random per process: with the sequence below it makes every request's nonce unique */
  private readonly boot = randomBytes(8).toString('hex');
  private seq = 0;
  private readonly replays: ReplayGuard;
  /** requests signed before this process started are refused: nothing captured earlier replays after a restart */
  private readonly startedAt: number;
  private readonly now: () => number;
  private inflightBytes = 0;
  private pingSeq = 0;
  /** open inbound streams, by sender: a sender's new stream replaces its old one */
  private readonly inbound = new Map<number, Duplex>();
  /** counters for metrics and the benchmark (a stream's message frame counts as a request) */
  stats = { requestsSent: 0, messagesSent: 0, sendErrors: 0, requestsReceived: 0, rejected: 0, busy: 0 };

  constructor(private readonly opts: HttpTransportOptions) {
    if (!opts.secret) throw new Error('the raft transport needs a cluster secret');
    this.prefix = (opts.prefix ?? '/raft/').replace(/\/?$/, '/');
    this.now = opts.now ?? Date.now;
    this.startedAt = this.now();
    this.replays = new ReplayGuard(2 * (opts.maxClockSkewMs ?? DEFAULT_SKEW_MS));
  }

  private dispatcher(): Agent {
    // One connection per peer: one batch in flight at a time keeps messages in order, and undici is
    // measurably faster on a single kept-alive connection than spread over several.
    this.agent ??= new (undici().Agent)({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 60_000, connections: 1, pipelining: MAX_INFLIGHT });
    return this.agent;
  }

  setHandler(h: InboundHandler): void {
    this.handler = h;
  }

  send(to: number, url: string, msgs: GroupMessage[]): void {
    if (this.closed) return;
    let p = this.peers.get(to);
    if (!p) {
      p = { url, queue: [], inflight: 0, stream: null, connecting: false, retryAt: 0, noStreams: false };
      this.peers.set(to, p);
    }
    if (p.url !== url && p.stream) p.stream.socket.destroy(); // the peer moved: its old address is no use
    p.url = url;
    for (const m of msgs) p.queue.push(m);
    if (p.queue.length > MAX_QUEUED) p.queue.splice(0, p.queue.length - MAX_QUEUED);
    this.pump(to, p);
  }

  private pump(to: number, p: PeerQueue): void {
    if (this.closed) return;
    if (p.stream) {
      this.pumpStream(p, p.stream);
      return;
    }
    if (!p.noStreams && !p.connecting && Date.now() >= p.retryAt) this.openStream(to, p);
    // until a stream is open (or when the peer serves none), batches go as POSTs
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
    const path = `${this.prefix}msgs`;
    const signed = signedHeaders(this.opts.secret, {
      method: 'POST', path, from: this.opts.nodeId, fromUrl: this.opts.selfUrl, ts: this.now(), nonce: `${this.boot}.${++this.seq}`, digest: bodyDigest(body),
    });
    const started = process.hrtime.bigint();
    try {
      const res = await undici().request(`${p.url.replace(/\/$/, '')}${path}`, {
        method: 'POST',
        dispatcher: this.dispatcher(),
        body,
        headers: { 'content-type': 'application/octet-stream', ...signed },
        headersTimeout: 5000,
        bodyTimeout: 5000,
      });
      await res.body.dump();
      this.stats.requestsSent++;
      this.stats.messagesSent += batch.length;
      if (res.statusCode >= 300) throw new Error(`peer ${to} answered ${res.statusCode}`);
      this.observeRtt(to, Number(process.hrtime.bigint() - started) / 1e9);
    } catch (err) {
      // Messages to an unreachable peer are dropped (and what is queued behind them): Raft resends what matters.
      this.stats.sendErrors++;
      this.opts.onError?.(to, err as Error);
      p.queue = [];
    }
  }

  private pumpStream(p: PeerQueue, s: OpenStream): void {
    const now = performance.now();
    const oldestPing = s.pings.values().next().value;
    if ((oldestPing !== undefined && now - oldestPing > STREAM_STALLED_MS) || (s.blocked && now - s.blockedAt > STREAM_STALLED_MS)) {
      s.socket.destroy(); // its 'close' clears p.stream: the next pump goes by POST and opens another
      return;
    }
    while (p.queue.length > 0 && !s.blocked) {
      const batch = this.takeBatch(p);
      const ok = writeFrame(s.socket, s.writer, FrameKind.Messages, encodeBatch(batch));
      this.stats.requestsSent++;
      this.stats.messagesSent += batch.length;
      if (!ok) this.block(s, now);
    }
    if (!s.blocked && now - s.lastPingAt >= PING_EVERY_MS) {
      s.lastPingAt = now;
      const id = ++this.pingSeq;
      s.pings.set(id, now);
      const payload = Buffer.alloc(8);
      payload.writeUInt32BE(id, 4);
      if (!writeFrame(s.socket, s.writer, FrameKind.Ping, payload)) this.block(s, now);
    }
  }

  private block(s: OpenStream, now: number): void {
    s.blocked = true;
    s.blockedAt = now;
  }

  /**
   * Opens a stream to the peer: an HTTP Upgrade signed like a POST (empty body). Messages keep going
   * by POST until it is open; a 404 means the peer serves no streams (POST from then on).
   */
  private openStream(to: number, p: PeerQueue): void {
    p.connecting = true;
    const path = `${this.prefix}stream`;
    const nonce = `${this.boot}.${++this.seq}`;
    const signed = signedHeaders(this.opts.secret, { method: 'GET', path, from: this.opts.nodeId, fromUrl: this.opts.selfUrl, ts: this.now(), nonce, digest: EMPTY_DIGEST });
    const failed = (err: Error, noStreams = false) => {
      p.connecting = false;
      p.retryAt = Date.now() + STREAM_RETRY_MS;
      if (noStreams) p.noStreams = true;
      else this.opts.onError?.(to, err);
    };
    let req: http.ClientRequest;
    try {
      req = http.request(`${p.url.replace(/\/$/, '')}${path}`, { method: 'GET', headers: { connection: 'Upgrade', upgrade: STREAM_PROTOCOL, ...signed } });
    } catch (err) {
      failed(err as Error);
      return;
    }
    req.setTimeout(5000, () => req.destroy(new Error(`peer ${to} did not answer the stream upgrade`)));
    req.on('error', (err) => failed(err));
    req.on('response', (res) => {
      res.resume();
      failed(new Error(`peer ${to} answered the stream upgrade with ${res.statusCode}`), res.statusCode === 404);
    });
    req.on('upgrade', (res, socket, head) => {
      p.connecting = false;
      if (this.closed || res.headers.upgrade !== STREAM_PROTOCOL) {
        socket.destroy();
        if (!this.closed) failed(new Error(`peer ${to} upgraded to ${String(res.headers.upgrade)}`));
        return;
      }
      req.setTimeout(0);
      this.attachOutbound(to, p, socket, head, nonce);
    });
    req.end();
  }

  private attachOutbound(to: number, p: PeerQueue, socket: Duplex, head: Buffer, nonce: string): void {
    (socket as unknown as { setNoDelay?: (v: boolean) => void }).setNoDelay?.(true);
    const s: OpenStream = { socket, writer: new FrameWriter(streamKey(this.opts.secret, nonce, this.opts.nodeId, 'out')), blocked: false, pings: new Map(), lastPingAt: 0, blockedAt: 0 };
    const pongs = new FrameReader(streamKey(this.opts.secret, nonce, this.opts.nodeId, 'back'), 64);
    const onData = (data: Buffer) => {
      try {
        for (const f of pongs.push(data)) {
          if (f.kind !== FrameKind.Pong || f.payload.length !== 8) throw new Error('unexpected frame on a peer stream');
          const sent = s.pings.get(f.payload.readUInt32BE(4));
          if (sent === undefined) continue;
          s.pings.delete(f.payload.readUInt32BE(4));
          this.observeRtt(to, (performance.now() - sent) / 1000);
        }
      } catch (err) {
        this.opts.onError?.(to, err as Error);
        socket.destroy();
      }
    };
    socket.on('data', onData);
    socket.on('drain', () => {
      s.blocked = false;
      this.pump(to, p);
    });
    socket.on('error', (err) => this.opts.onError?.(to, err));
    socket.on('close', () => {
      if (p.stream !== s) return;
      // what was written but not delivered is lost, as with a failed POST: Raft resends what matters
      p.stream = null;
      p.retryAt = Date.now() + STREAM_RETRY_MS;
      this.stats.sendErrors++;
    });
    p.stream = s;
    if (head.length) onData(head);
    this.pump(to, p);
  }

  private observeRtt(to: number, seconds: number): void {
    if (!this.opts.onRoundTrip) return;
    try {
      this.opts.onRoundTrip(to, seconds);
    } catch {
      // a metrics hook never affects delivery
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
      if (m.snap) size += m.snap.length + 200;
      if (i > 0 && bytes + size > max) break;
      bytes += size;
      i++;
    }
    return p.queue.splice(0, i);
  }

  /**
   * Upgrade handler for `${prefix}stream` (mount it on the server's 'upgrade' event): checks the
   * request's signature like a POST's, answers 101, then reads authenticated frames until the peer
   * closes. Anything wrong closes the connection; nothing unauthenticated reaches the handler.
   */
  readonly handleUpgrade = (req: http.IncomingMessage, socket: Duplex, head: Buffer): void => {
    socket.on('error', () => undefined);
    const path = (req.url ?? '').split('?')[0];
    const reject = (status: number, text: string) => socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    if (req.method !== 'GET' || path !== `${this.prefix}stream` || req.headers.upgrade !== STREAM_PROTOCOL) return void reject(404, 'Not Found');
    const signed = this.verifyHeaders(req, path);
    if (!signed || signed.digest !== EMPTY_DIGEST || this.closed) {
      this.stats.rejected++;
      return void reject(401, 'Unauthorized');
    }
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: ${STREAM_PROTOCOL}\r\n\r\n`);
    (socket as unknown as { setNoDelay?: (v: boolean) => void }).setNoDelay?.(true);
    this.inbound.get(signed.from)?.destroy(); // the sender reconnected: its old stream is dead
    this.inbound.set(signed.from, socket);
    socket.on('close', () => {
      if (this.inbound.get(signed.from) === socket) this.inbound.delete(signed.from);
    });
    const frames = new FrameReader(streamKey(this.opts.secret, signed.nonce, signed.from, 'out'), MAX_BODY);
    const pongs = new FrameWriter(streamKey(this.opts.secret, signed.nonce, signed.from, 'back'));
    const onData = (data: Buffer) => {
      try {
        for (const f of frames.push(data)) {
          if (f.kind === FrameKind.Ping) {
            writeFrame(socket, pongs, FrameKind.Pong, f.payload);
            continue;
          }
          if (f.kind !== FrameKind.Messages) throw new Error('unexpected frame kind');
          const msgs = decodeBatch(f.payload);
          this.stats.requestsReceived++;
          this.handler?.(signed.from, signed.fromUrl || null, msgs);
        }
      } catch {
        this.stats.rejected++;
        socket.destroy();
      }
    };
    if (head.length) onData(head);
    socket.on('data', onData);
  };

  /** Request handler for `${prefix}msgs`; answers 404 for other paths under the prefix. */
  readonly handle = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    req.on('error', () => undefined);
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'POST' || path !== `${this.prefix}msgs`) {
      refuse(res, 404);
      return;
    }
    const signed = this.verifyHeaders(req, path);
    if (!signed) {
      this.stats.rejected++;
      refuse(res, 401);
      return;
    }
    const length = Number(req.headers['content-length']);
    if (!Number.isSafeInteger(length) || length < 0) {
      refuse(res, 411);
      return;
    }
    if (length > MAX_BODY) {
      refuse(res, 413);
      return;
    }
    // one request is always let through when nothing else is in flight, so a batch larger than the cap still progresses
    if (this.inflightBytes > 0 && this.inflightBytes + length > (this.opts.maxInflightBytes ?? DEFAULT_INFLIGHT_BYTES)) {
      this.stats.busy++;
      refuse(res, 503);
      return;
    }
    this.inflightBytes += length;
    let released = false;
    const release = () => {
      if (!released) this.inflightBytes -= length;
      released = true;
    };
    req.once('close', release);
    const body = Buffer.allocUnsafe(length);
    let size = 0;
    req.on('data', (c: Buffer) => {
      // Node's parser never passes more than Content-Length bytes; the guard keeps the copy in bounds regardless
      if (size + c.length <= length) c.copy(body, size);
      size += c.length;
    });
    req.on('end', () => {
      release();
      if (res.headersSent) return;
      if (size !== length || !digestMatches(body, signed.digest)) {
        this.stats.rejected++;
        refuse(res, 401); // the body is not the one that was signed
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
      this.handler?.(signed.from, signed.fromUrl || null, msgs);
    });
  };

  /**
   * The signature, the timestamp (within the skew, and not from before this process started) and the
   * nonce (first use) of a request, from its headers alone; null when any is wrong.
   */
  private verifyHeaders(req: http.IncomingMessage, path: string): SignedHeaders | null {
    const h: SignedHeaders = {
      method: req.method ?? '', path,
      from: Number(header(req, 'x-raft-from')), fromUrl: header(req, 'x-raft-from-url'),
      ts: Number(header(req, 'x-raft-ts')), nonce: header(req, 'x-raft-nonce'), digest: header(req, 'x-raft-digest'),
    };
    const sig = header(req, 'x-raft-sig');
    if (!Number.isInteger(h.from) || h.from <= 0 || !Number.isSafeInteger(h.ts) || !/^[0-9a-f]{64}$/.test(h.digest)) return null;
    const nonce = /^([0-9a-f]{1,32})\.([1-9][0-9]{0,15})$/.exec(h.nonce);
    if (!nonce) return null;
    const want = sign(this.opts.secret, h);
    if (sig.length !== want.length || !timingSafeEqual(Buffer.from(sig), Buffer.from(want))) return null;
    const now = this.now();
    if (Math.abs(now - h.ts) > (this.opts.maxClockSkewMs ?? DEFAULT_SKEW_MS) || h.ts < this.startedAt) return null;
    // only after the signature: an unsigned request cannot fill the replay guard
    if (!this.replays.accept(`${h.from}/${nonce[1]}`, Number(nonce[2]), now)) return null;
    return h;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const p of this.peers.values()) p.stream?.socket.destroy();
    for (const socket of this.inbound.values()) socket.destroy();
    await this.agent?.close();
  }
}

/** A tiny standalone server that serves only the transport, streams included (benchmarks, tests). */
export async function startRaftServer(transport: Pick<HttpTransport, 'handle' | 'handleUpgrade'>, port: number, host = '127.0.0.1'): Promise<http.Server> {
  const server = http.createServer(transport.handle);
  server.on('upgrade', transport.handleUpgrade);
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}
