/**
 * The store simulator's split and merge over a range of seeds (packages/store/src/sim/split-run.ts): an
 * old and a new group of three replicas each, a command stream, crashes, restarts and snapshot installs
 * (whole and torn), and a split or merge (fence, [receive,] chunked copy, commit, chunked drop; a quarter
 * of them aborted during the copy instead) in the middle.
 *   node --conditions=strata-source --import tsx scripts/sim-split.ts [--seed-start 1] [--seeds 200] [--steps 200] [--kind split|merge|both]
 * Prints a line per failed seed and the totals; exits 1 on the first failure.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runSplitSim, splitPassed } from '../packages/store/src/sim/split-run';
import { intArg } from './cli-args';

const seedStart = intArg('seed-start', 1);
const seeds = intArg('seeds', 200);
const steps = intArg('steps', 200);
// --kind split|merge|both (both: even seeds split, odd seeds merge)
const kindArg = process.argv.includes('--kind') ? process.argv[process.argv.indexOf('--kind') + 1] : 'both';
if (!['split', 'merge', 'both'].includes(kindArg)) throw new Error('--kind must be split, merge or both');
const kindOf = (seed: number): 'split' | 'merge' => (kindArg === 'both' ? (seed % 2 === 0 ? 'split' : 'merge') : (kindArg as 'split' | 'merge'));
const dir = join(tmpdir(), `strata-sim-split-${process.pid}`);

async function main(): Promise<void> {
  const started = Date.now();
  const totals = { seeds: 0, splits: 0, merges: 0, aborted: 0, chunks_seeded: 0, drops: 0, moved_users: 0, refused_after_fence: 0, crashes: 0, snapshot_installs: 0, torn_installs: 0 };
  console.log(`sim-split: seeds ${seedStart}..${seedStart + seeds - 1}, ${steps} steps each, kind ${kindArg}`);
  for (let seed = seedStart; seed < seedStart + seeds; seed++) {
    const r = await runSplitSim({ seed, steps, dir: join(dir, String(seed)), kind: kindOf(seed) });
    totals.seeds++;
    totals[r.kind === 'split' ? 'splits' : 'merges']++;
    if (r.aborted) totals.aborted++;
    for (const k of ['chunks_seeded', 'drops', 'moved_users', 'refused_after_fence', 'crashes', 'snapshot_installs', 'torn_installs'] as const) totals[k] += r[k];
    if (!splitPassed(r)) {
      console.log(`seed ${seed}: FAILED`);
      for (const v of r.violations) console.log(`  ${v}`);
      console.log(`  reproduce: node --conditions=strata-source --import tsx scripts/sim-split.ts --seed-start ${seed} --seeds 1 --steps ${steps} --kind ${r.kind}`);
      process.exitCode = 1;
      break;
    }
    if (seed % 50 === 0) console.log(`seed ${seed}: ok so far (${Math.round((Date.now() - started) / 1000)} s)`);
  }
  console.log(`totals: ${JSON.stringify(totals)} in ${Math.round((Date.now() - started) / 1000)} s`);
}

void main();
