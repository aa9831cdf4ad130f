/**
 * In-process benchmark of the retrieval core (vector index + BM25 text index + fusion pipeline):
 *
 *  - one user with 10,000 and with 100,000 synthetic units;
 *  - 1,000 users × 100 units (per-user indexes, queries spread over users).
 *
 * Reported per scenario: index build time, the longest event-loop stall during the load and graph build
 * (the graph builds in a worker), p50/p99 latency of a full `retrieve()` (vector + text + graph
 * expansion + fusion, filters on), of each retriever alone and, as the same run's baseline, of the
 * exact brute-force vector scan; recall@10 of the HNSW graph against the exact scan; RSS and heap.
 * Query embedding is timed separately (it is the provider's cost, not the index's).
 *
 * Embedder: the default local one (SIF word vectors, 100 dimensions) when its files are prepared;
 * otherwise a deterministic hashing embedder of 100 dimensions.
 *
 *   node --conditions=strata-source --import tsx scripts/bench-retrieval.ts [--sizes 10000,100000] [--users 1000x100] [--queries 500] [--out FILE]
 *
 * With --http, the concurrent mode instead: N users × M events or units in a node process, C clients over
 * HTTP (scripts/bench-retrieval-concurrent.ts says what it reports).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { dirname, resolve } from 'node:path';
import type { MemoryUnit } from '../packages/store/src/types';
import { TextIndex, VectorIndex } from '../packages/store/src/indexes';
import { buildAdjacency, neighborsOf } from '../packages/memory/src/retrieval/graph';
import { retrieve } from '../packages/memory/src/retrieval/pipeline';
import type { Embedder } from '../packages/memory/src/providers/types';
import { mulberry32 } from '../packages/memory/src/embedding/hash';
import { parseConcurrentArgs, runConcurrent } from './bench-retrieval-concurrent';

interface Args {
  sizes: number[];
  users: { count: number; units: number } | null;
  queries: number;
  out: string;
}

function parseArgs(argv: string[]): Args {
  const args: Args = { sizes: [10_000, 100_000], users: { count: 1000, units: 100 }, queries: 500, out: resolve(__dirname, '../bench-results/retrieval.json') };
  for (let i = 0; i < argv.length; i++) {
    const v = argv[i + 1];
    switch (argv[i]) {
      case '--sizes': args.sizes = v.split(',').filter(Boolean).map(Number); i++; break;
      case '--users': {
        if (v === 'none') args.users = null;
        else {
          const [count, units] = v.split('x').map(Number);
          args.users = { count, units };
        }
        i++;
        break;
      }
      case '--queries': args.queries = Number(v); i++; break;
      case '--out': args.out = resolve(v); i++; break;
      default: throw new Error(`unknown option ${argv[i]}`);
    }
  }
  return args;
}

/** Seeded PRNG: the same corpus and queries on every run. */
const prng = mulberry32;

const WORDS = (
  'time person year way day thing man world life hand part child eye woman place work week case point government ' +
  'company number group problem fact home water room mother area money story month lot right study book job word ' +
  'business issue side kind head house service friend father power hour game line end member law car city community ' +
  'name president team minute idea kid body information back parent face others level office door health art war ' +
  'history party result change morning reason research girl guy moment air teacher force education foot boy age ' +
  'policy music market sense nation plan college interest death experience effect class control care field ' +
  'development role effort rate heart drug show leader light voice wife police mind price report decision son view ' +
  'relationship town road arm difference value building action model season society tax director position player ' +
  'record paper space ground form event official matter center couple site project activity star table need court ' +
  'oil situation cost industry figure street image phone data picture practice piece land product doctor wall ' +
  'patient worker news test movie north love support technology step baby computer type attention film tree source ' +
  'organization hair window evidence population site garden painting pottery camping hiking dog cat guitar piano ' +
  'beach mountain lake river sunrise sunset concert festival wedding birthday vacation recipe dinner coffee tea ' +
  'soccer basketball marathon yoga library museum school university adoption charity volunteer workshop'
).split(' ');

