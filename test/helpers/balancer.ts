/**
 * A health-checking HTTP load balancer for cluster tests, configured like the haproxy backend in
 * docs/cluster.md "Behind a load balancer": `option httpchk GET /readyz`, `inter`, `fall`, `rise`,
 * round robin over the servers marked up, `retries` with `option redispatch` (a request whose server
 * refused the connection goes to another one). It counts what an operator would look at: answers given
 * with no server up (haproxy's own 503s) and the fewest servers up at any check.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testPorts } from './ports';

interface Backend { url: string; up: boolean; fails: number; passes: number }

export interface BalancerOptions { interMs?: number; fall?: number; rise?: number; checkPath?: string; retries?: number }

export class Balancer {
  readonly name = 'builtin';
  /** times every server was down after a round of checks (since resetCounts) */
  private downs = 0;
  private down = false;
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

  async upCountNow(): Promise<number> {
    return this.upCount();
  }

  async backendDowns(): Promise<number> {
    return this.downs;
  }

  async resetCounts(): Promise<void> {
    this.noBackend = 0;
    this.proxied = 0;
    this.downs = 0;
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
    const down = this.upCount() === 0;
    if (down && !this.down) this.downs++;
    this.down = down;
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

/**
 * The same backend in a real haproxy (Debian's `apt-get install haproxy`), which the operator-path
 * test runs whenever it is installed (`balancerFor`). The configuration is the one of docs/cluster.md
 * "Behind a load balancer", plus a stats listener read for the servers up and for haproxy's own count
 * of the times the backend had no server. Its "no server" answers are counted by the caller from their
 * body (haproxy's page says "No server is available to handle this request").
 */
export class HaproxyBalancer {
  readonly name = 'haproxy';
  fewestUp: number;
  private timer: NodeJS.Timeout | null = null;
  /** the backend's UP→DOWN transitions when counts were last reset */
  private downsAtReset = 0;

  private constructor(
    private readonly proc: ChildProcess, readonly url: string, private readonly statsUrl: string, private readonly dir: string, servers: number,
    /** the two reserved ports haproxy binds (ports.ts: a port only checked free raced with other processes) */
    private readonly ports: number[],
  ) {
    this.fewestUp = servers;
  }

  static async start(urls: string[], options: { interMs?: number; fall?: number; rise?: number } = {}): Promise<HaproxyBalancer> {
    const [port, statsPort] = [await testPorts.reserve(), await testPorts.reserve()];
    const dir = mkdtempSync(join(tmpdir(), 'strata-haproxy-'));
    const cfg = [
      'defaults', '  mode http', '  timeout connect 2s', '  timeout client 30s', '  timeout server 30s', '  retries 3', '  option redispatch',
      'frontend strata', `  bind 127.0.0.1:${port}`, '  default_backend nodes',
      'backend nodes', '  balance roundrobin', '  option httpchk GET /readyz', '  http-check expect status 200',
      `  default-server inter ${options.interMs ?? 1000}ms fall ${options.fall ?? 2} rise ${options.rise ?? 2}`,
      ...urls.map((u, i) => `  server n${i + 1} ${new URL(u).host} check`),
      'listen stats', `  bind 127.0.0.1:${statsPort}`, '  stats enable', '  stats uri /stats',
    ].join('\n') + '\n';
    writeFileSync(join(dir, 'haproxy.cfg'), cfg);
    const proc = spawn('haproxy', ['-db', '-f', join(dir, 'haproxy.cfg')], { stdio: 'ignore' });
    const b = new HaproxyBalancer(proc, `http://127.0.0.1:${port}`, `http://127.0.0.1:${statsPort}/stats;csv`, dir, urls.length, [port, statsPort]);
    for (let i = 0; i < 100; i++) {
      try {
        await b.upCountNow();
        break;
      } catch {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    const watch = async () => {
      try {
        b.fewestUp = Math.min(b.fewestUp, await b.upCountNow());
      } catch {
        // stats not answering this time
      }
      if (b.timer !== null) b.timer = setTimeout(() => void watch(), 200);
    };
    b.timer = setTimeout(() => void watch(), 200);
    return b;
  }

  /** haproxy's stats CSV: one row per proxy and server, by column name. */
  private async stats(): Promise<Record<string, string>[]> {
    const csv = await (await fetch(this.statsUrl, { signal: AbortSignal.timeout(2000) })).text();
    const [header, ...rows] = csv.trim().split('\n');
    const cols = header.replace(/^# /, '').split(',');
    return rows.map((r) => {
      const cells = r.split(',');
      return Object.fromEntries(cols.map((c, i) => [c, cells[i]]));
    });
  }

  /** Servers haproxy has up (status UP, or UP while going down). */
  async upCountNow(): Promise<number> {
    return (await this.stats()).filter((r) => r.pxname === 'nodes' && /^n\d+$/.test(r.svname) && r.status.startsWith('UP')).length;
  }

  /** How many times the backend as a whole went down (no server left) since resetCounts: haproxy's own `chkdown`. */
  async backendDowns(): Promise<number> {
    return (await this.backendDownsTotal()) - this.downsAtReset;
  }

  private async backendDownsTotal(): Promise<number> {
    const row = (await this.stats()).find((r) => r.pxname === 'nodes' && r.svname === 'BACKEND');
    return Number(row?.chkdown ?? 0);
  }

  async resetCounts(): Promise<void> {
    this.fewestUp = await this.upCountNow();
    this.downsAtReset = await this.backendDownsTotal();
  }

  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.proc.exitCode === null && this.proc.signalCode === null) {
      const exited = new Promise((resolve) => this.proc.once('exit', resolve));
      this.proc.kill('SIGKILL');
      await exited; // its ports are free before they are given back
    }
    for (const port of this.ports) testPorts.release(port);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Whether Debian's haproxy is installed here. */
export function haproxyInstalled(): boolean {
  return spawnSync('haproxy', ['-v'], { stdio: 'ignore' }).status === 0;
}

/**
 * The balancer for a test: the real haproxy where it is installed, else the balancer above with the
 * same semantics (callers print `name`, so a figure always says which one it comes from).
 */
export async function balancerFor(urls: string[], options: { interMs?: number; fall?: number; rise?: number }): Promise<Balancer | HaproxyBalancer> {
  return haproxyInstalled() ? HaproxyBalancer.start(urls, options) : Balancer.start(urls, options);
}
