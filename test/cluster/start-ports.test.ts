/**
 * The cluster helper's ports and its failed starts (issue 25): a port chosen for a node must still be
 * the node's when it binds it, however busy the machine, and a start that fails anyway (here: a port
 * taken by force after it was chosen) leaves no node process running, or jest never exits.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TestCluster, api } from '../helpers/cluster';
import { PortPool, defaultRange, ephemeralRange } from '../helpers/ports';
import { SERVER_MAIN, removeDir, tempDir } from '../helpers/server-process';

/** A listener of "some other program" on 127.0.0.1:port. */
async function occupy(port: number): Promise<net.Server> {
  const s = net.createServer();
  await new Promise<void>((resolve, reject) => {
    s.once('error', reject);
    s.listen(port, '127.0.0.1', () => resolve());
  });
  return s;
}
const close = (s: net.Server) => new Promise<void>((resolve) => s.close(() => resolve()));

/** Node processes this test process started that still run. */
function nodeChildren(): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === process.pid && readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(SERVER_MAIN)) out.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

describe('the port pool', () => {
  const lockDir = tempDir('strata-ports-');
  afterAll(() => removeDir(lockDir));

  it('hands out no port of the kernel\'s ephemeral range (those go to port-0 binds and outbound connections)', () => {
    const e = ephemeralRange();
    const r = defaultRange();
    expect(r.high).toBeLessThan(e.low);
    expect(r.high - r.low).toBeGreaterThan(1000);
  });

  it('skips a port another program listens on, and one a live process holds', async () => {
    const base = await new PortPool(defaultRange(), join(tmpdir(), 'strata-test-ports')).reserve(); // free and ours meanwhile
    const pool = new PortPool({ low: base, high: base + 50 }, lockDir, 'ascending');
    const other = await occupy(base);
    try {
      const first = await pool.reserve();
      expect(first).not.toBe(base);
      // another pool (another test process) never gets a port this one holds
      const second = await new PortPool({ low: base, high: base + 50 }, lockDir, 'ascending').reserve();
      expect(second).not.toBe(first);
      pool.release(first);
      expect(await new PortPool({ low: first, high: first }, lockDir).reserve()).toBe(first);
    } finally {
      await close(other);
    }
  });

  it('takes over the lock of an owner that died', async () => {
    const port = await new PortPool().reserve(); // free, and no other test process's meanwhile
    const pool = new PortPool({ low: port, high: port }, lockDir);
    writeFileSync(join(lockDir, String(port)), String(process.pid)); // alive: not taken
    await expect(pool.reserve()).rejects.toThrow(/no free port/);
    writeFileSync(join(lockDir, String(port)), '99999999'); // a pid above pid_max: its owner is gone
    expect(await pool.reserve()).toBe(port);
    expect(readFileSync(join(lockDir, String(port)), 'utf8')).toBe(String(process.pid));
    pool.release(port);
    expect(existsSync(join(lockDir, String(port)))).toBe(false);
  });
});

describe('TestCluster starts', () => {
  it('starts a node although the port it would have chosen first was taken before it started', async () => {
    const mine = new PortPool();
    const base = await mine.reserve();
    mine.release(base); // not ours any more: another program's, which listens on it
    const other = await occupy(base);
    let cluster: TestCluster | null = null;
    try {
      cluster = await TestCluster.start({ nodes: 1, ports: new PortPool({ low: base, high: base + 50 }, undefined, 'ascending') });
      const node = cluster.node(1);
      expect(node.port).not.toBe(base);
      expect((await api(node.url, 'GET', '/livez')).status).toBe(200);
    } finally {
      await cluster?.stop();
      await close(other);
    }
  });

  it('stops every node it started when one start fails (its port taken after it was chosen)', async () => {
    let taken: net.Server | null = null;
    const handed: number[] = [];
    // the race the pool prevents, forced: the first port it hands out is bound by someone else at once
    class Raced extends PortPool {
      override async reserve(): Promise<number> {
        const port = await super.reserve();
        handed.push(port);
        if (!taken) taken = await occupy(port);
        return port;
      }
    }
    try {
      await expect(TestCluster.start({ nodes: 3, ports: new Raced() })).rejects.toThrow(/EADDRINUSE/);
      expect(handed).toHaveLength(3);
      // nodes 2 and 3 had started (or were starting): all gone, and the ports given back
      expect(nodeChildren()).toEqual([]);
      for (const port of handed) expect(existsSync(join(tmpdir(), 'strata-test-ports', String(port)))).toBe(false);
    } finally {
      if (taken) await close(taken);
    }
  });
});
