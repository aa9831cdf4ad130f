/**
 * The store simulator: one seeded run of a random command stream applied by three replicas of the real
 * state machine on real LevelDB, with crashes, restarts, snapshot installs (whole and torn), term changes
 * and membership entries. At checkpoints every replica is brought to the end of the log and the three
 * state images must be byte-identical, the answers of every index identical on every replica that
 * applied it, and the state's own cross-record invariants must hold (check.ts).
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from '../commands';
import { isApplyFailure } from '../errors';
import { checkState } from './check';
import { Draw } from './draw';
import { digestPairs, dumpState, firstDifference, type ReplicaDifference } from './image';
import { commandEntry, membershipEntry, noopEntry, Replica, type LogEntry } from './replica';
import { Workload } from './workload';

export interface StoreSimOptions {
  seed: number;
  /** commands proposed */
  steps: number;
  /** a fresh directory for the replicas' databases (removed at the end unless `keep`) */
  dir: string;
  /** check every this many steps (and at the end) */
  checkEvery?: number;
  /** crashes, restarts, snapshot installs; off: the three replicas only lag */
  faults?: boolean;
  keep?: boolean;
  /**
   * A planted non-determinism, to show the check catches it: replica 2 applies `memory.reinforce` with
   * its `at` one millisecond later, as an apply that read its own clock would.
   */
  plant?: 'clock' | null;
}

export interface StoreSimReport {
  seed: number;
  steps: number;
  log_entries: number;
  commands: Record<string, number>;
  /** answers that were deterministic failures (4xx carried back to the proposer) or stale plans */
  refused: number;
  stale: number;
  crashes: number;
  restarts: number;
  snapshot_installs: number;
  torn_installs: number;
  term_changes: number;
  checkpoints: number;
  /** entries applied by all replicas together, replays after restarts included */
  applies: number;
  digest: string;
  ms: number;
  /** null when the replicas agreed at every checkpoint */
  divergence: { checkpoint: number; applied_index: number; digests: string[]; first: ReplicaDifference | null } | null;
  /** an index whose answer or effects differed between replicas (or between a first apply and a replay) */
  answer_mismatch: { index: number; type: string; replica: number; expected: string; got: string } | null;
  violations: string[];
}

const canonicalAnswer = (a: unknown): string => JSON.stringify(a ?? null);

/** Rewrites `memory.reinforce` as a replica reading its own (1 ms late) clock would apply it. */
function clockPlant(entry: LogEntry): LogEntry {
  if (entry.command?.type !== 'memory.reinforce') return entry;
  const cmd = entry.command;
  const late = (at: string) => new Date(Date.parse(at) + 1).toISOString();
  const skewed: Command = { ...cmd, users: cmd.users.map((u) => ({ ...u, units: u.units.map((r) => ({ ...r, at: late(r.at) })) })) };
  return { ...entry, data: Buffer.from(JSON.stringify(skewed), 'utf8'), command: skewed };
}

