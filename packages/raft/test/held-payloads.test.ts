/** Which applied payloads stay in memory (driver/held-payloads.ts), over a plain RaftLog. */
import { RaftLog, payloadBytes } from '../src/core/log';
import { EntryType, type Entry } from '../src/core/types';
import { HeldPayloads } from '../src/driver/held-payloads';

const entry = (index: number, bytes: number, type = EntryType.Normal): Entry => ({ index, term: 1, type, data: new Uint8Array(bytes).fill(index) });
const held = (log: RaftLog) => log.entries.reduce((n, e) => n + e.data.byteLength, 0);

describe('HeldPayloads', () => {
  it('keeps the newest applied payloads within its limit, never a membership entry\'s, and every entry\'s size', () => {
    const log = new RaftLog(0, 0, [], 0);
    log.append([entry(1, 50, EntryType.Conf), ...[2, 3, 4, 5, 6, 7, 8].map((i) => entry(i, 100)), entry(9, 0)]);
    log.commitTo(9);
    const payloads = new HeldPayloads(250, 0);
    payloads.settle(log, 6); // applied up to 6: 500 bytes of commands, 250 kept (5 and 6), 2-4 let go
    expect(log.entries.map((e) => e.offloaded)).toEqual([undefined, 100, 100, 100, undefined, undefined, undefined, undefined, undefined]);
    expect(payloads.heldBytes).toBe(200);
    expect(log.entry(1)!.data.byteLength).toBe(50); // membership: decoded by the core, kept
    // not applied yet: kept whatever the limit
    expect(log.entry(8)!.data.byteLength).toBe(100);
    payloads.settle(log, 9);
    expect(payloads.heldBytes).toBe(200); // 7 and 8 kept, 5 and 6 let go; 9 (a no-op) has nothing
    expect(held(log)).toBe(50 + 200);
    expect(log.entries.reduce((n, e) => n + payloadBytes(e), 0)).toBe(50 + 700);
    // the message budget still counts what a let-go entry will carry once read back
    expect(log.slice(2, 4, 250)).toHaveLength(2);
  });

  it('forgets compacted entries, and a log replaced by a snapshot', () => {
    const log = new RaftLog(0, 0, [1, 2, 3, 4, 5, 6].map((i) => entry(i, 100)), 6);
    const payloads = new HeldPayloads(1000, 0);
    payloads.settle(log, 6);
    expect(payloads.heldBytes).toBe(600);
    payloads.beforeCompact(log, 4);
    log.compact(4);
    expect(payloads.heldBytes).toBe(200);
    log.append([entry(7, 100)]);
    log.commitTo(7);
    payloads.settle(log, 7);
    expect(payloads.heldBytes).toBe(300);
    // a snapshot at 20 replaces the whole log (the core's restore), then entries follow it
    log.restore(20, 1);
    log.append([21, 22].map((i) => ({ ...entry(i, 100) })));
    log.commitTo(22);
    payloads.settle(log, 22);
    expect(payloads.heldBytes).toBe(200);
  });

  it('lets go by replacing the entry, so others holding the object keep its payload', () => {
    const log = new RaftLog(0, 0, [entry(1, 100), entry(2, 100)], 2);
    const shared = log.entry(1)!;
    new HeldPayloads(100, 0).settle(log, 2);
    expect(log.entry(1)!.offloaded).toBe(100);
    expect(shared.data.byteLength).toBe(100);
    expect(shared.offloaded).toBeUndefined();
  });
});
