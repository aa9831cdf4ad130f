/**
 * The store simulator over a range of seeds (packages/store/src/sim): three replicas of the real state
 * machine on real LevelDB apply one random command stream with crashes, restarts and snapshot installs,
 * and must end with identical state images.
 *   node --conditions=strata-source --import tsx scripts/sim-store.ts [--seed-start 1] [--seeds 20] [--steps 1500]
 *     [--plant clock] [--no-faults] [--json bench-results/sim-store.json] [--dir /tmp/strata-sim-store]
 * Prints one line per seed (commands, crashes, snapshot installs, time) and the totals; on a divergence,
 * the seed, the checkpoint and the first differing key of each replica, and exits 1.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { passed, runStoreSim, type StoreSimReport } from '../packages/store/src/sim/run';
import { arg, intArg } from './cli-args';


const seedStart = intArg('seed-start', 1);
const seeds = intArg('seeds', 20);
const steps = intArg('steps', 1500);
const plant = arg('plant') === 'clock' ? 'clock' : null;
const faults = !process.argv.includes('--no-faults');
const json = arg('json');
const dir = arg('dir') ?? join(tmpdir(), `strata-sim-store-${process.pid}`);

function describe(r: StoreSimReport): string[] {
  const lines: string[] = [];
  if (r.divergence) {
    lines.push(`  replicas diverged at checkpoint ${r.divergence.checkpoint} (log index ${r.divergence.applied_index}); digests ${r.divergence.digests.map((d) => d.slice(0, 12)).join(' ')}`);
    const f = r.divergence.first;
    if (f) f.at.forEach((p, i) => lines.push(`  replica ${i}: first differing pair #${f.position}: ${p.key} = ${p.value}`));
  }
  if (r.answer_mismatch) {
    const m = r.answer_mismatch;
    lines.push(`  answer of index ${m.index} (${m.type}) differs on replica ${m.replica}:`, `    first: ${m.expected}`, `    then:  ${m.got}`);
  }
  for (const v of r.violations) lines.push(`  invariant: ${v}`);
  return lines;
}

async function main(): Promise<void> {
  const started = Date.now();
  const reports: StoreSimReport[] = [];
  let failedSeed: number | null = null;
  console.log(`sim-store: seeds ${seedStart}..${seedStart + seeds - 1}, ${steps} commands each, faults ${faults ? 'on' : 'off'}${plant ? `, planted: ${plant}` : ''}`);
  for (let seed = seedStart; seed < seedStart + seeds; seed++) {
    const r = await runStoreSim({ seed, steps, dir: join(dir, String(seed)), faults, plant });
    reports.push(r);
    const ok = passed(r);
    console.log(
      `seed ${seed}: ${ok ? 'ok' : 'FAILED'}  entries ${r.log_entries}  applies ${r.applies}  refused ${r.refused}  stale ${r.stale}  ` +
      `crashes ${r.crashes}  restarts ${r.restarts}  snapshots ${r.snapshot_installs} (torn ${r.torn_installs})  terms +${r.term_changes}  ` +
      `checkpoints ${r.checkpoints}  ${r.ms} ms  digest ${r.digest.slice(0, 12)}`,
    );
    if (!ok) {
      for (const line of describe(r)) console.log(line);
      console.log(`  reproduce: node --conditions=strata-source --import tsx scripts/sim-store.ts --seed-start ${seed} --seeds 1 --steps ${steps}${plant ? ` --plant ${plant}` : ''}${faults ? '' : ' --no-faults'}`);
      failedSeed = seed;
      break;
    }
  }
  rmSync(dir, { recursive: true, force: true });
  const sum = (f: (r: StoreSimReport) => number) => reports.reduce((s, r) => s + f(r), 0);
  const commands: Record<string, number> = {};
  for (const r of reports) for (const [k, n] of Object.entries(r.commands)) commands[k] = (commands[k] ?? 0) + n;
  const totals = {
    seeds: reports.length, commands: sum((r) => Object.values(r.commands).reduce((a, b) => a + b, 0)), log_entries: sum((r) => r.log_entries),
    applies: sum((r) => r.applies), refused: sum((r) => r.refused), stale: sum((r) => r.stale), crashes: sum((r) => r.crashes), restarts: sum((r) => r.restarts),
    snapshot_installs: sum((r) => r.snapshot_installs), torn_installs: sum((r) => r.torn_installs), checkpoints: sum((r) => r.checkpoints),
    ms: Date.now() - started,
  };
  console.log(`totals: ${JSON.stringify(totals)}`);
  console.log(`by command type: ${JSON.stringify(commands)}`);
  console.log(`applies per second: ${Math.round(totals.applies / (totals.ms / 1000))}`);
  if (json) {
    const out = resolve(json);
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, JSON.stringify({ when: new Date().toISOString(), seed_start: seedStart, steps, faults, plant, failed_seed: failedSeed, totals, commands, reports }, null, 2));
    console.log(`wrote ${out}`);
  }
  process.exit(failedSeed === null ? 0 : 1);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
