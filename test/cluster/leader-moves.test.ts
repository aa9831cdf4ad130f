/**
 * A planned leadership move is not a client error: a write refused or dropped because leadership moved
 * before it committed (nothing stored) is run again by the node on the new leader, within
 * cluster.forward_timeout_ms, instead of answering 503 "not stored; retry" (docs/cluster.md "Behind a
 * load balancer"). Writers send each write once, through every node, while the leadership of the
 * shard is handed from node to node (the placement loop's transfer step, signed as the loop signs it).
 */
import { randomUUID } from 'node:crypto';
import { PeerSigner } from '../../packages/server/src/cluster/peer-auth';
import { api, newStream, SECRET, sleep, TestCluster, waitFor } from '../helpers/cluster';
import { checkExactlyOnce, type Writer } from './writers';

jest.setTimeout(120_000);

describe('leadership moves under writes', () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await TestCluster.start({ nodes: 3, env: { STRATA__CLUSTER__FORWARD_TIMEOUT_MS: '5000' } });
    await cluster.leader(0);
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('writes sent once each see no "not stored" 503 across repeated transfers, and land exactly once', async () => {
    const signer = new PeerSigner(SECRET, 99, 60_000);
    let running = true;
    const failures: string[] = [];
    const writers: Writer[] = [];
    let sent = 0;
    const loops = [1, 2, 3, 1, 2, 3].map(async (via, i) => {
      const w: Writer = { user: `mover-${i}`, stream: newStream(), acked: new Map(), unknown: [] };
      writers.push(w);
      for (let n = 0; running; n++) {
        const content = `${w.user} #${n}`;
        sent++;
        const r = await api(cluster.node(via).url, 'POST', `/v1/users/${w.user}/streams/${w.stream}/events`, { content }, { 'idempotency-key': randomUUID() }, 15_000)
          .catch((err: Error) => ({ status: 0, body: { error: err.message } as Record<string, unknown> }));
        if (r.status === 200) w.acked.set(content, (r.body as { event_id: string }).event_id);
        else {
          w.unknown.push(content);
          failures.push(`${r.status} ${String(r.body.error)}`);
        }
      }
    });
    let transfers = 0;
    try {
      await sleep(500);
      for (let round = 0; round < 8 || (transfers < 6 && round < 16); round++) {
        const from = await cluster.leader(0);
        const to = (from % 3) + 1;
        const path = '/v1/cluster/groups/0/steps';
        const body = { kind: 'transfer_leader', node: to, url: cluster.node(to).url };
        const r = await api(cluster.node(from).url, 'POST', path, body, { ...signer.sign(from, 'POST', path, body), 'x-api-key': '' }, 15_000);
        // a transfer that did not complete in time (409) leaves the leadership where it is
        if (r.status === 200) {
          transfers++;
          await waitFor(`node ${to} leads`, async () => (await cluster.leader(0)) === to, 15_000);
        }
        await sleep(400);
      }
    } finally {
      running = false;
      await Promise.all(loops);
    }
    expect(transfers).toBeGreaterThanOrEqual(6);
    expect(sent).toBeGreaterThan(100);
    expect(failures.filter((f) => f.includes('not stored'))).toEqual([]);
    expect(failures).toEqual([]);
    // a linearizable listing meeting a leadership move answers 503: read again
    for (const node of cluster.live()) expect(await waitFor(`node ${node.id} read`, () => checkExactlyOnce(node.url, writers, '&consistency=linearizable'), 60_000, 500)).toEqual([]);
  });
});
