/**
 * LoCoMo retrieval evaluation (`npm run eval:locomo`).
 *
 * For each conversation: every turn becomes an event "<speaker>: <text>" (one stream per session, a
 * deterministic UUID per session, the session's date as valid_time, one user per conversation), sent to
 * a running Strata server over HTTP; once `GET /v1/status/pending` says ready, every question of
 * categories 1-4 is asked through `POST /v1/users/:user/streams/:stream/retrieve` (scope user), and the
 * returned units are mapped back to the evidence turns through `references` (source event ids → dia_ids).
 *
 * Reported: evidence recall at 5, 10, 25 results and within 500, 1000, 2000 tokens of returned content,
 * beside BM25 over the raw turns computed in the same run (the baseline to beat). Figures go to
 * bench-results/locomo.json.
 *
 *   node --conditions=strata-source --import tsx scripts/eval-locomo.ts [--baseline-only] [--url http://127.0.0.1:3000]
 *        [--api-key KEY | env STRATA_API_KEY] [--start-server] [--conversations conv-26,conv-30]
 *        [--data DIR] [--out FILE] [--limit 100] [--graph-depth 1] [--timeout-s 1800]
 *        [--data-dir DIR (kept; reused by the next run)] [--dump FILE (per-question results)] [--no-in-process]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { getEncoding } from 'js-tiktoken';
import { freePort } from './lib/processes';
import type { MemoryUnit } from '../packages/store/src/types';
import { TextIndex } from '../packages/store/src/indexes/text-index';
import { VectorIndex } from '../packages/store/src/indexes/vector-index';
import { retrieve, type RetrievalConfig } from '../packages/memory/src/retrieval/pipeline';
import {
  deterministicUuid,
  loadLocomo,
  RecallAccumulator,
  turnContent,
  type LocomoConversation,
  type RankedEvidence,
} from './lib/locomo';

interface Options {
  url: string;
  apiKey: string | null;
  startServer: boolean;
  baselineOnly: boolean;
  conversations: string[];
  data: string;
  out: string;
  limit: number;
  graphDepth: number;
  timeoutS: number;
  userPrefix: string;
  inProcess: boolean;
  rrfK: number | undefined;
  weights: { vector: number; text: number } | undefined;
  /** write every question's ranked results (content, level, evidence hits) to this JSON file */
  dump: string | null;
  /**
   * --start-server on this data directory, kept afterwards: a second run on it re-sends the same events
   * (idempotent) and finds them consolidated, so retrieval changes are compared on the same memory.
   */
  dataDir: string | null;
}

function parseArgs(argv: string[]): Options {
  const opts: Options = {
    url: 'http://127.0.0.1:3000',
    apiKey: process.env.STRATA_API_KEY ?? null,
    startServer: false,
    baselineOnly: false,
    conversations: [],
    data: resolve(__dirname, '../../shared/data/locomo'),
    out: resolve(__dirname, '../bench-results/locomo.json'),
    limit: 100,
    graphDepth: 1,
    timeoutS: 1800,
    userPrefix: 'locomo',
    inProcess: true,
    rrfK: undefined,
    weights: undefined,
    dump: null,
    dataDir: null,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    switch (a) {
      case '--url': opts.url = next().replace(/\/+$/, ''); break;
      case '--api-key': opts.apiKey = next(); break;
      case '--start-server': opts.startServer = true; break;
      case '--baseline-only': opts.baselineOnly = true; break;
      case '--conversations': opts.conversations = next().split(',').map((s) => s.trim()).filter(Boolean); break;
      case '--data': opts.data = resolve(next()); break;
      case '--out': opts.out = resolve(next()); break;
      case '--limit': opts.limit = Number(next()); break;
      case '--graph-depth': opts.graphDepth = Number(next()); break;
      case '--timeout-s': opts.timeoutS = Number(next()); break;
      case '--user-prefix': opts.userPrefix = next(); break;
      case '--no-in-process': opts.inProcess = false; break;
      case '--dump': opts.dump = resolve(next()); break;
      case '--data-dir': opts.dataDir = resolve(next()); break;
      case '--rrf-k': opts.rrfK = Number(next()); break;
      case '--weights': {
        const [vector, text] = next().split(',').map(Number);
        opts.weights = { vector, text };
        break;
      }
      case '--help':
        console.log('usage: eval-locomo [--baseline-only] [--url U] [--api-key K] [--start-server] [--conversations a,b] [--data DIR] [--out FILE]');
        process.exit(0);
        break;
      default: throw new Error(`unknown option ${a}`);
    }
  }
  return opts;
}

