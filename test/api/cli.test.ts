/**
 * The `strata` command line (CONTRACT.md §16), run as users run it: the binary npm links into
 * node_modules/.bin (and once through `npx strata`), as a child process, against a real node. Exit
 * codes: 0 success, 1 failed request (the envelope's message on stderr), 2 wrong usage.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { StrataClient } from '@strata/client';
import { REPO_ROOT, removeDir, startServer, tempDir, type ServerProcess } from '../helpers/server-process';
import { runCommand, STRATA_BIN, type CliRun } from '../helpers/cli';

const KEY = 'cli-test-admin-key';
const BIN = STRATA_BIN;
const STREAM = '6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b';
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;

type Run = CliRun;
const run = runCommand;

describe('the strata CLI against a running node', () => {
  let server: ServerProcess;
  let client: StrataClient;
  let dir: string;
  /** `strata <args>` connected to the test node through STRATA_URL / STRATA_API_KEY */
  const strata = (args: string[], options: { key?: string; input?: string } = {}) =>
    run(BIN, args, { env: { STRATA_URL: server.url, STRATA_API_KEY: options.key ?? KEY }, input: options.input });
  const json = <T = Record<string, unknown>>(r: Run): T => JSON.parse(r.stdout) as T;

  beforeAll(async () => {
    server = await startServer({ env: { STRATA_API_KEY: KEY, STRATA__CONSOLIDATION__INTERVAL_MS: '50', STRATA__EMBEDDING__PROVIDER: 'hashing' } });
    client = new StrataClient({ baseUrl: server.url, apiKey: KEY });
    dir = tempDir('strata-cli-');
  });
  afterAll(async () => {
    await client?.close();
    if (server) {
      expect(await server.stop()).toBe(0);
      removeDir(server.dataDir);
    }
    if (dir) removeDir(dir);
  });

  it('status --json: health, pending backlog and cluster status', async () => {
    const r = await strata(['status', '--json']);
    expect(r.code).toBe(0);
    const status = json<{ url: string; health: { live: boolean; ready: boolean }; pending: { pending: number; ready: boolean }; cluster: { node_id: number; shards: { leader: number; role: string }[] } }>(r);
    expect(status.url).toBe(server.url);
    expect(status.health).toEqual({ live: true, ready: true });
    expect(typeof status.pending.pending).toBe('number');
    expect(status.cluster.node_id).toBe(1);
    expect(status.cluster.shards[0]).toMatchObject({ leader: 1, role: 'leader' });
  });

  it('status for a key that may not see the cluster still shows health and backlog', async () => {
    const read = (await client.createApiKey({ role: 'read' })).key;
    const r = await strata(['status'], { key: read });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('live, ready');
    expect(r.stdout).toMatch(/pending +\d+ event\(s\) to consolidate/);
    expect(r.stdout).toMatch(/cluster +not shown: .*admin/);
  });

  it('keys create, list and revoke; a revoked key is refused (exit 1)', async () => {
    const created = await strata(['keys', 'create', '--name', 'robot', '--role', 'read', '--user', 'ana', '--user', 'bo', '--json']);
    expect(created.code).toBe(0);
    const made = json<{ key: string; key_id: string; role: string; user_ids: string[]; name: string }>(created);
    expect(made).toMatchObject({ role: 'read', user_ids: ['ana', 'bo'], name: 'robot' });
    expect(made.key).toMatch(/^sk_[A-Za-z0-9]{36}$/);
    expect((await strata(['status'], { key: made.key })).code).toBe(0);

    const listed = await strata(['keys', 'list', '--json']);
    expect(listed.code).toBe(0);
    const mine = json<{ api_keys: Record<string, unknown>[] }>(listed).api_keys.find((k) => k.key_id === made.key_id);
    expect(mine).toMatchObject({ name: 'robot', role: 'read' });
    expect(mine).not.toHaveProperty('key');
    expect((await strata(['keys', 'list'])).stdout).toContain(made.key_id);

    const revoked = await strata(['keys', 'revoke', made.key_id]);
    expect(revoked).toMatchObject({ code: 0, stdout: `revoked ${made.key_id}\n` });
    expect(json<{ api_keys: { key_id: string }[] }>(await strata(['keys', 'list', '--json'])).api_keys.map((k) => k.key_id)).not.toContain(made.key_id);
    const again = await strata(['keys', 'revoke', made.key_id]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/No API key with id .* \(not_found, HTTP 404\)/);
    const refused = await strata(['status'], { key: made.key });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('unauthenticated');
  });

  it('ingests NDJSON from a file in batches, in order; a re-run into the same stream stores nothing twice', async () => {
    const file = join(dir, 'events.ndjson');
    const events = [
      { content: 'Rosa planted tomatoes in the garden.', role: 'user' },
      { content: 'Rosa waters them every morning.', metadata: { source: 'cli' } },
      { content: 'Rosa\'s tomatoes are the San Marzano kind.' },
      { content: 'Rosa expects the first harvest in August.', agent_id: 'gardener' },
      { content: 'Rosa gives extra tomatoes to her neighbour.' },
    ];
    writeFileSync(file, `${events.map((e) => JSON.stringify(e)).join('\n')}\n\n`);
    const first = await strata(['ingest', file, '--user', 'rosa', '--stream', STREAM, '--batch-size', '2', '--json']);
    expect(first.code).toBe(0);
    expect(json(first)).toEqual({ status: 'accepted', user_id: 'rosa', stream_id: STREAM, count: 5, batches: 3 });
    expect(first.stderr).toMatch(/^ingest: 5 events in [\d.]+ s \(\d+ events\/s\)$/m);
    const stored = await client.allEvents('rosa', STREAM);
    expect(stored.map((e) => e.content)).toEqual(events.map((e) => e.content));
    expect(stored[0].role).toBe('user');
    expect(stored[1].metadata).toEqual({ source: 'cli' });
    expect(stored[3].agent_id).toBe('gardener');

    const again = await strata(['ingest', file, '--user', 'rosa', '--stream', STREAM, '--batch-size', '2', '--json']);
    expect(again.code).toBe(0);
    expect(json(again)).toMatchObject({ count: 5, batches: 3 });
    expect((await client.allEvents('rosa', STREAM)).map((e) => e.event_id)).toEqual(stored.map((e) => e.event_id));
  });

  it('ingests plain lines from stdin into a new stream, printed, with plain progress lines', async () => {
    const r = await strata(['ingest', '--user', 'sami'], { input: 'Sami learns the cello.\r\n\nSami practises on Sundays.\nSami\'s teacher is called Ines.' });
    expect(r.code).toBe(0);
    const stream = new RegExp(`accepted 3 event\\(s\\) into stream (${UUID.source}) of user sami \\(1 batch\\)`).exec(r.stdout)?.[1];
    expect(stream).toBeDefined();
    expect(r.stderr).toContain(`ingest: into a new stream ${stream}`);
    expect(r.stderr).toMatch(/^ingest: 3 events in [\d.]+ s \(\d+ events\/s\)$/m);
    expect((await client.allEvents('sami', stream!)).map((e) => [e.content, e.content_type])).toEqual([
      ['Sami learns the cello.', 'text'], ['Sami practises on Sundays.', 'text'], ['Sami\'s teacher is called Ines.', 'text'],
    ]);
  });

  it('search finds an ingested fact once it is consolidated', async () => {
    const r = await strata(['ingest', '--user', 'vera', '--format', 'text'], { input: 'Vera keeps bees on her balcony.\nVera drives a green tractor.\n' });
    expect(r.code).toBe(0);
    expect((await client.waitUntilReady(60_000, 50)).ready).toBe(true);
    const found = await strata(['search', 'bees', 'balcony', '--user', 'vera', '--limit', '5', '--json']);
    expect(found.code).toBe(0);
    const answer = json<{ query: string; results: { unit: { content: string; level: number }; score: number }[] }>(found);
    expect(answer.query).toBe('bees balcony');
    expect(answer.results[0].unit.content).toContain('bees');
    expect(answer.results[0].unit.level).toBe(1);
    const human = await strata(['search', 'bees on the balcony', '--user', 'vera']);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^1\. \d\.\d{3} {2}.*bees/m);
    // as_of before anything was remembered: nothing
    expect(json<{ results: unknown[] }>(await strata(['search', 'bees', '--user', 'vera', '--as-of', '2000-01-01T00:00:00Z', '--json'])).results).toEqual([]);
  });

  it('exits 1 with the envelope message and code when the server refuses (a read-only key ingesting)', async () => {
    const read = (await client.createApiKey({ role: 'read' })).key;
    const r = await strata(['ingest', '--user', 'ana', '--stream', STREAM], { key: read, input: 'not allowed\n' });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/strata: This route needs the 'write' role.* \(forbidden, HTTP 403\)/);
    expect(r.stderr).toContain('Nothing was stored.');
    expect(r.stdout).toBe('');
    const asJson = await strata(['ingest', '--user', 'ana', '--stream', STREAM, '--json'], { key: read, input: 'not allowed\n' });
    expect(asJson.code).toBe(1);
    expect(JSON.parse(asJson.stderr)).toMatchObject({ code: 'forbidden', status: 403, stream_id: STREAM, accepted: 0 });
    // a refused event is named by its input line
    const bad = await strata(['ingest', '--user', 'ana', '--format', 'ndjson'], { input: '{"content":"fine"}\n\n{"content":"also fine"}\n{"content":"   "}\n' });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('/events/2 is line 4 of the input');
    // no node there at all
    const away = await run(BIN, ['status', '--url', 'http://127.0.0.1:1']);
    expect(away.code).toBe(1);
    expect(away.stderr).toContain('cannot reach http://127.0.0.1:1');
  });

  it('exits 2 on wrong usage, sending nothing', async () => {
    for (const args of [
      ['bogus'], [], ['keys'], ['status', '--bogus'], ['ingest'], ['search', 'x'], ['search', '--user', 'ana'],
      ['ingest', '--user', 'ana', '--stream', 'not-a-uuid'], ['search', 'x', '--user', 'ana', '--limit', '0'],
      ['keys', 'create', '--role', 'owner'], ['cluster', 'remove', 'two'], ['cluster', 'join', '0', 'http://127.0.0.1:9'],
      ['ingest', join(dir, 'no-such-file'), '--user', 'ana'], ['status', '--url', 'not a url'],
      ['search', 'x', '--user', 'ana', '--only-stream'],
    ]) {
      const r = await strata(args);
      expect([args, r.code]).toEqual([args, 2]);
      expect(r.stderr).not.toBe('');
    }
    // NDJSON whose later line is not an object: the input is wrong, and nothing after it is sent
    const r = await strata(['ingest', '--user', 'tom', '--stream', STREAM], { input: '{"content":"one"}\nnot json\n' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('line 2 is not a JSON object');
    expect(await client.allEvents('tom', STREAM)).toEqual([]);
    expect((await strata(['--help'])).code).toBe(0);
  });

  it('cluster status, init (idempotent) and remove of a non-member', async () => {
    const status = await strata(['cluster', 'status']);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/cluster +node 1, 1 shard group\(s\)/);
    expect(status.stdout).toContain(`node 1 ${server.url} voter`);
    expect(json<{ shards: { members: { node_id: number }[] }[] }>(await strata(['cluster', 'status', '--json'])).shards[0].members.map((m) => m.node_id)).toEqual([1]);
    const init = await strata(['cluster', 'init', '--json']);
    expect(init.code).toBe(0);
    expect(json(init)).toMatchObject({ status: 'already_initialized', node_id: 1 });
    const remove = await strata(['cluster', 'remove', '7']);
    expect(remove.code).toBe(1);
    expect(remove.stderr).toMatch(/Node 7 is not a member.*\(not_found, HTTP 404\)/);
    const read = (await client.createApiKey({ role: 'read' })).key;
    expect((await strata(['cluster', 'status'], { key: read })).code).toBe(1);
  });

  it('runs as `npx strata` from the repository root', async () => {
    const r = await run('npx', ['--no-install', 'strata', 'status', '--json'], { env: { STRATA_URL: server.url, STRATA_API_KEY: KEY } });
    expect(r.code).toBe(0);
    expect(json<{ health: unknown }>(r).health).toEqual({ live: true, ready: true });
  });
});

describe('strata serve', () => {
  it('runs a node in its own process (what npm start runs) and stops with exit code 0 on SIGTERM', async () => {
    const dataDir = tempDir();
    const child = spawn(BIN, ['serve'], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', STRATA_PORT: '0', STRATA_HOST: '127.0.0.1', STRATA_DATA_DIR: dataDir, STRATA_API_KEY: KEY },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    let out = '';
    const url = await new Promise<string>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        out += chunk.toString();
        const m = /"url":"(http:\/\/127\.0\.0\.1:\d+)".*"msg":"strata node serving"/.exec(out);
        if (m) resolve(m[1]);
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      exited.then((code) => reject(new Error(`strata serve exited with ${code}:\n${out}`)));
    });
    try {
      const status = await run(BIN, ['status', '--json', '--url', url, '--api-key', KEY]);
      expect(status.code).toBe(0);
      expect(JSON.parse(status.stdout)).toMatchObject({ health: { live: true, ready: true }, cluster: { node_id: 1 } });
    } finally {
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      removeDir(dataDir);
    }
  });
});
