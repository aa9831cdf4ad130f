/**
 * POST /v1/users/:user_id/streams/:stream_id/retrieve over real HTTP (CONTRACT.md §3): the effect of
 * each request field, and every class of bad input.
 *
 * Part 1 ingests crafted events into a server process and lets consolidation make the memory (as a
 * client would). Part 2 runs a node in process and proposes units and edges through its log, for the
 * cases that need an exact graph and exact versions (graph depth, arbitration).
 */
import { randomBytes } from 'node:crypto';
import { PNG } from 'pngjs';
import { StrataClient, type EventInput, type RetrieveRequest, type RetrieveResponse } from '@strata/client';
import { DEFAULT_WEIGHTS } from '@strata/memory/retrieval';
import { loadConfig, StrataNode } from '@strata/server';
import { removeDir, startServer, tempDir, type ServerProcess } from '../helpers/server-process';
import { edge, seedMemory, unit } from '../helpers/seed-memory';

const KEY = 'retrieve-test-admin-key';
const S1 = '11111111-1111-4111-8111-111111111111';
const S2 = '22222222-2222-4222-8222-222222222222';
const S3 = '44444444-4444-4444-8444-444444444444';

/** A test card of 4×4 grey blocks (seeded); `size` rescales it (a resized copy is a near-duplicate). */
function png(seed: number, size = 64): Buffer {
  const p = new PNG({ width: size, height: size });
  let s = seed;
  const cells = Array.from({ length: 16 }, () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return 20 + (s % 216);
  });
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const i = (y * size + x) * 4;
      const v = cells[Math.floor((y * 4) / size) * 4 + Math.floor((x * 4) / size)];
      p.data[i] = v;
      p.data[i + 1] = v;
      p.data[i + 2] = v;
      p.data[i + 3] = 255;
    }
  }
  return PNG.sync.write(p);
}

/** s + γ·s·(1 − s), the pipeline's bounded boost. */
const boost = (s: number, g: number) => s + g * s * (1 - s);

const l1 = (r: RetrieveResponse) => r.results.filter((x) => x.unit.level === 1).map((x) => x.unit.content);

