/**
 * `strata ingest --wait`: the events are sent, then the command follows consolidation until they are
 * memory, printing progress on stderr (plain lines here: stderr is a pipe). With consolidation off it
 * gives up after --wait-timeout with exit 1, saying the events stay accepted.
 */
import { StrataClient } from '@strata/client';
import { removeDir, startServer, type ServerProcess } from '../helpers/server-process';
import { runStrata } from '../helpers/cli';

const KEY = 'cli-ingest-wait-admin-key';
const LINES = Array.from({ length: 40 }, (_, i) => `Note ${i}: Dana keeps the spare key number ${i} in the blue drawer.`).join('\n');

describe('strata ingest --wait', () => {
  let server: ServerProcess;
  beforeAll(async () => {
    server = await startServer({ env: { STRATA_ADMIN_API_KEY: KEY, STRATA__EMBEDDING__PROVIDER: 'hashing', STRATA_ADMIN_PASSWORD: 'a-long-password' } });
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    removeDir(server?.dataDir ?? '');
  });

  it('shows consolidation progress and returns once the events are memory', async () => {
    const r = await runStrata(['ingest', '--user', 'dana', '--wait', '--json'], { STRATA_URL: server.url, STRATA_API_KEY: KEY }, LINES);
    expect(r.code).toBe(0);
    const result = JSON.parse(r.stdout) as { count: number; memory: { ready: boolean; pending: number } };
    expect(result).toMatchObject({ count: 40, memory: { ready: true, pending: 0 } });
    const progress = r.stderr.split('\n').filter((l) => l.startsWith('memory: '));
    expect(progress.length).toBeGreaterThan(0);
    expect(progress[progress.length - 1]).toMatch(/^memory: (\d+)\/\1 events consolidated, 0 waiting/);
    // memory now, not pending: the user's units exist as soon as the command returns
    const client = new StrataClient({ baseUrl: server.url, apiKey: KEY });
    const { memories } = await client.listMemories('dana', { limit: 100 });
    expect(memories.length).toBeGreaterThan(0);
  }, 120_000);
});

describe('strata ingest --wait with consolidation off', () => {
  let server: ServerProcess;
  beforeAll(async () => {
    server = await startServer({ env: { STRATA_ADMIN_API_KEY: KEY, STRATA__EMBEDDING__PROVIDER: 'hashing', STRATA__CONSOLIDATION__ENABLED: 'false', STRATA_ADMIN_PASSWORD: 'a-long-password' } });
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    removeDir(server?.dataDir ?? '');
  });

  it('gives up after --wait-timeout with exit 1, the events still accepted', async () => {
    const r = await runStrata(['ingest', '--user', 'erin', '--wait', '--wait-timeout', '2'], { STRATA_URL: server.url, STRATA_API_KEY: KEY }, 'Erin likes tea.\nErin lives in Porto.\n');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('memory: 0/2 events consolidated, 2 waiting');
    expect(r.stderr).toContain('still wait for consolidation after 2 s');
  }, 60_000);
});
