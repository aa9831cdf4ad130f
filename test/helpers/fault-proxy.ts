/**
 * A fault-injecting TCP proxy for one network link (node A → node B): A's configured URL for B points
 * at the proxy. `pass` relays bytes both ways; `drop` resets every connection and refuses new ones
 * (a peer that is down); `blackhole` accepts connections and swallows everything (a partition where
 * packets vanish: callers only notice by timeouts).
 */
import net from 'node:net';

export type ProxyMode = 'pass' | 'drop' | 'blackhole';

interface Pair {
  client: net.Socket;
  upstream: net.Socket | null;
}

export class FaultProxy {
  private mode: ProxyMode = 'pass';
  private readonly pairs = new Set<Pair>();

  private constructor(private readonly server: net.Server, readonly port: number, private readonly target: { host: string; port: number }) {}

  static async start(targetPort: number, targetHost = '127.0.0.1'): Promise<FaultProxy> {
    let proxy: FaultProxy | null = null;
    const server = net.createServer((client) => proxy!.accept(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    proxy = new FaultProxy(server, (server.address() as net.AddressInfo).port, { host: targetHost, port: targetPort });
    return proxy;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get currentMode(): ProxyMode {
    return this.mode;
  }

  /** Switches the link's behaviour; connections open under the old mode are cut (or swallowed). */
  setMode(mode: ProxyMode): void {
    this.mode = mode;
    if (mode === 'pass') return;
    for (const pair of this.pairs) {
      pair.upstream?.destroy();
      pair.upstream = null;
      if (mode === 'drop') pair.client.destroy();
      // blackhole: the client socket stays open and everything it sends is discarded
    }
  }

  private accept(client: net.Socket): void {
    client.on('error', () => undefined);
    if (this.mode === 'drop') {
      client.resetAndDestroy();
      return;
    }
    const pair: Pair = { client, upstream: null };
    this.pairs.add(pair);
    client.on('close', () => {
      pair.upstream?.destroy();
      this.pairs.delete(pair);
    });
    if (this.mode === 'blackhole') {
      client.on('data', () => undefined);
      return;
    }
    const upstream = net.connect(this.target.port, this.target.host);
    pair.upstream = upstream;
    upstream.on('error', () => client.destroy());
    upstream.on('close', () => {
      if (pair.upstream === upstream) client.destroy();
    });
    client.on('data', (chunk) => {
      if (pair.upstream === upstream && this.mode === 'pass') upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (pair.upstream === upstream && this.mode === 'pass') client.write(chunk);
    });
    client.on('end', () => upstream.end());
    upstream.on('end', () => client.end());
  }

  async close(): Promise<void> {
    for (const pair of this.pairs) {
      pair.upstream?.destroy();
      pair.client.destroy();
    }
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