describe('retrieve over consolidated memory', () => {
  let server: ServerProcess;
  let client: StrataClient;
  const ask = (body: RetrieveRequest, stream = S1, user = 'ana') => client.retrieve(user, stream, body);
  const raw = (body: unknown, stream = S1, user = 'ana') => client.raw<{ error: string; code: string; details?: { path: string }[] }>('POST', `/v1/users/${user}/streams/${stream}/retrieve`, { body });

  beforeAll(async () => {
    server = await startServer({
      env: {
        STRATA_API_KEY: KEY, STRATA__CONSOLIDATION__INTERVAL_MS: '50', STRATA__RETRIEVAL__MAX_LIMIT: '6', STRATA__RETRIEVAL__MAX_MEDIA_BYTES: '40000',
      },
    });
    client = new StrataClient({ baseUrl: server.url, apiKey: KEY });
    const ana: EventInput[] = [
      { content: 'I live in Berlin.', valid_time: '2026-01-10T09:00:00.000Z' },
      { content: 'We toured the Osaka aquarium with my cousin.', valid_time: '2025-06-01T10:00:00.000Z' },
      { content: 'The Boston aquarium had a huge octopus exhibit.', valid_time: '2026-06-01T10:00:00.000Z' },
      { content: 'To deploy the app, first run the tests, then build the image, and finally push the release tag.', agent_id: 'deployer', valid_time: '2026-01-11T10:00:00.000Z' },
      { content: png(1).toString('base64'), content_type: 'image', metadata: { caption: 'a gradient test card' }, valid_time: '2026-01-12T10:00:00.000Z' },
    ];
    // One request per event, as a chat client sends them. The correction comes after the fact it
    // corrects has been consolidated: were both in one consolidation batch, Berlin would be created
    // already retired (same transaction time as its retirement) and no as_of could show it current.
    for (const e of ana) await client.ingest('ana', S1, e);
    expect(await client.waitUntilReady(30_000, 50)).toMatchObject({ pending: 0, failed: 0 });
    await client.ingest('ana', S1, { content: 'I moved to Lisbon.', valid_time: '2026-03-01T10:00:00.000Z' });
    await client.ingest('ana', S2, { content: 'The quarterly budget review is on Friday.', valid_time: '2026-02-02T10:00:00.000Z' });
    await client.ingest('ana', S2, { content: 'Our team uses Postgres for the billing service.', org_id: 'acme', valid_time: '2026-02-03T10:00:00.000Z' });
    await client.ingest('ben', S1, { content: 'My billing service password rotates monthly.', valid_time: '2026-02-03T10:00:00.000Z' });
    await client.ingest('ben', S1, { content: 'The billing service runs on Kubernetes.', org_id: 'acme', valid_time: '2026-02-04T10:00:00.000Z' });
    await client.ingest('cara', S1, { content: 'The billing service is written in Go.', org_id: 'globex', valid_time: '2026-02-04T10:00:00.000Z' });
    expect(await client.waitUntilReady(30_000, 50)).toMatchObject({ pending: 0, failed: 0 });
    // Insights are planned right after the backlog drains: let them land so results are stable (bounded wait).
    const settled = () => server.output().lastIndexOf('"msg":"L2 planning done"') > server.output().lastIndexOf('"msg":"consolidation caught up"');
    for (let i = 0; i < 100 && !settled(); i++) await new Promise((r) => setTimeout(r, 50));
  });
  afterAll(async () => {
    await client.close();
    expect(await server.stop()).toBe(0);
    removeDir(server.dataDir);
  });

  it('answers the contract shape: unit views, scores in [0, 1] non-increasing, the time taken', async () => {
    const res = await ask({ query: '  aquarium octopus  ' });
    expect(Object.keys(res).sort()).toEqual(['query', 'query_time_ms', 'results', 'stream_id']);
    expect(res.stream_id).toBe(S1);
    expect(res.query).toBe('aquarium octopus');
    expect(res.query_time_ms).toBeGreaterThan(0);
    expect(res.results.length).toBeGreaterThan(0);
    for (const r of res.results) {
      expect(Object.keys(r.unit).sort()).toEqual(
        ['assets', 'content', 'id', 'keywords', 'level', 'memory_type', 'references', 'stream_id', 'transaction_time', 'valid_time'],
      );
      expect(r.score).toBeGreaterThanOrEqual(0);
      expect(r.score).toBeLessThanOrEqual(1);
      expect(['factual', 'procedural']).toContain(r.unit.memory_type);
    }
    for (let i = 1; i < res.results.length; i++) expect(res.results[i].score).toBeLessThanOrEqual(res.results[i - 1].score);
    expect(res.results[0].unit.content).toBe('The Boston aquarium had a huge octopus exhibit.');
    // provenance: the unit points at the event it came from
    const events = await client.allEvents('ana', S1);
    const boston = events.find((e) => e.content.startsWith('The Boston aquarium'))!;
    expect(res.results[0].unit.references).toEqual([boston.event_id]);
  });

  it('never shows a superseded unit, except through as_of before the correction', async () => {
    const q = { query: 'Berlin Lisbon live moved', limit: 6 };
    const now = l1(await ask(q));
    expect(now).toContain('I moved to Lisbon.');
    expect(now).not.toContain('I live in Berlin.');

    const memories = (await client.raw<{ memories: Array<{ content: string; transaction_time: string; retired_at: string | null }> }>('GET', '/v1/users/ana/memories?include_retired=true&level=1&limit=100')).body.memories;
    const berlin = memories.find((m) => m.content === 'I live in Berlin.')!;
    const lisbon = memories.find((m) => m.content === 'I moved to Lisbon.')!;
    expect(berlin.retired_at).toBe(lisbon.transaction_time);
    const ms = (t: string, d: number) => new Date(Date.parse(t) + d).toISOString();

    // Just before the correction was consolidated: Berlin is current, Lisbon does not exist yet.
    const before = l1(await ask({ ...q, as_of: ms(berlin.retired_at!, -1) }));
    expect(before).toContain('I live in Berlin.');
    expect(before).not.toContain('I moved to Lisbon.');
    // At the correction: Lisbon only.
    const at = l1(await ask({ ...q, as_of: berlin.retired_at }));
    expect(at).toContain('I moved to Lisbon.');
    expect(at).not.toContain('I live in Berlin.');
    // Before Berlin was learned: neither.
    const earlier = l1(await ask({ ...q, as_of: ms(berlin.transaction_time, -1) }));
    expect(earlier).not.toContain('I live in Berlin.');
    expect(earlier).not.toContain('I moved to Lisbon.');
  });

  it('filters by valid time (start_time, end_time, both)', async () => {
    const aquarium = (r: RetrieveResponse) => l1(r).filter((c) => /aquarium/.test(c)).sort();
    expect(aquarium(await ask({ query: 'aquarium' }))).toEqual(['The Boston aquarium had a huge octopus exhibit.', 'We toured the Osaka aquarium with my cousin.']);
    expect(aquarium(await ask({ query: 'aquarium', start_time: '2026-01-01T00:00:00Z' }))).toEqual(['The Boston aquarium had a huge octopus exhibit.']);
    expect(aquarium(await ask({ query: 'aquarium', end_time: '2025-12-31T23:59:59Z' }))).toEqual(['We toured the Osaka aquarium with my cousin.']);
    const window = await ask({ query: 'aquarium', start_time: '2025-05-31T00:00:00Z', end_time: '2025-06-02T00:00:00+02:00' });
    expect(l1(window)).toEqual(['We toured the Osaka aquarium with my cousin.']);
    // every result, insights included, is inside the window
    for (const r of window.results) {
      expect(Date.parse(r.unit.valid_time)).toBeGreaterThanOrEqual(Date.parse('2025-05-31T00:00:00Z'));
      expect(Date.parse(r.unit.valid_time)).toBeLessThanOrEqual(Date.parse('2025-06-01T22:00:00Z'));
    }
  });

  it('adds organization knowledge of the named org only, never another user\'s private memory', async () => {
    const billing = (r: RetrieveResponse) => l1(r).filter((c) => /billing/.test(c)).sort();
    expect(billing(await ask({ query: 'billing service' }))).toEqual(['Our team uses Postgres for the billing service.']);
    expect(billing(await ask({ query: 'billing service', org_id: 'acme' }))).toEqual([
      'Our team uses Postgres for the billing service.', 'The billing service runs on Kubernetes.',
    ]);
    expect(billing(await ask({ query: 'billing service', org_id: 'globex' }))).toEqual([
      'Our team uses Postgres for the billing service.', 'The billing service is written in Go.',
    ]);
    // ben sees ana's org unit with the org, and his own private one; never cara's
    expect(billing(await ask({ query: 'billing service', org_id: 'acme' }, S1, 'ben'))).toEqual([
      'My billing service password rotates monthly.', 'Our team uses Postgres for the billing service.', 'The billing service runs on Kubernetes.',
    ]);
    expect(billing(await ask({ query: 'billing service', org_id: 'nobody' }))).toEqual(['Our team uses Postgres for the billing service.']);
  });

  it('checks the key covers the org and the user', async () => {
    const acmeKey = await client.createApiKey({ org_id: 'acme', role: 'read' });
    const benKey = await client.createApiKey({ user_ids: ['ben'], role: 'read' });
    const other = new StrataClient({ baseUrl: server.url, apiKey: acmeKey.key });
    try {
      // ana's data was written with unscoped credentials: she is of no org until an admin says so (CONTRACT §1)
      expect((await other.raw('POST', `/v1/users/ana/streams/${S1}/retrieve`, { body: { query: 'billing', org_id: 'acme' } })).status).toBe(403);
      expect((await client.raw('PUT', '/v1/users/ana/org', { body: { org_id: 'acme' } })).status).toBe(200);
      expect((await other.retrieve('ana', S1, { query: 'billing', org_id: 'acme' })).results.length).toBeGreaterThan(0);
      const wrongOrg = await other.raw('POST', `/v1/users/ana/streams/${S1}/retrieve`, { body: { query: 'billing', org_id: 'globex' } });
      expect(wrongOrg.status).toBe(403);
      other.useApiKey(benKey.key);
      expect((await other.raw('POST', `/v1/users/ana/streams/${S1}/retrieve`, { body: { query: 'billing' } })).status).toBe(403);
      expect((await other.raw('POST', `/v1/users/ben/streams/${S1}/retrieve`, { body: { query: 'billing' } })).status).toBe(200);
      expect((await other.raw('POST', `/v1/users/ben/streams/${S1}/retrieve`, { body: { query: 'billing' }, auth: false })).status).toBe(401);
    } finally {
      await other.close();
    }
  });

  it('limit: the first results of the same ranking; capped at retrieval.max_limit', async () => {
    const all = await ask({ query: 'aquarium billing budget Lisbon deploy', limit: 6 });
    expect(all.results).toHaveLength(6); // ana has more than 6 current units: capped at max_limit = 6
    const two = await ask({ query: 'aquarium billing budget Lisbon deploy', limit: 2 });
    expect(two.results.map((r) => r.unit.id)).toEqual(all.results.slice(0, 2).map((r) => r.unit.id));
    expect((await ask({ query: 'aquarium billing budget Lisbon deploy', limit: 1000 })).results).toHaveLength(6);
    expect((await ask({ query: 'aquarium billing budget Lisbon deploy' })).results).toHaveLength(6); // default 10, capped
  });

  it('min_score drops exactly the results below it', async () => {
    const all = await ask({ query: 'aquarium octopus Osaka', limit: 6 });
    // the clock moves between the calls (recency): a hair below the third score keeps it
    const threshold = all.results[2].score - 1e-9;
    const kept = await ask({ query: 'aquarium octopus Osaka', limit: 6, min_score: threshold });
    expect(kept.results.map((r) => r.unit.id)).toEqual(all.results.filter((r) => r.score >= threshold).map((r) => r.unit.id));
    expect((await ask({ query: 'aquarium octopus Osaka', min_score: 1 })).results).toEqual([]);
  });

  it('scope stream searches one stream; scope user boosts the current stream', async () => {
    const streamOnly = await ask({ query: 'billing budget aquarium Lisbon', scope: 'stream' }, S2);
    expect(streamOnly.results.length).toBeGreaterThan(0);
    for (const r of streamOnly.results) expect(r.unit.stream_id).toBe(S2);
    expect(l1(streamOnly).sort()).toEqual(['Our team uses Postgres for the billing service.', 'The quarterly budget review is on Friday.']);

    const fromS2 = await ask({ query: 'quarterly budget' }, S2);
    const fromS3 = await ask({ query: 'quarterly budget' }, S3);
    const id = fromS3.results.find((r) => r.unit.content === 'The quarterly budget review is on Friday.')!.unit.id;
    const s3 = fromS3.results.find((r) => r.unit.id === id)!.score;
    const s2 = fromS2.results.find((r) => r.unit.id === id)!.score;
    expect(s2).toBeCloseTo(boost(s3, 0.1), 6);
    // a stream with no memory: nothing in stream scope
    expect((await ask({ query: 'quarterly budget', scope: 'stream' }, S3)).results).toEqual([]);
  });

  it("agent_id boosts that agent's procedural memory (a boost, not a filter)", async () => {
    const q = { query: 'how to release the app', limit: 6 };
    // from a stream without memory: no current-stream boost on top
    const plain = await ask(q, S3);
    const boosted = await ask({ ...q, agent_id: 'deployer' }, S3);
    const other = await ask({ ...q, agent_id: 'someone-else' }, S3);
    const proc = (r: RetrieveResponse) => r.results.find((x) => x.unit.memory_type === 'procedural' && x.unit.level === 1)!;
    expect(proc(plain).unit.content).toMatch(/To deploy the app/);
    expect(proc(boosted).score).toBeCloseTo(boost(proc(plain).score, 0.3), 6);
    // 6 digits, as above: recency and importance decay with the clock, and on a loaded machine the two
    // requests are far enough apart (~200 ms) to move the score by ~1e-9
    expect(proc(other).score).toBeCloseTo(proc(plain).score, 6);
    expect(boosted.results[0].unit.id).toBe(proc(plain).unit.id);
    // not a filter: the other results are still there
    expect(boosted.results.length).toBe(plain.results.length);
  });

  it('image: finds the same picture and a resized copy; audio/video are checked', async () => {
    const q = { query: 'picture', limit: 6 };
    const same = await ask({ ...q, image: png(1).toString('base64') });
    expect(same.results[0].unit.content).toBe('[image] a gradient test card');
    expect(same.results[0].unit.assets[0]).toMatchObject({ media_type: 'image' });
    expect(same.results[0].unit.assets[0].phash).toMatch(/^[0-9a-f]{16}$/);
    const near = await ask({ ...q, image: `data:image/png;base64,${png(1, 48).toString('base64')}` });
    expect(near.results[0].unit.content).toBe('[image] a gradient test card');
    const without = await ask(q);
    const imageScore = (r: RetrieveResponse) => r.results.find((x) => x.unit.content === '[image] a gradient test card')?.score ?? 0;
    expect(imageScore(same)).toBeGreaterThan(imageScore(without));
    // an unrelated picture matches nothing: the image list is empty and the ranking is the text one
    const unrelated = await ask({ ...q, image: png(2).toString('base64') });
    expect(imageScore(unrelated)).toBeLessThan(imageScore(same));
    expect((await ask({ ...q, audio: Buffer.from('RIFF....WAVEfmt ').toString('base64') })).results.length).toBeGreaterThan(0);
  });

  it('media errors: bad base64 400, not an image 400, too large 413', async () => {
    const bad = await raw({ query: 'picture', image: 'not base64 at all!' });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('invalid_base64');
    expect(bad.body.details![0].path).toBe('/image');
    const text = await raw({ query: 'picture', image: Buffer.from('hello world').toString('base64') });
    expect(text.status).toBe(400);
    expect(text.body.code).toBe('unsupported_image');
    const big = await raw({ query: 'picture', video: randomBytes(50_000).toString('base64') });
    expect(big.status).toBe(413);
    expect(big.body.code).toBe('payload_too_large');
    expect((await raw({ query: 'picture', audio: '%%%' })).status).toBe(400);
  });

  it('validation errors answer 400 with the envelope', async () => {
    const cases: Array<[unknown, string]> = [
      [{}, '/query'],
      [{ query: '' }, '/query'],
      [{ query: '   ' }, '/query'],
      [{ query: 42 }, '/query'],
      [{ query: 'x', limit: 0 }, '/limit'],
      [{ query: 'x', limit: -3 }, '/limit'],
      [{ query: 'x', limit: 2.5 }, '/limit'],
      [{ query: 'x', min_score: 2 }, '/min_score'],
      [{ query: 'x', graph_depth: -1 }, '/graph_depth'],
      [{ query: 'x', scope: 'galaxy' }, '/scope'],
      [{ query: 'x', start_time: 'yesterday' }, '/start_time'],
      [{ query: 'x', end_time: '2026-13-45T00:00:00Z' }, '/end_time'],
      [{ query: 'x', as_of: '2026-01-01' }, '/as_of'],
      [{ query: 'x', start_time: '2026-02-01T00:00:00Z', end_time: '2026-01-01T00:00:00Z' }, '/start_time'],
      [{ query: 'x', enable_arbitration: 'yes' }, '/enable_arbitration'],
      [{ query: 'x', consistency: 'eventual' }, '/consistency'],
      [{ query: 'x', org_id: '' }, '/org_id'],
    ];
    for (const [body, path] of cases) {
      const res = await raw(body);
      expect({ body, status: res.status, code: res.body.code }).toEqual({ body, status: 400, code: 'validation_failed' });
      expect(typeof res.body.error).toBe('string');
      expect(res.body.details!.map((d) => d.path)).toContain(path);
    }
    expect((await client.raw('POST', '/v1/users/ana/streams/not-a-uuid/retrieve', { body: { query: 'x' } })).status).toBe(400);
    const notJson = await client.raw<{ code: string }>('POST', `/v1/users/ana/streams/${S1}/retrieve`, { rawBody: '{"query":', headers: { 'content-type': 'application/json' } });
    expect([notJson.status, notJson.body.code]).toEqual([400, 'invalid_json']);
  });

  it('graph_depth over 3 is capped; linearizable reads answer the same', async () => {
    const q = { query: 'aquarium octopus', limit: 6 };
    const three = await ask({ ...q, graph_depth: 3 });
    const ten = await ask({ ...q, graph_depth: 10 });
    expect(ten.results.map((r) => r.unit.id)).toEqual(three.results.map((r) => r.unit.id));
    const lin = await ask({ ...q, consistency: 'linearizable' });
    expect(lin.results.map((r) => r.unit.id)).toEqual((await ask(q)).results.map((r) => r.unit.id));
  });

  it('sees memory made after the index was built (kept current by the apply listener)', async () => {
    await client.ingest('ana', S1, { content: 'My neighbour keeps three tortoises in the garden.', valid_time: '2026-04-01T10:00:00.000Z' });
    await client.waitUntilReady(30_000, 50);
    expect(l1(await ask({ query: 'tortoises neighbour' }))[0]).toBe('My neighbour keeps three tortoises in the garden.');
  });
});