/** Zipf-ish sampling: a few words are frequent, most are rare, as in real text. */
function sentence(rnd: () => number, length: number): string {
  const out: string[] = [];
  for (let i = 0; i < length; i++) out.push(WORDS[Math.floor(WORDS.length * Math.pow(rnd(), 2))]);
  return out.join(' ');
}

async function loadEmbedder(): Promise<Embedder> {
  const { createEmbedder } = await import('../packages/memory/src/embedding');
  try {
    return await createEmbedder({ provider: 'local' });
  } catch (err) {
    console.error(`local embedder unavailable (${err instanceof Error ? err.message : err}); using the hashing embedder`);
    return createEmbedder({ provider: 'hashing', dimensions: 100 });
  }
}

function pct(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return round(sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]);
}
const round = (x: number) => Math.round(x * 1000) / 1000;
const mb = (bytes: number) => Math.round(bytes / 1048576);

function memory() {
  global.gc?.();
  const m = process.memoryUsage();
  return { rss_mb: mb(m.rss), heap_used_mb: mb(m.heapUsed), external_mb: mb(m.external + m.arrayBuffers) };
}

function timeIt(n: number, f: (i: number) => void): { p50_ms: number; p99_ms: number; mean_ms: number } {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    f(i);
    times.push(performance.now() - t0);
  }
  const mean = times.reduce((s, x) => s + x, 0) / n;
  times.sort((a, b) => a - b);
  return { p50_ms: pct(times, 0.5), p99_ms: pct(times, 0.99), mean_ms: round(mean) };
}

function makeUnit(id: string, userId: string, stream: string, content: string, rnd: () => number, t0: number): MemoryUnit {
  const t = new Date(t0 + Math.floor(rnd() * 365) * 86_400_000).toISOString();
  const retired = rnd() < 0.05 ? new Date(Date.parse(t) + 86_400_000).toISOString() : null;
  return {
    id, user_id: userId, stream_id: stream, org_id: null, agent_id: null, level: rnd() < 0.1 ? 2 : 1,
    memory_type: rnd() < 0.1 ? 'procedural' : 'factual', content, keywords: [], speaker: null, valid_time: t, transaction_time: t,
    references: [], assets: [], importance: rnd(), subject: null, attribute: null, retired_at: retired,
    retired_reason: retired ? 'superseded' : null, superseded_by: null,
  };
}

async function embedAll(embedder: Embedder, texts: string[]): Promise<Float32Array[]> {
  const out: Float32Array[] = [];
  for (let i = 0; i < texts.length; i += 1000) out.push(...(await embedder.embed(texts.slice(i, i + 1000))));
  return out;
}

