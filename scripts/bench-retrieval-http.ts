/**
 * Retrieval over HTTP on a running node (in process, real HTTP on loopback): one user with N units
 * proposed through the node's log (the command consolidation proposes, with the node's embeddings),
 * then
 *  - the first query, which builds the user's derived indexes from LevelDB (lazy build), while a second
 *    client polls GET /livez: its worst latency says whether the build stalls other requests;
 *  - sequential queries while the HNSW graph builds in its worker (search is exact meanwhile), until it
 *    is live (`graph_build_s`, from the end of the first query; livez polled meanwhile too);
 *  - `--queries` sequential retrieve calls: client-side p50/p99 and the server's query_time_ms p50/p99;
 *  - the same with 8 concurrent clients (throughput), `--rounds` times over the queries.
 *
 * CPU milliseconds per query (this process, all threads: the client's share included) are given beside
 * the latencies: on a shared machine they move less than wall time. With --expose-gc, memory is read
 * after a full collection.
 *
 *   node --expose-gc --conditions=strata-source --import tsx scripts/bench-retrieval-http.ts [--units 20000] [--queries 300] [--rounds 3]
 *        [--provider local|hashing] [--out FILE]
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { NodeStrataClient } from '@strata/client/node';
import { loadConfig, StrataNode } from '../packages/server/src';
import { createEmbedder } from '../packages/memory/src/embedding/factory';
import type { ConsolidateCommand, MemoryUnit } from '../packages/store/src';

const args = { units: 20_000, queries: 300, rounds: 3, provider: 'local', out: resolve(__dirname, '../bench-results/retrieval-http.json') };
for (let i = 2; i < process.argv.length; i += 2) {
  const [k, v] = [process.argv[i], process.argv[i + 1]];
  if (k === '--units') args.units = Number(v);
  else if (k === '--queries') args.queries = Number(v);
  else if (k === '--rounds') args.rounds = Number(v);
  else if (k === '--provider') args.provider = v;
  else if (k === '--out') args.out = resolve(v);
  else throw new Error(`unknown option ${k}`);
}

const WORDS = ('garden trip paris dinner sister guitar concert marathon recipe pasta budget meeting project deadline doctor ' +
  'appointment painting museum camping beach dog cat birthday gift book novel movie festival school teacher bike repair ' +
  'kitchen coffee tea yoga running soccer piano lesson flight hotel wedding cousin neighbour job interview salary car').split(' ');
let seed = 7;
const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
const pick = () => WORDS[Math.floor(rnd() * WORDS.length)];
const sentence = () => `I talked about the ${pick()} and the ${pick()} near the ${pick()} with my ${pick()} friend.`;
const gc = (globalThis as { gc?: () => void }).gc;
const memory = () => {
  gc?.();
  const m = process.memoryUsage();
  return { rss_mib: Math.round(m.rss / 1048576), heap_used_mib: Math.round(m.heapUsed / 1048576), external_mib: Math.round(m.external / 1048576) };
};
const cpuMs = (since: NodeJS.CpuUsage) => {
  const d = process.cpuUsage(since);
  return (d.user + d.system) / 1000;
};
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.min(s.length - 1, Math.floor(p * s.length))] * 100) / 100;
};

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'strata-bench-http-'));
  const key = 'bench-http-key-0123456789';
  const node = await StrataNode.start(loadConfig({
    env: {
      STRATA_API_KEY: key, STRATA_PORT: '0', STRATA_HOST: '127.0.0.1', STRATA_DATA_DIR: dataDir, STRATA__LOG__LEVEL: 'warn',
      STRATA__CONSOLIDATION__ENABLED: 'false', STRATA__EMBEDDING__PROVIDER: args.provider,
    },
  }));
  const client = new NodeStrataClient({ baseUrl: node.url, apiKey: key, connections: 16, timeoutMs: 120_000 });
  const embedder = await createEmbedder({ provider: args.provider as 'local' });
  const user = 'bench-user';
  const stream = '66666666-6666-4666-8666-666666666666';
  try {
    const t0 = performance.now();
    for (let start = 0; start < args.units; start += 1000) {
      const texts = Array.from({ length: Math.min(1000, args.units - start) }, sentence);
      const vectors = await embedder.embed(texts);
      const units: ConsolidateCommand['units'] = texts.map((content, i) => ({
        unit: {
          id: `00000000-0000-4000-8000-${String(start + i).padStart(12, '0')}`, user_id: user, stream_id: stream, org_id: null, agent_id: null,
          level: 1, memory_type: 'factual', content, keywords: [], speaker: null, valid_time: new Date(Date.UTC(2025, 0, 1) + (start + i) * 60_000).toISOString(),
          transaction_time: '2026-01-01T00:00:00.000Z', references: [], assets: [], importance: 0.5, subject: null, attribute: null,
          retired_at: null, retired_reason: null, superseded_by: null,
        } satisfies MemoryUnit,
        vector: Array.from(vectors[i]),
      }));
      await node.services.shards.forUser(user).log.propose({
        type: 'memory.consolidate', user_id: user, at: '2026-01-01T00:00:00.000Z', consumed: [], embedder_id: embedder.id, method: 'offline',
        units, reinforced: [], retired: [], edges: [], dropped: [],
      });
    }
    const loadS = (performance.now() - t0) / 1000;

    // What the process holds before any index is built (the Raft log keeps the uncompacted entries in
    // memory: here the load's commands, ~2.5 MB each with their vectors as JSON).
    const memBefore = memory();
    // First query: lazy build. Meanwhile another client polls /livez.
    let polling = true;
    const livez: number[] = [];
    const poller = (async () => {
      while (polling) {
        const s = performance.now();
        await client.raw('GET', '/livez', { auth: false });
        livez.push(performance.now() - s);
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    const b0 = performance.now();
    await client.retrieve(user, stream, { query: 'guitar concert with my sister' });
    const buildMs = performance.now() - b0;
    const livezBuild = [...livez];

    const queries = Array.from({ length: args.queries }, () => `${pick()} ${pick()} ${pick()}`);
    // Until the vector graph is live, search is exact: measured apart (the figures below are steady state).
    const g0 = performance.now();
    let graphLive = false;
    const settled = node.services.retrieval.settled().then(() => (graphLive = true));
    const during: number[] = [];
    for (let i = 0; !graphLive; i++) {
      const r = await client.retrieve(user, stream, { query: queries[i % queries.length], limit: 10 });
      during.push(r.query_time_ms);
    }
    await settled;
    const graphS = (performance.now() - g0) / 1000;
    polling = false;
    await poller;

    const client1: number[] = [];
    const server1: number[] = [];
    const cpu1 = process.cpuUsage();
    for (const q of queries) {
      const s = performance.now();
      const r = await client.retrieve(user, stream, { query: q, limit: 10 });
      client1.push(performance.now() - s);
      server1.push(r.query_time_ms);
    }
    const seqCpuMs = cpuMs(cpu1) / queries.length;
    const cpu2 = process.cpuUsage();
    const c0 = performance.now();
    const concurrent: number[] = [];
    const concurrentServer: number[] = [];
    const total = queries.length * args.rounds;
    await Promise.all(Array.from({ length: 8 }, async (_, w) => {
      for (let i = w; i < total; i += 8) {
        const s = performance.now();
        const r = await client.retrieve(user, stream, { query: queries[i % queries.length], limit: 10, start_time: '2025-01-05T00:00:00Z' });
        concurrent.push(performance.now() - s);
        concurrentServer.push(r.query_time_ms);
      }
    }));
    const concurrentS = (performance.now() - c0) / 1000;
    const concCpuMs = cpuMs(cpu2) / total;
    const mem = memory();
    const report = {
      at: new Date().toISOString(),
      command: `node --conditions=strata-source --import tsx scripts/bench-retrieval-http.ts --units ${args.units} --queries ${args.queries} --provider ${args.provider}`,
      embedder: embedder.id, units: args.units, load_s: Math.round(loadS * 100) / 100,
      first_query_with_build_ms: Math.round(buildMs), livez_during_build_ms: { max: pct(livezBuild, 1), p50: pct(livezBuild, 0.5), samples: livezBuild.length },
      graph_build_s: Math.round(graphS * 10) / 10,
      livez_until_graph_live_ms: { max: pct(livez, 1), samples: livez.length },
      during_graph_build: { queries: during.length, server_query_time_ms: { p50: pct(during, 0.5), p99: pct(during, 0.99) } },
      sequential: {
        client_ms: { p50: pct(client1, 0.5), p99: pct(client1, 0.99) }, server_query_time_ms: { p50: pct(server1, 0.5), p99: pct(server1, 0.99) },
        cpu_ms_per_query: Math.round(seqCpuMs * 100) / 100,
      },
      concurrent_8_with_time_filter: {
        queries: total, client_ms: { p50: pct(concurrent, 0.5), p99: pct(concurrent, 0.99) },
        server_query_time_ms: { p50: pct(concurrentServer, 0.5), p99: pct(concurrentServer, 0.99) }, qps: Math.round(total / concurrentS),
        cpu_ms_per_query: Math.round(concCpuMs * 100) / 100,
      },
      before_first_query: memBefore,
      ...mem,
      load_average_1m: Math.round(loadavg()[0] * 10) / 10,
    };
    console.log(JSON.stringify(report, null, 2));
    mkdirSync(dirname(args.out), { recursive: true });
    writeFileSync(args.out, JSON.stringify(report, null, 2) + '\n');
  } finally {
    await client.close();
    await node.stop();
    const closable = embedder as { close?: () => Promise<void> };
    await closable.close?.();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
