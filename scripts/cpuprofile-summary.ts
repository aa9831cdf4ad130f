/**
 * Where a V8 CPU profile spent its time: self time summed by function (name + file:line) and by file,
 * plus inclusive time of the functions whose names match --focus.
 *   node --conditions=strata-source --import tsx scripts/cpuprofile-summary.ts FILE.cpuprofile [--top 30] [--focus regex]
 *        [--from S --to S] [--timeline MS] [--consolidation] [--retrieval]
 * `--from`/`--to` keep the samples between those seconds of the profile (e.g. the drain of a backlog),
 * `--timeline MS` prints, per slice of MS, how the main thread's time split (idle, GC, the rest), and
 * `--consolidation` sums the samples into the stages of consolidation (planning, the similarity scan,
 * the memory views, apply, Raft, insights: docs/performance.md), by the functions on each sample's stack;
 * `--retrieval` into the stages of a retrieval (vector search exact or by graph, text search, the
 * filter they call, fusion, the pending read, index builds and byte estimates, HTTP).
 * Produce the profile with `node --cpu-prof` (scripts/bench-consolidation.ts --cpu-prof-dir DIR does).
 * Line numbers are those of tsx's output, so functions are best told apart by name.
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

interface Frame { functionName: string; url: string; lineNumber: number }
interface Node { id: number; callFrame: Frame; children?: number[] }
interface Profile { nodes: Node[]; startTime: number; endTime: number; samples: number[]; timeDeltas: number[] }

function arg(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1] : def;
}

const file = process.argv[2];
if (!file) throw new Error('usage: cpuprofile-summary.ts FILE.cpuprofile [--top N] [--focus regex]');
const top = Number(arg('top', '30'));
const focus = arg('focus', '');
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;

const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const from = Number(arg('from', '0')) * 1e6;
const to = Number(arg('to', 'Infinity')) * 1e6;
// Each sample's delta goes to the node sampled (its self time), when it falls in [from, to).
const samples: { id: number; at: number; us: number }[] = [];
let clock = 0;
profile.samples.forEach((id, i) => {
  const us = profile.timeDeltas[i] ?? 0;
  clock += us;
  if (clock >= from && clock < to) samples.push({ id, at: clock, us });
});
const selfUs = new Map<number, number>();
for (const s of samples) selfUs.set(s.id, (selfUs.get(s.id) ?? 0) + s.us);
const total = [...selfUs.values()].reduce((a, b) => a + b, 0);
/** The frames of a sample's stack, leaf first, as `name@file` (file: the last part of the path). */
const stackNames = (id: number): string[] => {
  const out: string[] = [];
  for (let n: number | undefined = id; n !== undefined; n = parent.get(n)) {
    const f = byId.get(n)!.callFrame;
    out.push(`${f.functionName}@${f.url.split('/').pop() ?? ''}`);
  }
  return out;
};

const where = (f: Frame) => {
  const url = f.url.replace(/^file:\/\//, '');
  return url ? `${relative(process.cwd(), url)}:${f.lineNumber + 1}` : '';
};
const label = (f: Frame) => `${f.functionName || '(anonymous)'} ${where(f)}`.trim();

function table(title: string, sums: Map<string, number>): void {
  console.log(`\n${title} (total ${(total / 1e6).toFixed(2)} s sampled)`);
  for (const [k, us] of [...sums.entries()].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`${(us / 1e3).toFixed(0).padStart(8)} ms ${((100 * us) / total).toFixed(1).padStart(5)}%  ${k}`);
  }
}

