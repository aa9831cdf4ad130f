import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EntryType, MsgType, type Entry, type Ready } from '../src/core/types';
import { readWholeSnapshot } from '../src/driver/snapshot-buffer';
import { LevelStorage } from '../src/storage/level-storage';
import { decodeBatch, encodeBatch } from '../src/transport/codec';

const e = (index: number, term: number, s = `e${index}`): Entry => ({ index, term, type: EntryType.Normal, data: Buffer.from(s) });
const ready = (p: Partial<Ready>): Ready => ({ snapshotChunks: [], snapshot: null, entries: [], hardState: null, messages: [], committedEntries: [], readStates: [], softState: null, ...p });

test('codec round-trips every field', () => {
  const msgs = [
    { group: 3, msg: { type: MsgType.App, from: 1, to: 2, term: 5, index: 9, logTerm: 4, commit: 8, entries: [e(10, 5), { ...e(11, 5), type: EntryType.Conf }] } },
    { group: 0, msg: { type: MsgType.AppResp, from: 2, to: 1, term: 5, index: 9, reject: true, hintIndex: 7, hintTerm: 3 } },
    { group: 1, msg: { type: MsgType.Vote, from: 2, to: 1, term: 6, index: 3, logTerm: 2, force: true } },
    { group: 1, msg: { type: MsgType.Snap, from: 1, to: 3, term: 6, snap: { meta: { index: 5, term: 2, conf: { voters: [1, 2, 3], learners: [], addrs: { 1: 'u' } } }, offset: 4, total: 10, length: 3, data: Buffer.from('abc') } } },
    { group: 1, msg: { type: MsgType.Heartbeat, from: 1, to: 3, term: 6, commit: 4, ctx: 12 } },
  ];
  const back = decodeBatch(encodeBatch(msgs));
  expect(JSON.parse(JSON.stringify(back))).toEqual(JSON.parse(JSON.stringify(msgs)));
  expect(() => decodeBatch(encodeBatch(msgs).subarray(0, 40))).toThrow();
});

test('LevelDB storage: append, replace a conflicting tail, hard state, compaction, reload', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'raft-store-'));
  try {
    let s = await LevelStorage.open(dir);
    await s.load(7);
    let ops: Parameters<LevelStorage['write']>[0] = [];
    s.readyOps(ops, 7, ready({ entries: [e(1, 1), e(2, 1), e(3, 1), e(4, 1)], hardState: { term: 1, vote: 1, commit: 1 } }));
    await s.write(ops);
    ops = [];
    s.readyOps(ops, 7, ready({ entries: [e(3, 2, 'new3')], hardState: { term: 2, vote: 0, commit: 2 } }));
    await s.write(ops);
    await s.close();
    s = await LevelStorage.open(dir);
    let g = await s.load(7);
    expect(g.entries.map((x) => [x.index, x.term, Buffer.from(x.data).toString()])).toEqual([
      [1, 1, 'e1'],
      [2, 1, 'e2'],
      [3, 2, 'new3'],
    ]);
    expect(g.hardState).toEqual({ term: 2, vote: 0, commit: 2 });
    // what the state machine applied comes back without its payload (its size kept), the rest whole;
    // read back one by one when a message is to carry it
    const applied2 = await s.load(7, 2);
    expect(applied2.entries.map((x) => [x.index, x.offloaded, Buffer.from(x.data).toString()])).toEqual([
      [1, 2, ''],
      [2, 2, ''],
      [3, undefined, 'new3'],
    ]);
    expect((await s.readEntries(7, [2, 9, 1])).map((x) => x && Buffer.from(x.data).toString())).toEqual(['e2', undefined, 'e1']);
    ops = [];
    const conf = { voters: [1], learners: [], addrs: {} };
    const meta = { index: 2, term: 1, conf };
    const file = await s.snapshots.create(7);
    await file.write(Buffer.from('sta'));
    await file.write(Buffer.from('te'));
    const range = s.compactionOps(ops, 7, { meta, size: await file.finish(meta) }, 2, 1, conf);
    await s.write(ops);
    expect(range).toEqual({ from: 1, to: 2 });
    s.deleteCompacted(7, range as { from: number; to: number });
    await s.close();
    s = await LevelStorage.open(dir);
    g = await s.load(7);
    expect(g.offset).toBe(2);
    expect(g.entries.map((x) => x.index)).toEqual([3]);
    expect(g.snapshot?.size).toBe(5);
    expect((await readWholeSnapshot(s.snapshots.reader(7, meta, 5))).toString()).toBe('state');
    expect((await s.snapshots.readChunk(7, meta, 1, 3))?.toString()).toBe('tat');
    expect((await s.load(8)).entries).toEqual([]); // groups are independent
    await s.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

describe('snapshot files in the storage', () => {
  const conf = { voters: [1], learners: [], addrs: {} };
  const meta = { index: 9, term: 2, conf };
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'raft-snapstore-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  test('received chunks go to the receiving file; a restart resumes at the position the last synced batch recorded; completion installs it', async () => {
    let s = await LevelStorage.open(dir);
    await s.load(1);
    const chunk = (offset: number, text: string) => ({ meta, from: 3, offset, total: 9, data: Buffer.from(text) });
    for (const r of [ready({ snapshotChunks: [chunk(0, 'abc')] }), ready({ snapshotChunks: [chunk(3, 'def')] })]) {
      await s.persistFiles(1, r); // bytes synced to the file, then the position recorded

    }
    // bytes appended but whose batch never reached the disk: not acknowledged, cut off on restart
    await s.snapshots.append(1, [chunk(6, 'gh')]);
    await s.close();
    s = await LevelStorage.open(dir);
    const g = await s.load(1);
    expect(g.incoming).toEqual({ meta, from: 3, received: 6, total: 9 });
    const done = ready({ snapshotChunks: [chunk(6, 'ghi')], snapshot: { meta, size: 9 } });
    await s.persistFiles(1, done);
    const ops: Parameters<LevelStorage['write']>[0] = [];
    s.readyOps(ops, 1, done);
    await s.write(ops);
    await s.afterWrite(1, done);
    await s.close();
    s = await LevelStorage.open(dir);
    const after = await s.load(1);
    expect(after.snapshot).toEqual({ meta, size: 9 });
    expect(after.incoming).toBeNull();
    expect((await readWholeSnapshot(s.snapshots.reader(1, meta, 9))).toString()).toBe('abcdefghi');
    await s.close();
  });

  test('an image stored inside LevelDB by an earlier version moves to its file on load', async () => {
    const key = (kind: number) => {
      const b = Buffer.alloc(6);
      b[0] = 0x72;
      b.writeUInt32BE(4, 1);
      b[5] = kind;
      return b;
    };
    let s = await LevelStorage.open(dir);
    await s.db.batch([
      { type: 'put', key: key(3), value: Buffer.from(JSON.stringify(meta)) },
      { type: 'put', key: key(4), value: Buffer.from('old image') },
    ]);
    const g = await s.load(4);
    expect(g.snapshot).toEqual({ meta, size: 9 });
    expect(await s.db.get(key(4))).toBeUndefined();
    await s.close();
    s = await LevelStorage.open(dir);
    expect((await s.load(4)).snapshot).toEqual({ meta, size: 9 });
    expect((await readWholeSnapshot(s.snapshots.reader(4, meta, 9))).toString()).toBe('old image');
    await s.close();
  });
});