async function singleUser(embedder: Embedder, size: number, queries: number) {
  const rnd = prng(size);
  const t0 = Date.parse('2024-01-01T00:00:00.000Z');
  const texts = Array.from({ length: size }, () => sentence(rnd, 8 + Math.floor(rnd() * 16)));
  const embedStart = performance.now();
  const vectors = await embedAll(embedder, texts);
  const embedMs = performance.now() - embedStart;
  const units = new Map<string, MemoryUnit>();
  texts.forEach((text, i) => units.set(`m${i}`, makeUnit(`m${i}`, 'u', `s${i % 20}`, text, rnd, t0)));
  // a sparse graph: each unit linked to ~1 other
  const edges = Array.from({ length: size }, () => ({
    source_id: `m${Math.floor(rnd() * size)}`, target_id: `m${Math.floor(rnd() * size)}`, relation: 'RelatedTo' as const, weight: rnd(),
  }));
  const neighbors = neighborsOf(buildAdjacency(edges));

  const memBefore = memory();
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const buildStart = performance.now();
  const vector = new VectorIndex({ dimensions: embedder.dimensions });
  const text = new TextIndex();
  // the store's rebuild path: read every record, build the graph off the event loop
  await vector.rebuild((function* () {
    for (let i = 0; i < size; i++) yield { id: `m${i}`, vector: vectors[i] };
  })());
  await text.rebuildAsync((function* () {
    for (let i = 0; i < size; i++) yield { id: `m${i}`, text: texts[i] };
  })());
  const loadedMs = performance.now() - buildStart;
  await vector.whenIdle();
  const buildMs = performance.now() - buildStart;
  delay.disable();
  const memAfter = memory();

  // incremental inserts once the graph is live (what consolidation does all day)
  const extra = await embedder.embed(Array.from({ length: 200 }, () => sentence(rnd, 12)));
  const insert = timeIt(extra.length, (i) => vector.add(`extra${i}`, extra[i]));
  for (let i = 0; i < extra.length; i++) vector.remove(`extra${i}`);

  const qTexts = Array.from({ length: queries }, () => sentence(rnd, 4 + Math.floor(rnd() * 6)));
  const qEmbedStart = performance.now();
  const qVecs = await embedder.embed(qTexts);
  const qEmbedMs = (performance.now() - qEmbedStart) / queries;
  const sources = { vectorIndexes: [vector], textIndexes: [text], getUnit: (id: string) => units.get(id), neighbors };
  const now = t0 + 400 * 86_400_000;
  const full = timeIt(queries, (i) => retrieve(sources, { query: qTexts[i], queryVector: qVecs[i], user_id: 'u', stream_id: 's1', limit: 10, graph_depth: 1 }, {}, now));
  // what the store's stream index would hand over for scope=stream
  const streamIds = new Set([...units.values()].filter((u) => u.stream_id === 's3').map((u) => u.id));
  const filtered = timeIt(queries, (i) =>
    retrieve({ ...sources, restrictTo: streamIds }, { query: qTexts[i], queryVector: qVecs[i], user_id: 'u', stream_id: 's3', scope: 'stream', start_time: '2024-03-01T00:00:00Z', end_time: '2024-06-01T00:00:00Z', limit: 10 }, {}, now),
  );
  const filteredNoHint = timeIt(queries, (i) =>
    retrieve(sources, { query: qTexts[i], queryVector: qVecs[i], user_id: 'u', stream_id: 's3', scope: 'stream', start_time: '2024-03-01T00:00:00Z', end_time: '2024-06-01T00:00:00Z', limit: 10 }, {}, now),
  );
  const vectorOnly = timeIt(queries, (i) => vector.search(qVecs[i], 100));
  const textOnly = timeIt(queries, (i) => text.search(qTexts[i], 100));
  const exactRuns = Math.min(queries, 200);
  const exact = timeIt(exactRuns, (i) => vector.searchExact(qVecs[i], 100));
  let hit = 0;
  for (let i = 0; i < exactRuns; i++) {
    const truth = new Set(vector.searchExact(qVecs[i], 10).map((h) => h.id));
    hit += vector.search(qVecs[i], 10).filter((h) => truth.has(h.id)).length;
  }
  return {
    units: size,
    embedder: embedder.id,
    vector_mode: vector.mode,
    embed_corpus_s: round(embedMs / 1000),
    query_embed_ms_mean: round(qEmbedMs),
    load_s: round(loadedMs / 1000),
    graph_ready_s: round(buildMs / 1000),
    event_loop_max_stall_ms: round(delay.max / 1e6),
    event_loop_p99_stall_ms: round(delay.percentile(99) / 1e6),
    incremental_insert: insert,
    retrieve_full: full,
    retrieve_stream_time_filtered_with_stream_index: filtered,
    retrieve_stream_time_filtered_filter_only: filteredNoHint,
    vector_search_k100: vectorOnly,
    text_search_k100: textOnly,
    baseline_exact_vector_scan_k100: exact,
    hnsw_recall_at_10: round(hit / (exactRuns * 10)),
    memory_before_indexes: memBefore,
    memory_after_indexes: memAfter,
  };
}

