/**
 * A dropped replica's files (docs/cluster.md "Disk reclaimed"): the group closes on the node and its
 * directory, log and snapshot files are deleted (cluster/replica-drop.ts deleteReplica), and it stays
 * closed, also across a restart, until the placement names the node for the group again (staysClosed,
 * keepClosed). A crash in the middle leaves either the log (the state is rebuilt from it at the restart,
 * and the drop asked again deletes it all) or nothing (the group stays closed): never part of a state.
 * Real Raft groups (RaftHost over LevelStorage, in one process) over Strata's state machine on LevelDB.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { LevelStorage } from '@strata/raft';
import type { GroupPlacementRecord } from '@strata/store';
import {
  blankView, deleteReplica, keepClosed, namedFor, ReplicaDrops, replicaDir, replicaView, staysClosed, sweepSetAside,
} from '../../src/cluster/replica-drop';
import { replicaGroup } from './replica-group';

describe('which groups stay closed (pure)', () => {
  const blank = { blank: true, removedAt: 40 };
  it('only a replica with nothing in its log, dropped here (or on a node removed from the cluster), and not named for the group', () => {
    expect(staysClosed(blank, { named: false, removedFromCluster: false })).toBe(true);
    // named again: it opens, blank, and catches up from the leader that added it
    expect(staysClosed(blank, { named: true, removedFromCluster: false })).toBe(false);
    // anything in its log: opened (a drop a crash interrupted before the log went; the drop asked again wipes it)
    expect(staysClosed({ blank: false, removedAt: 40 }, { named: false, removedFromCluster: false })).toBe(false);
    // never held here (no removal mark): opened as every group is, unless the node left the cluster
    expect(staysClosed({ blank: true, removedAt: 0 }, { named: false, removedFromCluster: false })).toBe(false);
    expect(staysClosed({ blank: true, removedAt: 0 }, { named: false, removedFromCluster: true })).toBe(true);
  });
  it('a node is named for a group as a voter, a learner, or the target of its move', () => {
    const rec = (r: Partial<GroupPlacementRecord>): GroupPlacementRecord => ({ group_id: 2, voters: [1, 2, 4], learners: [], leader: 1, move: null, ...r });
    expect([namedFor(rec({}), 3), namedFor(rec({ learners: [3] }), 3), namedFor(rec({ move: { to: 3, from: 4, reason: 'balance' } }), 3), namedFor(rec({}), 4), namedFor(null, 3)])
      .toEqual([false, true, true, true, false]);
  });
});

describe('on real replicas', () => {
  const G = 3;
  const { nodes, n, home, open, leader, until, write, userCount, replace3 } = replicaGroup({
    group: G, tmpPrefix: 'replica-files-', stateDir: (nodeHome) => join(replicaDir(nodeHome, G), 'state'),
  });
  const dir = (id: number) => replicaDir(home(id), G);

  /**
   * What a node's start does with the group (node.ts): what drops left set aside goes, then the group
   * stays closed (keepClosed) or is opened. Returns whether it was opened.
   */
  async function restart(id: number, named = false): Promise<boolean> {
    await sweepSetAside(home(id));
    const storage = await LevelStorage.open(join(home(id), 'raft'));
    const closed = await keepClosed(dir(id), await storage.inspect(G), { named, removedFromCluster: false });
    await storage.close();
    if (!closed) await open(id);
    return !closed;
  }

  /** A stop of the process at that point of the drop (nothing after it runs; the node is then stopped). */
  class Crash extends Error {}
  /**
   * Node 3's drop as node.ts runs it (the decision, then deleteReplica), a crash at `crash`; the node is
   * stopped afterwards (its storage closed, as a process that ends).
   */
  async function drop3(removedAt: number, crash?: 'after_set_aside' | 'after_log'): Promise<string> {
    const drops = new ReplicaDrops({
      // as ClusterService's: a group not open here is asked about by what its storage holds
      view: async (g) => {
        if (nodes.has(3)) return replicaView(3, n(3).group, n(3).applier);
        const storage = await LevelStorage.open(join(home(3), 'raft'));
        const { blank } = await storage.inspect(g);
        await storage.close();
        if (!blank) throw new Error('not open, and its storage holds a log');
        return blankView(3);
      },
      wipe: () => deleteReplica({
        dir: dir(3),
        removeGroup: async (beforeStorage) => {
          await n(3).host.removeGroup(G, {
            removedAt,
            beforeStorage: async () => {
              await beforeStorage();
              if (crash === 'after_set_aside') throw new Crash();
            },
          });
          if (crash === 'after_log') throw new Crash();
        },
        closeState: () => n(3).db.close(),
      }),
    });
    try {
      return (await drops.drop(G, removedAt)).status;
    } catch (err) {
      if (!(err instanceof Crash)) throw err;
      return 'crashed';
    } finally {
      if (nodes.has(3)) {
        await n(3).host.close();
        await n(3).storage.close();
        nodes.delete(3); // its state is closed by the drop
      }
    }
  }

  it('deletes the replica\'s directory, log and snapshots; it stays closed across a restart, and opens blank once named again, to be added back from nothing', async () => {
    const removedAt = await replace3();
    expect(await userCount(3)).toBe(30);
    expect(await drop3(removedAt)).toBe('dropped');
    expect(readdirSync(home(3))).toEqual(['raft']);
    const storage = await LevelStorage.open(join(home(3), 'raft'));
    // nothing but the removal's index is left of it (a blank replica opened again has no say until its log passes it)
    expect(await storage.inspect(G)).toEqual({ blank: true, removedAt });
    expect(existsSync(storage.snapshots.dir(G))).toBe(false);
    await storage.close();

    for (let i = 30; i < 40; i++) await write(`u${i}`);
    // a restart does not open it again, nor make its directory
    expect(await restart(3)).toBe(false);
    expect(readdirSync(home(3))).toEqual(['raft']);
    // named for the group again (a learner, as the placement records it): it opens blank and is caught up
    expect(await restart(3, true)).toBe(true);
    expect(await userCount(3)).toBe(0);
    await leader()!.addLearner(3, 'local://3');
    await until('node 3 caught up', () => leader()!.caughtUp(3));
    await until('node 3 applied every write', () => n(3).applier.appliedIndex() === leader()!.status().commitIndex);
    expect(await userCount(3)).toBe(40);
  });

  it('a crash once the directory is set aside: the restart rebuilds the whole state from the log, and the drop asked again deletes it all', async () => {
    const removedAt = await replace3();
    expect(await drop3(removedAt, 'after_set_aside')).toBe('crashed');
    expect(existsSync(dir(3))).toBe(false);
    expect(readdirSync(home(3)).filter((f) => f.startsWith('shard-3.dropped-'))).toHaveLength(1);
    // the log is all there: the group opens, its state rebuilt from the snapshot and the log (not part of it)
    expect(await restart(3)).toBe(true);
    expect(readdirSync(home(3)).sort()).toEqual(['raft', 'shard-3']);
    await until('node 3 rebuilt its state', () => n(3).applier.appliedIndex() >= n(3).group.status().commitIndex && n(3).applier.appliedIndex() > 0);
    expect(await userCount(3)).toBe(30);
    // the placement loop asks again (the drop was never answered): it is deleted
    expect(await drop3(removedAt)).toBe('dropped');
    expect(readdirSync(home(3))).toEqual(['raft']);
    expect(await restart(3)).toBe(false);
  });

  it('a crash once the log is deleted: the restart deletes what was set aside and keeps the group closed; asked again, the drop is done', async () => {
    const removedAt = await replace3();
    expect(await drop3(removedAt, 'after_log')).toBe('crashed');
    expect(readdirSync(home(3)).filter((f) => f.startsWith('shard-3.dropped-'))).toHaveLength(1);
    expect(await restart(3)).toBe(false);
    expect(readdirSync(home(3))).toEqual(['raft']);
    // the drop asked of a group not open here: nothing is held (its storage is blank)
    expect(await drop3(removedAt)).toBe('dropped');
    expect(readdirSync(home(3))).toEqual(['raft']);
    // the group lost nothing
    for (let i = 30; i < 35; i++) await write(`u${i}`);
    await until('node 4 applied every write', () => n(4).applier.appliedIndex() === leader()!.status().commitIndex);
    expect(await userCount(4)).toBe(35);
  });
});
