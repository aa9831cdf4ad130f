/**
 * `strata export` and `strata import` (CONTRACT.md §14, §16), run as users run them: the binary npm
 * links into node_modules/.bin, as a child process, against two real nodes. A user's memory is made on
 * the source, exported to a file, imported into an empty target (where retrieval then finds it), and
 * imported again (everything skipped); an export to stdout is piped into `strata import -`. Then the
 * refusals: a malformed line (exit 1, the line named), a missing file or a bad --out (exit 2), a key
 * the export is not for (exit 1).
 */
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { StrataClient } from '@strata/client';
import { removeDir, startServer, tempDir, type ServerProcess } from '../helpers/server-process';
import { runStrata } from '../helpers/cli';

const KEY = 'cli-export-import-admin-key';
const STREAM = '7a2b3c4d-5e6f-4a70-8b9c-0d1e2f3a4b5c';
/** Both nodes embed alike, or the target would refuse the file's vectors (409 without --reembed). */
const COMMON = { STRATA_API_KEY: KEY, STRATA__EMBEDDING__PROVIDER: 'hashing' };
const KINDS = ['events', 'assets', 'units', 'edges', 'goals', 'tasks', 'users'];

interface ExportSummary { status: string; user_id: string | null; file: string; records: Record<string, number>; total_records: number; bytes: number; seconds: number }
interface ImportSummary { status: string; counts: Record<string, number>; skipped: Record<string, number>; bytes: number; seconds: number }

const run = runStrata;

const lines = (text: string) => text.split('\n').filter((l) => l !== '');

/**
 * The source's memory no longer changes: every event's consolidation is logged (the summed `events`
 * of its "caught up" lines), and the insights planned in the tick that logged the last one are done
 * (planned right after the backlog drains, so after /v1/status/pending reports ready). Exports made
 * at different times then hold the same records.
 */
async function settled(node: ServerProcess, events: number): Promise<boolean> {
  const done = () => {
    // complete lines only: the last one may still be arriving
    const logged = node.output().split('\n').slice(0, -1).filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { msg?: string; events?: number });
    const caughtUp = logged.map((l, i) => [l, i] as const).filter(([l]) => l.msg === 'consolidation caught up');
    const consolidated = caughtUp.reduce((sum, [l]) => sum + (l.events ?? 0), 0);
    const lastCaughtUp = caughtUp.length === 0 ? -1 : caughtUp[caughtUp.length - 1][1];
    return consolidated === events && logged.findLastIndex((l) => l.msg === 'L2 planning done') > lastCaughtUp;
  };
  for (let i = 0; i < 600 && !done(); i++) await new Promise((r) => setTimeout(r, 50));
  return done();
}

