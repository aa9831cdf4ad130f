/**
 * Initializing a group on a node that has been running for longer than an election timeout: the tick
 * that follows the bootstrap entry may already have made a single voter its leader by the time the
 * entry is on disk, and initialize() must neither throw nor campaign again (issue: `strata cluster
 * init` answered 500 "leader cannot become pre-candidate" when called seconds after start).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RaftHost } from '../src/driver/host';
import type { RaftGroup } from '../src/driver/group';
import { LevelStorage } from '../src/storage/level-storage';
import { LocalTransportHub } from '../src/transport/transport';
import { Cluster } from './harness';
import { ListMachine } from './mem-sm';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('campaign() on a leader is a no-op (etcd ignores MsgHup on a leader)', () => {
  const c = new Cluster([1]);
  c.tickAll(25);
  const n = c.node(1);
  expect(n.role).toBe('leader');
  const term = n.term;
  expect(() => n.campaign()).not.toThrow();
  expect(n.role).toBe('leader');
  expect(n.term).toBe(term);
});

test('initialize after the election timeout has long elapsed: no throw, idempotent, one leader per group', async () => {
  const root = mkdtempSync(join(tmpdir(), 'raft-init-race-'));
  const storage = await LevelStorage.open(join(root, 'n1'));
  const host = new RaftHost({ nodeId: 1, selfUrl: 'local://1', storage, transport: new LocalTransportHub().transport(1), tickMs: 2 });
  try {
    const groups: RaftGroup[] = [];
    for (let g = 0; g < 16; g++) groups.push(await host.openGroup(g, new ListMachine()));
    // the timers run while the groups have no members: each election timer is far past its timeout
    await sleep(200);
    const members = [{ id: 1, url: 'local://1' }];
    // one at a time, as ClusterRuntime.initialize does: each waits for its bootstrap entry to be synced
    // while the host keeps ticking, which is when a single voter elects itself
    for (const g of groups) expect(await g.initialize(members)).toBe('initialized');
    for (const g of groups) expect(await g.initialize(members)).toBe('already_initialized');
    const end = Date.now() + 5000;
    while (groups.some((g) => !g.isLeader()) && Date.now() < end) await sleep(5);
    expect(groups.every((g) => g.isLeader())).toBe(true);
  } finally {
    await host.close();
    await storage.close();
    rmSync(root, { recursive: true, force: true });
  }
});