const AMETHYST_PHOTO = { asset_id: 'a'.repeat(64), media_type: 'image' as const, size: 0, url: 'https://example.invalid/amethyst.png', phash: null };

describe('retrieve over seeded memory: graph expansion and arbitration', () => {
  const USER = 'grace';
  const STREAM = '33333333-3333-4333-8333-333333333333';
  let dataDir: string;
  let node: StrataNode;
  let client: StrataClient;
  const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
  const A = id(1);
  const B = id(2);
  const C = id(3);
  const D = id(4);
  const X = id(5);
  const Y = id(6);
  const env = {
    STRATA_API_KEY: KEY, STRATA__EMBEDDING__PROVIDER: 'hashing', STRATA__CONSOLIDATION__ENABLED: 'false', STRATA_PORT: '0', STRATA_HOST: '127.0.0.1',
    STRATA__LOG__LEVEL: 'silent',
  };
  const startNode = async (extra: Record<string, string> = {}) => {
    node = await StrataNode.start(loadConfig({ env: { ...env, STRATA_DATA_DIR: dataDir, ...extra } }));
    client = new StrataClient({ baseUrl: node.url, apiKey: KEY });
  };

  beforeAll(async () => {
    dataDir = tempDir();
    const u = (n: number, content: string, extra: Partial<Parameters<typeof unit>[0]> = {}) => unit({ id: id(n), user_id: USER, content, ...extra });
    // A matches the query; B is linked to A, C to B (two hops from A), D to nothing. The 24 fillers
    // match the query too, so B and C are not among the 20 seeds of the expansion.
    const fillers = Array.from({ length: 24 }, (_, i) => u(100 + i, `Quartz crystal sample number ${i} sits in drawer ${i}.`));
    await startNode();
    await seedMemory((user, command) => node.services.shards.forUser(user).log.propose(command), [{
      user_id: USER,
      units: [
        u(1, 'The quartz geode glows under ultraviolet light.'),
        u(2, 'Mineral shows happen every spring in Tucson.'),
        u(3, 'My cousin drives to Arizona each March.'),
        u(4, 'The bakery on the corner sells rye bread.'),
        u(5, 'I work at Siemens as an engineer.', { subject: 'user', attribute: 'employer', valid_time: '2025-01-01T00:00:00.000Z' }),
        u(6, 'I work at SAP as an engineer.', { subject: 'user', attribute: 'employer', valid_time: '2026-01-01T00:00:00.000Z' }),
        u(7, 'The amethyst cluster came from a Brazilian mine.', { keywords: ['amethyst', 'brazil'], references: [id(801), id(802), id(803)], assets: [AMETHYST_PHOTO] }),
        ...fillers,
      ],
      edges: [edge(USER, id(901), A, B, 'RelatedTo'), edge(USER, id(902), B, C, 'RelatedTo'), edge(USER, id(903), X, Y, 'EvolvedTo')],
    }]);
  });
  afterAll(async () => {
    await client?.close();
    await node?.stop();
    removeDir(dataDir);
  });

  const scores = async (depth: number) => {
    // asked from another stream than the units', so no stream boost bends the scores
    const res = await client.retrieve(USER, S3, { query: 'quartz geode', graph_depth: depth, limit: 100 });
    return new Map(res.results.map((r) => [r.unit.id, r.score]));
  };

  it('answers whole records though the indexes keep slim ones (no keywords or assets, one reference)', async () => {
    const res = await client.retrieve(USER, STREAM, { query: 'amethyst cluster', limit: 3 });
    const found = res.results.find((r) => r.unit.id === id(7))!.unit;
    expect(found.keywords).toEqual(['amethyst', 'brazil']);
    expect(found.references).toEqual([id(801), id(802), id(803)]);
    expect(found.assets).toEqual([AMETHYST_PHOTO]);
    const held = node.services.retrieval.heldRecord(USER, id(7))!;
    expect(held).toBeDefined();
    expect(held.keywords).toBeUndefined();
    expect(held.references).toEqual([id(801)]);
  });

  it('graph_depth 0, 1, 2: neighbours gain by hops, unlinked units keep their share', async () => {
    const [d0, d1, d2] = [await scores(0), await scores(1), await scores(2)];
    expect([...d0.keys()][0]).toBe(A);
    // The graph list joins fusion at depth ≥ 1: its weight enters the normalization (vector + text + the
    // text fields own and context, then + graph), so a unit the graph does not reach keeps exactly
    // base / (base + graph) of its depth-0 score.
    const w = DEFAULT_WEIGHTS;
    const base = w.vector + w.text + w.own + w.context;
    const share = base / (base + w.graph);
    expect(d1.get(D)).toBeCloseTo(d0.get(D)! * share, 9);
    expect(d2.get(D)).toBeCloseTo(d0.get(D)! * share, 9);
    // B is one hop from A: reached at depth 1.
    expect(d1.get(B)!).toBeGreaterThan(d0.get(B)! * share + 1e-6);
    // C is two hops from A: not reached at depth 1, reached at depth 2.
    expect(d1.get(C)).toBeCloseTo(d0.get(C)! * share, 9);
    expect(d2.get(C)!).toBeGreaterThan(d0.get(C)! * share + 1e-6);
    expect(d2.get(B)).toBeCloseTo(d1.get(B)!, 9);
  });

  it('arbitration keeps the current version, or every version for a history question', async () => {
    const q = { query: 'where do I work as an engineer', limit: 10 };
    const plain = await client.retrieve(USER, STREAM, q);
    const ids = plain.results.map((r) => r.unit.id);
    expect(ids).toEqual(expect.arrayContaining([X, Y]));
    const best = Math.max(...plain.results.filter((r) => r.unit.id === X || r.unit.id === Y).map((r) => r.score));

    const arbitrated = await client.retrieve(USER, STREAM, { ...q, enable_arbitration: true });
    expect(arbitrated.results.map((r) => r.unit.id)).not.toContain(X);
    expect(arbitrated.results.find((r) => r.unit.id === Y)!.score).toBeCloseTo(best, 9);

    const history = await client.retrieve(USER, STREAM, { query: 'where did I work first as an engineer', enable_arbitration: true });
    const order = history.results.map((r) => r.unit.id).filter((x) => x === X || x === Y);
    expect(order).toEqual([X, Y]); // oldest first
  });

  it('[reranker] type = "arbitrator" turns arbitration on for every request', async () => {
    await client.close();
    await node.stop();
    await startNode({ STRATA__RERANKER__TYPE: 'arbitrator' });
    const res = await client.retrieve(USER, STREAM, { query: 'where do I work as an engineer' });
    const ids = res.results.map((r) => r.unit.id);
    expect(ids).toContain(Y);
    expect(ids).not.toContain(X);
  });
});
