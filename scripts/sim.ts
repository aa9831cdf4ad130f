/**
 * Runs the Raft simulator over a range of seeds, on several worker processes:
 *   node --conditions=strata-source --import tsx scripts/sim.ts --seed-start 1 --seeds 1000 --steps 3000
 *     [--profile classic|churn|membership|lossy|mixed] [--voters 3|5|7] [--workers 2] [--no-faults]
 *     [--json bench-results/sim.json] [--verbose]
 * `--profile mixed` derives each seed's profile and voter count from the seed (mixedOptions), so the
 * command printed with a violation reproduces it alone. Exits 1 with the seed and a trace of the first
 * violation; prints progress (seeds done, rate, ETA) on long runs.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { dirname, resolve } from 'node:path';
import type { FaultProfile, SimOptions } from '../packages/raft/src/sim/simulation';
import { arg, intArg } from './cli-args';
import * as real from '../packages/raft/src/sim/simulation';

// STRATA_SIM_SRC points at another copy of packages/raft/src (the mutants of scripts/sim-mutants.ts).
type SimModule = typeof real;
let sim: SimModule = real;
const FAULT_PROFILES = real.FAULT_PROFILES;


const start = intArg('seed-start', 1);
const seeds = intArg('seeds', 10);
// Clients of the simulated group meet NotLeaderError all the time and a hunt never reads those stack
// traces; a single seed (the reproduction of a violation) keeps them for the exception it may print.
if (seeds > 1) Error.stackTraceLimit = 0;
const steps = intArg('steps', 3000);
const workers = Math.max(1, intArg('workers', 1));
const votersArg = arg('voters');
const voters = votersArg === undefined ? undefined : Number(votersArg);
if (voters !== undefined && ![1, 3, 5, 7, 9].includes(voters)) {
  console.error('--voters is one of 1, 3, 5, 7, 9');
  process.exit(2);
}
const profile = (arg('profile') ?? 'classic') as FaultProfile | 'mixed';
if (profile !== 'mixed' && !FAULT_PROFILES.includes(profile)) {
  console.error(`--profile is one of ${FAULT_PROFILES.join(', ')}, mixed`);
  process.exit(2);
}
const faults = !process.argv.includes('--no-faults');
const verbose = process.argv.includes('--verbose');
const jsonOut = arg('json');

interface Totals {
  seeds: number;
  steps: number;
  ok: number;
  failed: number;
  unknown: number;
  elections: number;
  snapshots: number;
  confChanges: number;
  crashes: number;
  linearizableOps: number;
  linearizabilityGaveUp: number;
  byProfile: Record<string, number>;
  byVoters: Record<string, number>;
}

function emptyTotals(): Totals {
  return { seeds: 0, steps: 0, ok: 0, failed: 0, unknown: 0, elections: 0, snapshots: 0, confChanges: 0, crashes: 0, linearizableOps: 0, linearizabilityGaveUp: 0, byProfile: {}, byVoters: {} };
}

function add(a: Totals, b: Totals): void {
  for (const k of ['seeds', 'steps', 'ok', 'failed', 'unknown', 'elections', 'snapshots', 'confChanges', 'crashes', 'linearizableOps', 'linearizabilityGaveUp'] as const) a[k] += b[k];
  for (const [k, v] of Object.entries(b.byProfile)) a.byProfile[k] = (a.byProfile[k] ?? 0) + v;
  for (const [k, v] of Object.entries(b.byVoters)) a.byVoters[k] = (a.byVoters[k] ?? 0) + v;
}

function optionsFor(seed: number): SimOptions {
  if (profile === 'mixed') {
    const o = sim.mixedOptions(seed, steps);
    return { ...o, faults, voters: voters ?? o.voters };
  }
  return { seed, steps, faults, profile, voters };
}

function reproduce(o: SimOptions): string {
  const extra = `${o.profile && o.profile !== 'classic' ? ` --profile ${o.profile}` : ''}${o.voters ? ` --voters ${o.voters}` : ''}${o.faults === false ? ' --no-faults' : ''}`;
  return `node --conditions=strata-source --import tsx scripts/sim.ts --seed-start ${o.seed} --seeds 1 --steps ${o.steps}${extra}`;
}

/** Runs seeds [from, from+count) here; returns the totals or the first violation. */
function runRange(from: number, count: number): { totals: Totals } | { violation: string } {
  const t = emptyTotals();
  for (let seed = from; seed < from + count; seed++) {
    const o = optionsFor(seed);
    try {
      const r = new sim.Simulation(o).run();
      t.seeds++;
      t.steps += o.steps;
      t.ok += r.ops.ok;
      t.failed += r.ops.failed;
      t.unknown += r.ops.unknown;
      t.elections += r.leaderChanges;
      t.snapshots += r.snapshotsInstalled;
      t.confChanges += r.confChanges;
      t.crashes += r.crashes;
      t.linearizableOps += r.linearizableOps;
      t.linearizabilityGaveUp += r.linearizabilityGaveUp;
      const p = o.profile ?? 'classic';
      t.byProfile[p] = (t.byProfile[p] ?? 0) + 1;
      const v = String(o.voters ?? 'drawn');
      t.byVoters[v] = (t.byVoters[v] ?? 0) + 1;
      if (verbose) console.log(JSON.stringify(r));
    } catch (e) {
      if (e instanceof sim.SimViolation) {
        return { violation: `VIOLATION at seed ${seed}: ${e.message}\n--- trace (last events) ---\n${e.trace.join('\n')}\nreproduce: ${reproduce(o)}` };
      }
      throw e;
    }
  }
  return { totals: t };
}

