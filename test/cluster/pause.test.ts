/**
 * SIGSTOP of the leader: the others elect a new one and keep serving; on SIGCONT the old leader
 * steps down, and no linearizable read it answers misses a write acknowledged by the new leader.
 */
import { api, listEvents, newStream, TestCluster, waitFor, writeEvent } from '../helpers/cluster';

jest.setTimeout(60_000);

describe('leader SIGSTOP / SIGCONT', () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await TestCluster.start({ nodes: 3 });
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('elects around a paused leader, which steps down on resume and serves no stale linearizable read', async () => {
    const old = await cluster.leader(0);
    const others = cluster.live().map((n) => n.id).filter((id) => id !== old);
    const stream = newStream();
    expect(await writeEvent(() => cluster.node(old).url, 'dora', stream, 'before the pause')).not.toBeNull();
    cluster.signal(old, 'SIGSTOP');
    const fresh = await cluster.leader(0, others, 10_000);
    expect(fresh).not.toBe(old);
    expect(await writeEvent(() => cluster.node(fresh).url, 'dora', stream, 'while paused')).not.toBeNull();
    cluster.signal(old, 'SIGCONT');
    // Right after resuming, the old leader still believes it leads: a linearizable read must either
    // fail (503) or include the write the new leader acknowledged; never answer the stale state.
    let answered = 0;
    for (let i = 0; i < 20; i++) {
      const r = await api(cluster.node(old).url, 'GET', `/v1/users/dora/streams/${stream}/events?consistency=linearizable`, undefined, {}, 10_000);
      if (r.status === 200) {
        answered++;
        expect((r.body.events as { content: string }[]).map((e) => e.content)).toEqual(['before the pause', 'while paused']);
      } else {
        expect(r.status).toBe(503);
        expect(r.body.code).toBe('no_leader');
      }
    }
    await waitFor('the old leader follows the new one', async () => {
      const s = (await cluster.status(old))[0];
      return s.role === 'follower' && s.leader === fresh;
    }, 10_000);
    const after = await listEvents(cluster.node(old).url, 'dora', stream, '&consistency=linearizable');
    expect(after.map((e) => e.content)).toEqual(['before the pause', 'while paused']);
    expect(answered + 1).toBeGreaterThan(0);
  });
});
