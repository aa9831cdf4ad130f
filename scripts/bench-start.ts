/**
 * How long a user waits: `strata --version`, and a fresh node from its start to `/readyz` answering 200,
 * each run as the compiled build (`npm run build`, what `npm start` and bin/strata run) and, beside it,
 * as TypeScript sources transpiled by tsx at every start (how they ran before the build). The forms
 * alternate run by run, so a busy machine slows both alike: compare the ratio. `node -e 0` is the floor.
 * Prints a table and writes bench-results/start.json.
 *
 *   npm run build && node --conditions=strata-source --import tsx scripts/bench-start.ts [--runs 5]
 *     [--baseline <checkout>]   also the compiled build of another checkout (built), e.g. main before a change
 *     [--skip-tsx]              leave out the tsx form (the slowest)
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { freePort, launch, ROOT, sleep } from './lib/processes';
import { summarize } from './lib/stats';

const option = (name: string): string | undefined => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined);
const runs = Number(option('--runs') || 5);
const baseline = option('--baseline');
const SOURCE = ['--conditions=strata-source', '--import', 'tsx'];

/** `node <args>` to its end: wall-clock milliseconds. */
function timeCommand(args: string[]): number {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`node ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return performance.now() - t0;
}

/** A node started by `node <args>` on a fresh data directory: milliseconds until /readyz answers 200. */
async function timeReady(args: string[]): Promise<number> {
  const dataDir = mkdtempSync(join(tmpdir(), 'strata-bench-start-'));
  const port = await freePort();
  const t0 = performance.now();
  const proc = launch(process.execPath, args, {
    STRATA_PORT: String(port), STRATA_HOST: '127.0.0.1', STRATA_DATA_DIR: dataDir, STRATA_ADMIN_PASSWORD: 'bench-start-password',
  }, `${dataDir}.log`);
  try {
    for (let i = 0; i < 1200; i++) {
      try {
        const r = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(1000) });
        if (r.status === 200) return performance.now() - t0;
      } catch {
        // not listening yet
      }
      await sleep(20);
    }
    throw new Error(`node ${args.join(' ')} was not ready within 60 s`);
  } finally {
    await proc.stop();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(`${dataDir}.log`, { force: true });
  }
}

async function main(): Promise<void> {
  if (!existsSync(join(ROOT, 'packages/server/dist/main.js'))) throw new Error('run `npm run build` first');
  const forms: Record<string, { cli: string[]; server: string[] | null }> = {
    floor: { cli: ['-e', '0'], server: null },
    compiled: { cli: ['packages/cli/bin/strata.js', '--version'], server: ['packages/server/dist/main.js'] },
  };
  if (baseline) {
    if (!existsSync(join(baseline, 'packages/server/dist/main.js'))) throw new Error(`${baseline} has no build: run \`npm run build\` there`);
    forms.baseline = { cli: [join(baseline, 'packages/cli/bin/strata.js'), '--version'], server: [join(baseline, 'packages/server/dist/main.js')] };
  }
  if (!process.argv.includes('--skip-tsx')) {
    forms.tsx = { cli: [...SOURCE, '-e', "require('./packages/cli/src/main.ts').main(['--version'])"], server: [...SOURCE, 'packages/server/src/main.ts'] };
  }
  const cli: Record<string, number[]> = Object.fromEntries(Object.keys(forms).map((k) => [k, []]));
  const ready: Record<string, number[]> = Object.fromEntries(Object.entries(forms).filter(([, f]) => f.server).map(([k]) => [k, []]));
  const loadStart = loadavg()[0];
  for (let i = 0; i < runs; i++) {
    for (const [name, form] of Object.entries(forms)) {
      cli[name].push(timeCommand(form.cli));
      if (form.server) ready[name].push(await timeReady(form.server));
    }
  }
  const out = {
    runs,
    loadavg_1m: { start: loadStart, end: loadavg()[0] },
    baseline: baseline ?? null,
    cli_version_ms: Object.fromEntries(Object.entries(cli).map(([k, v]) => [k, summarize(v)])),
    start_to_readyz_ms: Object.fromEntries(Object.entries(ready).map(([k, v]) => [k, summarize(v)])),
  };
  console.log(`runs: ${runs} each, alternating; load average (1 min) ${out.loadavg_1m.start.toFixed(2)} at the start, ${out.loadavg_1m.end.toFixed(2)} at the end`);
  console.log('form      strata --version p50   start → /readyz p50');
  for (const name of Object.keys(forms)) {
    const r = out.start_to_readyz_ms[name];
    console.log(`${name.padEnd(9)} ${String(out.cli_version_ms[name].p50_ms).padStart(10)} ms   ${r ? `${String(r.p50_ms).padStart(10)} ms` : '         -'}`);
  }
  const ratio = (a: number, b: number) => (a / b).toFixed(2);
  // on a busy machine the ratios say more than the milliseconds: each form ran as often, in turn
  for (const other of ['baseline', 'tsx'].filter((f) => forms[f])) {
    console.log(`compiled / ${other}: --version ${ratio(out.cli_version_ms.compiled.p50_ms, out.cli_version_ms[other].p50_ms)}x, /readyz ${ratio(out.start_to_readyz_ms.compiled.p50_ms, out.start_to_readyz_ms[other].p50_ms)}x`);
  }
  console.log(`over the floor (node -e 0): --version ${ratio(out.cli_version_ms.compiled.p50_ms, out.cli_version_ms.floor.p50_ms)}x, /readyz ${ratio(out.start_to_readyz_ms.compiled.p50_ms, out.cli_version_ms.floor.p50_ms)}x`);
  mkdirSync(join(ROOT, 'bench-results'), { recursive: true });
  writeFileSync(join(ROOT, 'bench-results/start.json'), JSON.stringify(out, null, 2) + '\n');
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
