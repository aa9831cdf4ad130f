/**
 * The store simulator's split and merge (docs/cluster.md "Splitting a group", "Merging two groups"): two
 * groups of three replicas each (the real state machine on real LevelDB), one log each, with the same
 * faults as run.ts (crashes, restarts, whole and torn snapshot installs, elections). A random command
 * stream runs on the groups as the routing stands; at a random step the hand-over runs as the driver
 * runs it, interleaved with the stream and the faults: the fence in the old group's log, the receiving
 * fence and reserved block of event numbers in the new group's (a retry of it answers the same block),
 * the copy read in chunks from the old group's leader's replica and proposed as seeds (some twice) in
 * the new group's log, the commit (from then on, commands about moved users go to the new group), the
 * new group's fence lifted, the drop in chunks. Or, in about a quarter of the runs, an abort during the
 * copy: the old group unfenced, the new group cleared and unfenced, and a late chunk refused. Checked at
 * checkpoints: each group's replicas agree byte for byte and pass the state checks; at the commit, the
 * new group holds exactly the old group's records of the moved users as of the fence (under the shifted
 * event numbers); after the drop, every per-user record is in exactly one group, the one whose range
 * holds its user; every command about a moved user after the fence was refused by the old group; after
 * an abort, the new group holds nothing of the moving users and the fence had kept their records.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Command, RangeRecord } from '../commands';
import { isApplyFailure } from '../errors';
import { keySpaceEnd } from '../key-ranges';
import { inFence, readHalf, shiftSeq, usersOfCommand, type HalfCursor } from '../range-split';
import { checkState } from './check';
import { Draw } from './draw';
import { digestPairs, dumpState } from './image';
import { commandEntry, membershipEntry, noopEntry, Replica, type LogEntry } from './replica';
import { Workload } from './workload';

export interface SplitSimReport {
  seed: number;
  kind: 'split' | 'merge';
  steps: number;
  /** the run aborted its split or merge during the copy (and put the groups back) */
  aborted: boolean;
  split_at_step: number;
  chunks_seeded: number;
  drops: number;
  moved_users: number;
  refused_after_fence: number;
  crashes: number;
  torn_installs: number;
  snapshot_installs: number;
  violations: string[];
}

/** Every per-user record of a state (readHalf over the whole key space; asset bytes left out). */
async function allRecords(db: Replica['state']): Promise<RangeRecord[]> {
  const { records } = await readHalf(db, { base: 1, start: 0, end: keySpaceEnd(1), new_group: -1 }, { sub: 0, after: null }, Number.MAX_SAFE_INTEGER);
  return records.filter(([sub]) => sub !== 'assets');
}

/** One group: three replicas, a log, a leader, with the faults of run.ts. */
class SimGroup {
  readonly log: LogEntry[] = [];
  readonly replicas: Replica[];
  leader: Replica;
  term = 1;
  readonly answers = new Map<number, unknown>();

  constructor(dir: string, private readonly faults: Draw, private readonly report: SplitSimReport) {
    this.replicas = [0, 1, 2].map((i) => new Replica(i, join(dir, `r${i}`), null));
    this.leader = this.replicas[0];
    this.append((i) => noopEntry(i, this.term));
    this.append((i) => membershipEntry(i, this.term, [1, 2, 3], []));
  }

  private append(make: (index: number) => LogEntry): void {
    this.log.push(make(this.log.length + 1));
  }

  private readonly sink = (index: number, answer: unknown) => {
    if (!this.answers.has(index)) this.answers.set(index, answer);
  };

  async open(): Promise<void> {
    for (const r of this.replicas) await r.open();
  }

  /** Proposes a command; answers what the leader applied. */
  async propose(command: Command): Promise<unknown> {
    await this.leader.catchUp(this.log, this.log.length, this.sink);
    this.append((i) => commandEntry(i, this.term, command));
    await this.leader.catchUp(this.log, this.log.length, this.sink);
    return this.answers.get(this.log.length);
  }