const selfByFn = new Map<string, number>();
const selfByFile = new Map<string, number>();
for (const [id, us] of selfUs) {
  const f = byId.get(id)!.callFrame;
  selfByFn.set(label(f), (selfByFn.get(label(f)) ?? 0) + us);
  const file = f.url ? relative(process.cwd(), f.url.replace(/^file:\/\//, '')).replace(/^node_modules\/([^/]+).*/, 'node_modules/$1') : `(${f.functionName})`;
  selfByFile.set(file, (selfByFile.get(file) ?? 0) + us);
}
table('self time by function', selfByFn);
table('self time by file', selfByFile);

if (focus) {
  // Inclusive time: a sample counts once for every distinct matching function on its stack.
  const re = new RegExp(focus);
  const incl = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const seen = new Set<string>();
    for (let n: number | undefined = id; n !== undefined; n = parent.get(n)) {
      const l = label(byId.get(n)!.callFrame);
      if (re.test(l) && !seen.has(l)) { seen.add(l); incl.set(l, (incl.get(l) ?? 0) + us); }
    }
  }
  table(`inclusive time of functions matching /${focus}/`, incl);
}

/** Stages of consolidation, tried in order against the `name@file` frames of a sample's stack. */
const has = (re: RegExp) => (frames: string[]): boolean => frames.some((f) => re.test(f));
const STAGES: [string, (frames: string[]) => boolean][] = [
  ['idle (waiting: log writes, LevelDB)', (f) => f[0].startsWith('(idle)')],
  ['garbage collector (main thread part)', (f) => f[0].startsWith('(garbage collector)')],
  ['insights (L2 planning)', has(/^(planUserInsights|planStreamReflection)@/)],
  ['memory views (read all units, or refresh)', has(/^(refresh|load|computeDirections|allUnits|userVectors|unitsBySubjectAttribute)@/)],
  // findSimilar: SimilarUnits (similar-units.ts) and, before issue 13, the view's scan (memory-view.ts, anonymous arrows)
  ['similarity scan (findSimilar)', has(/^(topK|findSimilar)@|^@memory-view\.ts$|^(project|dot|l2norm)@/)],
  ['planning (text analysis, embedding, merge decisions)', has(/^(planConsolidation|draftEvents|embed)@/)],
  ['apply: effects', has(/^resolveEffects@/)],
  ['apply: handler', has(/^(apply[A-Z]\w*|writeEdge|runHandler)@/)],
  ['apply: batch write, listeners', has(/^apply@/)],
  ['propose (command to JSON)', has(/^propose@/)],
  ['raft host (log append, fsync scheduling)', has(/^(flush|schedule)@host\.ts/)],
  ['reads for the batch (events, pending, L3)', has(/^(getEvents?|pendingOfUser|pendingUsersFrom|planEvents|queues|getMany|get)@/)],
];

/** Stages of retrieval (docs/performance.md "Retrieval"), tried in order like STAGES. */
const RETRIEVAL_STAGES: [string, (frames: string[]) => boolean][] = [
  ['idle', (f) => f[0].startsWith('(idle)')],
  ['garbage collector (main thread part)', (f) => f[0].startsWith('(garbage collector)')],
  ['index byte estimates (cache budget)', has(/^estimatedBytes@/)],
  ['index build (LevelDB reads, text and vector loads)', has(/^(buildUser|withVectors|load|rebuild|rebuildAsync|maybeStartBuild|install)@/)],
  ['index refresh after applied commands', has(/^(refreshUser|refreshOrgs)@/)],
  ['vector search: filter calls (graph walk)', (f) => f.some((x) => x.startsWith('callback@vector-index')) && f.findIndex((x) => x.startsWith('callback@vector-index')) > 0],
  ['vector search: exact scan', has(/^(searchExact|scanRows)@vector-index/)],
  ['vector search: graph', has(/^(searchGraph|search|searchAsync)@vector-index/)],
  ['text search: filter calls', (f) => { const i = f.findIndex((x) => x.startsWith('search@text-index')); return i > 0 && !f[i - 1].startsWith('tokenize@'); }],
  ['text search (BM25)', has(/^search@text-index/)],
  ['fusion, facets, arbitration', has(/^(fuse|facetList|arbitrate)@/)],
  ['whole records of the results (records stage)', has(/^(wholeRecords|readMany)@/)],
  ['pending events read (include_pending)', has(/^pendingSet@/)],
  ['query embedding', has(/^embed@/)],
  ['rest of the retrieval (planning, merging, speakers, stages, views)', has(/^(run|retrieve|retrieveAsync|finishRetrieval|retrieveMemory)@/)],
  ['apply (reinforcement commands)', has(/^apply@/)],
]

if (process.argv.includes('--retrieval')) {
  const sums = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const frames = stackNames(id);
    const stage = RETRIEVAL_STAGES.find(([, test]) => test(frames))?.[0] ?? 'other (HTTP server and client, JSON, express)';
    sums.set(stage, (sums.get(stage) ?? 0) + us);
  }
  table('by stage of retrieval', sums);
}

if (process.argv.includes('--consolidation')) {
  const sums = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const frames = stackNames(id);
    const stage = STAGES.find(([, test]) => test(frames))?.[0] ?? 'other';
    sums.set(stage, (sums.get(stage) ?? 0) + us);
  }
  table('by stage of consolidation', sums);
}

const slice = Number(arg('timeline', '0')) * 1000;
if (slice > 0) {
  console.log(`\ntimeline (slices of ${slice / 1000} ms: busy ms, idle ms, GC ms, top stage)`);
  const rows = new Map<number, Map<string, number>>();
  for (const s of samples) {
    const frames = stackNames(s.id);
    const stage = STAGES.find(([, test]) => test(frames))?.[0] ?? 'other';
    const row = rows.get(Math.floor(s.at / slice)) ?? new Map<string, number>();
    row.set(stage, (row.get(stage) ?? 0) + s.us);
    rows.set(Math.floor(s.at / slice), row);
  }
  for (const [k, row] of [...rows].sort((a, b) => a[0] - b[0])) {
    const idle = row.get(STAGES[0][0]) ?? 0;
    const gc = row.get(STAGES[1][0]) ?? 0;
    const busy = [...row.values()].reduce((a, b) => a + b, 0) - idle;
    const topStage = [...row].filter(([n]) => n !== STAGES[0][0]).sort((a, b) => b[1] - a[1])[0];
    console.log(`${((k * slice) / 1e6).toFixed(1).padStart(6)} s  busy ${(busy / 1e3).toFixed(0).padStart(5)}  idle ${(idle / 1e3).toFixed(0).padStart(5)}  gc ${(gc / 1e3).toFixed(0).padStart(4)}  ${topStage ? topStage[0] : ''}`);
  }
}
