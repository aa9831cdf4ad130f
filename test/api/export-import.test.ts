/**
 * Export and import (CONTRACT §14, docs/export-format.md) between two real node processes: a source
 * whose memory is made the way a client makes it (events with text and an image, a correction, a
 * forgotten fact, an explicit edge, a goal with tasks, organization knowledge of two users), exported
 * and imported into an empty node. The same retrieval requests (now and `as_of` earlier) must answer
 * the same units in the same order on both, the target's own export must equal the source's, and a
 * second import must change nothing. Then every refusal: malformed lines (named, nothing after them
 * applied), scopes, another embedder, the size limit, the media type.
 */
import { gzipSync } from 'node:zlib';
import { PNG } from 'pngjs';
import { StrataClient, type RetrieveRequest } from '@strata/client';
import { removeDir, startServer, type ServerProcess } from '../helpers/server-process';

const KEY = 'export-import-test-admin-key';
const S1 = '5a1e0000-1111-4111-8111-111111111111';
const S2 = '5a1e0000-2222-4222-8222-222222222222';
/** Both nodes: the same embedder, and no retrieval reinforcement (a retrieval would change the importance it ranks by). */
const COMMON = { STRATA_API_KEY: KEY, STRATA__EMBEDDING__PROVIDER: 'hashing', STRATA__MEMORY__REINFORCE_TOP: '0' };
const CHUNK_RECORDS = 3;
const MAX_BYTES = 256 * 1024;

interface Envelope { error: string; code: string; details?: { path: string; message: string }[] }
interface ImportAnswer { status: string; counts: Record<string, number>; skipped: Record<string, number> }
type Line = Record<string, unknown> & { kind: string };

/** A test card of 4×4 grey blocks: a real PNG, so the image event stores an asset. */
function png(seed: number, size = 32): Buffer {
  const p = new PNG({ width: size, height: size });
  let s = seed;
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      s = (s * 1103515245 + 12345) % 2147483648;
      const i = (y * size + x) * 4;
      p.data[i] = p.data[i + 1] = p.data[i + 2] = 20 + ((Math.floor(x / 8) * 4 + Math.floor(y / 8)) * 13) % 216;
      p.data[i + 3] = 255;
    }
  }
  return PNG.sync.write(p);
}

const parse = (text: string): Line[] => text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Line);
const ndjson = (lines: unknown[]): string => lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
const HEADER = { kind: 'header', format: 'strata-export', version: 1 };
const event = (user: string, content: string, extra: Record<string, unknown> = {}) => ({
  kind: 'event', event_id: crypto.randomUUID(), user_id: user, stream_id: S1, content, content_type: 'text',
  valid_time: '2026-02-01T10:00:00.000Z', transaction_time: '2026-02-01T10:00:00.000Z', consolidation: { state: 'consolidated' }, ...extra,
});

