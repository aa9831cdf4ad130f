/**
 * The driver applies a pass's committed entries while its next pass writes: a node whose apply is slow
 * still persists and acknowledges new entries (etcd applies apart from its Raft loop the same way).
 * Three hosts with real LevelDB and the in-process transport; the followers' applies are held.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RaftHost } from '../src/driver/host';
import type { RaftGroup } from '../src/driver/group';
import type { AppliedEntry } from '../src/driver/state-machine';
import { LevelStorage } from '../src/storage/level-storage';
import { LocalTransportHub } from '../src/transport/transport';
import { ListMachine } from './mem-sm';

const until = async (cond: () => boolean, ms = 8000): Promise<void> => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 5));
  }
};

/** A list machine whose applies of commands wait while `held` (a slow disk or a heavy command). */
class HeldMachine extends ListMachine {
  held = false;
  waiting = 0;
  private release: (() => void)[] = [];

  override async apply(entries: AppliedEntry[]): Promise<unknown[]> {
    if (this.held && entries.some((e) => e.kind === 'command')) {
      this.waiting++;
      await new Promise<void>((r) => this.release.push(r));
      this.waiting--;
    }
    return super.apply(entries);
  }

  let(): void {
    this.held = false;
    for (const r of this.release.splice(0)) r();
  }
}

describe('pipelined apply', () => {
  let root: string;
  const hosts: { host: RaftHost; storage: LevelStorage; group: RaftGroup; sm: HeldMachine }[] = [];
  beforeEach(async () => {
    root = mkdtempSync(join(tmpdir(), 'raft-pipelined-'));
    const hub = new LocalTransportHub();
    for (const id of [1, 2, 3]) {
      const storage = await LevelStorage.open(join(root, `n${id}`));
      const host = new RaftHost({ nodeId: id, selfUrl: `local://${id}`, storage, transport: hub.transport(id), tickMs: 10 });
      const sm = new HeldMachine();
      hosts.push({ host, storage, group: await host.openGroup(0, sm), sm });
    }
  });
  afterEach(async () => {
    for (const h of hosts) h.sm.let();
    for (const h of hosts.splice(0)) {
      await h.host.close();
      await h.storage.close();
    }
    rmSync(root, { recursive: true, force: true });
  });

  test('followers whose apply is held still acknowledge the next entry, which commits', async () => {
    await hosts[0].group.initialize([1, 2, 3].map((id) => ({ id, url: `local://${id}` })));
    await until(() => hosts.some((h) => h.group.isLeader()));
    const leader = hosts.find((h) => h.group.isLeader()) as (typeof hosts)[number];
    const followers = hosts.filter((h) => h !== leader);
    const warm = await leader.group.propose(Buffer.from('warm-up'));
    await until(() => followers.every((f) => f.sm.applied >= warm.index));
    for (const f of followers) f.sm.held = true;

    // A commits on the followers' acknowledgements; they then start applying it, and wait there.
    const a = await leader.group.propose(Buffer.from('a'));
    await until(() => followers.every((f) => f.sm.waiting === 1));
    // B must be persisted and acknowledged by a follower whose apply of A has not returned: a driver
    // that applies before it writes the next Ready never acknowledges B, and B never commits.
    const b = await leader.group.propose(Buffer.from('b'));
    expect(b.index).toBe(a.index + 1);
    expect(leader.sm.items).toEqual(['warm-up', 'a', 'b']);
    // both persist B (one acknowledgement was enough to commit it) with their apply of A still held
    const persisted = (f: (typeof hosts)[number]) => f.group.status().members.find((m) => m.id === f.host.nodeId)?.matchIndex ?? 0;
    await until(() => followers.every((f) => persisted(f) >= b.index));
    for (const f of followers) expect(f.sm.items).toEqual(['warm-up']);

    // Released, the followers apply A, then B, in order, and reach the leader's state.
    for (const f of followers) f.sm.let();
    await until(() => followers.every((f) => f.sm.applied >= b.index));
    for (const f of followers) expect(f.sm.items).toEqual(leader.sm.items);
  });

  test('a read barrier on a follower waits for the apply in flight', async () => {
    await hosts[0].group.initialize([1, 2, 3].map((id) => ({ id, url: `local://${id}` })));
    await until(() => hosts.some((h) => h.group.isLeader()));
    const leader = hosts.find((h) => h.group.isLeader()) as (typeof hosts)[number];
    const follower = hosts.find((h) => h !== leader) as (typeof hosts)[number];
    follower.sm.held = true;
    await leader.group.propose(Buffer.from('a'));
    await until(() => follower.sm.waiting === 1);
    let read: number | null = null;
    const barrier = follower.group.readBarrier().then((i) => (read = i));
    // the barrier's index is confirmed by the leader, but this follower has not applied it yet
    await new Promise((r) => setTimeout(r, 200));
    expect(read).toBeNull();
    follower.sm.let();
    await barrier;
    expect(follower.sm.items).toEqual(['a']);
    expect(read).toBeLessThanOrEqual(follower.sm.applied);
  });
});
