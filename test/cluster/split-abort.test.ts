/**
 * A split stuck on an unreachable new group, aborted by the operator (docs/cluster.md "Aborting"), and
 * the default split point (the median of the group's users' keys). 5 real node processes on 127.0.0.1
 * with the defaults (one group), replication factor 3: the new group's voters are the leader of shard 0
 * and the two lowest other ids; those two are SIGSTOPped before the split, so the new group cannot elect
 * and the copy cannot land, while shard 0 (all five nodes) keeps a quorum. The moving users' writes are
 * refused (503 `range_moving`) until the abort, and taken at once after it, with the two nodes still
 * stopped; once they run again the new group is cleared and the split can be made again, to the end.
 */
import { randomUUID } from 'node:crypto';
import { fnv1a32, groupOfUser, rangeKey, type KeyRangeTable } from '@strata/store';
import { api, API_KEY, TestCluster, waitFor } from '../helpers/cluster';
import { runStrata } from '../helpers/cli';
import { checkExactlyOnce, startWriters, stopWritersAndCluster } from './writers';
import { rangesOf, rangesSettled, replicasCaughtUp, userRecordsOnDisk } from './ranges';

jest.setTimeout(600_000);

const write = (url: string, user: string) => api(url, 'POST', `/v1/users/${user}/streams/${randomUUID()}/events`, { content: 'probe' }, { 'idempotency-key': randomUUID() }, 30_000);

