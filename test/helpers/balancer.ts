/**
 * A health-checking HTTP load balancer for cluster tests, configured like the haproxy backend in
 * docs/cluster.md "Behind a load balancer": `option httpchk GET /readyz`, `inter`, `fall`, `rise`,
 * round robin over the servers marked up, `retries` with `option redispatch` (a request whose server
 * refused the connection goes to another one). It counts what an operator would look at: answers given
 * with no server up (haproxy's own 503s) and the fewest servers up at any check.
 */
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

interface Backend { url: string; up: boolean; fails: number; passes: number }

export interface BalancerOptions { interMs?: number; fall?: number; rise?: number; checkPath?: string; retries?: number }

export class Balancer {
  /** requests answered 503 by the balancer itself because no server was up */
  noBackend = 0;
  /** requests passed to a server */
  proxied = 0;
  /** the fewest servers up after any round of checks (since resetCounts) */
  fewestUp: number;
  private timer: NodeJS.Timeout | null = null;
  private next = 0;
  private readonly backends: Backend[];

  private constructor(private readonly server: Server, urls: string[], private readonly o: Required<BalancerOptions>) {
    this.backends = urls.map((url) => ({ url, up: true, fails: 0, passes: 0 }));
    this.fewestUp = urls.length;
  }

  static async start(urls: string[], options: BalancerOptions = {}): Promise<Balancer> {
    const o = { interMs: 1000, fall: 2, rise: 2, checkPath: '/readyz', retries: 3, ...options };
    let self: Balancer | null = null;
    const server = createServer((req, res) => void self!.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    self = new Balancer(server, urls, o);
    const b = self;
    const round = async () => {
      await b.checkAll();
      if (b.timer !== null) b.timer = setTimeout(() => void round(), o.interMs);
    };
    b.timer = setTimeout(() => void round(), o.interMs);
    return b;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  upCount(): number {
    return this.backends.filter((b) => b.up).length;
  }

  resetCounts(): void {
    this.noBackend = 0;
    this.proxied = 0;
    this.fewestUp = this.upCount();
  }

  private async checkAll(): Promise<void> {
    await Promise.all(this.backends.map(async (b) => {
      let ok = false;
      try {
        const res = await fetch(b.url + this.o.checkPath, { signal: AbortSignal.timeout(this.o.interMs) });
        await res.arrayBuffer();
        ok = res.status === 200;
      } catch {
        ok = false;
      }
      if (ok) {
        b.fails = 0;
        if (!b.up && ++b.passes >= this.o.rise) b.up = true;
      } else {
        b.passes = 0;
        if (b.up && ++b.fails >= this.o.fall) b.up = false;
      }
    }));
    this.fewestUp = Math.min(this.fewestUp, this.upCount());
  }

  private pick(exclude: Set<Backend>): Backend | null {
    const up = this.backends.filter((b) => b.up && !exclude.has(b));
    if (up.length === 0) return null;
    return up[this.next++ % up.length];
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const tried = new Set<Backend>();
    for (let attempt = 0; attempt <= this.o.retries; attempt++) {
      const b = this.pick(tried) ?? this.pick(new Set());
      if (!b) break;
      tried.add(b);
      const outcome = await this.forward(b, req, body, res);
      if (outcome === 'done') return;
    }
    if (this.upCount() === 0) this.noBackend++;
    res.writeHead(503, { 'content-type': 'text/plain' }).end('No server is available to handle this request.\n');
  }

  /** 'refused': the connection failed before anything was sent (redispatch); else the answer is relayed. */
  private forward(b: Backend, req: IncomingMessage, body: Buffer, res: ServerResponse): Promise<'done' | 'refused'> {
    return new Promise((resolve) => {
      const headers = { ...req.headers, host: new URL(b.url).host, 'content-length': String(body.length) };
      delete headers['transfer-encoding'];
      // a connection per request, so "refused before anything was sent" is known for sure (haproxy's redispatch)
      const out = request(b.url + (req.url ?? '/'), { method: req.method, headers, agent: false });
      let connected = false;
      out.on('socket', (s) => s.once('connect', () => (connected = true)));
      out.on('response', (r) => {
        this.proxied++;
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
        r.on('end', () => resolve('done'));
        r.on('error', () => resolve('done'));
      });
      out.on('error', () => {
        if (!connected) return resolve('refused');
        if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' }).end('Bad gateway.\n');
        else res.destroy();
        resolve('done');
      });
      out.end(body);
    });
  }

  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
