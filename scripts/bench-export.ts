/**
 * Export memory: does a node's memory stay flat while it streams an export, whatever the export's size?
 *   npm run bench:export [-- --events 1000000 --users 10 --batch 1000 --clients 8]
 * Starts a node process on a temporary data directory (consolidation off: only the ingest and the export
 * run), ingests `--events` events over HTTP through the batch route (`--clients` concurrent batches of
 * `--batch`), and exports everything with `GET /v1/export` twice: once after a tenth of the events (the
 * baseline of this run) and once after all of them. For each export it prints the node's resident memory
 * (RSS, /proc/<pid>/status) before, its peak during the export (VmHWM reset just before through
 * /proc/<pid>/clear_refs, and the highest of the 20 ms samples), the bytes and lines streamed and the
 * speed. The client reads the stream as it comes and keeps none of it. Writes bench-results/export.json.
 */
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { NodeStrataClient } from '@strata/client/node';
import { removeDir, startServer, type ServerProcess } from '../test/helpers/server-process';

function arg(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : def;
}

const MB = 1024 * 1024;

/** A field of /proc/<pid>/status in bytes (VmRSS, VmHWM). */
function procBytes(pid: number, field: 'VmRSS' | 'VmHWM' | 'RssAnon' | 'RssFile'): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
}

/** Resets the process's peak RSS (VmHWM) to its current RSS (Linux: `5` to clear_refs); false where not allowed. */
function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

async function ingest(client: NodeStrataClient, from: number, to: number, users: number, batch: number, clients: number): Promise<number> {
  const started = Date.now();
  let next = from;
  const worker = async (w: number) => {
    const stream = `00000000-0000-4000-8000-${String(w).padStart(12, '0')}`;
    for (;;) {
      const start = next;
      if (start >= to) return;
      next = Math.min(to, start + batch);
      const events = Array.from({ length: next - start }, (_, k) => ({
        content: `Event ${start + k}: the user talked about travel plans, a dentist appointment and the weather in Lisbon.`,
      }));
      await client.ingestBatch(`bench-user-${(start / batch) % users}`, stream, events);
    }
  };
  await Promise.all(Array.from({ length: clients }, (_, w) => worker(w)));
  return (to - from) / ((Date.now() - started) / 1000);
}

interface ExportFigures {
  events: number;
  bytes: number;
  lines: number;
  seconds: number;
  mb_per_s: number;
  rss_before_mb: number;
  rss_peak_sampled_mb: number;
  rss_peak_hwm_mb: number | null;
  rss_growth_mb: number;
  /** anonymous memory (heaps: V8, LevelDB's caches and buffers), which is what would grow with a leak */
  anon_before_mb: number;
  anon_peak_mb: number;
  /** file-backed resident pages: LevelDB reads its table files through mmap, so the pages it touched count in RSS (page cache the kernel may take back) */
  file_before_mb: number;
  file_peak_mb: number;
  /** the V8 heap (from the node's /metrics): what JavaScript holds, garbage not yet collected included */
  heap_total_before_mb: number;
  heap_total_peak_mb: number;
  heap_used_peak_mb: number;
}

/** The node's V8 heap figures from its Prometheus metrics (prom-client's default metrics). */
async function heapOf(url: string): Promise<{ total: number; used: number }> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const value = (name: string) => Number(new RegExp(`^${name} (\\S+)`, 'm').exec(text)?.[1] ?? NaN);
  return { total: value('strata_nodejs_heap_size_total_bytes'), used: value('strata_nodejs_heap_size_used_bytes') };
}