describe('export and import between two nodes', () => {
  let source: ServerProcess;
  let target: ServerProcess;
  let src: StrataClient;
  let dst: StrataClient;
  let exported: string;
  let firstImport: ImportAnswer;
  const times: Record<string, string> = {};

  const exportOf = async (client: StrataClient, path: string, key?: string) => {
    const res = await client.raw<string>('GET', path, key ? { headers: { 'x-api-key': key }, auth: false } : {});
    return res;
  };
  const importInto = (client: StrataClient, body: string | Uint8Array, options: { query?: string; key?: string; headers?: Record<string, string> } = {}) =>
    client.raw<ImportAnswer & Envelope>('POST', `/v1/import${options.query ?? ''}`, {
      rawBody: body, auth: options.key === undefined,
      headers: { 'content-type': 'application/x-ndjson', ...(options.key ? { 'x-api-key': options.key } : {}), ...options.headers },
    });

  /** Insights are planned right after the backlog drains: wait for that round to finish (bounded). */
  const l2Settled = async () => {
    const settled = () => source.output().lastIndexOf('"msg":"L2 planning done"') > source.output().lastIndexOf('"msg":"consolidation caught up"');
    for (let i = 0; i < 100 && !settled(); i++) await new Promise((r) => setTimeout(r, 50));
  };

  beforeAll(async () => {
    [source, target] = await Promise.all([
      startServer({ env: { ...COMMON, STRATA__CONSOLIDATION__INTERVAL_MS: '50' } }),
      startServer({ env: { ...COMMON, STRATA__IMPORT__CHUNK_RECORDS: String(CHUNK_RECORDS), STRATA__IMPORT__MAX_BYTES: String(MAX_BYTES) } }),
    ]);
    src = new StrataClient({ baseUrl: source.url, apiKey: KEY });
    dst = new StrataClient({ baseUrl: target.url, apiKey: KEY });

    // ben belongs to acme: his user line carries the org
    expect((await src.raw('PUT', '/v1/users/ben/org', { body: { org_id: 'acme' } })).status).toBe(200);
    for (const e of [
      { content: 'I live in Berlin.', valid_time: '2026-01-10T09:00:00.000Z' },
      { content: 'My old phone number is 555-0199.', valid_time: '2026-01-10T09:30:00.000Z' },
      { content: 'My favourite food is ramen.', valid_time: '2026-01-11T09:00:00.000Z' },
      { content: 'My goal is to learn Rust. First read the book, then write a command line tool.', valid_time: '2026-01-12T09:00:00.000Z' },
      { content: png(3).toString('base64'), content_type: 'image' as const, metadata: { caption: 'a grey test card' }, valid_time: '2026-01-13T09:00:00.000Z' },
    ]) await src.ingest('ana', S1, e);
    expect(await src.waitUntilReady(30_000, 50)).toMatchObject({ pending: 0, failed: 0 });
    // the correction after the fact it corrects is consolidated, so Berlin was current for a while
    await src.ingest('ana', S1, { content: 'I moved to Lisbon.', valid_time: '2026-03-01T10:00:00.000Z' });
    await src.ingest('ana', S2, { content: 'Our team uses Postgres for the billing service.', org_id: 'acme', valid_time: '2026-02-03T10:00:00.000Z' });
    await src.ingest('ben', S1, { content: 'The billing service runs on Kubernetes.', org_id: 'acme', valid_time: '2026-02-04T10:00:00.000Z' });
    await src.ingest('ben', S1, { content: 'My dog is called Rex.', valid_time: '2026-02-05T10:00:00.000Z' });
    expect(await src.waitUntilReady(30_000, 50)).toMatchObject({ pending: 0, failed: 0 });
    await l2Settled();

    const units = (await src.listMemories('ana', { includeRetired: true, limit: 1000 })).memories;
    const find = (re: RegExp) => units.find((u) => u.level === 1 && re.test(u.content))!;
    const berlin = find(/Berlin/);
    times.beforeCorrection = new Date(Date.parse(berlin.retired_at!) - 1).toISOString();
    await src.addEdge('ana', { source_id: find(/ramen/).id, target_id: find(/Lisbon/).id, relation: 'RelatedTo', weight: 0.5 });
    times.beforeForget = new Date().toISOString();
    const preview = await src.semanticPreview('ana', { instruction: 'Forget my old phone number' });
    expect(preview.kind).toBe('forget');
    await src.semanticExecute('ana', { plan_id: preview.plan_id, confirm: true });

    const all = await exportOf(src, '/v1/export');
    expect(all.status).toBe(200);
    exported = all.body;
    firstImport = (await importInto(dst, exported)).body;
  }, 120_000);

  afterAll(async () => {
    await src?.close();
    await dst?.close();
    for (const node of [source, target]) {
      if (!node) continue;
      expect(await node.stop()).toBe(0);
      removeDir(node.dataDir);
    }
  });

  it('exports a header, then every record kind: events, the asset, every unit version with its vector, edges, goals, tasks, users', () => {
    const lines = parse(exported);
    expect(lines[0]).toMatchObject({ kind: 'header', format: 'strata-export', version: 1, node_id: 1, embedder: { id: expect.stringMatching(/^hashing/), dimensions: expect.any(Number) } });
    expect(Date.parse(lines[0].exported_at as string)).not.toBeNaN();
    const kinds = new Set(lines.slice(1).map((l) => l.kind));
    expect([...kinds].sort()).toEqual(['asset', 'edge', 'event', 'goal', 'task', 'unit', 'user']);
    const units = lines.filter((l) => l.kind === 'unit');
    expect(units.some((u) => u.retired_reason === 'superseded' && /Berlin/.test(u.content as string))).toBe(true);
    expect(units.some((u) => u.retired_reason === 'forgotten' && /555-0199/.test(u.content as string))).toBe(true);
    expect(units.filter((u) => u.retired_reason === 'forgotten')).toHaveLength(1);
    expect(units.every((u) => (u.vector as { embedder_id: string } | null)?.embedder_id === (lines[0].embedder as { id: string }).id)).toBe(true);
    const asset = lines.find((l) => l.kind === 'asset')!;
    const image = lines.find((l) => l.kind === 'event' && l.content_type === 'image')!;
    expect((image.assets as { asset_id: string }[])[0].asset_id).toBe(asset.asset_id);
    expect(lines.indexOf(asset)).toBeLessThan(lines.indexOf(image));
    expect(lines.filter((l) => l.kind === 'user')).toEqual([{ kind: 'user', user_id: 'ana', org_id: null }, { kind: 'user', user_id: 'ben', org_id: 'acme' }]);
    expect(lines.filter((l) => l.kind === 'event').every((l) => (l.consolidation as { state: string }).state === 'consolidated')).toBe(true);
    expect(lines.some((l) => l.kind === 'event' && l.org_id === 'acme')).toBe(true);
    expect(lines.some((l) => l.kind === 'edge' && l.relation === 'RelatedTo')).toBe(true);
    expect(lines.some((l) => l.kind === 'edge' && l.relation === 'EvolvedTo')).toBe(true);
  });

  it('imports everything into the empty node and counts it', () => {
    const lines = parse(exported).slice(1);
    const count = (kind: string) => lines.filter((l) => l.kind === kind).length;
    expect(firstImport.status).toBe('imported');
    expect(firstImport.counts).toEqual({
      events: count('event'), assets: count('asset'), units: count('unit'), edges: count('edge'), goals: count('goal'), tasks: count('task'), users: 1,
    });
    expect(firstImport.skipped).toEqual({ events: 0, assets: 0, units: 0, edges: 0, goals: 0, tasks: 0, users: 1 }); // ana has no org to record
  });

  it('answers the same retrieval requests with the same units in the same order, now and as of earlier', async () => {
    const requests: [string, string, RetrieveRequest][] = [
      ['ana', S1, { query: 'Where do I live?', limit: 10 }],
      ['ana', S1, { query: 'Where do I live?', limit: 10, as_of: times.beforeCorrection }],
      ['ana', S1, { query: 'old phone number', limit: 10, as_of: times.beforeForget }],
      ['ana', S1, { query: 'old phone number', limit: 10 }],
      ['ana', S1, { query: 'food ramen Rust book', limit: 10, graph_depth: 2 }],
      ['ana', S2, { query: 'billing service database', limit: 10, org_id: 'acme' }],
      ['ben', S1, { query: 'billing service Kubernetes dog', limit: 10, org_id: 'acme' }],
      ['ana', S1, { query: 'grey test card', limit: 10, scope: 'stream' }],
    ];
    let nonEmpty = 0;
    for (const [user, stream, request] of requests) {
      const [a, b] = await Promise.all([src.retrieve(user, stream, request), dst.retrieve(user, stream, request)]);
      const ids = (r: typeof a) => r.results.map((x) => x.unit.id);
      expect([request, ids(b)]).toEqual([request, ids(a)]);
      if (a.results.length > 0) nonEmpty++;
    }
    expect(nonEmpty).toBeGreaterThanOrEqual(6);
    // the forgotten number shows before the forgetting only, the superseded city before the correction only
    const has = (re: RegExp, r: { results: { unit: { content: string } }[] }) => r.results.some((x) => re.test(x.unit.content));
    expect(has(/555-0199/, await dst.retrieve('ana', S1, requests[2][2]))).toBe(true);
    expect(has(/555-0199/, await dst.retrieve('ana', S1, requests[3][2]))).toBe(false);
    expect(has(/Berlin/, await dst.retrieve('ana', S1, requests[1][2]))).toBe(true);
    expect(has(/Berlin/, await dst.retrieve('ana', S1, requests[0][2]))).toBe(false);
    const context = { user_id: 'ana', query: 'where do I live and what do I eat', token_budget: 400 };
    expect((await dst.context(context)).context).toEqual((await src.context(context)).context);
  });

  it('holds the same records afterwards: the target exports what the source exported', async () => {
    const again = parse((await exportOf(dst, '/v1/export')).body);
    const before = parse(exported);
    expect(again.slice(1)).toEqual(before.slice(1));
    expect(await dst.taskTree('ana')).toEqual(await src.taskTree('ana'));
    expect((await dst.allEvents('ana', S1)).map((e) => e.event_id)).toEqual((await src.allEvents('ana', S1)).map((e) => e.event_id));
  });

  it('changes nothing when the same file is imported again: every record is skipped', async () => {
    const res = await importInto(dst, exported);
    expect(res.status).toBe(200);
    expect(Object.values(res.body.counts).every((n) => n === 0)).toBe(true);
    for (const [kind, n] of Object.entries(firstImport.counts)) expect([kind, res.body.skipped[kind]]).toEqual([kind, n + firstImport.skipped[kind]]);
    expect(parse((await exportOf(dst, '/v1/users/ana/export')).body).slice(1)).toEqual(parse((await exportOf(src, '/v1/users/ana/export')).body).slice(1));
  });

  it('consolidates on the importing node an event the file gives as pending (or with no consolidation state)', async () => {
    const res = await importInto(dst, ndjson([HEADER, event('pia', 'I play the oboe on Sundays.', { consolidation: { state: 'pending' } }), { ...event('pia', 'My cat is called Miso.'), consolidation: undefined }]));
    expect([res.status, res.body.counts?.events]).toEqual([200, 2]);
    expect(await dst.waitUntilReady(30_000, 50)).toMatchObject({ pending: 0, failed: 0 });
    const contents = (await dst.listMemories('pia')).memories.map((u) => u.content).join(' | ');
    expect(contents).toMatch(/oboe/);
    expect(contents).toMatch(/Miso/);
  });

  it('accepts a gzip body', async () => {
    const file = ndjson([HEADER, event('gus', 'Compressed on the way.')]);
    const res = await importInto(dst, gzipSync(Buffer.from(file)), { headers: { 'content-encoding': 'gzip' } });
    expect([res.status, res.body.counts?.events]).toEqual([200, 1]);
  });

  describe('a malformed line', () => {
    const zoeEvents = async () => (await dst.allEvents('zoe', S1)).map((e) => e.content);

    it('is refused with 400 naming its line; the chunks before it stay, nothing from it on is applied', async () => {
      // chunk_records is 3 on the target: lines 2-4 are one chunk, proposed before line 6 is read
      const lines = [HEADER, event('zoe', 'z1'), event('zoe', 'z2'), event('zoe', 'z3'), event('zoe', 'z4'), '{"kind":"event", broken', event('zoe', 'z5')];
      const text = lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n') + '\n';
      const res = await importInto(dst, text);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'invalid_json', details: [{ path: '/line/6' }] });
      expect(res.body.error).toContain('Line 6');
      // the answer says what of the file is stored: line 5 was waiting in the next chunk
      expect(res.body.error).toContain('Every line before line 5 is stored: 3 records imported (3 events). Importing the file again (corrected) is safe');
      expect(await zoeEvents()).toEqual(['z1', 'z2', 'z3']);
      // the corrected file imports the rest; what was applied is skipped
      const fixed = await importInto(dst, ndjson(lines.filter((l) => typeof l !== 'string')));
      expect([fixed.body.counts.events, fixed.body.skipped.events]).toEqual([2, 3]);
      expect(await zoeEvents()).toEqual(['z1', 'z2', 'z3', 'z4', 'z5']);
    });

    it.each([
      ['an unknown kind', [event('zed', 'a'), { kind: 'memory', user_id: 'zed' }], 'validation_failed', '/line/3/kind'],
      ['a missing required field', [event('zed', 'a'), { ...event('zed', 'b'), content: undefined }], 'validation_failed', '/line/3/content'],
      ['a field of the wrong type', [{ ...event('zed', 'a'), valid_time: 'yesterday' }], 'validation_failed', '/line/2/valid_time'],
      ['a unit whose vector does not hold dims values', [{ kind: 'unit', id: 'u-1', user_id: 'zed', stream_id: S1, level: 1, memory_type: 'factual', content: 'x', valid_time: '2026-01-01T00:00:00Z', transaction_time: '2026-01-01T00:00:00Z', vector: { embedder_id: 'e', dims: 4, f32_b64: 'AAAAAA==' } }], 'validation_failed', '/line/2/vector/f32_b64'],
      ['an asset whose id is not its hash', [{ kind: 'asset', user_id: 'zed', asset_id: 'a'.repeat(64), data_b64: 'aGVsbG8=' }], 'validation_failed', '/line/2/asset_id'],
    ])('%s: 400 naming the line, nothing of the file applied', async (_label, records, code, path) => {
      const res = await importInto(dst, ndjson([HEADER, ...records]));
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code, details: expect.arrayContaining([expect.objectContaining({ path })]) });
      expect(await dst.allEvents('zed', S1)).toEqual([]);
    });

    it('refuses a file without its header, of another version, or empty', async () => {
      const noHeader = await importInto(dst, ndjson([event('zed', 'a')]));
      expect([noHeader.status, noHeader.body.details?.[0].path]).toEqual([400, '/line/1/kind']);
      const v2 = await importInto(dst, ndjson([{ ...HEADER, version: 2 }, event('zed', 'a')]));
      expect([v2.status, v2.body.details?.[0].path]).toEqual([400, '/line/1/version']);
      expect(v2.body.error).toContain('version 2');
      const blank = await importInto(dst, '\n\n');
      expect([blank.status, blank.body.code, blank.body.details?.[0].path]).toEqual([400, 'validation_failed', '/line/1']);
      expect(await dst.allEvents('zed', S1)).toEqual([]);
    });
  });

  describe('scopes', () => {
    let anaKey: string;
    let readKey: string;
    beforeAll(async () => {
      anaKey = (await dst.createApiKey({ name: 'ana only', role: 'write', user_ids: ['ana', 'newbie', 'newbie2'] })).key;
      readKey = (await dst.createApiKey({ name: 'ana reader', role: 'read', user_ids: ['ana'] })).key;
    });

    it('lets a key limited to users export its users only, and never every user', async () => {
      const own = await exportOf(dst, '/v1/users/ana/export', readKey);
      expect(own.status).toBe(200);
      expect(new Set(parse(own.body).slice(1).map((l) => l.user_id))).toEqual(new Set(['ana']));
      const other = await exportOf(dst, '/v1/users/ben/export', readKey);
      expect([other.status, (other.body as unknown as Envelope).code]).toEqual([403, 'forbidden']);
      expect((await exportOf(dst, '/v1/export', anaKey)).status).toBe(403);
    });

    it('refuses a file naming a user outside the key, at that user\'s first line; a read key imports nothing', async () => {
      const file = ndjson([HEADER, event('newbie', 'n1'), event('ben', 'not yours'), event('newbie', 'n2')]);
      const res = await importInto(dst, file, { key: anaKey });
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ code: 'forbidden', details: [{ path: '/line/3/user_id' }] });
      expect((await dst.allEvents('ben', S1)).map((e) => e.content)).not.toContain('not yours');
      expect(await dst.allEvents('newbie', S1)).toEqual([]); // line 2 was still in its chunk
      expect((await importInto(dst, ndjson([HEADER, event('newbie', 'n1')]), { key: readKey })).status).toBe(403);
      const ok = await importInto(dst, ndjson([HEADER, event('newbie', 'n1')]), { key: anaKey });
      expect([ok.status, ok.body.counts?.events]).toEqual([200, 1]);
    });

    it('applies nothing of a file refused for scope, however many full chunks come before the line (red-team: 500 of 600 stored)', async () => {
      // 4 chunks' worth (import.chunk_records is 3 here) of lines in scope, then one outside
      const good = Array.from({ length: 4 * CHUNK_RECORDS + 1 }, (_, i) => event('newbie2', `early ${i}`));
      const res = await importInto(dst, ndjson([HEADER, ...good, event('ben', 'not yours either')]), { key: anaKey });
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ code: 'forbidden', details: [{ path: `/line/${good.length + 2}/user_id` }] });
      expect(await dst.allEvents('newbie2', S1)).toEqual([]);
      // a malformed line late in the file keeps the documented behaviour: the full chunks before it stay
      const malformed = await importInto(dst, ndjson([HEADER, ...good]) + '{"kind":\n', { key: anaKey });
      expect([malformed.status, malformed.body.code]).toEqual([400, 'invalid_json']);
      expect((await dst.allEvents('newbie2', S1)).length).toBe(4 * CHUNK_RECORDS);
    });
  });

  it('refuses a file of another embedder with 409, and with reembed=true embeds its units again', async () => {
    const unit = {
      kind: 'unit', id: '0e5e0000-0000-4000-8000-000000000001', user_id: 'remy', stream_id: S1, level: 1, memory_type: 'factual',
      content: 'Remy plays the cello in an orchestra.', valid_time: '2026-01-01T00:00:00.000Z', transaction_time: '2026-01-01T00:00:00.000Z',
      vector: { embedder_id: 'other-model', dims: 2, f32_b64: Buffer.from(new Float32Array([0.6, 0.8]).buffer).toString('base64') },
    };
    const file = ndjson([{ ...HEADER, embedder: { id: 'other-model', dimensions: 2 } }, unit]);
    const refused = await importInto(dst, file);
    expect([refused.status, refused.body.code]).toEqual([409, 'conflict']);
    expect(refused.body.error).toContain('other-model');
    expect((await dst.listMemories('remy', { includeRetired: true })).memories).toEqual([]);
    const accepted = await importInto(dst, file, { query: '?reembed=true' });
    expect([accepted.status, accepted.body.counts?.units]).toEqual([200, 1]);
    const stored = parse((await exportOf(dst, '/v1/users/remy/export')).body).find((l) => l.kind === 'unit')!;
    expect((stored.vector as { embedder_id: string }).embedder_id).toMatch(/^hashing/);
    expect((await dst.retrieve('remy', S1, { query: 'cello orchestra' })).results.map((r) => r.unit.id)).toEqual([unit.id]);
  });

  it('answers 413 beyond import.max_bytes, 415 to another media type, 400 to a bad reembed flag', async () => {
    const big = ndjson([HEADER, ...Array.from({ length: 40 }, (_, i) => event('big', `${i} ${'x'.repeat(8000)}`))]);
    expect(big.length).toBeGreaterThan(MAX_BYTES);
    const res = await importInto(dst, big);
    expect([res.status, res.body.code]).toEqual([413, 'payload_too_large']);
    const bomb = gzipSync(Buffer.from(big));
    const inflated = await importInto(dst, bomb, { headers: { 'content-encoding': 'gzip' } });
    expect([inflated.status, inflated.body.code]).toEqual([413, 'payload_too_large']);
    const json = await dst.raw<Envelope>('POST', '/v1/import', { body: { kind: 'header' } });
    expect([json.status, json.body.code]).toEqual([415, 'unsupported_media_type']);
    const flag = await importInto(dst, ndjson([HEADER]), { query: '?reembed=maybe' });
    expect([flag.status, flag.body.code]).toEqual([400, 'validation_failed']);
    // the node still serves this client on the same connection pool
    expect((await importInto(dst, ndjson([HEADER]))).status).toBe(200);
  });
});
