/**
 * A node that joins after the log was compacted comes in by a Raft snapshot, streamed in chunks from
 * the leader's snapshot file to the new node's receiving file (issue 13, item 4b). Three real node
 * processes snapshot every 20 entries and keep no log behind a snapshot; a fourth joins, installs the
 * state, and holds every acknowledged write exactly once, also after a restart. Its snapshot image is
 * a file in its data directory and nothing half-received is left.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { TestCluster, waitFor } from '../helpers/cluster';
import { scrape } from '../helpers/prometheus';
import { checkExactlyOnce, startWriters } from './writers';

// Jest's timer is a backstop against a hang (jest.config.js), not a limit on work: a node started in a
// test may take up to START_LIMITS' 120 s of wall time on a busy machine, and each wait has its own
// bound. At 60 s the backstop fired mid-test at load ~28, naming no step (issue 25).
jest.setTimeout(300_000);

describe('a node joining after compaction', () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await TestCluster.start({ nodes: 3, env: { STRATA__RAFT__SNAPSHOT_EVERY: '20', STRATA__RAFT__COMPACTION_MARGIN: '0' } });
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('is brought up by a snapshot and holds every acknowledged write exactly once, also after a restart', async () => {
    await cluster.leader(0);
    const load = startWriters(cluster, [1, 2, 3]);
    await waitFor('60 writes acknowledged', async () => load.writers.every((w) => w.acked.size >= 20), 40_000);
    await load.stop();

    const joined = await cluster.addJoiningNode(4, 2);
    await waitFor('node 4 is a voter on every node', async () => {
      for (const id of [1, 2, 3, 4]) {
        const m = (await cluster.status(id))[0].members.find((x) => x.node_id === 4);
        if (!m?.voter) return false;
      }
      return true;
    }, 40_000);
    // A node acknowledges the entries after the snapshot while it is still restoring the image (the
    // apply runs behind the log's writes), so it may be a voter a moment before the install is counted.
    await waitFor('node 4 installed a snapshot', async () => ((await scrape(joined.url)).value('strata_raft_snapshot_installs_total', { shard: '0' }) ?? 0) >= 1, 20_000);
    await waitFor('node 4 holds every acknowledged event exactly once', async () => (await checkExactlyOnce(joined.url, load.writers)).length === 0, 20_000)
      .catch(async (err) => {
        throw new Error(`${(err as Error).message}\n${(await checkExactlyOnce(joined.url, load.writers)).slice(0, 10).join('\n')}`);
      });
    const files = readdirSync(join(joined.dataDir, 'raft', 'snapshots', 'group-0'));
    expect(files.some((f) => /^\d+-\d+\.snap$/.test(f))).toBe(true);
    expect(files).not.toContain('recv.part');

    await cluster.kill(4, 'SIGKILL');
    await cluster.startNode(4);
    await waitFor('node 4 after a restart still holds every acknowledged event', async () => (await checkExactlyOnce(joined.url, load.writers)).length === 0, 20_000);
  });
});
