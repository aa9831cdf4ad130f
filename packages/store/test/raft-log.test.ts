/**
 * RaftCommandLog and RaftApplier over real Raft hosts (in-process transport, LevelDB storage) and real state
 * machines: commands replicate to every replica, no-op and membership entries advance the applied
 * index exactly, removed ids are kept in the replicated state, and a node added after the log was
 * compacted is brought up by a snapshot (restore listeners told). Plus the pure snapshot codec.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LevelStorage, LocalTransportHub, RaftHost, seededRandom } from '@strata/raft';
import {
  RaftApplier, RaftCommandLog, StateDb, StateMachine, decodeImage, encodeImage, removedAfter, type ApiKeyRecord, type Command,
} from '../src';

interface Replica {
  id: number;
  dir: string;
  host: RaftHost;
  storage: LevelStorage;
  db: StateDb;
  sm: StateMachine;
  log: RaftCommandLog;
  restored: number[];
}

const hub = new LocalTransportHub();
const replicas = new Map<number, Replica>();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await sleep(10);
  }
}

async function open(id: number): Promise<Replica> {
  const dir = mkdtempSync(join(tmpdir(), `strata-raftlog-${id}-`));
  const storage = await LevelStorage.open(join(dir, 'raft'));
  const host = new RaftHost({
    nodeId: id, selfUrl: `local://${id}`, storage, transport: hub.transport(id), tickMs: 10, random: seededRandom(id),
    group: { snapshotEvery: 20, compactionMargin: 5 },
  });
  const db = await StateDb.open(join(dir, 'state'));
  const sm = await StateMachine.open(db);
  const restored: number[] = [];
  sm.onRestored((index) => restored.push(index));
  const applier = await RaftApplier.open(sm);
  const log = new RaftCommandLog(await host.openGroup(0, applier), applier);
  const r = { id, dir, host, storage, db, sm, log, restored };
  replicas.set(id, r);
  return r;
}

function key(n: number): Command {
  const record: ApiKeyRecord = {
    key_id: `k${n}`, key_hash: `h${n}`, key_prefix: 'sk_x', name: null, org_id: null, user_ids: null, role: 'read', created_at: '2026-01-01T00:00:00.000Z',
  };
  return { type: 'apikey.create', record };
}

const leader = () => [...replicas.values()].find((r) => r.log.isLeader());

afterAll(async () => {
  for (const r of replicas.values()) {
    await r.host.close();
    await r.storage.close();
    await r.db.close();
    rmSync(r.dir, { recursive: true, force: true });
  }
});

describe('snapshot image codec', () => {
  it('round-trips key/value pairs and refuses a truncated image', () => {
    const pairs: [Buffer, Buffer][] = [[Buffer.from('!meta!a'), Buffer.from('1')], [Buffer.from('k'), Buffer.alloc(0)]];
    const image = encodeImage(pairs);
    expect([...decodeImage(image)].map(([k, v]) => [k.toString(), v.toString()])).toEqual([['!meta!a', '1'], ['k', '']]);
    expect(() => [...decodeImage(image.subarray(0, image.length - 1))]).toThrow(/truncated/);
    expect(() => [...decodeImage(Buffer.from('nope'))]).toThrow(/magic/);
  });

  it('removedAfter records members that left, once', () => {
    const conf = (voters: number[], learners: number[] = []) => ({ voters, learners, addrs: {} });
    expect(removedAfter(null, conf([1, 2]), [])).toEqual([]);
    expect(removedAfter(conf([1, 2, 3]), conf([1, 3]), [])).toEqual([2]);
    expect(removedAfter(conf([1, 3], [4]), conf([1]), [2])).toEqual([2, 3, 4]);
  });
});

describe('RaftCommandLog over a 3-node group', () => {
  it('replicates commands, advances over no-op/membership entries, snapshots a new member in, records removals', async () => {
    const [a] = await Promise.all([open(1), open(2), open(3)]);
    await a.log.group.initialize([1, 2, 3].map((id) => ({ id, url: `local://${id}` })));
    await until('a leader', () => !!leader());
    const lead = leader()!;
    for (let i = 0; i < 45; i++) await lead.log.propose(key(i));
    // Followers answer NotLeader as a 503 naming the leader.
    const follower = [...replicas.values()].find((r) => r !== lead)!;
    await expect(follower.log.propose(key(999))).rejects.toMatchObject({ status: 503, code: 'no_leader', leaderId: lead.id });
    await until('every replica applied the commit index', () => [...replicas.values()].every((r) => r.sm.appliedIndex() === lead.log.status().commit_index));
    for (const r of replicas.values()) {
      expect((await r.db.auth.get('apikey\x00k44')) as ApiKeyRecord).toMatchObject({ key_id: 'k44' });
      expect(r.sm.appliedTerm()).toBe(lead.log.status().term);
    }
    // The log was compacted past the start: node 4 can only be brought in by a snapshot.
    await until('a snapshot was taken', () => lead.log.group.core.log.offset > 1);
    const d = await open(4);
    await lead.log.group.addNode(4, 'local://4');
    await until('node 4 caught up', () => d.sm.appliedIndex() === lead.sm.appliedIndex());
    expect(d.restored.length).toBeGreaterThan(0);
    expect((await d.db.auth.get('apikey\x00k0')) as ApiKeyRecord).toMatchObject({ key_id: 'k0' });
    await lead.log.propose(key(100));
    await until('node 4 applies new commands', async () => (await d.db.auth.get('apikey\x00k100')) !== undefined);
    // Removal is recorded in every replica's state (replicated), so the id can be refused later.
    const victim = [2, 3].find((id) => id !== lead.id)!;
    await lead.log.group.removeNode(victim);
    await until('removal applied on node 4', () => d.log.applier.clusterMeta().removed.includes(victim));
    expect(lead.log.applier.clusterMeta().removed).toEqual([victim]);
    expect(lead.log.applier.clusterMeta().members?.voters).not.toContain(victim);
  });
});
