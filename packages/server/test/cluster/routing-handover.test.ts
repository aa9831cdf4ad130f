/**
 * A write whose group changes while it waits (docs/cluster.md "Merging two groups", "Removing a retired
 * group"): the routing of a node whose replica of a group was removed, over a real Raft runtime and
 * real LevelDB, and the forwarder sending a write to the group that owns its user now.
 *
 * Found by test/cluster/merge-failover.test.ts (a write answered 500, `Error: no shard 1` at
 * GroupRouting.isLeader under Forwarder.leaderOf): the write reached node 2 before the merge committed,
 * so for group 1; group 1's leader refused it (not stored: its directory named group 0 by then), node 2
 * asked group 1's leader again and again, and group 1 was removed from node 2 meanwhile.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Request, Response } from 'express';
import pino from 'pino';
import { NotStoredError, StateDb, StateMachine, StrataError } from '@strata/store';
import { loadConfig } from '../../src/config';
import { ClusterRuntime } from '../../src/cluster/runtime';
import { GroupRouting } from '../../src/cluster/placement/routing';
import { PlacementDirectory } from '../../src/cluster/placement/directory';
import { Forwarder, type LeaderView } from '../../src/cluster/forward';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'strata-routing-handover-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A write as the forwarder sees it (a JSON body already read: it could be sent again). */
function write(): { req: Request; res: Response } {
  const req = { method: 'POST', originalUrl: '/v1/users/u/streams/s/events', headers: {}, body: { content: 'x' } } as unknown as Request;
  const res = { headersSent: false, setHeader: () => undefined } as unknown as Response;
  return { req, res };
}

async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 2000 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
}

test('a group removed from this node is not led, not held and has no leader here, and a write still aimed at it is a 503, not a 500', async () => {
  const config = loadConfig({ env: { STRATA_DATA_DIR: join(dir, 'node'), STRATA_CLUSTER_SECRET: 'routing-handover-secret-0123456789' } });
  const rt = await ClusterRuntime.open(config, 'http://127.0.0.1:1', pino({ level: 'silent' }));
  const dbs: StateDb[] = [];
  try {
    const open = async (id: number) => {
      mkdirSync(join(dir, 'node', `shard-${id}`), { recursive: true });
      const db = await StateDb.open(join(dir, 'node', `shard-${id}`, 'state'));
      dbs.push(db);
      const sm = await StateMachine.open(db);
      await rt.openShard(id, sm);
      return { db, sm };
    };
    const meta = await open(0);
    await open(1);
    // a cluster of one: this node leads both groups
    for (const id of [0, 1]) await rt.group(id).initialize([{ id: config.cluster.node_id, url: rt.selfUrl }]);
    await until(() => rt.group(0).isLeader() && rt.group(1).isLeader());
    const routing = new GroupRouting(rt, await PlacementDirectory.open(meta, rt.initialPlacement()));
    expect([routing.isLeader(1), routing.holds(1), routing.leaderId(1)]).toEqual([true, true, config.cluster.node_id]);

    await rt.removeShard(1); // a retired group removed (cluster.remove_group applied in shard 0)
    expect([routing.isLeader(1), routing.holds(1), routing.leaderId(1)]).toEqual([false, false, null]);
    expect([routing.isLeader(0), routing.holds(0)]).toEqual([true, true]);

    // a write that named group 1 when it arrived: no leader to be found for it, answered 503 no_leader
    const forwarder = new Forwarder({ view: routing, timeoutMs: 300, pollMs: 10 });
    const { req, res } = write();
    let ran = false;
    const answer = await forwarder.route(1, req, res, async () => void (ran = true)).then(() => null, (err: unknown) => err);
    expect(answer).toBeInstanceOf(StrataError);
    expect([(answer as StrataError).status, (answer as StrataError).code, ran]).toEqual([503, 'no_leader', false]);
  } finally {
    await rt.close();
    for (const db of dbs) await db.close();
  }
});

describe('a write whose user is handed to another group while it waits', () => {
  let peer: Server;
  let peerUrl: string;
  let merged = false;
  let asked = 0;
  beforeAll(async () => {
    // node 3, the leader of group 1, whose directory already routes the user to group 0, which it does
    // not lead: it refuses the forwarded write without storing it (Forwarder.route's hop rule)
    peer = createServer((req, res) => {
      asked++;
      merged = true;
      req.resume();
      if (asked > 1) {
        // asked again: the forwarder stayed with the old group (it would until its deadline); a final answer ends the request
        res.writeHead(409, { 'content-type': 'application/json' });
        return void res.end(JSON.stringify({ error: 'asked the old group again', code: 'conflict' }));
      }
      res.writeHead(503, { 'content-type': 'application/json', [NotStoredError.HEADER]: '1', 'retry-after': '1' });
      res.end(JSON.stringify({ error: 'This node no longer leads shard 0; the write was not run (not stored); retry.', code: 'no_leader' }));
    });
    await new Promise<void>((resolve) => peer.listen(0, '127.0.0.1', resolve));
    peerUrl = `http://127.0.0.1:${(peer.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => peer.close(() => resolve())));

  it('goes to the group that owns the user now (this node leads it), instead of asking the old group until the deadline', async () => {
    // node 2: leads group 0 (where the merge moved the user), follows group 1 (led by node 3)
    const view: LeaderView = {
      nodeId: 2,
      isLeader: (shard) => shard === 0,
      leaderId: (shard) => (shard === 0 ? 2 : 3),
      urlOf: (id) => (id === 3 ? peerUrl : null),
      holds: () => true,
    };
    // a deadline far off: the outcome never depends on how fast this machine is
    const forwarder = new Forwarder({ view, timeoutMs: 60_000, pollMs: 10 });
    const { req, res } = write();
    let ran = 0;
    const answer = await forwarder.route(() => (merged ? 0 : 1), req, res, async () => void ran++).then(() => 'ok', (err: unknown) => err);
    expect([answer, ran, asked]).toEqual(['ok', 1, 1]);
  });
});
