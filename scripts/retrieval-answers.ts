/**
 * The answers of a node to a fixed list of questions, asked one at a time over HTTP, on a copy of a data
 * directory kept by the concurrent bench (`bench:retrieval -- --http --keep-data DIR`): what two trees (or two
 * fresh processes of one tree) answer on one memory, compared result by result, and the node's CPU per query
 * with no concurrency to blur it. Reinforcement is off (an answer would otherwise change the memory the next
 * question is asked of). `--rounds R` asks R lists of `--queries` questions (each its own seeded draw of users
 * and questions); the first list's answers are kept and compared, and CPU is counted over the others.
 *
 *   node --conditions=strata-source --import tsx scripts/retrieval-answers.ts --data-from DIR [--tree DIR]
 *        [--users 20] [--events 1000] [--queries 600] [--rounds 2] [--seed 1] [--wait-s 0] [--settle-s 0] [--out FILE]
 *        [--compare FILE] [--cpu-prof-dir DIR] [--env KEY=VALUE]...
 *   node --conditions=strata-source --import tsx scripts/retrieval-answers.ts --data-from DIR --settle-into DIR2
 *
 * `--compare FILE` counts the questions answered otherwise than in FILE (another run's `--out`): other ids or
 * order, and the largest score difference. `--wait-s S` waits S seconds after the node is ready before asking
 * (the state may still change after a start: e.g. background workers proposing commands); `--settle-s S` waits
 * S seconds after the first round, before CPU is counted (the work a build starts in the background: warming
 * small users' traits).
 *
 * A node started on a copy of a data directory may change its memory in its first minute: the stream
 * reflections due once a stream has been quiet for 30 minutes of wall-clock time (workers/consolidation.ts
 * `runReflections`) are planned then, each a new unit with a new id, so two such nodes answer otherwise.
 * `--settle-into DIR2` runs a node on a copy of the directory, kept in DIR2, until the entries it applies stop
 * growing for 30 s, and stops it: on DIR2 two fresh processes answer alike.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { NodeStrataClient } from '@strata/client/node';
import { mulberry32 } from '../packages/memory/src/embedding/hash';
import { loadLocomo } from './lib/locomo';
import { ROOT, sleep } from './lib/processes';
import { API_KEY, chatEvents, cpuSeconds, startNode } from './bench-retrieval-concurrent';

interface Answer {
  user: string;
  query: string;
  results: Array<{ id: string; score: number; why?: unknown }>;
}

interface Args {
  dataFrom: string;
  tree: string;
  users: number;
  events: number;
  queries: number;
  rounds: number;
  seed: number;
  waitS: number;
  settleS: number;
  out: string | null;
  compare: string | null;
  settleInto: string | null;
  cpuProfDir: string | null;
  env: Record<string, string>;
  data: string;
}

function parseArgs(argv: string[]): Args {
  const a: Args = {
    dataFrom: '', tree: ROOT, users: 20, events: 1000, queries: 600, rounds: 2, seed: 1, waitS: 0, settleS: 0, out: null, compare: null, settleInto: null, cpuProfDir: null,
    env: {}, data: resolve(__dirname, '../../shared/data/locomo'),
  };
  for (let i = 0; i < argv.length; i += 2) {
    const [k, v] = [argv[i], argv[i + 1]];
    switch (k) {
      case '--data-from': a.dataFrom = resolve(v); break;
      case '--tree': a.tree = resolve(v); break;
      case '--users': a.users = Number(v); break;
      case '--events': a.events = Number(v); break;
      case '--queries': a.queries = Number(v); break;
      case '--rounds': a.rounds = Number(v); break;
      case '--seed': a.seed = Number(v); break;
      case '--wait-s': a.waitS = Number(v); break;
      case '--settle-s': a.settleS = Number(v); break;
      case '--out': a.out = resolve(v); break;
      case '--compare': a.compare = resolve(v); break;
      case '--settle-into': a.settleInto = resolve(v); break;
      case '--cpu-prof-dir': a.cpuProfDir = resolve(v); break;
      case '--data': a.data = resolve(v); break;
      case '--env': {
        const eq = v.indexOf('=');
        a.env[v.slice(0, eq)] = v.slice(eq + 1);
        break;
      }
      default: throw new Error(`unknown option ${k}`);
    }
  }
  if (!a.dataFrom) throw new Error('--data-from DIR is required');
  return a;
}

/** How two runs' answers differ: questions with other ids (or order), and the largest score difference among the others. */
export function compareAnswers(a: Answer[], b: Answer[]): { questions: number; otherIds: number; otherScores: number; maxScoreDiff: number; firstDiffs: string[] } {
  let otherIds = 0;
  let otherScores = 0;
  let maxScoreDiff = 0;
  const firstDiffs: string[] = [];
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i];
    const y = b[i];
    const idsX = x.results.map((r) => r.id).join(',');
    const idsY = y.results.map((r) => r.id).join(',');
    if (idsX !== idsY) {
      otherIds++;
      if (firstDiffs.length < 5) firstDiffs.push(`#${i} ${x.user} "${x.query}"`);
      continue;
    }
    let d = 0;
    x.results.forEach((r, j) => (d = Math.max(d, Math.abs(r.score - y.results[j].score))));
    if (d > 0) otherScores++;
    maxScoreDiff = Math.max(maxScoreDiff, d);
  }
  return { questions: Math.min(a.length, b.length), otherIds, otherScores, maxScoreDiff, firstDiffs };
}

