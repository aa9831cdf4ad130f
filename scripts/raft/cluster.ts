/** Parent side of a multi-process Raft cluster on 127.0.0.1 (used by the 3-process test and the benchmark). */
import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { freePort } from '../lib/processes';


export class ProcNode {
  child: ChildProcess | null = null;
  private seq = 0;
  private pending = new Map<number, (m: Record<string, unknown>) => void>();
  constructor(readonly id: number, readonly port: number, readonly dir: string, readonly peers: Record<number, string>, readonly secret: string, readonly tickMs: number) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const child = fork(join(__dirname, 'node-proc.ts'), [], {
      execArgv: ['--conditions=strata-source', '--import', 'tsx'],
      env: { ...process.env, RAFT_NODE_CONFIG: JSON.stringify({ id: this.id, port: this.port, dir: this.dir, peers: this.peers, secret: this.secret, tickMs: this.tickMs }) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    this.child = child;
    await new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`node ${this.id} did not start`)), 30_000);
      child.on('message', (m: Record<string, unknown>) => {
        if (m.ready) {
          clearTimeout(t);
          resolve();
        } else if (typeof m.id === 'number') {
          this.pending.get(m.id)?.(m);
          this.pending.delete(m.id);
        }
      });
      child.once('exit', (code) => {
        clearTimeout(t);
        for (const f of this.pending.values()) f({ error: `node ${this.id} exited (${code})` });
        this.pending.clear();
        reject(new Error(`node ${this.id} exited with ${code}`));
      });
    }).catch((e) => {
      throw e;
    });
    child.removeAllListeners('exit');
    child.once('exit', () => {
      for (const f of this.pending.values()) f({ error: `node ${this.id} exited` });
      this.pending.clear();
      this.child = null;
    });
  }

  call(msg: Record<string, unknown>, timeoutMs = 60_000): Promise<Record<string, unknown>> {
    const child = this.child;
    if (!child) return Promise.resolve({ error: 'down' });
    const id = ++this.seq;
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.pending.delete(id);
        resolve({ error: 'ipc timeout' });
      }, timeoutMs);
      this.pending.set(id, (m) => {
        clearTimeout(t);
        resolve(m);
      });
      child.send({ ...msg, id });
    });
  }

  kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const child = this.child;
    if (!child) return Promise.resolve();
    return new Promise((resolve) => {
      child.once('exit', () => resolve());
      child.kill(signal);
    });
  }
}

export async function makeCluster(n: number, root: string, tickMs: number, secret = 'bench-secret'): Promise<ProcNode[]> {
  const ports: number[] = [];
  for (let i = 0; i < n; i++) ports.push(await freePort());
  const peers: Record<number, string> = {};
  ports.forEach((p, i) => (peers[i + 1] = `http://127.0.0.1:${p}`));
  return ports.map((p, i) => new ProcNode(i + 1, p, join(root, `node${i + 1}`), peers, secret, tickMs));
}

type Status = { role: string; leader: number | null; term: number; commitIndex: number };

export async function waitLeader(nodes: ProcNode[], timeoutMs = 20_000): Promise<ProcNode> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    for (const n of nodes) {
      if (!n.child) continue;
      const r = await n.call({ cmd: 'status' }, 2000);
      const s = r.status as Status | undefined;
      if (s?.role === 'leader') return n;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('no leader elected');
}