describe('abort a split in flight', () => {
  let cluster: TestCluster;
  let writing: ReturnType<typeof startWriters> | undefined;
  beforeAll(async () => {
    cluster = await TestCluster.start({
      nodes: 5,
      env: { STRATA__CLUSTER__REPLICATION_FACTOR: '3', STRATA__CLUSTER__PLACEMENT_INTERVAL_MS: '300' },
    });
  });
  afterAll(() => stopWritersAndCluster(writing, cluster));

  it('gives the moving users back to the old group while the new group is unreachable, then splits again at the median', async () => {
    await waitFor('the key ranges recorded', async () => (await rangesOf(cluster, 1)).key_ranges.recorded, 90_000, 200);
    const leader = await cluster.leader(0, undefined, 60_000);
    // the new group's voters: the leader of shard 0 (group 0), then the lowest other ids (split/driver.ts votersFor)
    const stopped = [1, 2, 3, 4, 5].filter((id) => id !== leader).slice(0, 2);
    const running = [1, 2, 3, 4, 5].filter((id) => !stopped.includes(id));
    const url = cluster.node(leader).url;
    // users whose ids differ only at the end: FNV-1a puts them close together, so the middle of the range would not halve them
    const people = Array.from({ length: 40 }, (_, i) => `person-${i}`);
    for (const p of people) expect((await write(url, p)).status).toBe(200);
    const load = startWriters(cluster, running.flatMap((id) => [id, id]), () => `abort-${randomUUID()}`);
    writing = load;
    await waitFor('writes acknowledged before the split', async () => load.writers.every((w) => w.acked.size >= 2), 120_000, 200);
    const users = [...people, ...load.writers.map((w) => w.user)];

    for (const id of stopped) cluster.signal(id, 'SIGSTOP');
    const begun = await api(url, 'POST', '/v1/cluster/groups/0/split', {});
    expect([begun.status, JSON.stringify(begun.body)]).toEqual([200, expect.any(String)]); // the body shown when it is not 200
    const point = (begun.body as { split: { point: number } }).split.point;
    const table = (await rangesOf(cluster, leader)).key_ranges;
    // the default point is the median of the group's users' keys: half of them move (keys of these ids are distinct)
    const moving = users.filter((u) => rangeKey(fnv1a32(u), table.base) >= point);
    expect(moving.length).toBe(Math.ceil(users.length / 2));
    const mover = moving[0];

    // the copy cannot land: the split stays fenced, and the moving users' writes are refused meanwhile
    await waitFor('the split fenced and stuck on the new group', async () => {
      const p = (await rangesOf(cluster, leader)).splits[0];
      // after the fence, the new group's own fence (range.receive) needs its leader: none can be elected
      if (p && (p.step === 'receiving' || p.step === 'copying') && p.error !== null) return true;
      throw new Error(`progress: ${JSON.stringify(p ?? null)}`);
    }, 120_000, 500);
    const refused = await write(url, mover);
    expect([refused.status, (refused.body as { code?: string }).code]).toEqual([503, 'range_moving']);

    // bad input: each a 4xx with the envelope
    const bad = [
      await api(url, 'POST', '/v1/cluster/groups/7/split/abort', {}),
      await api(url, 'POST', '/v1/cluster/groups/x/split/abort', {}),
      await api(url, 'POST', '/v1/cluster/groups/0/merge/abort', {}),
      await api(url, 'POST', '/v1/cluster/groups/0/split/abort', {}, { 'x-api-key': 'wrong' }),
    ];
    expect(bad.map((r) => [r.status, typeof (r.body as { error?: unknown }).error, (r.body as { code?: string }).code])).toEqual([
      [404, 'string', 'not_found'], [400, 'string', 'invalid_id'], [404, 'string', 'not_found'], [401, 'string', 'unauthenticated'],
    ]);

    // the abort, by the CLI, through a node that does not lead shard 0 (forwarded there)
    const cli = await runStrata(['cluster', 'split', '0', '--abort'], { STRATA_URL: cluster.node(running.find((id) => id !== leader)!).url, STRATA_API_KEY: API_KEY });
    expect([cli.code, cli.stderr]).toEqual([0, '']);
    expect(cli.stdout).toMatch(new RegExp(`split of shard 0 at ${point} aborted \\(aborted\\)`));
    // the moving users' writes are taken again while the new group is still unreachable
    await waitFor('a moving user writable again', async () => (await write(url, mover)).status === 200, 60_000, 500);
    const status = (await rangesOf(cluster, leader)).key_ranges;
    expect([status.ranges.length, status.splits.length, status.aborting.length]).toEqual([1, 0, 1]);
    const again = await api(url, 'POST', '/v1/cluster/groups/0/split/abort', {});
    expect([again.status, (again.body as { status: string }).status]).toEqual([200, 'already_aborted']);
    // the new group's id stays claimed, and the group is not split again, until it is cleared
    const busy = await api(url, 'POST', '/v1/cluster/groups/0/split', {});
    expect([busy.status, (busy.body as { code?: string }).code]).toEqual([409, 'conflict']);

    for (const id of stopped) cluster.signal(id, 'SIGCONT');
    await rangesSettled(cluster, 1, 240_000);

    // the split again, to its end
    const second = await api(url, 'POST', '/v1/cluster/groups/0/split', {});
    expect(second.status).toBe(200);
    expect((second.body as { split: { new_group: number } }).split.new_group).toBe(1);
    const done = await rangesSettled(cluster, 2, 300_000);
    const before = load.writers.reduce((n, w) => n + w.acked.size, 0);
    await waitFor('writes acknowledged after the split', async () => load.writers.reduce((n, w) => n + w.acked.size, 0) >= before + 12, 120_000, 200);
    await load.stop();
    await replicasCaughtUp(cluster);
    const final: KeyRangeTable = { base: done.key_ranges.base, ranges: done.key_ranges.ranges };
    for (const w of load.writers) {
      const node = cluster.live()[Math.floor(Math.random() * cluster.live().length)];
      expect(await checkExactlyOnce(node.url, [w])).toEqual([]);
      for (const n of cluster.live()) expect(await checkExactlyOnce(n.url, [w], '&consistency=linearizable')).toEqual([]);
    }
    const acked = load.writers.reduce((n, w) => n + w.acked.size, 0);
    process.stdout.write(`split abort: ${acked} writes acknowledged, ${moving.length} of ${users.length} users in the moving half, new group's voters stopped: ${stopped.join(', ')}\n`);

    // on disk: each writer's records in its own group only, on every voter of the new group
    const voters = done.placement.groups.find((g) => g.group_id === 1)!.voters;
    for (const id of running.concat(stopped)) await cluster.kill(id, 'SIGTERM');
    for (const id of voters) {
      for (const w of load.writers) {
        const own = groupOfUser(final, w.user);
        expect([id, w.user, await userRecordsOnDisk(cluster.node(id).dataDir, 1 - own, w.user)]).toEqual([id, w.user, 0]);
      }
    }
  });
});