/** Entries applied so far, every shard (strata_raft_apply_batch_entries_sum). */
async function appliedEntries(client: NodeStrataClient): Promise<number> {
  const res = await client.raw<string>('GET', '/metrics');
  const text = typeof res.body === 'string' ? res.body : '';
  let n = 0;
  for (const line of text.split('\n')) if (line.startsWith('strata_raft_apply_batch_entries_sum')) n += Number(line.split(' ').pop());
  return n;
}

/** A copy of `from` in `into`, run by a node until what it applies stops growing for 30 s (see the header). */
async function settle(a: Args, into: string): Promise<void> {
  cpSync(a.dataFrom, into, { recursive: true });
  const node = await startNode(a.tree, into, 'local', null, { STRATA__MEMORY__REINFORCE_TOP: '0', ...a.env }, []);
  const client = new NodeStrataClient({ baseUrl: node.url, apiKey: API_KEY, connections: 1, timeoutMs: 60_000 });
  try {
    await client.waitUntilReady(3_600_000, 500);
    let last = -1;
    for (let still = 0; still < 3; ) {
      await sleep(10_000);
      const n = await appliedEntries(client);
      still = n === last ? still + 1 : 0;
      last = n;
    }
    console.log(JSON.stringify({ settled: into, applied_entries: last }));
  } finally {
    await client.close();
    await node.stop();
  }
}

async function main(): Promise<void> {
  const a = parseArgs(process.argv.slice(2));
  if (a.settleInto) return settle(a, a.settleInto);
  const convs = loadLocomo(a.data);
  const users = Array.from({ length: a.users }, (_, i) => `bench-user-${i}`);
  const streams = users.map((_, u) => chatEvents(convs, u, a.events).at(-1)!.stream);
  const questions = convs.flatMap((c) => c.qa.map((q) => q.question));
  // each round its own draw (seed + round): a later round measures queries, not the same queries again
  const draw = (seed: number) => {
    const rnd = mulberry32(seed);
    return Array.from({ length: a.queries }, () => ({ u: Math.floor(rnd() * users.length), q: questions[Math.floor(rnd() * questions.length)] }));
  };

  const dataDir = mkdtempSync(join(tmpdir(), 'strata-answers-'));
  cpSync(a.dataFrom, dataDir, { recursive: true });
  const node = await startNode(a.tree, dataDir, 'local', a.cpuProfDir, { STRATA__MEMORY__REINFORCE_TOP: '0', ...a.env }, []);
  const client = new NodeStrataClient({ baseUrl: node.url, apiKey: API_KEY, connections: 1, timeoutMs: 600_000 });
  try {
    await client.waitUntilReady(3_600_000, 500);
    if (a.waitS > 0) await sleep(a.waitS * 1000);
    const answers: Answer[] = [];
    let cpu0 = 0;
    let t0 = 0;
    for (let round = 0; round < a.rounds; round++) {
      if (round === 1) {
        // the first round built the users' indexes: what a build starts in the background is not the queries'
        if (a.settleS > 0) await sleep(a.settleS * 1000);
        cpu0 = cpuSeconds(node.pid);
        t0 = performance.now();
      }
      for (const { u, q } of draw(a.seed + round)) {
        // explain: the signals are compared too (a field of the route the typed client does not declare)
        const r = await client.retrieve(users[u], streams[u], { query: q, limit: 10, explain: true } as Parameters<NodeStrataClient['retrieve']>[2]);
        if (round === 0) answers.push({ user: users[u], query: q, results: r.results.map((x) => ({ id: x.unit.id, score: x.score, why: (x as { why?: unknown }).why })) });
      }
    }
    const measured = (a.rounds - 1) * a.queries;
    const figures = measured > 0
      ? { cpu_ms_per_query: Math.round(((cpuSeconds(node.pid) - cpu0) * 1e6) / measured) / 1000, wall_ms_per_query: Math.round(((performance.now() - t0) * 1000) / measured) / 1000 }
      : {};
    console.log(JSON.stringify({ tree: a.tree, queries: a.queries, rounds: a.rounds, ...figures }));
    if (a.out) writeFileSync(a.out, JSON.stringify(answers));
    if (a.compare) console.log(JSON.stringify(compareAnswers(answers, JSON.parse(readFileSync(a.compare, 'utf8')) as Answer[])));
  } finally {
    await client.close();
    await node.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
