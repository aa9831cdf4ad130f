/**
 * Ports for test processes that must be told their port before they start (cluster nodes: every node's
 * STRATA_PEERS names the others, and a node restarted mid-test comes back on the same port).
 *
 * `freePort()` (bind port 0, read it, close) raced: the kernel hands that same port to the next process
 * that binds port 0 or opens an outbound connection, and on a shared machine one did before the node
 * bound it (EADDRINUSE, test/cluster/failover.test.ts). A port of the kernel's ephemeral range cannot be
 * held for a child, so the ports here come from below that range, which the kernel never hands out on
 * its own; among the test processes of every checkout on the machine, a lock file per port (created
 * exclusively, naming the owner's pid) says whose it is, for as long as the owner wants it (a cluster:
 * until it stops, restarts included). A lock whose owner died is taken over. Before a port is handed
 * out it is also bound once, so a port some other program listens on is skipped.
 */
import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface PortRange {
  low: number;
  high: number;
}

/** The kernel's ephemeral range (ports it gives to port-0 binds and outbound connections). */
export function ephemeralRange(): PortRange {
  try {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (Number.isInteger(low) && Number.isInteger(high)) return { low, high };
  } catch {
    // not Linux: IANA's dynamic range, what most other systems use
  }
  return { low: 49152, high: 65535 };
}

/** Below the ephemeral range and above the ports services usually take. */
export function defaultRange(): PortRange {
  const e = ephemeralRange();
  const high = e.low > 20_000 ? e.low - 1 : 19_999;
  return { low: Math.min(15_000, high - 1000), high };
}

const LOCK_DIR = join(tmpdir(), 'strata-test-ports');

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** True when nothing listens on the port on 127.0.0.1 right now. */
export function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

export class PortPool {
  private readonly held = new Set<number>();
  /** releases what is still held when the process exits (listening only while something is held) */
  private readonly onExit = () => this.releaseAll();

  constructor(
    readonly range: PortRange = defaultRange(),
    private readonly dir = LOCK_DIR,
    /** 'random': parallel owners start apart; 'ascending' (tests): the lowest usable port first */
    private readonly order: 'random' | 'ascending' = 'random',
  ) {
    mkdirSync(this.dir, { recursive: true });
  }

  /** A port locked for this process and free right now; `release` it when done (exit releases the rest). */
  async reserve(): Promise<number> {
    const size = this.range.high - this.range.low + 1;
    const start = this.order === 'random' ? Math.floor(Math.random() * size) : 0;
    for (let i = 0; i < size; i++) {
      const port = this.range.low + ((start + i) % size);
      if (this.held.has(port) || !this.lock(port)) continue;
      if (await bindable(port)) {
        if (this.held.size === 0) process.once('exit', this.onExit);
        this.held.add(port);
        return port;
      }
      this.unlock(port); // another program listens there
    }
    throw new Error(`no free port left in ${this.range.low}-${this.range.high}`);
  }

  release(port: number): void {
    if (!this.held.delete(port)) return;
    this.unlock(port);
    if (this.held.size === 0) process.removeListener('exit', this.onExit);
  }

  releaseAll(): void {
    for (const port of [...this.held]) this.release(port);
  }

  /** Takes the port's lock file, or a dead owner's; false while a live process holds it. */
  private lock(port: number): boolean {
    const file = join(this.dir, String(port));
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const fd = openSync(file, 'wx');
        writeSync(fd, String(process.pid));
        closeSync(fd);
        return true;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      let owner = NaN;
      try {
        owner = Number(readFileSync(file, 'utf8'));
      } catch {
        continue; // released meanwhile: try again
      }
      // an owner still writing its pid (empty file) counts as alive
      if (!Number.isInteger(owner) || owner <= 0 || alive(owner)) return false;
      try {
        unlinkSync(file);
      } catch {
        // another process took it over first: it wins the exclusive create
      }
    }
    return false;
  }

  private unlock(port: number): void {
    try {
      unlinkSync(join(this.dir, String(port)));
    } catch {
      // already gone
    }
  }
}

/** The test process's pool (a process killed outright leaves its locks to the next owner: see `lock`). */
export const testPorts = new PortPool();
