/**
 * Runs the Raft simulator over a range of seeds:
 *   node --import tsx scripts/sim.ts --seed-start 1 --seeds 10 --steps 3000 [--no-faults]
 * Exits non-zero with the seed and a trace of the first violation.
 */
import { Simulation, SimViolation } from '../packages/raft/src/sim/simulation';

function arg(name: string, def: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return def;
  const v = Number(process.argv[i + 1]);
  if (!Number.isInteger(v) || v < 0) {
    console.error(`--${name} needs a non-negative integer`);
    process.exit(2);
  }
  return v;
}

const start = arg('seed-start', 1);
const seeds = arg('seeds', 10);
const steps = arg('steps', 3000);
const faults = !process.argv.includes('--no-faults');
const verbose = process.argv.includes('--verbose');
const t0 = Date.now();
const totals = { ok: 0, failed: 0, unknown: 0, leaderChanges: 0, snapshots: 0, confChanges: 0, crashes: 0 };
for (let seed = start; seed < start + seeds; seed++) {
  try {
    const r = new Simulation({ seed, steps, faults }).run();
    totals.ok += r.ops.ok;
    totals.failed += r.ops.failed;
    totals.unknown += r.ops.unknown;
    totals.leaderChanges += r.leaderChanges;
    totals.snapshots += r.snapshotsInstalled;
    totals.confChanges += r.confChanges;
    totals.crashes += r.crashes;
    if (verbose) console.log(JSON.stringify(r));
  } catch (e) {
    if (e instanceof SimViolation) {
      console.error(`VIOLATION at seed ${seed}: ${e.message}\n--- trace (last events) ---\n${e.trace.join('\n')}`);
      console.error(`reproduce: node --import tsx scripts/sim.ts --seed-start ${seed} --seeds 1 --steps ${steps}`);
      process.exit(1);
    }
    throw e;
  }
}
console.log(
  `sim: ${seeds} seeds (${start}..${start + seeds - 1}) x ${steps} steps, faults ${faults ? 'on' : 'off'}: all invariants held; ` +
    `ops ok ${totals.ok}, failed ${totals.failed}, unknown ${totals.unknown}; elections ${totals.leaderChanges}, snapshots installed ${totals.snapshots}, ` +
    `membership changes ${totals.confChanges}, crashes ${totals.crashes}; ${((Date.now() - t0) / 1000).toFixed(1)} s`,
);
