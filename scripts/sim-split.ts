/**
 * The store simulator's split over a range of seeds (packages/store/src/sim/split-run.ts): an old and a
 * new group of three replicas each, a command stream, crashes, restarts and snapshot installs (whole and
 * torn), and a split (fence, chunked copy, commit, chunked drop) in the middle.
 *   node --conditions=strata-source --import tsx scripts/sim-split.ts [--seed-start 1] [--seeds 200] [--steps 200]
 * Prints a line per failed seed and the totals; exits 1 on the first failure.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runSplitSim, splitPassed } from '../packages/store/src/sim/split-run';
import { intArg } from './cli-args';

const seedStart = intArg('seed-start', 1);
const seeds = intArg('seeds', 200);
const steps = intArg('steps', 200);
const dir = join(tmpdir(), `strata-sim-split-${process.pid}`);

async function main(): Promise<void> {
  const started = Date.now();
  const totals = { seeds: 0, chunks_seeded: 0, drops: 0, moved_users: 0, refused_after_fence: 0, crashes: 0, snapshot_installs: 0, torn_installs: 0 };
  console.log(`sim-split: seeds ${seedStart}..${seedStart + seeds - 1}, ${steps} steps each`);
  for (let seed = seedStart; seed < seedStart + seeds; seed++) {
    const r = await runSplitSim({ seed, steps, dir: join(dir, String(seed)) });
    totals.seeds++;
    for (const k of ['chunks_seeded', 'drops', 'moved_users', 'refused_after_fence', 'crashes', 'snapshot_installs', 'torn_installs'] as const) totals[k] += r[k];
    if (!splitPassed(r)) {
      console.log(`seed ${seed}: FAILED`);
      for (const v of r.violations) console.log(`  ${v}`);
      console.log(`  reproduce: node --conditions=strata-source --import tsx scripts/sim-split.ts --seed-start ${seed} --seeds 1 --steps ${steps}`);
      process.exitCode = 1;
      break;
    }
    if (seed % 50 === 0) console.log(`seed ${seed}: ok so far (${Math.round((Date.now() - started) / 1000)} s)`);
  }
  console.log(`totals: ${JSON.stringify(totals)} in ${Math.round((Date.now() - started) / 1000)} s`);
}

void main();