  /** The leader's state, caught up (what a proposer reads). */
  async leaderState(): Promise<Replica['state']> {
    await this.leader.catchUp(this.log, this.log.length, this.sink);
    return this.leader.state;
  }

  /** One fault, maybe (run.ts's mix), then the followers apply with a lag. */
  async step(lag: Draw): Promise<void> {
    const up = this.replicas.filter((r) => r.up);
    const down = this.replicas.filter((r) => !r.up);
    const p = this.faults.float();
    if (p < 0.03 && up.length > 1) {
      const victim = this.faults.pick(up);
      await victim.crash();
      this.report.crashes++;
      if (victim === this.leader) {
        this.leader = this.faults.pick(this.replicas.filter((r) => r.up));
        this.term++;
        this.append((i) => noopEntry(i, this.term));
      }
    } else if (p < 0.08 && down.length > 0) {
      const r = this.faults.pick(down);
      await r.open();
      await r.catchUp(this.log, this.log.length - this.faults.int(3), this.sink);
    } else if (p < 0.10) {
      const followers = up.filter((r) => r !== this.leader);
      if (followers.length) {
        await this.leader.catchUp(this.log, this.log.length, this.sink);
        const r = this.faults.pick(followers);
        const snap = await this.leader.snapshot();
        if (this.faults.chance(0.3)) {
          await r.tornInstall(snap, this.faults.float());
          this.report.torn_installs++;
          await r.open();
        }
        await r.install(snap, () => 1 + this.faults.int(4096));
        this.report.snapshot_installs++;
      }
    } else if (p < 0.12 && up.length > 1) {
      this.leader = this.faults.pick(up.filter((r) => r !== this.leader));
      this.term++;
      this.append((i) => noopEntry(i, this.term));
    }
    for (const r of this.replicas) if (r.up && r !== this.leader) await r.catchUp(this.log, Math.max(r.applied(), this.log.length - lag.int(6)), this.sink);
  }

  /**
   * Every replica up and at the end of the log; their images must agree and (unless `partial`: a new
   * group while its copy is being made, one sublevel after another) pass the state checks.
   */
  async check(name: string, partial = false): Promise<string[]> {
    for (const r of this.replicas) {
      if (!r.up) await r.open();
      await r.catchUp(this.log, this.log.length, this.sink);
    }
    const digests = (await Promise.all(this.replicas.map((r) => dumpState(r.state)))).map(digestPairs);
    if (digests.some((d) => d !== digests[0])) return [`${name}: replicas differ (${digests.join(', ')})`];
    return partial ? [] : (await checkState(this.replicas[0].state)).map((v) => `${name}: ${v}`);
  }

  async close(): Promise<void> {
    for (const r of this.replicas) if (r.up) await r.crash();
  }
}

/**
 * A split (`kind` 'split', the default) or a merge ('merge': the old group holds only the moving range's
 * users, the new group holds the others from the start and receives the range: `range.receive`, the
 * copy's event numbers shifted into the block it reserved, its fence lifted after the commit). In about
 * a quarter of the runs the hand-over is aborted during the copy: the old group unfenced, the new group
 * cleared (and a merge's receiving fence lifted); then nothing of the moving users may be left in the
 * new group, and the old group serves them again.
 */
