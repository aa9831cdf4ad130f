/**
 * The conversation suite (`npm run eval:conversations`): top-1 and top-3 of retrieval on plain questions
 * about realistic chats (scripts/lib/conversations.ts), stale facts left current, the small-talk share of
 * L1 units, and whether the context of time questions is dated and carries the current value. Starts its
 * own node on a fresh data directory unless --url is given. Figures go to bench-results/conversations.json.
 *
 *   node --conditions=strata-source --import tsx scripts/eval-conversations.ts [--file test/conversations/suite.json ...]
 *        [--embedder local|hashing] [--all-at-once] [--url URL --api-key KEY] [--misses] [--units] [--dump] [--retired]
 *        [--llm BASE_URL --llm-model MODEL] [--env NAME=VALUE ...] [--candidates FILE]
 *
 * --candidates writes each question's top 30 candidates with their ranking signals (JSON lines), for
 * studying the ranking offline.
 *
 * --llm runs consolidation through an OpenAI-compatible chat model (the node's `[llm]` section; the key is
 * read from STRATA_LLM_API_KEY in this shell, never from the command line), so the same figures compare
 * the offline path with a model.
 */
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { StrataClient } from '@strata/client';
import { removeDir, startServer, type ServerProcess } from '../test/helpers/server-process';
import { arg, args } from './cli-args';
import { loadSuite, runSuite, type Suite } from './lib/conversations';


const DEFAULT_FILES = ['test/conversations/dev.json', 'test/conversations/suite.json'];

async function main(): Promise<void> {
  const files = args('file').length > 0 ? args('file') : DEFAULT_FILES;
  const only = args('only');
  const suite: Suite = { conversations: files.flatMap((f) => loadSuite(resolve(f)).conversations).filter((c) => only.length === 0 || only.includes(c.id)) };
  const embedder = arg('embedder') ?? 'local';
  const out = resolve(arg('out') ?? resolve(__dirname, '../bench-results/conversations.json'));
  const url = arg('url') ?? '';
  const key = arg('api-key') ?? process.env.STRATA_API_KEY ?? 'conversations-admin-key';
  let server: ServerProcess | null = null;
  if (!url) {
    const env: Record<string, string> = { STRATA_ADMIN_API_KEY: key, STRATA__CONSOLIDATION__INTERVAL_MS: '50', STRATA__EMBEDDING__PROVIDER: embedder };
    const llm = arg('llm');
    if (llm) {
      const model = arg('llm-model');
      if (!model) throw new Error('--llm needs --llm-model');
      Object.assign(env, { STRATA__LLM__PROVIDER: 'openai', STRATA__LLM__BASE_URL: llm, STRATA__LLM__MODEL: model });
      if (process.env.STRATA_LLM_API_KEY) env.STRATA__LLM__API_KEY = process.env.STRATA_LLM_API_KEY;
    }
    for (const kv of args('env')) { const [k, ...v] = kv.split('='); env[k] = v.join('='); }
    server = await startServer({ env, timeoutMs: 120_000 });
  }
  const client = new StrataClient({ baseUrl: url || server!.url, apiKey: key });
  try {
    const started = Date.now();
    const dump = arg('candidates');
    if (dump) writeFileSync(dump, '');
    const s = await runSuite(client, suite, {
      perSession: !process.argv.includes('--all-at-once'), progress: (m) => process.stderr.write(`${m}\n`), explain: process.argv.includes('--explain'),
      candidates: dump ? (c) => appendFileSync(dump, `${JSON.stringify(c)}\n`) : undefined,
    });
    console.log(`conversations ${suite.conversations.length} (${files.join(', ')}), ${s.questions} questions, ${((Date.now() - started) / 1000).toFixed(1)} s`);
    console.log(`  top-1 ${s.top1.toFixed(3)}   top-3 ${s.top3.toFixed(3)}`);
    for (const [kind, v] of Object.entries(s.by_kind).sort()) console.log(`  ${kind.padEnd(13)} top-1 ${v.top1.toFixed(3)}  top-3 ${v.top3.toFixed(3)}  (${v.questions})`);
    console.log(`  stale facts left current: ${s.stale_left_current} of ${s.stale_questions}; stale ranked above the answer: ${s.stale_above_answer}`);
    console.log(`  answers retired (a question about what holds, its answer's units all retired): ${s.answers_retired}`);
    console.log(`  filler: ${s.filler_units} of ${s.l1_units} L1 units (${(s.filler_share * 100).toFixed(1)}%)`);
    console.log(`  time-question contexts dated and current: ${s.time_contexts_ok} of ${s.time_contexts}`);
    if (process.argv.includes('--misses')) {
      for (const r of s.results.filter((x) => x.rank !== 1)) {
        console.log(`  miss [${r.conversation} ${r.kind}] ${r.q}  want /${r.answer}/ rank ${r.rank ?? '-'}${r.staleAbove ? ' STALE-ABOVE' : ''}`);
        r.top.forEach((t, i) => console.log(`       ${i + 1}. ${t.slice(0, 160)}`));
      }
      for (const r of s.results.filter((x) => x.contextDated === false || x.contextCurrent === false)) console.log(`  context [${r.conversation}] ${r.q}: dated ${r.contextDated} current ${r.contextCurrent}${r.contextWhy ? ` (${r.contextWhy})` : ''}`);
    }
    if (process.argv.includes('--units')) {
      for (const u of s.stale_units) console.log(`  stale: ${u}`);
      for (const u of s.answers_retired_units) console.log(`  answer retired: ${u}`);
      for (const u of s.filler) console.log(`  filler: ${u}`);
    }
    if (process.argv.includes('--dump')) for (const u of s.described) console.log(`  unit: ${u}`);
    if (process.argv.includes('--retired')) for (const u of s.retired) console.log(`  retired: ${u}`);
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, JSON.stringify({ files, embedder: url ? 'as configured' : embedder, ...s }, null, 2) + '\n');
  } finally {
    await client.close();
    if (server) {
      await server.stop();
      removeDir(server.dataDir);
    }
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
