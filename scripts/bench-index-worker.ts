/**
 * The index worker's ranking against the event loop's, in one process, over the same index: one user's
 * N units (LoCoMo turns recombined, as `bench:retrieval --http --units` imports them, with the local
 * embedder's vectors) are loaded both into a UserIndex on the main thread and into the index worker
 * (RemoteUserIndex, as DerivedIndexes does for a large user); both graphs are built; then the same
 * LoCoMo questions are asked one at a time, in blocks that alternate between the two, so that the
 * machine's load (shared, moving) weighs on both alike.
 *
 * One query at a time: only one thread ranks at any moment, so what is compared is the code's speed
 * where it runs, not two threads competing for two cores. Per query it reports
 *  - the `search` and `fuse` stages as measured where the pipeline runs (the worker's are its own);
 *  - the round trip seen by the caller (for the worker: the copies both ways and the thread's wake-up);
 *  - the process's CPU time (every thread; one busy at a time).
 * Answers are compared too (ids and scores): they must be the same.
 *
 *   node --expose-gc --conditions=strata-source --import tsx scripts/bench-index-worker.ts [--units 100000] [--queries 400] [--blocks 6] [--out FILE]
 */
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import pino from 'pino';
import { retrieval } from '@strata/memory';
import type { MemoryUnit } from '@strata/store';
import { createEmbedder } from '../packages/memory/src/embedding/factory';
import { mulberry32 } from '../packages/memory/src/embedding/hash';
import { collapseBySource, retrievalSources } from '../packages/server/src/indexes/sources';
import { IndexWorker } from '../packages/server/src/indexes/worker/index-worker';
import { RemoteUserIndex } from '../packages/server/src/indexes/worker/remote-index';
import type { WorkerQuery } from '../packages/server/src/indexes/worker/protocol';
import { deterministicUuid, loadLocomo } from './lib/locomo';

const { UserIndex, retrieveAsync } = retrieval;
const ROOT = resolve(__dirname, '..');

function arg(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1] : def;
}

const UNITS = Number(arg('units', '100000'));
const QUERIES = Number(arg('queries', '400'));
const BLOCKS = Number(arg('blocks', '6'));
const OUT = arg('out', '');
const USER = 'bench-user-0';
const NOW = Date.parse('2026-06-01T00:00:00.000Z');

const round = (x: number, d = 3) => Math.round(x * 10 ** d) / 10 ** d;
const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / Math.max(1, xs.length);
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