async function manyUsers(embedder: Embedder, count: number, perUser: number, queries: number) {
  const rnd = prng(count * perUser + 7);
  const t0 = Date.parse('2024-01-01T00:00:00.000Z');
  const memBefore = memory();
  const users: Array<{ vector: VectorIndex; text: TextIndex; units: Map<string, MemoryUnit> }> = [];
  const buildStart = performance.now();
  for (let u = 0; u < count; u++) {
    const texts = Array.from({ length: perUser }, () => sentence(rnd, 8 + Math.floor(rnd() * 16)));
    const vecs = await embedder.embed(texts);
    const vector = new VectorIndex({ dimensions: embedder.dimensions });
    const text = new TextIndex();
    const units = new Map<string, MemoryUnit>();
    texts.forEach((t, i) => {
      const id = `u${u}-m${i}`;
      units.set(id, makeUnit(id, `user${u}`, `s${i % 5}`, t, rnd, t0));
      vector.add(id, vecs[i]);
      text.add(id, t);
    });
    users.push({ vector, text, units });
  }
  const buildMs = performance.now() - buildStart;
  const memAfter = memory();
  const qTexts = Array.from({ length: queries }, () => sentence(rnd, 4 + Math.floor(rnd() * 6)));
  const qVecs = await embedder.embed(qTexts);
  const who = qTexts.map(() => Math.floor(rnd() * count));
  const now = t0 + 400 * 86_400_000;
  const full = timeIt(queries, (i) => {
    const u = users[who[i]];
    retrieve({ vectorIndexes: [u.vector], textIndexes: [u.text], getUnit: (id) => u.units.get(id) }, { query: qTexts[i], queryVector: qVecs[i], user_id: `user${who[i]}`, limit: 10 }, {}, now);
  });
  return { users: count, units_per_user: perUser, build_s: round(buildMs / 1000), retrieve_full: full, memory_before_indexes: memBefore, memory_after_indexes: memAfter };
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const embedder = await loadEmbedder();
  const report: Record<string, unknown> = {
    generated_at: new Date().toISOString(),
    node: process.version,
    embedder: embedder.id,
    dimensions: embedder.dimensions,
    target: 'p99 of retrieve_full < 50 ms at 100,000 units',
    single_user: [] as unknown[],
    many_users: null,
  };
  for (const size of args.sizes) {
    console.error(`single user, ${size} units...`);
    const r = await singleUser(embedder, size, args.queries);
    (report.single_user as unknown[]).push(r);
    console.error(JSON.stringify(r, null, 1));
  }
  if (args.users) {
    console.error(`${args.users.count} users × ${args.users.units} units...`);
    report.many_users = await manyUsers(embedder, args.users.count, args.users.units, args.queries);
    console.error(JSON.stringify(report.many_users, null, 1));
  }
  mkdirSync(dirname(args.out), { recursive: true });
  writeFileSync(args.out, JSON.stringify(report, null, 2) + '\n');
  console.log(`wrote ${args.out}`);
}

// --help: the usage of both modes, from the two scripts' own headers
if (process.argv.includes('--help')) {
  for (const file of [__filename, resolve(__dirname, 'bench-retrieval-concurrent.ts')]) {
    const header = /^\/\*\*\n([\s\S]*?)\*\//.exec(readFileSync(file, 'utf8'))?.[1] ?? '';
    console.log(header.replace(/^ \* ?/gm, ''));
  }
  process.exit(0);
}

// --http: the concurrent mode over HTTP against a node process (scripts/bench-retrieval-concurrent.ts)
(process.argv.includes('--http') ? runConcurrent(parseConcurrentArgs(process.argv.slice(2))) : main()).catch((err) => {
  console.error(err);
  process.exit(1);
});
