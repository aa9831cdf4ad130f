/**
 * The group the replica-drop tests (replica-drop, replica-files) drop node 3 from: real Raft (RaftHost over
 * LevelStorage, in one process) over Strata's state machine on LevelDB. Before each test, nodes 1-3 hold
 * 30 writes, node 3 has applied them all and does not lead, and node 4 is open but not yet a member:
 * replace3 puts it in node 3's place.
 *
 * Call it inside a describe: it registers that block's beforeEach and afterEach.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { LevelStorage, LocalTransportHub, RaftHost, type RaftGroup } from '@strata/raft';
import { RaftApplier, StateDb, StateMachine } from '@strata/store';

export interface Replica {
  host: RaftHost;
  storage: LevelStorage;
  db: StateDb;
  applier: RaftApplier;
  group: RaftGroup;
}

export interface ReplicaGroupOptions {
  /** the group's id */
  group: number;
  /** the name each test's temporary directory starts with */
  tmpPrefix: string;
  /** where a node keeps the group's state, given its home: replica-files needs the node's own layout (replicaDir), whose directory the drop deletes */
  stateDir: (home: string) => string;
}

export function replicaGroup({ group: G, tmpPrefix, stateDir }: ReplicaGroupOptions) {
  let root: string;
  let hub: LocalTransportHub;
  const nodes = new Map<number, Replica>();
  const n = (id: number) => nodes.get(id)!;
  const home = (id: number) => join(root, `n${id}`);

  async function open(id: number): Promise<void> {
    const storage = await LevelStorage.open(join(home(id), 'raft'));
    const host = new RaftHost({ nodeId: id, selfUrl: `local://${id}`, storage, transport: hub.transport(id), tickMs: 10, group: { snapshotEvery: 15, compactionMargin: 5 } });
    const state = stateDir(home(id));
    // the directory made first, as the node's openShard does
    mkdirSync(dirname(state), { recursive: true });
    const db = await StateDb.open(state);
    const applier = await RaftApplier.open(await StateMachine.open(db));
    nodes.set(id, { host, storage, db, applier, group: await host.openGroup(G, applier) });
  }
  async function close(id: number): Promise<void> {
    await n(id).host.close();
    await n(id).storage.close();
    await n(id).db.close();
    nodes.delete(id);
  }
  const leader = () => [...nodes.values()].find((x) => x.group.isLeader())?.group;
  async function until(what: string, check: () => boolean): Promise<void> {
    for (let i = 0; i < 3000; i++) {
      if (check()) return;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`timed out waiting for ${what}`);
  }
  const write = async (user: string) => {
    await until('a leader', () => leader() !== undefined);
    await leader()!.propose(Buffer.from(JSON.stringify({ type: 'user.set_org', user_id: user, org_id: 'o', mode: 'set', at: '2024-01-01T00:00:00.000Z' })));
  };
  const userCount = async (id: number) => (await n(id).db.userOrgs.keys().all()).length;

  /** Node 4 takes node 3's place; returns the index of 3's removal. */
  async function replace3(): Promise<number> {
    await leader()!.addLearner(4, 'local://4');
    await until('node 4 caught up', () => leader()!.caughtUp(4));
    await leader()!.promoteLearner(4);
    return leader()!.removeNode(3);
  }

  beforeEach(async () => {
    root = mkdtempSync(join(tmpdir(), tmpPrefix));
    hub = new LocalTransportHub();
    for (const id of [1, 2, 3, 4]) await open(id);
    await n(1).group.initialize([1, 2, 3].map((id) => ({ id, url: `local://${id}` })));
    for (let i = 0; i < 30; i++) await write(`u${i}`);
    await until('node 3 applied every write', () => n(3).applier.appliedIndex() === leader()!.status().commitIndex);
    if (n(3).group.isLeader()) await n(3).group.transferLeadership(1);
    await until('a leader other than 3', () => leader() !== undefined && leader() !== n(3).group);
  });
  afterEach(async () => {
    for (const id of [...nodes.keys()]) await close(id);
    rmSync(root, { recursive: true, force: true });
  });

  return { nodes, n, home, open, close, leader, until, write, userCount, replace3 };
}
