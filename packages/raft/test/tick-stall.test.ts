/**
 * A tick that comes a whole election timeout late is counted and told (RaftHost `onTickStall`): on a busy
 * machine a node's event loop waits for a CPU for seconds (issue 25: measured, 90 % of such a gap spent
 * runnable on a run queue), its groups send no heartbeat meanwhile, and their followers elect. The node
 * cannot prevent that; it can say so (the server logs it and counts it on /metrics).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RaftHost, type TickStall } from '../src/driver/host';
import { LevelStorage } from '../src/storage/level-storage';
import { LocalTransportHub } from '../src/transport/transport';
import { ListMachine } from './mem-sm';

const until = async (what: string, cond: () => boolean, ms = 30_000): Promise<void> => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
};

/** Holds the event loop, as a long synchronous task (or a process that gets no CPU) does. */
function block(ms: number): void {
  const end = Date.now() + ms;
  while (Date.now() < end) { /* busy */ }
}

it('counts a tick a whole election timeout late, and tells how long and how many groups this node led', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'raft-tick-stall-'));
  const storage = await LevelStorage.open(dir);
  const stalls: TickStall[] = [];
  // an election timeout of 5 ticks × 20 ms = 100 ms at the least
  const host = new RaftHost({
    nodeId: 1, selfUrl: 'local://1', storage, transport: new LocalTransportHub().transport(1), tickMs: 20, raft: { electionTick: 5 },
    onTickStall: (s) => stalls.push(s),
  });
  try {
    const group = await host.openGroup(0, new ListMachine());
    await group.initialize([{ id: 1, url: 'local://1' }]);
    await until('the single voter leads', () => group.isLeader());
    // a single voter may lead before the ticker's first tick, and a stall is measured from a tick: five
    // ticks' time lets the 20 ms interval (due before this later timer) run at least once
    await new Promise((r) => setTimeout(r, 100));
    // (a busy machine may stall this process by itself too: those are counted as well)
    const seen = stalls.length;
    block(400);
    // the first tick after the block came at least 400 ms after the one before it
    await until('the tick after the block', () => stalls.slice(seen).some((s) => s.gapMs >= 400));
    const stall = stalls.slice(seen).find((s) => s.gapMs >= 400)!;
    expect(stall).toMatchObject({ electionMs: 100, leading: 1 });
    expect(stalls.every((s) => s.gapMs >= s.electionMs)).toBe(true);
    expect(host.stats.tickStalls).toBe(stalls.length);
  } finally {
    await host.close();
    await storage.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