async function measureExport(server: ServerProcess, apiKey: string, events: number): Promise<ExportFigures> {
  // let the ingest's garbage go before the baseline is read
  await new Promise((r) => setTimeout(r, 2000));
  const before = procBytes(server.pid, 'VmRSS');
  const anonBefore = procBytes(server.pid, 'RssAnon');
  const fileBefore = procBytes(server.pid, 'RssFile');
  const heapBefore = await heapOf(server.url);
  let heapTotal = heapBefore.total;
  let heapUsed = heapBefore.used;
  const heapSampler = setInterval(() => {
    heapOf(server.url).then((h) => {
      heapTotal = Math.max(heapTotal, h.total);
      heapUsed = Math.max(heapUsed, h.used);
    }, () => undefined);
  }, 250);
  const hwmReset = resetPeak(server.pid);
  let peak = before;
  let anonPeak = anonBefore;
  let filePeak = fileBefore;
  const sample = () => {
    peak = Math.max(peak, procBytes(server.pid, 'VmRSS'));
    anonPeak = Math.max(anonPeak, procBytes(server.pid, 'RssAnon'));
    filePeak = Math.max(filePeak, procBytes(server.pid, 'RssFile'));
  };
  const sampler = setInterval(sample, 20);
  const started = Date.now();
  let bytes = 0;
  let lines = 0;
  const res = await fetch(`${server.url}/v1/export`, { headers: { 'x-api-key': apiKey } });
  if (res.status !== 200 || !res.body) throw new Error(`export answered ${res.status}`);
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.length;
    for (let i = 0; i < chunk.length; i++) if (chunk[i] === 0x0a) lines++;
  }
  const seconds = (Date.now() - started) / 1000;
  clearInterval(sampler);
  clearInterval(heapSampler);
  sample();
  const hwm = hwmReset ? procBytes(server.pid, 'VmHWM') : null;
  const top = Math.max(peak, hwm ?? 0);
  const mb = (n: number) => Math.round((n / MB) * 10) / 10;
  return {
    events, bytes, lines, seconds, mb_per_s: mb(bytes / seconds), rss_before_mb: mb(before), rss_peak_sampled_mb: mb(peak),
    rss_peak_hwm_mb: hwm === null ? null : mb(hwm), rss_growth_mb: mb(top - before),
    anon_before_mb: mb(anonBefore), anon_peak_mb: mb(anonPeak), file_before_mb: mb(fileBefore), file_peak_mb: mb(filePeak),
    heap_total_before_mb: mb(heapBefore.total), heap_total_peak_mb: mb(heapTotal), heap_used_peak_mb: mb(heapUsed),
  };
}

async function main() {
  const total = Number(arg('events', '1000000'));
  const users = Number(arg('users', '10'));
  const batch = Number(arg('batch', '1000'));
  const clients = Number(arg('clients', '8'));
  const apiKey = 'bench-export-admin-key';
  const server = await startServer({
    env: {
      STRATA_API_KEY: apiKey, STRATA__CONSOLIDATION__ENABLED: 'false', STRATA__EMBEDDING__PROVIDER: 'hashing',
      STRATA__INGEST__MAX_BATCH: String(batch),
    },
    timeoutMs: 60_000,
  });
  const client = new NodeStrataClient({ baseUrl: server.url, apiKey, connections: clients });
  const results: (ExportFigures & { ingest_events_per_s: number })[] = [];
  try {
    process.stderr.write(`export benchmark: ${total} events over HTTP (batch route, ${clients} x ${batch}), ${users} users\n`);
    let stored = 0;
    for (const checkpoint of [Math.floor(total / 10), total]) {
      const rate = await ingest(client, stored, checkpoint, users, batch, clients);
      stored = checkpoint;
      process.stderr.write(`  ${stored} events stored (${Math.round(rate)} events/s); exporting ...\n`);
      results.push({ ...(await measureExport(server, apiKey, stored)), ingest_events_per_s: Math.round(rate) });
    }
  } finally {
    await client.close();
    await server.stop();
    removeDir(server.dataDir);
  }
  console.table(results.map(({ ingest_events_per_s: _r, ...r }) => r));
  const [small, large] = results;
  const anon = (r: ExportFigures) => Math.round((r.anon_peak_mb - r.anon_before_mb) * 10) / 10;
  console.log(`export of ${large.events} events (${Math.round(large.bytes / MB)} MB): anonymous memory +${anon(large)} MB, RSS +${large.rss_growth_mb} MB`
    + ` (peak ${Math.max(large.rss_peak_sampled_mb, large.rss_peak_hwm_mb ?? 0)} MB over ${large.rss_before_mb} MB before; the rest is LevelDB's mmapped table pages);`
    + ` export of ${small.events} events (${Math.round(small.bytes / MB)} MB): anonymous +${anon(small)} MB, RSS +${small.rss_growth_mb} MB.`);
  mkdirSync('bench-results', { recursive: true });
  writeFileSync('bench-results/export.json', JSON.stringify({ at: new Date().toISOString(), ingest: 'HTTP batch route', users, batch, clients, results }, null, 2));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
