/** Many groups (shards) on one host: one flush loop, shared synced writes, messages batched per peer. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RaftHost } from '../src/driver/host';
import type { RaftGroup } from '../src/driver/group';
import { LevelStorage } from '../src/storage/level-storage';
import { LocalTransportHub } from '../src/transport/transport';
import { ListMachine } from './mem-sm';

test('three hosts carry four groups each; writes of all groups share synced batches', async () => {
  const root = mkdtempSync(join(tmpdir(), 'raft-multi-'));
  const hub = new LocalTransportHub();
  const hosts: RaftHost[] = [];
  const storages: LevelStorage[] = [];
  const groups = new Map<string, RaftGroup>();
  try {
    for (const id of [1, 2, 3]) {
      const storage = await LevelStorage.open(join(root, `n${id}`));
      storages.push(storage);
      const host = new RaftHost({ nodeId: id, selfUrl: `local://${id}`, storage, transport: hub.transport(id), tickMs: 10 });
      hosts.push(host);
      for (const g of [0, 1, 2, 3]) groups.set(`${id}/${g}`, await host.openGroup(g, new ListMachine()));
    }
    // each shard seeded by a different node, so leaders spread over the hosts
    for (const g of [0, 1, 2, 3]) {
      const seed = (g % 3) + 1;
      const members = [1, 2, 3].map((id) => ({ id, url: `local://${id}` })).sort((a, b) => (a.id === seed ? -1 : b.id === seed ? 1 : a.id - b.id));
      await (groups.get(`${seed}/${g}`) as RaftGroup).initialize(members);
    }
    const leaderOf = (g: number) => [1, 2, 3].map((id) => groups.get(`${id}/${g}`) as RaftGroup).find((x) => x.isLeader());
    for (let i = 0; i < 400 && [0, 1, 2, 3].some((g) => !leaderOf(g)); i++) await new Promise((r) => setTimeout(r, 10));
    const writesBefore = storages.reduce((a, s) => a + s.writes, 0);
    await Promise.all([0, 1, 2, 3].flatMap((g) => [...Array(50).keys()].map((i) => (leaderOf(g) as RaftGroup).propose(Buffer.from(`g${g}-${i}`)))));
    const writes = storages.reduce((a, s) => a + s.writes, 0) - writesBefore;
    expect(writes).toBeLessThan(200); // 200 proposals, far fewer synced writes across 3 nodes
    for (const g of [0, 1, 2, 3]) {
      expect((leaderOf(g) as RaftGroup).status().commitIndex).toBeGreaterThanOrEqual(52);
      const b = await (groups.get(`1/${g}`) as RaftGroup).readBarrier();
      expect(b).toBeGreaterThanOrEqual(52);
    }
  } finally {
    for (const h of hosts) await h.close();
    for (const s of storages) await s.close();
    rmSync(root, { recursive: true, force: true });
  }
});
