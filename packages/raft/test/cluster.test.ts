/** Three real node processes on 127.0.0.1: HTTP transport, synced LevelDB, SIGKILL of the leader. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { makeCluster, waitLeader, type ProcNode } from '../../../scripts/raft/cluster';

jest.setTimeout(90_000);

describe('3-process cluster over HTTP', () => {
  let root: string;
  let nodes: ProcNode[] = [];
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'raft-3proc-'));
    nodes = await makeCluster(3, root, 20, 'test-secret');
    await Promise.all(nodes.map((n) => n.start()));
  });
  afterAll(async () => {
    for (const n of nodes) await n.kill('SIGTERM');
    rmSync(root, { recursive: true, force: true });
  });

  test('commits, survives a SIGKILLed leader, and the killed node catches up after restart', async () => {
    expect((await nodes[0].call({ cmd: 'init' })).result).toBe('initialized');
    const l1 = await waitLeader(nodes);
    const r1 = await l1.call({ cmd: 'propose', n: 200, size: 32 });
    expect(r1.error).toBeUndefined();
    expect(r1.count).toBe(200);

    await l1.kill('SIGKILL');
    const rest = nodes.filter((n) => n !== l1);
    const l2 = await waitLeader(rest);
    expect(l2).not.toBe(l1);
    const r2 = await l2.call({ cmd: 'propose', n: 50, size: 32 });
    expect(r2.error).toBeUndefined();
    expect(r2.count).toBe(250); // nothing acknowledged was lost

    await l1.start();
    const deadline = Date.now() + 20_000;
    let count = 0;
    while (Date.now() < deadline) {
      count = (await l1.call({ cmd: 'status' })).count as number;
      if (count === 250) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(count).toBe(250);
    // a linearizable read through the restarted follower
    const rd = await l1.call({ cmd: 'read' });
    expect(rd.count).toBe(250);
  });

  test('peer requests without the cluster secret are refused', async () => {
    const res = await request(`${nodes[1].url}/raft/msgs`, { method: 'POST', body: Buffer.alloc(4), headers: { 'x-raft-from': '1', 'x-raft-sig': '00' } });
    await res.body.dump();
    expect(res.statusCode).toBe(401);
  });
});
