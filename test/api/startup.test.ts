import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { StrataClient } from '@strata/client';
import { removeDir, runServerExpectingExit, startServer, tempDir } from '../helpers/server-process';

describe('start-up', () => {
  it('refuses an invalid value, naming the key and its source', async () => {
    const dataDir = tempDir();
    const { code, output } = await runServerExpectingExit({ STRATA_DATA_DIR: dataDir, STRATA__INGEST__MAX_BATCH: 'lots' });
    expect(code).toBe(2);
    expect(output).toContain("'ingest.max_batch'");
    expect(output).toContain('STRATA__INGEST__MAX_BATCH');
    removeDir(dataDir);
  });

  it('refuses an unknown key in the TOML file', async () => {
    const dir = tempDir();
    const file = join(dir, 'strata.toml');
    writeFileSync(file, '[server]\nprot = 3000\n');
    const { code, output } = await runServerExpectingExit({ STRATA_DATA_DIR: dir, STRATA_CONFIG: file });
    expect(code).toBe(2);
    expect(output).toContain("unknown key 'server.prot'");
    removeDir(dir);
  });

  it('reads the TOML file, with environment variables over it', async () => {
    const dir = tempDir();
    const file = join(dir, 'strata.toml');
    writeFileSync(file, `[auth]\napi_key = "from-the-file-123"\n[ingest]\nmax_batch = 2\n`);
    const server = await startServer({ dataDir: dir, env: { STRATA_CONFIG: file, STRATA__INGEST__MAX_BATCH: '3' } });
    const client = new StrataClient({ baseUrl: server.url, apiKey: 'from-the-file-123' });
    const stream = '3e0c4c0e-5a8b-4c55-9f0e-d3c1b2a4f6e7';
    expect((await client.ingestBatch('u', stream, [{ content: 'a' }, { content: 'b' }, { content: 'c' }])).count).toBe(3);
    const over = await client.raw('POST', `/v1/users/u/streams/${stream}/events/batch`, { body: { events: [1, 2, 3, 4].map(() => ({ content: 'x' })) } });
    expect(over.status).toBe(413);
    await client.close();
    expect(await server.stop()).toBe(0);
    removeDir(dir);
  });

  it('keeps the group count of its data directory (STRATA_SHARDS is the initial count only) and records its key ranges', async () => {
    const dir = tempDir();
    const env = { STRATA_API_KEY: 'layout-key-123', STRATA_SHARDS: '3' };
    const stream = '5b0c4c0e-5a8b-4c55-9f0e-d3c1b2a4f6e7';
    const users = Array.from({ length: 12 }, (_, i) => `layout-user-${i}`);
    const first = await startServer({ dataDir: dir, env });
    let client = new StrataClient({ baseUrl: first.url, apiKey: env.STRATA_API_KEY });
    for (const u of users) await client.ingest(u, stream, { content: `hello from ${u}` });
    const status = async () => (await client.raw('GET', '/v1/cluster/status')).body as {
      shards: { shard_id: number }[]; key_ranges: { recorded: boolean; base: number; ranges: { start: number; group: number }[] };
    };
    // recorded through shard 0's log at the first start: three equal ranges, group g holding fnv1a32 mod 3 = g
    const recorded = (await status()).key_ranges;
    expect([recorded.recorded, recorded.base, recorded.ranges.map((r) => r.group)]).toEqual([true, 3, [0, 1, 2]]);
    await client.close();
    expect(await first.stop()).toBe(0);

    const again = await startServer({ dataDir: dir, env: { ...env, STRATA_SHARDS: '8' } });
    client = new StrataClient({ baseUrl: again.url, apiKey: env.STRATA_API_KEY });
    const now = await status();
    expect(now.shards.map((s) => s.shard_id)).toEqual([0, 1, 2]);
    expect(now.key_ranges).toEqual(recorded);
    for (const u of users) {
      const page = (await client.raw('GET', `/v1/users/${u}/streams/${stream}/events`)).body as { events: { content: string }[] };
      expect([u, page.events.map((e) => e.content)]).toEqual([u, [`hello from ${u}`]]);
    }
    await client.close();
    expect(await again.stop()).toBe(0);
    removeDir(dir);
  });

  it('stops gracefully on SIGTERM and keeps its data for the next start', async () => {
    const dir = tempDir();
    const env = { STRATA_API_KEY: 'graceful-key-1' };
    const server = await startServer({ dataDir: dir, env });
    const client = new StrataClient({ baseUrl: server.url, apiKey: 'graceful-key-1' });
    const stream = '9a0c4c0e-5a8b-4c55-9f0e-d3c1b2a4f6e7';
    // Requests in flight when SIGTERM arrives still complete.
    const inFlight = Array.from({ length: 20 }, (_, i) => client.ingest('g', stream, { content: `m${i}` }));
    const stopped = server.stop();
    const results = await Promise.allSettled(inFlight);
    expect(await stopped).toBe(0);
    const accepted = results.filter((r) => r.status === 'fulfilled').length;
    expect(server.output()).toContain('strata node stopped');
    await client.close();
    const again = await startServer({ dataDir: dir, env });
    const reader = new StrataClient({ baseUrl: again.url, apiKey: 'graceful-key-1' });
    expect((await reader.allEvents('g', stream)).length).toBe(accepted);
    await reader.close();
    await again.stop();
    removeDir(dir);
  });
});
