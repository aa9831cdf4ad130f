/**
 * Snapshot transfer in the pure core (in-memory disks of the harness): the image never enters the
 * core (a leader's Snap messages leave without bytes, a follower hands each received chunk to the
 * driver at once), a transfer interrupted by a follower restart resumes where its disk stopped, and one
 * interrupted by a leader change starts over with the new leader's snapshot. Every case ends with the
 * same state on every node.
 */
import { RawNode } from '../src/core/raft';
import { MsgType, emptyInitialState, type Message, type Ready, type SnapWrite } from '../src/core/types';
import type { SimDisk } from '../src/sim/node';
import { Cluster, enc } from './harness';

const CHUNK = 16;

/** Bytes of Uint8Arrays reachable from a core outside its log (and the log entries its Apps carry). */
function bytesHeldOutsideLog(n: RawNode): number {
  const seen = new Set<object>();
  let bytes = 0;
  const walk = (v: unknown, top: boolean) => {
    if (v === null || typeof v !== 'object' || seen.has(v)) return;
    seen.add(v);
    if (v instanceof Uint8Array) {
      bytes += v.byteLength;
      return;
    }
    for (const [k, x] of Object.entries(v)) if (!(top && (k === 'log' || k === 'msgs'))) walk(x, false);
  };
  walk(n, true);
  return bytes;
}

/** Watches every Ready a node hands out (the node object is replaced on restart: call again). */
function watchReadies(n: RawNode, seen: (r: Ready) => void): void {
  const ready = n.ready.bind(n);
  n.ready = () => {
    const r = ready();
    seen(r);
    return r;
  };
}

/** Node 3 falls behind while node 1 (leader) commits `n` entries and compacts its log. */
function lagging(n: number): Cluster {
  const c = new Cluster([1, 2, 3], { snapshotChunkSize: CHUNK });
  c.elect(1);
  c.isolate(3);
  for (let i = 0; i < n; i++) c.node(1).propose(enc(`entry-${i}`));
  c.stabilize();
  c.tickAll(1);
  return c;
}

const disk = (c: Cluster, id: number) => c.disks.get(id) as SimDisk;

