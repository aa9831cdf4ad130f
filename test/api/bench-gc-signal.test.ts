/**
 * The concurrent retrieval bench reads a node's RSS after a full collection (issue 28): it starts every
 * node with `--expose-gc --require scripts/lib/gc-on-signal.cjs` and signals SIGUSR2. The node has no
 * such hook of its own; this checks the preload on a real node, and that without --expose-gc it
 * installs nothing (SIGUSR2 then keeps node's default and ends the process).
 */
import { join } from 'node:path';
import { REPO_ROOT, removeDir, startServer, type ServerProcess } from '../helpers/server-process';

const PRELOAD = join(REPO_ROOT, 'scripts', 'lib', 'gc-on-signal.cjs');
const env = { STRATA__EMBEDDING__PROVIDER: 'hashing' };

describe('the bench preload that collects on SIGUSR2', () => {
  let server: ServerProcess | undefined;
  afterEach(async () => {
    if (!server) return;
    await server.stop();
    removeDir(server.dataDir);
    server = undefined;
  });

  it('with --expose-gc: collects, reports the memory after it on stderr, and the node keeps serving', async () => {
    server = await startServer({ nodeArgs: ['--expose-gc', '--require', PRELOAD], env });
    const s = server;
    for (let round = 1; round <= 2; round++) {
      s.child.kill('SIGUSR2');
      const deadline = Date.now() + 30_000;
      let lines: string[] = [];
      while ((lines = s.output().split('\n').filter((l) => l.startsWith('strata-bench-gc '))).length < round && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(lines).toHaveLength(round);
      const report = JSON.parse(lines[round - 1].slice('strata-bench-gc '.length)) as Record<string, number>;
      expect(report.rss).toBeGreaterThan(0);
      expect(report.heap_used).toBeGreaterThan(0);
      expect(report.heap_total).toBeGreaterThanOrEqual(report.heap_used);
      expect((await fetch(`${s.url}/livez`)).status).toBe(200);
    }
    expect(s.child.exitCode).toBeNull();
  });

  it('without --expose-gc it installs nothing: SIGUSR2 ends the node as node does by default', async () => {
    server = await startServer({ nodeArgs: ['--require', PRELOAD], env });
    const s = server;
    server = undefined;
    const exited = new Promise<NodeJS.Signals | null>((r) => s.child.once('exit', (_code, signal) => r(signal)));
    s.child.kill('SIGUSR2');
    expect(await exited).toBe('SIGUSR2');
    expect(s.output()).not.toContain('strata-bench-gc');
    removeDir(s.dataDir);
  });
});
