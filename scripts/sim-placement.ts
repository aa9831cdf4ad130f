/**
 * The placement simulator over a range of seeds (packages/server/src/cluster/placement/sim.ts): the
 * placement planner against a seeded cluster (default 100 nodes, 1,000 groups, RF 3, ticks of one
 * second) with crashes (short, long past the failure detector, some coming back), joins and drains,
 * checking every tick that no group loses a majority of live caught-up voters through the planner's
 * doing, that no loss of quorum outlasts the detector's timeout, that no voter is removed before its
 * replacement is a caught-up voter, that no group's acknowledged data is lost, that the throttle holds,
 * and that the cluster ends balanced within the tolerances.
 *   node --conditions=strata-source --import tsx scripts/sim-placement.ts [--seed-start 1] [--seeds 20] [--nodes 100] [--groups 1000]
 *     [--steps 2400] [--budget 32] [--node-budget 4] [--detect 60] [--plant remove_before_add]
 *     [--json bench-results/sim-placement.json]
 * Prints one line per seed and the figures over all seeds; exits 1 on any violation.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { DEFAULT_SIM, runPlacementSim, type PlacementSimReport } from '../packages/server/src/cluster/placement/sim';
import { arg, intArg } from './cli-args';

const seedStart = intArg('seed-start', 1);
const seeds = intArg('seeds', 20);
const options = {
  nodes: intArg('nodes', DEFAULT_SIM.nodes),
  groups: intArg('groups', DEFAULT_SIM.groups),
  steps: intArg('steps', DEFAULT_SIM.steps),
  budget: intArg('budget', DEFAULT_SIM.budget),
  nodeBudget: intArg('node-budget', DEFAULT_SIM.nodeBudget),
  detect: intArg('detect', DEFAULT_SIM.detect),
  plant: arg('plant') === 'remove_before_add' ? ('remove_before_add' as const) : null,
};
const json = arg('json') ?? 'bench-results/sim-placement.json';

const max = (xs: number[]) => (xs.length ? Math.max(...xs) : 0);
const min = (xs: number[]) => (xs.length ? Math.min(...xs) : 0);
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const median = (xs: number[]) => {
  if (!xs.length) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};

function line(r: PlacementSimReport): string {
  const m = r.moves;
  return (
    `seed ${r.seed}: ${r.ok ? 'ok' : 'FAILED'}  crashes ${r.events.crashes} (unguarded ${r.events.crashes_unguarded}, long ${r.events.long_crashes})  ` +
    `joins ${r.events.joins}  drains ${r.events.drains}  moves ${m.repair}+${m.drain}+${m.balance} (repair+drain+balance)  transfers ${m.transfers}  ` +
    `quorum lost max ${r.quorum.max_loss_ticks}s (${r.quorum.loss_episodes} episodes)  repair max ${r.repair.max_ticks_from_crash}s  ` +
    `join fill max ${r.joins.max_fill_ticks ?? '-'}s  settle ${r.settle_ticks === null ? 'never' : `${r.settle_ticks}s`}  ` +
    `final replicas ${r.final.replicas_min}..${r.final.replicas_max} leaders ${r.final.leaders_min}..${r.final.leaders_max}  ${r.ms} ms`
  );
}

const started = Date.now();
const reports: PlacementSimReport[] = [];
console.log(`sim-placement: seeds ${seedStart}..${seedStart + seeds - 1}, ${options.nodes} nodes, ${options.groups} groups, RF ${DEFAULT_SIM.rf}, ${options.steps} ticks of 1 s, ` +
  `detector ${options.detect} s, budget ${options.budget} moves (${options.nodeBudget} per node)${options.plant ? `, planted: ${options.plant}` : ''}`);
for (let seed = seedStart; seed < seedStart + seeds; seed++) {
  const r = runPlacementSim({ seed, ...options });
  reports.push(r);
  console.log(line(r));
  if (!r.ok) {
    for (const v of r.first_violations) console.log(`  tick ${v.tick} ${v.kind}${v.group === null ? '' : ` group ${v.group}`}: ${v.detail}`);
    console.log(`  reproduce: node --conditions=strata-source --import tsx scripts/sim-placement.ts --seed-start ${seed} --seeds 1 --nodes ${options.nodes} --groups ${options.groups} --steps ${options.steps}${options.plant ? ` --plant ${options.plant}` : ''}`);
  }
}
const fills = reports.flatMap((r) => r.joins.fill_ticks);
const figures = {
  seeds: reports.length,
  failed_seeds: reports.filter((r) => !r.ok).map((r) => r.seed),
  violations: sum(reports.map((r) => r.violations)),
  crashes: sum(reports.map((r) => r.events.crashes)),
  crashes_unguarded: sum(reports.map((r) => r.events.crashes_unguarded)),
  long_crashes: sum(reports.map((r) => r.events.long_crashes)),
  joins: sum(reports.map((r) => r.events.joins)),
  drains: sum(reports.map((r) => r.events.drains)),
  moves: { repair: sum(reports.map((r) => r.moves.repair)), drain: sum(reports.map((r) => r.moves.drain)), balance: sum(reports.map((r) => r.moves.balance)), cancels: sum(reports.map((r) => r.moves.cancels)), transfers: sum(reports.map((r) => r.moves.transfers)) },
  quorum_loss_episodes: sum(reports.map((r) => r.quorum.loss_episodes)),
  max_seconds_below_quorum: max(reports.map((r) => r.quorum.max_loss_ticks)),
  detector_timeout_s: options.detect,
  max_seconds_crash_to_replacement: max(reports.map((r) => r.repair.max_ticks_from_crash)),
  mean_seconds_crash_to_replacement: Math.round(sum(reports.map((r) => r.repair.mean_ticks_from_crash * r.repair.episodes)) / Math.max(1, sum(reports.map((r) => r.repair.episodes)))),
  join_fill_seconds: { median: median(fills), max: max(fills) },
  max_settle_seconds_after_last_event: max(reports.map((r) => r.settle_ticks ?? Infinity)),
  final_replicas_per_node: { min: min(reports.map((r) => r.final.replicas_min)), max: max(reports.map((r) => r.final.replicas_max)), worst_spread: max(reports.map((r) => r.final.replicas_max - r.final.replicas_min)), tolerance: reports[0]?.final.tolerance },
  final_leaders_per_node: { min: min(reports.map((r) => r.final.leaders_min)), max: max(reports.map((r) => r.final.leaders_max)), worst_spread: max(reports.map((r) => r.final.leaders_max - r.final.leaders_min)), tolerance: reports[0]?.final.leader_tolerance },
  ms: Date.now() - started,
};
console.log(`figures: ${JSON.stringify(figures, null, 2)}`);
const out = resolve(json);
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, JSON.stringify({ when: new Date().toISOString(), seed_start: seedStart, options: { ...DEFAULT_SIM, ...options }, figures, reports }, null, 2));
console.log(`wrote ${out}`);
process.exit(figures.failed_seeds.length ? 1 : 0);