export async function runSplitSim(o: { seed: number; steps: number; dir: string; kind?: 'split' | 'merge' }): Promise<SplitSimReport> {
  const kind = o.kind ?? 'split';
  const draw = new Draw(o.seed);
  const lag = new Draw(o.seed ^ 0x1a9);
  const report: SplitSimReport = {
    seed: o.seed, kind, steps: o.steps, aborted: false, split_at_step: 0, chunks_seeded: 0, drops: 0, moved_users: 0, refused_after_fence: 0, crashes: 0, torn_installs: 0, snapshot_installs: 0, violations: [],
  };
  rmSync(o.dir, { recursive: true, force: true });
  mkdirSync(o.dir, { recursive: true });
  const left = new SimGroup(join(o.dir, 'left'), new Draw(o.seed ^ 0x5eed), report);
  const right = new SimGroup(join(o.dir, 'right'), new Draw(o.seed ^ 0xbeef), report);
  // the split's own commands are the driver's, not the stream's
  const without = new Set(['cluster.split', 'range.fence', 'range.unfence', 'range.seed', 'range.drop', 'range.receive', 'range.clear', 'cluster.ranges'] as const);
  const leftLoad = new Workload(new Draw(o.seed * 31 + 7), without);
  const rightLoad = new Workload(new Draw(o.seed * 37 + 11), without);
  // the moving half: from a random point of the key space (base 1: the key is the hash) to its end
  const fence = { base: 1, start: 1 + draw.int(keySpaceEnd(1) - 1), end: keySpaceEnd(1), new_group: 1 };
  const moved = (u: string) => inFence(fence, u);
  report.split_at_step = Math.floor(o.steps / 4) + draw.int(Math.floor(o.steps / 2));
  const abortAfter = draw.chance(0.25) ? draw.int(4) : -1; // chunks copied before the abort (none when the copy takes fewer)
  type Phase = 'before' | 'copying' | 'committed' | 'dropping' | 'done' | 'aborted';
  let phase = 'before' as Phase;
  /** the phase as it is now (abort() changes it: TypeScript's narrowing does not see that) */
  const phaseNow = (): Phase => phase;
  let cursor: HalfCursor | null = null;
  let lastChunk: RangeRecord[] = [];
  let shift = 0;
  let chunks = 0;
  let atFence: RangeRecord[] = [];
  let now = Date.parse('2026-03-01T09:00:00.000Z');
  /** which group a command about these users goes to now (null: none, it is skipped) */
  const routed = (users: string[], chosen: SimGroup): SimGroup | null => {
    const routedToRight = phase === 'committed' || phase === 'dropping' || phase === 'done';
    const owner = (u: string) => (kind === 'split'
      ? (routedToRight && moved(u) ? right : left)
      : (routedToRight || !moved(u) ? right : left));
    if (users.length === 0) return kind === 'merge' && routedToRight ? right : chosen;
    const g = owner(users[0]);
    return users.every((u) => owner(u) === g) && g === chosen ? g : null;
  };
  /** the old group's records of the moving users, as they are now */
  const movingRecords = async () => {
    const all = await allRecords(await left.leaderState());
    return all.filter((r) => ownerOf(r, moved, all));
  };
  /** the abort: the old group unfenced, the new one cleared in chunks (a merge's receiving fence lifted) */
  const abort = async (at: string) => {
    // the fence kept the moving users' records as they were (what the abort gives back to them)
    const durable = (rs: RangeRecord[]) => JSON.stringify(rs.filter(([sub]) => sub !== 'semantic_plans' && sub !== 'plan_expiry'));
    if (durable(await movingRecords()) !== durable(atFence)) report.violations.push('the moving users\' records changed in the old group while it was fenced');
    await left.propose({ type: 'range.unfence', at, fence });
    for (;;) {
      const a = (await right.propose({ type: 'range.clear', at, fence, limit: 1 + draw.int(60) })) as { done: boolean };
      if (a.done) break;
    }
    await right.propose({ type: 'range.unfence', at, fence });
    phase = 'aborted';
    report.aborted = true;
    // a chunk from a driver that lost its leadership, arriving after the abort: refused
    if (lastChunk.length) {
      const late = await right.propose({ type: 'range.seed', at, seq_floor: 0, seq_shift: shift, records: lastChunk });
      if (!isApplyFailure(late)) report.violations.push('the new group took a chunk of the copy after the abort');
    }
  };
  try {
    await left.open();
    await right.open();
    for (let step = 1; step <= o.steps && report.violations.length === 0; step++) {
      await left.step(lag);
      await right.step(lag);
      now += 1 + draw.int(1500);
      const at = new Date(now).toISOString();

      // the driver, one piece per step
      if (phase === 'before' && step === report.split_at_step) {
        const answer = (await left.propose({ type: 'range.fence', at, fence })) as { stream_index: number };
        const received = (await right.propose({ type: 'range.receive', at, fence, span: answer.stream_index })) as { shift: number };
        if (draw.chance(0.2)) await right.propose({ type: 'range.receive', at, fence, span: answer.stream_index }); // a retry: the same block
        shift = received.shift;
        const all = await allRecords(await left.leaderState());
        atFence = all.filter((r) => ownerOf(r, moved, all));
        report.moved_users = new Set(atFence.map(([s, k, v]) => userOf(s, k, v, all))).size;
        cursor = { sub: 0, after: null };
        phase = 'copying';
      } else if (phase === 'copying' && chunks === abortAfter) {
        await abort(at);
      } else if (phase === 'copying' && cursor) {
        // read from the old group's leader (a replica that applied the fence), proposed to the new group
        const chunk = await readHalf(await left.leaderState(), fence, cursor, 1 + draw.int(40));
        const seed = { type: 'range.seed' as const, at, seq_floor: 0, seq_shift: shift, records: chunk.records };
        if (chunk.records.length) lastChunk = chunk.records;
        if (chunk.records.length) await right.propose(seed);
        if (draw.chance(0.1) && chunk.records.length) await right.propose(seed); // a retry
        report.chunks_seeded++;
        chunks++;
        cursor = chunk.next;
        if (!cursor) {
          // the commit: the new group must hold exactly the moved records as of the fence (but semantic
          // plans: an expired one is pruned by any later semantic.plan of the old group, whoever's it is)
          const durable = (rs: RangeRecord[]) => rs.filter(([sub]) => sub !== 'semantic_plans' && sub !== 'plan_expiry');
          const expected = durable(atFence).map(([sub, k, v]): RangeRecord => [sub, ...shiftSeq(sub, k, v, shift)]);
          const rightAll = await allRecords(await right.leaderState());
          const got = durable(rightAll.filter((r) => ownerOf(r, moved, rightAll)));
          const key = (r: RangeRecord) => `${r[0]}\u0001${r[1]}`;
          const want = new Map(expected.map((r) => [key(r), JSON.stringify(r)]));
          const extra = got.filter((r) => want.get(key(r)) !== JSON.stringify(r));
          if (extra.length || got.length !== expected.length) {
            report.violations.push(`at the commit the new group holds ${got.length} records of the moving users, the fence had ${expected.length}; first difference: ${JSON.stringify(extra[0] ?? null)}`);
          }
          phase = 'committed';
        }
      } else if (phase === 'committed') {
        // the receiving group serves the range once the directory names it
        await right.propose({ type: 'range.unfence', at, fence });
        phase = 'dropping';
      } else if (phase === 'dropping') {
        const answer = (await left.propose({ type: 'range.drop', at, fence, limit: 1 + draw.int(60) })) as { done: boolean };
        report.drops++;
        if (answer.done) phase = 'done';
      }

      // the stream: each group's users as the routing stands (module comment)
      const chosen = draw.chance(0.5) ? right : left;
      const command = await (chosen === right ? rightLoad : leftLoad).next(await chosen.leaderState(), now);
      const users = usersOfCommand(command);
      const group = routed(users, chosen);
      if (!group) continue;
      const answer = await group.propose(command);
      const refused = isApplyFailure(answer) && answer.error.code === 'range_moving';
      if (group === left && (phase === 'copying' || phase === 'committed' || phase === 'dropping' || phase === 'done') && users.some(moved)) {
        if (refused) report.refused_after_fence++;
        else report.violations.push(`the old group applied ${command.type} about a moved user after the fence`);
      } else if (refused && !(group === right && (phase === 'committed' || (phase === 'copying' && users.some(moved))))) {
        report.violations.push(`${group === left ? 'the old' : 'the new'} group refused ${command.type} in phase ${phase}`);
      }
      if (step % 50 === 0) report.violations.push(...(await left.check('old group')), ...(await right.check('new group', phase === 'copying')));
      if (phaseNow() === 'aborted' && step % 10 === 0) report.violations.push(...(await noneOfMovingIn(right, moved)));
    }
    while (report.violations.length === 0 && phase !== 'done' && phaseNow() !== 'aborted') {
      // the hand-over finishes after the stream (a run whose split began late)
      const at = new Date(now).toISOString();
      if (phase === 'copying' && chunks === abortAfter) {
        await abort(at);
      } else if (phase === 'copying' && cursor) {
        const chunk = await readHalf(await left.leaderState(), fence, cursor, 40);
        if (chunk.records.length) await right.propose({ type: 'range.seed', at, seq_floor: 0, seq_shift: shift, records: chunk.records });
        chunks++;
        cursor = chunk.next;
        if (!cursor) phase = 'committed';
      } else if (phase === 'committed') {
        await right.propose({ type: 'range.unfence', at, fence });
        phase = 'dropping';
      } else if (phase === 'dropping') {
        if (((await left.propose({ type: 'range.drop', at, fence, limit: 60 })) as { done: boolean }).done) phase = 'done';
      } else break;
    }
    if (report.violations.length === 0) {
      report.violations.push(...(await left.check('old group')), ...(await right.check('new group')));
      if (phase === 'done') {
        // exactly one group: the old one holds no moved user's record; a split's new one no other user's
        const l = await allRecords(left.replicas[0].state);
        const r = await allRecords(right.replicas[0].state);
        const lr = l.filter((x) => ownerOf(x, moved, l));
        // (a plan expiry whose plan is gone, executed or pruned, names no user: it is no one's record)
        const rr = kind === 'merge' ? [] : r.filter((x) => userOf(x[0], x[1], x[2], r) !== undefined && !ownerOf(x, moved, r));
        if (lr.length) report.violations.push(`the old group still holds ${lr.length} records of moved users (first ${JSON.stringify(lr[0])})`);
        if (rr.length) report.violations.push(`the new group holds ${rr.length} records of users it does not own (first ${JSON.stringify(rr[0])})`);
      }
      if (phaseNow() === 'aborted') {
        report.violations.push(...(await noneOfMovingIn(right, moved)));
      }
    }
  } finally {
    await left.close();
    await right.close();
    rmSync(o.dir, { recursive: true, force: true });
  }
  return report;
}

