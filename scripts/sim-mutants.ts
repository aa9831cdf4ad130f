/**
 * Mutation test of the simulator: plants each classic Raft bug in a copy of packages/raft/src and
 * runs the simulator on the copy until it reports a violation, printing the seed that caught each.
 * A bug the simulator misses within the seed budget fails the run.
 *   node --conditions=strata-source --import tsx scripts/sim-mutants.ts [--seeds 600] [--block 50] [--steps 3000] [--only name] [--json out.json]
 * Every fault profile with 3, 5 and 7 voters is tried, round-robin in blocks of seeds, up to --seeds
 * seeds each; the report names the schedule and seed that caught each bug and how many seeds ran.
 * The copies live in .sim-mutants/ (ignored by git) so they resolve the repository's node_modules.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { FAULT_PROFILES } from '../packages/raft/src/sim/simulation';

interface Mutant {
  name: string;
  bug: string;
  /** file under packages/raft/src */
  file: string;
  find: string;
  replace: string;
}

export const MUTANTS: Mutant[] = [
  {
    name: 'vote-without-up-to-date-check',
    bug: 'votes granted without the "candidate log at least as up-to-date" rule (§5.4.1)',
    file: 'core/raft.ts',
    find: 'if (canVote && this.log.isUpToDate(m.index as number, m.logTerm as number)) {',
    replace: 'if (canVote) {',
  },
  {
    name: 'figure-8-commit-by-counting',
    bug: 'an entry of an earlier term committed by counting replicas (Figure 8)',
    file: 'core/raft.ts',
    find: 'if (q > this.log.committed && this.log.term(q) === this.term) {',
    replace: 'if (q > this.log.committed) {',
  },
  {
    name: 'read-index-without-quorum',
    bug: 'ReadIndex answered without confirming leadership with a heartbeat quorum',
    file: 'core/raft.ts',
    find: 'this.readOnly.add(ctx, this.log.committed, from, this.id);\n    this.bcastHeartbeat();',
    replace: 'this.answerRead(ctx, this.log.committed, from);',
  },
  {
    name: 'truncate-acknowledged-entries',
    bug: 'a follower truncates after the App\'s prev entry even where its entries match (drops acknowledged, possibly committed, entries on a stale App)',
    file: 'core/raft.ts',
    find: 'while (i < ents.length && this.log.matchTerm(ents[i].index, ents[i].term)) i++;',
    replace: '',
  },
  {
    name: 'commit-before-durable',
    bug: 'the leader counts its own entries toward commit before they are synced (applies before durable)',
    file: 'core/raft.ts',
    find: '(id === this.id ? this.persisted : (this.prs.get(id)?.match ?? 0))',
    replace: '(id === this.id ? this.log.lastIndex() : (this.prs.get(id)?.match ?? 0))',
  },
];

function arg(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? def : process.argv[i + 1];
}

const root = join(__dirname, '..');
const seeds = Number(arg('seeds', '600'));
const block = Number(arg('block', '50'));
const steps = Number(arg('steps', '3000'));
const only = arg('only', '');
const jsonOut = arg('json', '');
/** Every profile with 3, 5 and 7 voters, taken round-robin in blocks of seeds: each bug meets every schedule early. */
const COMBOS: { profile: string; voters: number }[] = FAULT_PROFILES.flatMap((profile) => [3, 5, 7].map((voters) => ({ profile, voters })));

interface Outcome {
  name: string;
  bug: string;
  caught: boolean;
  profile: string | null;
  voters: number | null;
  seed: number | null;
  /** seeds run before the catch, over all schedules */
  seedsRun: number;
  violation: string;
  reproduce: string;
  seconds: number;
}

/** Runs seeds [from, from+count) of one schedule on the mutated source; the catching seed and message, or null. */
function runBlock(src: string, combo: { profile: string; voters: number }, from: number, count: number): { seed: number; message: string; reproduce: string; ran: number } | null {
  const run = spawnSync(
    process.execPath,
    ['--conditions=strata-source', '--import', 'tsx', join(root, 'scripts/sim.ts'), '--seed-start', String(from), '--seeds', String(count), '--steps', String(steps), '--profile', combo.profile, '--voters', String(combo.voters)],
    { cwd: root, env: { ...process.env, STRATA_SIM_SRC: src }, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  const match = /VIOLATION at seed (\d+): (.*)/.exec(run.stderr);
  if (match) {
    const seed = Number(match[1]);
    const repro = /reproduce: (.*)/.exec(run.stderr);
    return { seed, message: match[2].slice(0, 300), reproduce: repro ? repro[1] : '', ran: seed - from + 1 };
  }
  if (run.status !== 0) throw new Error(`simulator exited ${run.status}: ${run.stderr.slice(-800)}`);
  return null;
}

const outcomes: Outcome[] = [];
for (const m of MUTANTS) {
  if (only && m.name !== only) continue;
  const dir = join(root, '.sim-mutants', m.name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  cpSync(join(root, 'packages/raft/src'), join(dir, 'src'), { recursive: true });
  const file = join(dir, 'src', m.file);
  const text = readFileSync(file, 'utf8');
  const at = text.indexOf(m.find);
  if (at < 0 || text.indexOf(m.find, at + 1) >= 0) {
    console.error(`mutant ${m.name}: the code to mutate is not found exactly once in ${m.file}; update the mutant`);
    process.exit(2);
  }
  writeFileSync(file, text.slice(0, at) + m.replace + text.slice(at + m.find.length));
  const t0 = Date.now();
  const o: Outcome = { name: m.name, bug: m.bug, caught: false, profile: null, voters: null, seed: null, seedsRun: 0, violation: '', reproduce: '', seconds: 0 };
  search: for (let from = 1; from <= seeds; from += block) {
    const count = Math.min(block, seeds - from + 1);
    for (const combo of COMBOS) {
      const hit = runBlock(join(dir, 'src'), combo, from, count);
      if (hit) {
        Object.assign(o, { caught: true, profile: combo.profile, voters: combo.voters, seed: hit.seed, violation: hit.message, reproduce: hit.reproduce });
        o.seedsRun += hit.ran;
        break search;
      }
      o.seedsRun += count;
    }
  }
  o.seconds = (Date.now() - t0) / 1000;
  outcomes.push(o);
  console.log(
    o.caught
      ? `caught   ${m.name}: ${o.profile}/${o.voters} voters seed ${o.seed}, after ${o.seedsRun} seeds (${o.seconds.toFixed(1)} s): ${o.violation}\n         ${o.reproduce}`
      : `MISSED   ${m.name}: ${o.seedsRun} seeds ran clean (${o.seconds.toFixed(1)} s)`,
  );
  rmSync(dir, { recursive: true, force: true });
}
if (jsonOut) {
  mkdirSync(dirname(jsonOut), { recursive: true });
  writeFileSync(jsonOut, JSON.stringify({ seedsPerSchedule: seeds, block, steps, schedules: COMBOS, outcomes }, null, 2) + '\n');
}
if (existsSync(join(root, '.sim-mutants'))) rmSync(join(root, '.sim-mutants'), { recursive: true, force: true });
process.exit(outcomes.every((o) => o.caught) ? 0 : 1);