const encoder = getEncoding('cl100k_base');
const countTokens = (text: string): number => encoder.encode(text).length;

/** Questions that count: categories 1-4 with at least one evidence turn. */
function evaluable(conv: LocomoConversation) {
  return conv.qa.filter((q) => q.category >= 1 && q.category <= 4 && q.evidence.length > 0);
}

/** BM25 over the raw turns of each conversation: the baseline of the same run. */
function runBaseline(convs: LocomoConversation[], depth: number) {
  const acc = new RecallAccumulator();
  for (const conv of convs) {
    const index = new TextIndex();
    const tokens = new Map<string, number>();
    for (const session of conv.sessions) {
      for (const turn of session.turns) {
        const text = turnContent(turn);
        index.add(turn.dia_id, text);
        tokens.set(turn.dia_id, countTokens(text));
      }
    }
    for (const q of evaluable(conv)) {
      const hits = index.search(q.question, depth);
      acc.add(q.category, q.evidence, hits.map((h) => ({ dia_ids: [h.id], tokens: tokens.get(h.id)! })));
    }
  }
  return acc.figures();
}

/**
 * The retrieval core alone (vector + text + fusion, in process) over the raw turns, each turn a unit:
 * what hybrid search adds over BM25 before any consolidation. Uses the default local embedder.
 */