function summary(t: Totals, seconds: number): string {
  return (
    `sim: ${t.seeds} seeds (${start}..${start + seeds - 1}) x ${steps} steps, profile ${profile}${voters ? `, ${voters} voters` : ''}, faults ${faults ? 'on' : 'off'}: all invariants held; ` +
    `ops ok ${t.ok}, failed ${t.failed}, unknown ${t.unknown}; linearizability checked over ${t.linearizableOps} ops (search gave up on ${t.linearizabilityGaveUp} seeds); ` +
    `elections ${t.elections}, snapshots installed ${t.snapshots}, membership changes ${t.confChanges}, crashes ${t.crashes}; ${seconds.toFixed(1)} s`
  );
}

/** The figures so far (complete: false while running, so a long hunt cut short still tells what it covered). */
function writeJson(t: Totals, seconds: number, complete: boolean): void {
  if (!jsonOut) return;
  mkdirSync(dirname(jsonOut), { recursive: true });
  writeFileSync(jsonOut, JSON.stringify({ start, seeds, steps, profile, voters: voters ?? null, faults, workers, seconds, complete, totals: t }, null, 2) + '\n');
}

function finish(t: Totals, t0: number): void {
  const seconds = (Date.now() - t0) / 1000;
  console.log(summary(t, seconds));
  if (Object.keys(t.byProfile).length > 1 || profile === 'mixed') console.log(`  seeds by profile ${JSON.stringify(t.byProfile)}, by voters ${JSON.stringify(t.byVoters)}`);
  writeJson(t, seconds, true);
}

async function parent(): Promise<void> {
  const t0 = Date.now();
  const total = emptyTotals();
  const chunk = Math.max(1, Math.min(500, Math.ceil(seeds / (workers * 4))));
  let next = start;
  const end = start + seeds;
  let lastProgress = Date.now();
  let violation: string | null = null;
  const children = new Set<ReturnType<typeof spawn>>();

  const runWorker = async (): Promise<void> => {
    while (next < end && violation === null) {
      const from = next;
      const count = Math.min(chunk, end - from);
      next += count;
      const args = ['--conditions=strata-source', '--import', 'tsx', __filename, '--worker', '--seed-start', String(from), '--seeds', String(count), '--steps', String(steps), '--profile', profile];
      if (voters) args.push('--voters', String(voters));
      if (!faults) args.push('--no-faults');
      const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
      children.add(child);
      let result: { totals: Totals } | { violation: string } | null = null;
      for await (const line of createInterface({ input: child.stdout })) {
        if (line.startsWith('{')) result = JSON.parse(line);
      }
      const code: number = await new Promise((res) => (child.exitCode !== null ? res(child.exitCode) : child.on('exit', (c) => res(c ?? 1))));
      children.delete(child);
      if (!result) {
        if (violation === null) violation = `worker for seeds ${from}..${from + count - 1} exited with code ${code} and no result`;
        return;
      }
      if ('violation' in result) {
        violation ??= result.violation;
        return;
      }
      add(total, result.totals);
      if (Date.now() - lastProgress > 10_000) {
        lastProgress = Date.now();
        const rate = total.seeds / ((Date.now() - t0) / 1000);
        const eta = (seeds - total.seeds) / rate;
        console.error(`  ${total.seeds}/${seeds} seeds, ${rate.toFixed(1)} seeds/s, ETA ${Math.ceil(eta)} s`);
        writeJson(total, (Date.now() - t0) / 1000, false);
      }
    }
  };
  await Promise.all(Array.from({ length: workers }, runWorker));
  for (const c of children) c.kill();
  if (violation !== null) {
    console.error(violation);
    process.exit(1);
  }
  finish(total, t0);
}

async function main(): Promise<void> {
  if (process.env.STRATA_SIM_SRC) sim = (await import(resolve(process.env.STRATA_SIM_SRC, 'sim/simulation.ts'))) as SimModule;
  if (process.argv.includes('--worker')) {
    console.log(JSON.stringify(runRange(start, seeds)));
  } else if (workers === 1) {
    const t0 = Date.now();
    const r = runRange(start, seeds);
    if ('violation' in r) {
      console.error(r.violation);
      process.exit(1);
    }
    finish(r.totals, t0);
  } else {
    await parent();
  }
}

void main();