async function main(): Promise<void> {
  const embedder = await createEmbedder({ provider: 'local' });
  const convs = loadLocomo(resolve(ROOT, '../shared/data/locomo'));
  const turns = convs.flatMap((c) => c.sessions.flatMap((s) => s.turns.map((t) => ({ text: t.text, valid_time: s.date }))));
  const stream = deterministicUuid(`${USER}/stream`);
  const t0 = performance.now();
  const entries: retrieval.IndexEntry[] = [];
  for (let start = 0; start < UNITS; start += 5000) {
    const n = Math.min(5000, UNITS - start);
    const texts = Array.from({ length: n }, (_, i) => {
      const a = turns[(start + i) % turns.length];
      const b = turns[((start + i) * 7) % turns.length];
      return { content: `${a.text} ${b.text.split(' ').slice(0, 6).join(' ')}`, valid_time: a.valid_time };
    });
    const vectors = await embedder.embed(texts.map((t) => t.content));
    texts.forEach((t, i) => {
      const unit: MemoryUnit = {
        id: `00000000-0000-4000-8000-${String(start + i).padStart(12, '0')}`, user_id: USER, stream_id: stream, org_id: null, agent_id: null,
        level: 1, memory_type: 'factual', content: t.content, keywords: [], speaker: null, valid_time: t.valid_time,
        transaction_time: '2026-01-01T00:00:00.000Z', references: [], assets: [], importance: 0.5, subject: null, attribute: null,
        retired_at: null, retired_reason: null, superseded_by: null,
      };
      entries.push({ unit, vector: new Float32Array(vectors[i]), context: null });
    });
  }
  process.stderr.write(`${UNITS} units embedded in ${round((performance.now() - t0) / 1000, 1)} s\n`);

  const setOptions = { embedder: { dimensions: embedder.dimensions } };
  const here = new UserIndex(setOptions);
  const worker = new IndexWorker(setOptions, pino({ level: 'silent' }));
  const there = new RemoteUserIndex(worker, embedder.dimensions, () => undefined, () => undefined);
  const t1 = performance.now();
  await Promise.all([here.load(entries), there.load(entries)]);
  await Promise.all([here.vector.whenIdle(), there.whenIdle()]);
  entries.length = 0;
  process.stderr.write(`both indexes loaded and their graphs built in ${round((performance.now() - t1) / 1000, 1)} s (main: ${here.vector.mode})\n`);

  const questions = convs.flatMap((c) => c.qa.map((q) => q.question));
  const rnd = mulberry32(1);
  const asked = Array.from({ length: QUERIES }, () => questions[Math.floor(rnd() * questions.length)]);
  const qvectors = await embedder.embed(asked);
  const config: retrieval.RetrievalConfig = { maxLimit: 100, fusion: { collapseKey: collapseBySource, importanceHalfLifeDays: 30 } };
  const requestOf = (i: number): retrieval.RetrieveRequest => ({
    query: asked[i], queryVector: new Float32Array(qvectors[i]), user_id: USER, stream_id: stream, scope: 'user', org_id: null,
    start_time: null, end_time: null, as_of: null, limit: 10, min_score: 0, graph_depth: 1, agent_id: null, enable_arbitration: false,
  });

  type Sample = { search: number; fuse: number; trip: number; cpu: number };
  const samples: Record<'main' | 'worker', Sample[]> = { main: [], worker: [] };
  const answers: Record<'main' | 'worker', string[]> = { main: [], worker: [] };
  const sign = (results: { unit: { id: string }; score: number }[]) => results.map((r) => `${r.unit.id}:${r.score}`).join(' ');

  async function onMain(i: number): Promise<void> {
    const stages: Partial<Record<string, number>> = {};
    const c0 = cpuMs();
    const s0 = performance.now();
    let last = s0;
    const clock: retrieval.StageClock = { end(stage) { const now = performance.now(); stages[stage] = now - last; last = now; } };
    const sources = retrievalSources({ user: here, orgs: [], pending: null, scope: 'user', streamId: stream, queryHash: null });
    const out = await retrieveAsync(sources, requestOf(i), config, NOW, clock);
    samples.main.push({ search: stages.search ?? 0, fuse: stages.fuse ?? 0, trip: performance.now() - s0, cpu: cpuMs() - c0 });
    answers.main[i] = sign(out.results);
  }
  async function inWorker(i: number): Promise<void> {
    const query: WorkerQuery = {
      request: requestOf(i), config: { ...config, fusion: { ...config.fusion, collapseKey: undefined } }, now: NOW,
      scope: 'user', streamId: stream, queryHash: null, orgs: [], pending: null,
    };
    const c0 = cpuMs();
    const s0 = performance.now();
    const out = await there.query(query);
    samples.worker.push({ search: out.stages.search ?? 0, fuse: out.stages.fuse ?? 0, trip: performance.now() - s0, cpu: cpuMs() - c0 });
    answers.worker[i] = sign(out.results);
  }

  // warm both (JIT, caches of record traits), unmeasured
  for (let i = 0; i < Math.min(50, QUERIES); i++) {
    await onMain(i);
    await inWorker(i);
  }
  samples.main.length = 0;
  samples.worker.length = 0;
  const per = Math.ceil(QUERIES / BLOCKS);
  for (let b = 0; b < BLOCKS; b++) {
    const from = b * per;
    const to = Math.min(QUERIES, from + per);
    // alternate which goes first, so neither always follows the other's garbage
    const order = b % 2 === 0 ? [onMain, inWorker] : [inWorker, onMain];
    for (const run of order) for (let i = from; i < to; i++) await run(i);
  }
  const differ = answers.main.filter((a, i) => a !== answers.worker[i]).length;
  const summary = Object.fromEntries((['main', 'worker'] as const).map((k) => {
    const s = samples[k];
    return [k, {
      search_ms: { mean: round(mean(s.map((x) => x.search))), p50: round(pct(s.map((x) => x.search), 50)) },
      fuse_ms: { mean: round(mean(s.map((x) => x.fuse))), p50: round(pct(s.map((x) => x.fuse), 50)) },
      trip_ms: { mean: round(mean(s.map((x) => x.trip))), p50: round(pct(s.map((x) => x.trip), 50)), p99: round(pct(s.map((x) => x.trip), 99)) },
      process_cpu_ms: round(mean(s.map((x) => x.cpu))),
    }];
  }));
  const ratio = (f: (k: 'main' | 'worker') => number) => round(f('worker') / f('main'), 2);
  const report = {
    units: UNITS, queries: QUERIES, blocks: BLOCKS, answers_differ: differ, ...summary,
    ratio_worker_to_main: {
      search: ratio((k) => summary[k].search_ms.mean), fuse: ratio((k) => summary[k].fuse_ms.mean),
      trip: ratio((k) => summary[k].trip_ms.mean), process_cpu: ratio((k) => summary[k].process_cpu_ms),
    },
  };
  console.log(JSON.stringify(report, null, 2));
  if (OUT) writeFileSync(OUT, JSON.stringify(report, null, 2) + '\n');
  there.drop();
  await worker.close();
  await (embedder as { close?: () => Promise<void> }).close?.();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
