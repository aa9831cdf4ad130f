/**
 * SIGKILL of the leader while writers run through every node: a new leader is elected, writes go on,
 * and after the old leader restarts every acknowledged event is on every node exactly once.
 */
import { TestCluster, sleep, waitFor } from '../helpers/cluster';
import { checkExactlyOnce, startWriters } from './writers';

// Jest's timer is a backstop against a hang (jest.config.js), not a limit on work: a node started in a
// test may take up to START_LIMITS' 120 s of wall time on a busy machine, and each wait has its own
// bound. At 60 s the backstop fired mid-test at load ~28, naming no step (issue 25).
jest.setTimeout(300_000);

describe('leader SIGKILL under load', () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await TestCluster.start({ nodes: 3 });
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('elects a new leader and loses no acknowledged write', async () => {
    const old = await cluster.leader(0);
    const load = startWriters(cluster, [1, 2, 3]);
    await waitFor('writes acknowledged before the kill', async () => load.writers.every((w) => w.acked.size >= 5));
    await cluster.kill(old, 'SIGKILL');
    const survivors = cluster.live().map((n) => n.id);
    const fresh = await cluster.leader(0, survivors, 10_000);
    expect(fresh).not.toBe(old);
    const before = load.writers.map((w) => w.acked.size);
    await waitFor('writes acknowledged under the new leader', async () => load.writers.every((w, i) => w.acked.size >= before[i] + 5));
    await cluster.startNode(old);
    await sleep(300);
    await load.stop();
    expect(load.writers.reduce((n, w) => n + w.acked.size, 0)).toBeGreaterThan(30);
    for (const node of cluster.live()) {
      await waitFor(`node ${node.id} holds every acknowledged event exactly once`, async () => (await checkExactlyOnce(node.url, load.writers)).length === 0, 15_000)
        .catch(async (err) => {
          throw new Error(`${(err as Error).message}\n${(await checkExactlyOnce(node.url, load.writers)).slice(0, 10).join('\n')}`);
        });
    }
  });
});