describe('strata export and strata import between two nodes', () => {
  let source: ServerProcess;
  let target: ServerProcess;
  let src: StrataClient;
  let dst: StrataClient;
  let dir: string;
  let file: string;
  let exported: ExportSummary;
  let imported: ImportSummary;
  const on = (node: ServerProcess, key = KEY) => ({ STRATA_URL: node.url, STRATA_API_KEY: key });

  beforeAll(async () => {
    [source, target] = await Promise.all([
      startServer({ env: { ...COMMON, STRATA__CONSOLIDATION__INTERVAL_MS: '50' } }),
      startServer({ env: COMMON }),
    ]);
    src = new StrataClient({ baseUrl: source.url, apiKey: KEY });
    dst = new StrataClient({ baseUrl: target.url, apiKey: KEY });
    dir = tempDir('strata-cli-export-');
    file = join(dir, 'mara.ndjson');
    await src.ingestBatch('mara', STREAM, [
      { content: 'Mara keeps bees on her balcony.' },
      { content: 'Mara drives a green tractor.' },
      { content: 'Mara sells honey at the Saturday market.' },
    ]);
    await src.ingest('otto', STREAM, { content: 'Otto collects vinyl records.' });
    expect(await src.waitUntilReady(60_000, 50)).toMatchObject({ pending: 0, failed: 0 });
    expect(await settled(source, 4)).toBe(true);
  }, 90_000);

  afterAll(async () => {
    await src?.close();
    await dst?.close();
    for (const node of [source, target]) {
      if (!node) continue;
      expect(await node.stop()).toBe(0);
      removeDir(node.dataDir);
    }
    if (dir) removeDir(dir);
  });

  it('exports one user to a file: the summary counts its records by kind and bytes', async () => {
    const r = await run(['export', '--user', 'mara', '--out', file, '--json'], on(source));
    expect(r.code).toBe(0);
    exported = JSON.parse(r.stdout) as ExportSummary;
    const content = readFileSync(file, 'utf8');
    const records = lines(content).map((l) => JSON.parse(l) as { kind: string; user_id?: string });
    expect(records[0]).toMatchObject({ kind: 'header', format: 'strata-export', version: 1 });
    expect(records.slice(1).every((rec) => rec.user_id === 'mara')).toBe(true);
    const byKind = Object.fromEntries(KINDS.map((k) => [k, records.filter((rec) => `${rec.kind}s` === k).length]));
    expect(exported).toMatchObject({ status: 'exported', user_id: 'mara', file, records: byKind, total_records: records.length - 1, bytes: statSync(file).size });
    expect(exported.records).toMatchObject({ events: 3, users: 1 });
    expect(exported.records.units).toBeGreaterThan(0);
    expect(existsSync(`${file}.partial`)).toBe(false);
    // stderr is not a terminal: plain progress lines, the last one with the totals
    expect(r.stderr).toMatch(new RegExp(`^export: [\\d.]+ (B|KiB), ${exported.total_records} records in [\\d.]+ s \\([\\d.]+ (B|KiB|MiB)/s\\)$`, 'm'));

    const human = await run(['export', '--user', 'mara', '--out', join(dir, 'again.ndjson')], on(source));
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(new RegExp(`^exported ${exported.total_records} record\\(s\\) \\(events 3, .*users 1\\) to .*again\\.ndjson: `));
  });

  it('imports the file into an empty node, where retrieval finds the seeded fact', async () => {
    const r = await run(['import', file, '--json'], on(target));
    expect(r.code).toBe(0);
    imported = JSON.parse(r.stdout) as ImportSummary;
    expect(imported).toMatchObject({ status: 'imported', bytes: exported.bytes });
    for (const kind of KINDS) expect([kind, imported.counts[kind] + imported.skipped[kind]]).toEqual([kind, exported.records[kind]]);
    expect(imported.counts).toMatchObject({ events: exported.records.events, units: exported.records.units });
    expect(r.stderr).toMatch(/^import: [\d.]+ (B|KiB) in [\d.]+ s/m);

    const found = await run(['search', 'bees', 'balcony', '--user', 'mara', '--json'], on(target));
    expect(found.code).toBe(0);
    const top = (JSON.parse(found.stdout) as { results: { unit: { id: string; content: string } }[] }).results[0].unit;
    expect(top.content).toContain('bees');
    // the unit the source made, with its id
    expect((await src.listMemories('mara', { limit: 100 })).memories.map((u) => u.id)).toContain(top.id);
    // only what the file held: nothing of otto
    expect((await dst.listMemories('otto')).memories).toEqual([]);
  });

  it('a second import of the same file changes nothing: everything is reported skipped', async () => {
    const r = await run(['import', file], on(target));
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('imported 0 record(s): none\n');
    expect(r.stdout).toMatch(new RegExp(`^skipped +${exported.total_records} record\\(s\\) the node had already: events 3, `, 'm'));
    const again = JSON.parse((await run(['import', file, '--json'], on(target))).stdout) as ImportSummary;
    expect(again.counts).toEqual(Object.fromEntries(KINDS.map((k) => [k, 0])));
    expect(again.skipped).toEqual(exported.records);
  });

  it('exports to stdout, piped into `strata import -`; with no --user, every user', async () => {
    const piped = await run(['export', '--user', 'mara'], on(source));
    expect(piped.code).toBe(0);
    // the same records as the file; only the header's exported_at differs
    expect(lines(piped.stdout).slice(1)).toEqual(lines(readFileSync(file, 'utf8')).slice(1));
    expect(piped.stderr).toMatch(new RegExp(`^export: .*, ${exported.total_records} records in `, 'm'));
    const fromStdin = await run(['import', '-', '--json'], on(target), piped.stdout);
    expect(fromStdin.code).toBe(0);
    expect((JSON.parse(fromStdin.stdout) as ImportSummary).skipped).toEqual(exported.records);

    const all = await run(['export'], on(source));
    expect(all.code).toBe(0);
    const users = lines(all.stdout).map((l) => JSON.parse(l) as { kind: string; user_id: string }).filter((l) => l.kind === 'user').map((l) => l.user_id);
    expect(users).toEqual(['mara', 'otto']);
  });

  it('the fetch client (the browser-safe one) streams an export straight into an import, and takes a Blob', async () => {
    const streamed = await dst.importNdjson(await src.exportUser('mara'));
    expect(streamed).toEqual({ status: 'imported', counts: Object.fromEntries(KINDS.map((k) => [k, 0])), skipped: exported.records });
    const blob = await dst.importNdjson(new Blob([readFileSync(file)]));
    expect(blob.skipped).toEqual(exported.records);
    await expect(dst.importNdjson('{"kind":"nope"}\n')).rejects.toMatchObject({ status: 400, details: [expect.objectContaining({ path: expect.stringMatching(/^\/line\/1/) })] });
    await expect(src.exportUser('mara', { consistency: 'linearizable' }).then((s) => new Response(s).text())).resolves.toContain('"kind":"user"');
  });

  it('refuses a malformed line: exit 1, the envelope and the line named, nothing from it on applied', async () => {
    const header = lines(readFileSync(file, 'utf8'))[0];
    const event = (content: string) => JSON.stringify({
      kind: 'event', event_id: crypto.randomUUID(), user_id: 'nina', stream_id: STREAM, content, content_type: 'text',
      valid_time: '2026-02-01T10:00:00.000Z', transaction_time: '2026-02-01T10:00:00.000Z', consolidation: { state: 'consolidated' },
    });
    const bad = join(dir, 'bad.ndjson');
    writeFileSync(bad, `${header}\n${event('Nina rows on the lake.')}\n{"kind":"event", oops\n${event('Nina paints.')}\n`);
    const r = await run(['import', bad], on(target));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^strata: Line 3 .*\(invalid_json, HTTP 400\)$/m);
    expect(r.stderr).toContain('  /line/3: ');
    expect(r.stderr).toContain(`Line 3 of ${bad} was refused`);
    expect(r.stdout).toBe('');
    const asJson = await run(['import', bad, '--json'], on(target));
    expect(asJson.code).toBe(1);
    expect(JSON.parse(asJson.stderr)).toMatchObject({ code: 'invalid_json', status: 400, line: 3 });
    // a file this small is one chunk: nothing of it was applied
    expect((await dst.listUsers()).users.map((u) => u.user_id)).not.toContain('nina');
  });

  it('exits 2 on wrong usage (a missing file, --out in a missing directory), sending nothing', async () => {
    const missing = await run(['import', 'missing.ndjson'], on(target));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^strata: cannot read missing\.ndjson: /);
    const nowhere = join(dir, 'no-such-dir', 'out.ndjson');
    const out = await run(['export', '--user', 'mara', '--out', nowhere], on(source));
    expect(out.code).toBe(2);
    expect(out.stderr).toContain(`cannot write ${nowhere}`);
    expect((await run(['export', '--out', dir], on(source))).code).toBe(2);
  });

  it('exits 1 when the key does not cover the export, writing no file', async () => {
    const otto = (await src.createApiKey({ role: 'read', user_ids: ['otto'] })).key;
    const denied = join(dir, 'denied.ndjson');
    const one = await run(['export', '--user', 'mara', '--out', denied], on(source, otto));
    expect(one.code).toBe(1);
    expect(one.stderr).toMatch(/\(forbidden, HTTP 403\)/);
    const all = await run(['export', '--out', denied], on(source, otto));
    expect(all.code).toBe(1);
    expect(all.stderr).toMatch(/\(forbidden, HTTP 403\)/);
    expect(existsSync(denied) || existsSync(`${denied}.partial`)).toBe(false);
  });
});