describe('snapshot transfer in chunks', () => {
  test('a far-behind follower catches up by a snapshot of many chunks; no more than one chunk of it is ever held by a core', () => {
    const c = lagging(40);
    const snap = c.snapshot(1);
    expect(Object.keys(snap).sort()).toEqual(['meta', 'size']);
    expect(snap.size).toBeGreaterThan(10 * CHUNK);
    const writes: SnapWrite[] = [];
    for (const id of [1, 2, 3]) {
      watchReadies(c.node(id), (r) => {
        for (const m of r.messages) {
          if (m.type !== MsgType.Snap) continue;
          expect(m.snap?.data).toBeUndefined(); // the driver reads the bytes from its file when it sends
          expect(m.snap?.length).toBeLessThanOrEqual(CHUNK);
        }
        expect(r.snapshotChunks.reduce((s, w) => s + w.data.byteLength, 0)).toBeLessThanOrEqual(CHUNK);
        if (r.snapshot) expect(Object.keys(r.snapshot).sort()).toEqual(['meta', 'size']);
        if (id === 3) writes.push(...r.snapshotChunks);
      });
    }
    c.heal();
    for (let i = 0; i < 40; i++) {
      c.tickAll(1);
      for (const id of [1, 2, 3]) expect(bytesHeldOutsideLog(c.node(id))).toBeLessThanOrEqual(CHUNK);
    }
    expect(writes.length).toBeGreaterThan(10);
    expect(writes.map((w) => w.offset)).toEqual(writes.map((_, i) => i * CHUNK)); // in order, each once
    expect(disk(c, 3).snapshot).toEqual(snap);
    expect(Buffer.from(disk(c, 3).snapshotData).equals(Buffer.from(disk(c, 1).snapshotData))).toBe(true);
    expect(c.appliedData(3)).toEqual(c.appliedData(1));
    c.node(1).propose(enc('after'));
    c.stabilize();
    c.tickAll(1);
    expect(c.appliedData(3).at(-1)).toBe('after');
  });

  test('a transfer interrupted by a follower restart resumes at the bytes its disk holds', () => {
    const c = lagging(40);
    const snap = c.snapshot(1);
    c.heal();
    let delivered = 0;
    c.filter = (m) => m.to !== 3 || m.type !== MsgType.Snap || ++delivered <= 4;
    c.tickAll(3);
    const held = disk(c, 3).recv?.received ?? 0;
    expect(held).toBeGreaterThan(0);
    expect(held).toBeLessThan(snap.size);
    c.crash(3);
    c.start(3);
    const after: SnapWrite[] = [];
    watchReadies(c.node(3), (r) => after.push(...r.snapshotChunks));
    c.filter = () => true;
    c.tickAll(40);
    expect(after[0].offset).toBe(held); // resumed, not restarted
    expect(after.reduce((s, w) => s + w.data.byteLength, 0)).toBe(snap.size - held);
    expect(disk(c, 3).snapshot?.meta).toEqual(snap.meta);
    expect(c.appliedData(3)).toEqual(c.appliedData(1));
  });

  test('a newer snapshot\'s chunk arriving before a completed one is handed to the driver waits (found by the simulator, seed 19)', () => {
    const n = new RawNode({ id: 3, random: () => 0.5, electionTick: 10, heartbeatTick: 1 }, emptyInitialState());
    const conf = { voters: [1, 2, 3], learners: [], addrs: {} };
    const chunk = (index: number, text: string): Message => {
      const data = Buffer.from(text);
      return { type: MsgType.Snap, from: 1, to: 3, term: 2, snap: { meta: { index, term: 2, conf }, offset: 0, total: data.length, length: data.length, data } };
    };
    n.step(chunk(52, 'complete'));
    n.step(chunk(103, 'newer')); // before the Ready that installs 52: the receiving file still holds 52
    const r = n.ready();
    expect(r.snapshot?.meta.index).toBe(52);
    expect(r.snapshotChunks.map((w) => w.meta.index)).toEqual([52]);
    n.advance(r);
    n.step(chunk(103, 'newer')); // resent by the leader: now taken
    const r2 = n.ready();
    expect(r2.snapshot?.meta.index).toBe(103);
    expect(r2.snapshotChunks.map((w) => [w.meta.index, w.offset])).toEqual([[103, 0]]);
  });

  test('a transfer interrupted by a leader change starts over with the new leader\'s snapshot and completes', () => {
    const c = lagging(40);
    c.snapshot(1);
    c.isolate(3);
    for (let i = 0; i < 5; i++) c.node(1).propose(enc(`more-${i}`));
    c.stabilize();
    c.tickAll(1);
    const second = c.snapshot(2); // the next leader's own, later snapshot
    c.heal();
    let delivered = 0;
    c.filter = (m) => m.to !== 3 || m.type !== MsgType.Snap || ++delivered <= 4;
    c.tickAll(3);
    expect(disk(c, 3).recv?.from).toBe(1);
    expect(disk(c, 3).recv?.received).toBeGreaterThan(0);
    c.crash(1);
    c.filter = () => true;
    const fromNew: SnapWrite[] = [];
    watchReadies(c.node(3), (r) => fromNew.push(...r.snapshotChunks));
    c.elect(2);
    c.tickAll(40);
    expect(fromNew[0]).toMatchObject({ from: 2, offset: 0, meta: { index: second.meta.index } });
    expect(disk(c, 3).snapshot?.meta).toEqual(second.meta);
    expect(disk(c, 3).recv).toBeNull();
    expect(c.appliedData(3)).toEqual(c.appliedData(2));
    c.node(2).propose(enc('after'));
    c.stabilize();
    c.tickAll(1);
    expect(c.appliedData(3).at(-1)).toBe('after');
  });
});