async function runInProcess(convs: LocomoConversation[], opts: Options) {
  const { createEmbedder } = await import('../packages/memory/src/embedding');
  const embedder = await createEmbedder({ provider: 'local' });
  const acc = new RecallAccumulator();
  const times: number[] = [];
  const config: RetrievalConfig = { weights: opts.weights, fusion: opts.rrfK === undefined ? undefined : { rrfK: opts.rrfK } };
  for (const conv of convs) {
    const units = new Map<string, MemoryUnit>();
    const vector = new VectorIndex({ dimensions: embedder.dimensions });
    const text = new TextIndex();
    const turns = conv.sessions.flatMap((s) => s.turns.map((t) => ({ s, t })));
    const vectors = await embedder.embed(turns.map(({ t }) => turnContent(t)));
    turns.forEach(({ s, t }, i) => {
      const content = turnContent(t);
      units.set(t.dia_id, {
        id: t.dia_id, user_id: conv.id, stream_id: deterministicUuid(`${conv.id}/session/${s.index}`), org_id: null, agent_id: null,
        level: 1, memory_type: 'factual', content, keywords: [], speaker: t.speaker, valid_time: s.date, transaction_time: s.date,
        references: [t.dia_id], assets: [], importance: 0.5, subject: null, attribute: null, retired_at: null, retired_reason: null, superseded_by: null,
      });
      vector.add(t.dia_id, vectors[i]);
      text.add(t.dia_id, content);
    });
    const questions = evaluable(conv);
    const qvecs = await embedder.embed(questions.map((q) => q.question));
    const now = Date.parse(conv.sessions[conv.sessions.length - 1].date);
    questions.forEach((q, i) => {
      const t0 = performance.now();
      const { results } = retrieve(
        { vectorIndexes: [vector], textIndexes: [text], getUnit: (id) => units.get(id) },
        { query: q.question, queryVector: qvecs[i], user_id: conv.id, limit: opts.limit, graph_depth: 0 },
        config,
        now,
      );
      times.push(performance.now() - t0);
      acc.add(q.category, q.evidence, results.map((r) => ({ dia_ids: r.unit.references, tokens: countTokens(r.unit.content) })));
    });
  }
  times.sort((a, b) => a - b);
  return {
    embedder: embedder.id,
    figures: acc.figures(),
    search_ms: { p50: round3(times[Math.floor(times.length / 2)]), p99: round3(times[Math.floor(times.length * 0.99)]) },
  };
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;

// ---------------------------------------------------------------- HTTP side

class Api {
  constructor(private readonly base: string, private readonly apiKey: string | null) {}

  async call<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const res = await fetch(this.base + path, {
        method,
        headers: {
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...(this.apiKey ? { 'x-api-key': this.apiKey } : {}),
          ...headers,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      if ((res.status === 503 || res.status === 429) && attempt < 20) {
        const wait = Math.min(10, Number(res.headers.get('retry-after')) || 1);
        await sleep(wait * 1000);
        continue;
      }
      if (!res.ok) throw new Error(`${method} ${path} → ${res.status}: ${text.slice(0, 500)}`);
      return JSON.parse(text) as T;
    }
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface RetrievedUnit {
  id: string;
  content: string;
  level?: number;
  references?: string[];
}

async function ingest(api: Api, conv: LocomoConversation, userId: string): Promise<Map<string, string>> {
  const eventToDia = new Map<string, string>();
  for (const session of conv.sessions) {
    const streamId = deterministicUuid(`${conv.id}/session/${session.index}`);
    const events = session.turns.map((t) => ({
      content: turnContent(t),
      content_type: 'text',
      role: 'user',
      valid_time: session.date,
      metadata: { locomo_dia_id: t.dia_id, speaker: t.speaker },
    }));
    for (let start = 0; start < events.length; start += 500) {
      const chunk = events.slice(start, start + 500);
      const res = await api.call<{ event_ids: string[] }>(
        'POST',
        `/v1/users/${encodeURIComponent(userId)}/streams/${streamId}/events/batch`,
        { events: chunk },
        // a re-run within 24 h gets the same event ids back instead of duplicate events
        { 'idempotency-key': `locomo:${userId}:${streamId}:${start}` },
      );
      res.event_ids.forEach((id, i) => eventToDia.set(id, session.turns[start + i].dia_id));
    }
  }
  return eventToDia;
}

async function waitReady(api: Api, timeoutS: number): Promise<number> {
  const started = Date.now();
  let last = -1;
  while (Date.now() - started < timeoutS * 1000) {
    const s = await api.call<{ pending: number; ready: boolean; failed: number }>('GET', '/v1/status/pending');
    if (s.ready) return (Date.now() - started) / 1000;
    if (s.pending !== last) {
      process.stderr.write(`  pending ${s.pending} (failed ${s.failed})\n`);
      last = s.pending;
    }
    await sleep(1000);
  }
  throw new Error(`consolidation not done after ${timeoutS} s`);
}

async function evaluateServer(api: Api, convs: LocomoConversation[], opts: Options) {
  const acc = new RecallAccumulator();
  // L2 insights reference every event behind the memories they summarize (hundreds for a conversation),
  // so one short insight "covers" evidence it does not contain. This row counts evidence only through L1
  // units (an L2 result still takes its rank and its tokens): the figure that says whether the text of
  // the evidence was found.
  const accL1 = new RecallAccumulator();
  // Stricter still: evidence counted only through the event an L1 unit was made from (its first
  // reference). A unit that absorbed repeats lists their events too; when a repeat was not one (a merge
  // of two different statements), the unit covers a turn whose words it does not hold.
  const accSource = new RecallAccumulator();
  // the same per conversation (a change should help on each, not only on average)
  const accL1ByConv = new Map<string, RecallAccumulator>();
  const queryTimes: number[] = [];
  const ingestSeconds: Record<string, number> = {};
  let resultsWithoutReferences = 0;
  let results = 0;
  const maps = new Map<string, Map<string, string>>();
  const dump: unknown[] = [];
  for (const conv of convs) {
    const userId = `${opts.userPrefix}-${conv.id}`;
    const t0 = Date.now();
    maps.set(conv.id, await ingest(api, conv, userId));
    ingestSeconds[conv.id] = (Date.now() - t0) / 1000;
    console.error(`ingested ${conv.id} in ${ingestSeconds[conv.id]} s`);
  }
  const consolidationSeconds = await waitReady(api, opts.timeoutS);
  for (const conv of convs) {
    const userId = `${opts.userPrefix}-${conv.id}`;
    const eventToDia = maps.get(conv.id)!;
    // questions are asked from a stream of their own, so no session gets the current-stream boost
    const askStream = deterministicUuid(`${conv.id}/questions`);
    const convL1 = new RecallAccumulator();
    accL1ByConv.set(conv.id, convL1);
    for (const q of evaluable(conv)) {
      const res = await api.call<{ results: Array<{ unit: RetrievedUnit; score: number }>; query_time_ms: number }>(
        'POST',
        `/v1/users/${encodeURIComponent(userId)}/streams/${askStream}/retrieve`,
        { query: q.question, limit: opts.limit, scope: 'user', graph_depth: opts.graphDepth },
      );
      queryTimes.push(res.query_time_ms);
      const ranked: RankedEvidence[] = res.results.map((r) => {
        results++;
        const dia = (r.unit.references ?? []).map((e) => eventToDia.get(e)).filter((d): d is string => !!d);
        if (dia.length === 0) resultsWithoutReferences++;
        return { dia_ids: dia, tokens: countTokens(r.unit.content) };
      });
      acc.add(q.category, q.evidence, ranked);
      if (opts.dump) {
        dump.push({
          conversation: conv.id, question: q.question, category: q.category, answer: q.answer, evidence: q.evidence,
          results: res.results.slice(0, 25).map((r, i) => ({
            level: r.unit.level ?? 1, score: Math.round(r.score * 1e4) / 1e4, dia_ids: ranked[i].dia_ids.slice(0, 5),
            hit: ranked[i].dia_ids.some((d) => q.evidence.includes(d)), content: r.unit.content.slice(0, 300),
          })),
        });
      }
      const l1Only = ranked.map((r, i) => ((res.results[i].unit.level ?? 1) >= 2 ? { ...r, dia_ids: [] } : r));
      accL1.add(q.category, q.evidence, l1Only);
      convL1.add(q.category, q.evidence, l1Only);
      accSource.add(q.category, q.evidence, ranked.map((r, i) => {
        const u = res.results[i].unit;
        const first = (u.level ?? 1) >= 2 ? undefined : eventToDia.get(u.references?.[0] ?? '');
        return { ...r, dia_ids: first ? [first] : [] };
      }));
    }
  }
  if (opts.dump) writeFileSync(opts.dump, JSON.stringify(dump, null, 1) + '\n');
  queryTimes.sort((a, b) => a - b);
  const pct = (p: number) => (queryTimes.length ? queryTimes[Math.min(queryTimes.length - 1, Math.floor(p * queryTimes.length))] : null);
  return {
    figures: acc.figures(),
    figures_l1_evidence: accL1.figures(),
    figures_l1_source_evidence: accSource.figures(),
    figures_l1_evidence_by_conversation: Object.fromEntries([...accL1ByConv].map(([id, a]) => [id, a.figures().all])),
    query_time_ms: { p50: pct(0.5), p99: pct(0.99) },
    ingest_seconds: ingestSeconds,
    consolidation_wait_seconds: consolidationSeconds,
    results_without_known_references: results ? resultsWithoutReferences / results : 0,
  };
}

// ---------------------------------------------------------------- server process (--start-server)


async function startServer(keptDir: string | null): Promise<{ url: string; apiKey: string; child: ChildProcess; dataDir: string }> {
  const port = await freePort();
  if (keptDir) mkdirSync(keptDir, { recursive: true });
  const dataDir = keptDir ?? mkdtempSync(join(tmpdir(), 'strata-locomo-'));
  const apiKey = `sk_${randomBytes(18).toString('hex')}`;
  const root = resolve(__dirname, '..');
  const child = spawn(process.execPath, ['--conditions=strata-source', '--import', 'tsx', 'packages/server/src/main.ts'], {
    cwd: root,
    // Retrieval reinforcement off: otherwise each question would change the importance the next one
    // sees, and the figures would depend on question order.
    env: { ...process.env, STRATA_PORT: String(port), STRATA_DATA_DIR: dataDir, STRATA_API_KEY: apiKey, STRATA_HOST: '127.0.0.1', STRATA__MEMORY__REINFORCE_TOP: '0' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with code ${child.exitCode}`);
    try {
      const r = await fetch(`${url}/readyz`);
      if (r.ok) return { url, apiKey, child, dataDir };
    } catch {
      // not listening yet
    }
    await sleep(300);
  }
  child.kill('SIGTERM');
  throw new Error('server not ready within 60 s');
}

async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  const opts = parseArgs(process.argv.slice(2));
  const convs = loadLocomo(opts.data, opts.conversations);
  if (convs.length === 0) throw new Error(`no conversations found in ${opts.data}`);
  const questions = convs.reduce((n, c) => n + evaluable(c).length, 0);
  console.error(`${convs.length} conversations, ${questions} questions (categories 1-4)`);

  const baseline = runBaseline(convs, Math.max(100, opts.limit));
  const report: Record<string, unknown> = {
    generated_at: new Date().toISOString(),
    conversations: convs.map((c) => c.id),
    questions,
    tokenizer: 'cl100k_base',
    recall_definition:
      'per question, the fraction of its evidence dia_ids covered by the top-k results (or by the leading results whose cumulative token count fits the budget), averaged over questions',
    baseline_bm25_raw_turns: baseline,
    hybrid_raw_turns_in_process: opts.inProcess ? await runInProcess(convs, opts) : null,
    strata: null,
  };

  if (!opts.baselineOnly) {
    let server: Awaited<ReturnType<typeof startServer>> | null = null;
    try {
      if (opts.startServer) {
        server = await startServer(opts.dataDir);
        opts.url = server.url;
        opts.apiKey = server.apiKey;
      }
      const api = new Api(opts.url, opts.apiKey);
      report.strata = { url: opts.url, limit: opts.limit, graph_depth: opts.graphDepth, ...(await evaluateServer(api, convs, opts)) };
    } finally {
      if (server) {
        await stopServer(server.child);
        if (!opts.dataDir) rmSync(server.dataDir, { recursive: true, force: true });
      }
    }
  }

  mkdirSync(dirname(opts.out), { recursive: true });
  writeFileSync(opts.out, JSON.stringify(report, null, 2) + '\n');
  printTable(report);
  console.error(`wrote ${opts.out}`);
}

function printTable(report: Record<string, unknown>): void {
  const rows: Array<[string, Record<string, { questions: number; recall_at: Record<string, number>; recall_within_tokens: Record<string, number> }>]> = [
    ['bm25 raw turns', report.baseline_bm25_raw_turns as never],
  ];
  const hybrid = report.hybrid_raw_turns_in_process as { figures: never } | null;
  if (hybrid) rows.push(['hybrid (proc)', hybrid.figures]);
  const strata = report.strata as { figures: never; figures_l1_evidence: never; figures_l1_source_evidence: never } | null;
  if (strata) rows.push(['strata', strata.figures], ['strata L1 evid', strata.figures_l1_evidence], ['strata L1 src', strata.figures_l1_source_evidence]);
  console.log('system          category      n    R@5    R@10   R@25   R@500t R@1000t R@2000t');
  for (const [name, figs] of rows) {
    for (const [cat, f] of Object.entries(figs)) {
      const cells = [...Object.values(f.recall_at), ...Object.values(f.recall_within_tokens)].map((v) => v.toFixed(3).padStart(6));
      console.log(`${name.padEnd(15)} ${cat.padEnd(12)} ${String(f.questions).padStart(4)} ${cells.join(' ')}`);
    }
  }
  const byConv = (report.strata as { figures_l1_evidence_by_conversation?: Record<string, { questions: number; recall_at: Record<string, number>; recall_within_tokens: Record<string, number> }> } | null)
    ?.figures_l1_evidence_by_conversation;
  for (const [conv, f] of Object.entries(byConv ?? {})) {
    const cells = [...Object.values(f.recall_at), ...Object.values(f.recall_within_tokens)].map((v) => v.toFixed(3).padStart(6));
    console.log(`${'strata L1 evid'.padEnd(15)} ${conv.padEnd(12)} ${String(f.questions).padStart(4)} ${cells.join(' ')}`);
  }
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