export async function runStoreSim(o: StoreSimOptions): Promise<StoreSimReport> {
  const started = Date.now();
  const faults = o.faults ?? true;
  const checkEvery = o.checkEvery ?? Math.max(50, Math.floor(o.steps / 4));
  const draw = new Draw(o.seed);
  const faultDraw = new Draw(o.seed ^ 0x5eed);
  /** sizes of the pieces a snapshot image is read back in (its own stream: the other draws stay as they were) */
  const pieceDraw = new Draw(o.seed ^ 0x51ce);
  const workload = new Workload(new Draw(o.seed * 31 + 7));
  rmSync(o.dir, { recursive: true, force: true });
  mkdirSync(o.dir, { recursive: true });
  const replicas = [0, 1, 2].map((i) => new Replica(i, join(o.dir, `r${i}`), o.plant === 'clock' && i === 2 ? clockPlant : null));
  const report: StoreSimReport = {
    seed: o.seed, steps: o.steps, log_entries: 0, commands: {}, refused: 0, stale: 0, crashes: 0, restarts: 0, snapshot_installs: 0,
    torn_installs: 0, term_changes: 0, checkpoints: 0, applies: 0, digest: '', ms: 0, divergence: null, answer_mismatch: null, violations: [],
  };

  const log: LogEntry[] = [];
  let term = 1;
  const append = (make: (index: number) => LogEntry) => log.push(make(log.length + 1));
  append((i) => noopEntry(i, term));
  append((i) => membershipEntry(i, term, [1, 2, 3], []));

  // The first answer of each index; every replica that applies it later (replays too) must answer the same.
  const answers = new Map<number, string>();
  const sink = (index: number, answer: unknown, replica: number, effects: unknown) => {
    report.applies++;
    const got = canonicalAnswer({ answer, effects });
    const expected = answers.get(index);
    if (expected === undefined) {
      answers.set(index, got);
      if (isApplyFailure(answer)) report.refused++;
      else if (typeof answer === 'object' && answer !== null && (answer as { stale?: unknown }).stale) report.stale++;
    } else if (expected !== got && !report.answer_mismatch) {
      report.answer_mismatch = { index, type: log[index - 1].command?.type ?? log[index - 1].kind, replica, expected, got };
    }
  };
  const groupSize = () => 1 + draw.int(4);

  let now = Date.parse('2026-03-01T09:00:00.000Z');
  try {
    for (const r of replicas) await r.open();
    let leader = replicas[0];

    const checkpoint = async (): Promise<boolean> => {
      report.checkpoints++;
      for (const r of replicas) {
        if (!r.up) {
          await r.open();
          report.restarts++;
        }
        await r.catchUp(log, log.length, sink, groupSize);
      }
      const dumps = await Promise.all(replicas.map((r) => dumpState(r.state)));
      const digests = dumps.map(digestPairs);
      report.digest = digests[0];
      if (digests.some((x) => x !== digests[0])) {
        report.divergence = { checkpoint: report.checkpoints, applied_index: log.length, digests, first: firstDifference(dumps) };
        return false;
      }
      report.violations = await checkState(replicas[0].state);
      return report.violations.length === 0 && !report.answer_mismatch;
    };

    for (let step = 1; step <= o.steps; step++) {
      if (faults) {
        const up = replicas.filter((r) => r.up);
        const down = replicas.filter((r) => !r.up);
        const p = faultDraw.float();
        if (p < 0.03 && up.length > 1) {
          // Any replica, the leader too: a follower falls behind; a dead leader means a new term.
          const victim = faultDraw.pick(up);
          await victim.crash();
          report.crashes++;
          if (victim === leader) {
            leader = faultDraw.pick(replicas.filter((r) => r.up));
            term++;
            report.term_changes++;
            append((i) => noopEntry(i, term));
          }
        } else if (p < 0.08 && down.length > 0) {
          const r = faultDraw.pick(down);
          await r.open();
          report.restarts++;
          // Replays everything committed after its applied index, in driver-sized groups.
          await r.catchUp(log, log.length - faultDraw.int(3), sink, groupSize);
        } else if (p < 0.10) {
          const followers = up.filter((r) => r !== leader);
          if (followers.length) {
            await leader.catchUp(log, log.length, sink, groupSize);
            const r = faultDraw.pick(followers);
            const snap = await leader.snapshot();
            if (faultDraw.chance(0.3)) {
              await r.tornInstall(snap, faultDraw.float());
              report.torn_installs++;
              await r.open();
              report.restarts++;
              if (r.applied() !== 0) report.violations.push(`replica ${r.id} reads applied ${r.applied()} after a torn snapshot install (expected 0)`);
            }
            await r.install(snap, () => 1 + pieceDraw.int(4096));
            report.snapshot_installs++;
          }
        } else if (p < 0.12 && up.length > 1) {
          // An election: another live replica leads from the next entry on.
          leader = faultDraw.pick(up.filter((r) => r !== leader));
          term++;
          report.term_changes++;
          append((i) => noopEntry(i, term));
        } else if (p < 0.125) {
          append((i) => membershipEntry(i, term, [1, 2, 3], faultDraw.chance(0.5) ? [4] : []));
        }
      }
      if (report.violations.length) break;

      // The leader proposes from its own state, caught up with everything committed (as a leader is
      // once its no-op of the term is applied); its clock runs on, sometimes behind another's.
      await leader.catchUp(log, log.length, sink, groupSize);
      now += 1 + draw.int(1500);
      const command = await workload.next(leader.state, draw.chance(0.1) ? now - draw.int(4000) : now);
      report.commands[command.type] = (report.commands[command.type] ?? 0) + 1;
      append((i) => commandEntry(i, term, command));
      await leader.catchUp(log, log.length, sink);
      // Followers apply with a lag.
      for (const r of replicas) if (r.up && r !== leader) await r.catchUp(log, Math.max(r.applied(), log.length - draw.int(6)), sink, groupSize);

      if (report.answer_mismatch) break;
      if (step % checkEvery === 0 && !(await checkpoint())) break;
    }
    if (!report.divergence && !report.answer_mismatch && report.violations.length === 0) await checkpoint();
  } finally {
    report.log_entries = log.length;
    report.ms = Date.now() - started;
    for (const r of replicas) if (r.up) await r.crash();
    if (!o.keep) rmSync(o.dir, { recursive: true, force: true });
  }
  return report;
}

/** True when the run found nothing wrong. */
export function passed(r: StoreSimReport): boolean {
  return !r.divergence && !r.answer_mismatch && r.violations.length === 0;
}
