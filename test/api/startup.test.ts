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

  it('refuses a data directory made with another shard count', async () => {
    const dir = tempDir();
    const first = await startServer({ dataDir: dir });
    await first.stop();
    const { code, output } = await runServerExpectingExit({ STRATA_DATA_DIR: dir, STRATA_SHARDS: '2' });
    expect(code).toBe(1);
    expect(output).toContain('created with 1 shard(s)');
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