/** After an abort: the new group holds nothing of the moving users. */
async function noneOfMovingIn(g: SimGroup, moved: (u: string) => boolean): Promise<string[]> {
  const r = await allRecords(await g.leaderState());
  const left = r.filter((x) => ownerOf(x, moved, r));
  return left.length ? [`after the abort the new group still holds ${left.length} records of the moving users (first ${JSON.stringify(left[0])})`] : [];
}

/** The user a per-user record belongs to (range-split.ts's rules; plan expiries through their plan, in `all`). */
function userOf(sub: string, key: string, value: unknown, all: RangeRecord[] | null = null): string | undefined {
  const parts = key.split('\u0000');
  switch (sub) {
    case 'pending':
    case 'failed':
    case 'semantic_plans':
      return (value as { user_id: string }).user_id;
    case 'plan_expiry': {
      const plan = all?.find(([s, k]) => s === 'semantic_plans' && k === value);
      return plan ? (plan[2] as { user_id: string }).user_id : undefined;
    }
    case 'org_units':
    case 'org_users':
      return parts[1];
    case 'user_orgs':
      return key;
    default:
      return parts[0];
  }
}

function ownerOf([sub, key, value]: RangeRecord, moved: (u: string) => boolean, all: RangeRecord[] | null): boolean {
  const user = userOf(sub, key, value, all);
  return user !== undefined && moved(user);
}

export function splitPassed(r: SplitSimReport): boolean {
  return r.violations.length === 0;
}
