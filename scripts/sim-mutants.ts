/**
 * Mutation test of the simulator: plants each classic Raft bug in a copy of packages/raft/src and
 * runs the simulator on the copy until it reports a violation, printing the seed that caught each.
 * A bug the simulator misses within the seed budget fails the run.
 *   node --import tsx scripts/sim-mutants.ts [--seeds 3000] [--steps 3000] [--profile mixed] [--voters N] [--only name] [--json out.json]
 * The copies live in .sim-mutants/ (ignored by git) so they resolve the repository's node_modules.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

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
const seeds = Number(arg('seeds', '3000'));
const steps = Number(arg('steps', '3000'));
const only = arg('only', '');
const profile = arg('profile', 'mixed');
const voters = arg('voters', '');
const jsonOut = arg('json', '');

interface Outcome {
  name: string;
  bug: string;
  caught: boolean;
  seed: number | null;
  seedsRun: number;
  violation: string;
  seconds: number;
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
  // One worker keeps the first seed that catches the bug the lowest one (a deterministic figure).
  const run = spawnSync(process.execPath, ['--import', 'tsx', join(root, 'scripts/sim.ts'), '--seed-start', '1', '--seeds', String(seeds), '--steps', String(steps), '--profile', profile, ...(voters ? ['--voters', voters] : [])], {
    cwd: root,
    env: { ...process.env, STRATA_SIM_SRC: join(dir, 'src') },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const seconds = (Date.now() - t0) / 1000;
  const match = /VIOLATION at seed (\d+): (.*)/.exec(run.stderr);
  const o: Outcome = {
    name: m.name,
    bug: m.bug,
    caught: run.status === 1 && match !== null,
    seed: match ? Number(match[1]) : null,
    seedsRun: match ? Number(match[1]) : seeds,
    violation: match ? match[2].slice(0, 300) : '',
    seconds,
  };
  outcomes.push(o);
  console.log(o.caught ? `caught   ${m.name}: seed ${o.seed} (${o.seconds.toFixed(1)} s): ${o.violation}` : `MISSED   ${m.name}: ${seeds} seeds ran clean (${seconds.toFixed(1)} s)${run.status !== 0 ? `; exit ${run.status}: ${run.stderr.slice(-500)}` : ''}`);
  rmSync(dir, { recursive: true, force: true });
}
if (jsonOut) {
  mkdirSync(dirname(jsonOut), { recursive: true });
  writeFileSync(jsonOut, JSON.stringify({ seeds, steps, profile, voters: voters || null, outcomes }, null, 2) + '\n');
}
if (existsSync(join(root, '.sim-mutants'))) rmSync(join(root, '.sim-mutants'), { recursive: true, force: true });
process.exit(outcomes.every((o) => o.caught) ? 0 : 1);
