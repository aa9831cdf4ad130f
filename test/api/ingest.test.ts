import { StrataApiError, StrataClient } from '@strata/client';
import { removeDir, startServer, type ServerProcess } from '../helpers/server-process';

const KEY = 'ingest-test-admin-key';
const STREAM = '7d3f6a10-92b4-4c1e-8f3a-5b2d9e8c1a44';
const PNG_1PX = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

describe('ingest, event listing and the HTTP conventions', () => {
  let server: ServerProcess;
  let client: StrataClient;

  beforeAll(async () => {
    // Consolidation off: the pending figure is part of what this file checks.
    server = await startServer({ env: { STRATA_API_KEY: KEY, STRATA__INGEST__MAX_BATCH: '5', STRATA__SERVER__BODY_LIMIT: '65536', STRATA__CONSOLIDATION__ENABLED: 'false' } });
    client = new StrataClient({ baseUrl: server.url, apiKey: KEY });
  });
  afterAll(async () => {
    await client.close();
    await server.stop();
    removeDir(server.dataDir);
  });

  const path = (user: string, stream = STREAM) => `/v1/users/${encodeURIComponent(user)}/streams/${stream}/events`;

  it('accepts an event with every field and lists it back as sent', async () => {
    const event = {
      content: 'I moved to Lisbon last week', content_type: 'text' as const, org_id: 'acme', level: 1, parent_id: 'goal-1',
      task_status: 'InProgress', task_progress: 0.5, agent_id: 'planner', role: 'user' as const,
      valid_time: '2026-03-01T10:00:00+02:00', metadata: { source: 'chat', tags: ['move'] },
    };
    const res = await client.ingest('full-user', STREAM, event);
    expect(res.status).toBe('accepted');
    expect(res.event_id).toMatch(/^[0-9a-f-]{36}$/);
    const { events } = await client.listEvents('full-user', STREAM);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ ...event, event_id: res.event_id, valid_time: '2026-03-01T08:00:00.000Z' });
    expect(events[0].transaction_time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('defaults content_type to text and valid_time to the acceptance time; null equals missing', async () => {
    await client.ingest('defaults', STREAM, { content: 'plain', org_id: null, metadata: null });
    const [e] = (await client.listEvents('defaults', STREAM)).events;
    expect(e.content_type).toBe('text');
    expect(e.valid_time).toBe(e.transaction_time);
    expect(e.org_id).toBeNull();
  });

  it('accepts stream ids in any case and answers in lowercase', async () => {
    await client.ingest('case', STREAM.toUpperCase(), { content: 'upper' });
    expect((await client.listEvents('case', STREAM)).events).toHaveLength(1);
  });

  it('accepts a batch atomically, ids in request order', async () => {
    const res = await client.ingestBatch('batch', STREAM, [{ content: 'one' }, { content: 'two' }, { content: 'three' }]);
    expect(res.count).toBe(3);
    const { events } = await client.listEvents('batch', STREAM);
    expect(events.map((e) => e.event_id)).toEqual(res.event_ids);
    expect(events.map((e) => e.content)).toEqual(['one', 'two', 'three']);
  });

  it('rejects a batch with one bad event, naming its index, and stores nothing', async () => {
    const res = await client.raw('POST', path('atomic') + '/batch', { body: { events: [{ content: 'fine' }, { content: 'fine' }, { content: 'fine' }, { content: '   ' }] } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'validation_failed', details: [{ path: '/events/3/content' }] });
    const typed = await client.raw('POST', path('atomic') + '/batch', { body: { events: [{ content: 'ok' }, { content: 'x', content_type: 'pdf' }] } });
    expect(typed.status).toBe(400);
    expect((typed.body as { details: { path: string }[] }).details[0].path).toBe('/events/1/content_type');
    expect((await client.listEvents('atomic', STREAM)).events).toHaveLength(0);
  });

  it('answers an empty batch with count 0 and a batch over ingest.max_batch with 413', async () => {
    expect(await client.ingestBatch('empty', STREAM, [])).toEqual({ status: 'accepted', event_ids: [], count: 0 });
    const res = await client.raw('POST', path('big') + '/batch', { body: { events: Array.from({ length: 6 }, () => ({ content: 'x' })) } });
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ code: 'payload_too_large' });
  });

  it.each([
    ['missing content', {}, 'validation_failed', '/content'],
    ['empty content', { content: '' }, 'validation_failed', '/content'],
    ['whitespace content', { content: ' \n\t ' }, 'validation_failed', '/content'],
    ['content not a string', { content: 42 }, 'validation_failed', '/content'],
    ['unknown content_type', { content: 'x', content_type: 'pdf' }, 'validation_failed', '/content_type'],
    ['level out of range', { content: 'x', level: 4 }, 'validation_failed', '/level'],
    ['level not an integer', { content: 'x', level: 1.5 }, 'validation_failed', '/level'],
    ['progress over 1', { content: 'x', task_progress: 1.2 }, 'validation_failed', '/task_progress'],
    ['bad valid_time', { content: 'x', valid_time: 'yesterday' }, 'validation_failed', '/valid_time'],
    ['unknown role', { content: 'x', role: 'robot' }, 'validation_failed', '/role'],
    ['metadata not an object', { content: 'x', metadata: [1, 2] }, 'validation_failed', '/metadata'],
    ['metadata over 16 KiB', { content: 'x', metadata: { blob: 'y'.repeat(17 * 1024) } }, 'validation_failed', '/metadata'],
    ['org_id with a control character', { content: 'x', org_id: 'ac\u0001me' }, 'validation_failed', '/org_id'],
    ['json content that is not JSON', { content: '{nope', content_type: 'json' }, 'invalid_json_content', '/content'],
    ['image that is neither URL nor base64', { content: 'not base64!!', content_type: 'image' }, 'validation_failed', '/content'],
  ])('rejects %s with 400', async (_name, body, code, errorPath) => {
    const res = await client.raw('POST', path('bad-input'), { body });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code, error: expect.any(String) });
    expect((res.body as { details: { path: string }[] }).details.map((d) => d.path)).toContain(errorPath);
  });

  it('rejects bad path identifiers with 400 invalid_id', async () => {
    const stream = await client.raw('POST', '/v1/users/u/streams/not-a-uuid/events', { body: { content: 'x' } });
    expect(stream.status).toBe(400);
    expect(stream.body).toMatchObject({ code: 'invalid_id' });
    const longUser = await client.raw('POST', path('é'.repeat(129)), { body: { content: 'x' } });
    expect(longUser.status).toBe(400);
    expect(longUser.body).toMatchObject({ code: 'invalid_id' });
    const control = await client.raw('POST', path('a\u0007b'), { body: { content: 'x' } });
    expect(control.status).toBe(400);
    const badEscape = await client.raw('GET', `/v1/users/%E0%A4%A/streams/${STREAM}/events`);
    expect(badEscape.status).toBe(400);
  });

  it('accepts a user id of exactly 256 bytes of UTF-8', async () => {
    const user = 'é'.repeat(128);
    await client.ingest(user, STREAM, { content: 'long name' });
    expect((await client.listEvents(user, STREAM)).events).toHaveLength(1);
  });

  it('answers malformed JSON with 400, a wrong content type with 415, a large body with 413', async () => {
    const malformed = await client.raw('POST', path('conv'), { rawBody: '{"content": ', headers: { 'content-type': 'application/json' } });
    expect(malformed.status).toBe(400);
    expect(malformed.body).toMatchObject({ code: 'invalid_json' });
    const text = await client.raw('POST', path('conv'), { rawBody: 'content=hello', headers: { 'content-type': 'text/plain' } });
    expect(text.status).toBe(415);
    expect(text.body).toMatchObject({ code: 'unsupported_media_type' });
    const large = await client.raw('POST', path('conv'), { body: { content: 'z'.repeat(70 * 1024) } });
    expect(large.status).toBe(413);
    expect(large.body).toMatchObject({ code: 'payload_too_large' });
    const scalar = await client.raw('POST', path('conv'), { rawBody: '"just a string"', headers: { 'content-type': 'application/json' } });
    expect(scalar.status).toBe(400);
  });

  it('stores media once, content-addressed, and keeps URLs as references', async () => {
    const a = await client.ingest('media', STREAM, { content: PNG_1PX, content_type: 'image' });
    const b = await client.ingest('media', STREAM, { content: `data:image/png;base64,${PNG_1PX}`, content_type: 'image' });
    await client.ingest('media', STREAM, { content: 'https://example.com/cat.jpg', content_type: 'image' });
    const { events } = await client.listEvents('media', STREAM);
    expect(events.map((e) => e.event_id).slice(0, 2)).toEqual([a.event_id, b.event_id]);
    expect(events[0].assets[0].asset_id).toBe(events[1].assets[0].asset_id);
    expect(events[0].assets[0]).toMatchObject({ media_type: 'image', size: Buffer.from(PNG_1PX, 'base64').length, url: null });
    expect(events[0].content).toBe(`asset:${events[0].assets[0].asset_id}`);
    expect(events[2].assets[0]).toMatchObject({ url: 'https://example.com/cat.jpg', size: 0 });
    await client.ingest('media', STREAM, { content: JSON.stringify({ order: { id: 7 } }), content_type: 'json' });
  });

  it('replays an Idempotency-Key retry with the first answer and stores nothing new', async () => {
    const first = await client.ingest('idem', STREAM, { content: 'pay the invoice' }, { idempotencyKey: 'req-1' });
    const retry = await client.ingest('idem', STREAM, { content: 'pay the invoice' }, { idempotencyKey: 'req-1' });
    expect(retry.event_id).toBe(first.event_id);
    const batchFirst = await client.ingestBatch('idem', STREAM, [{ content: 'a' }, { content: 'b' }], { idempotencyKey: 'req-2' });
    const batchRetry = await client.ingestBatch('idem', STREAM, [{ content: 'a' }, { content: 'b' }], { idempotencyKey: 'req-2' });
    expect(batchRetry.event_ids).toEqual(batchFirst.event_ids);
    expect((await client.listEvents('idem', STREAM)).events).toHaveLength(3);
    const otherStream = await client.ingest('idem', '11111111-2222-4333-8444-555555555555', { content: 'pay the invoice' }, { idempotencyKey: 'req-1' });
    expect(otherStream.event_id).not.toBe(first.event_id);
  });

  it('pages the event listing with cursors and validates limit and after', async () => {
    await client.ingestBatch('pages', STREAM, [1, 2, 3, 4, 5].map((n) => ({ content: `event ${n}` })));
    const first = await client.listEvents('pages', STREAM, { limit: 2 });
    expect(first.events.map((e) => e.content)).toEqual(['event 1', 'event 2']);
    const second = await client.listEvents('pages', STREAM, { limit: 2, after: first.next_cursor! });
    expect(second.events.map((e) => e.content)).toEqual(['event 3', 'event 4']);
    const third = await client.listEvents('pages', STREAM, { limit: 2, after: second.next_cursor! });
    expect(third.events.map((e) => e.content)).toEqual(['event 5']);
    expect(third.next_cursor).toBeNull();
    for (const q of ['limit=0', 'limit=1001', 'limit=abc', 'after=garbage']) {
      const res = await client.raw('GET', `${path('pages')}?${q}`);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'validation_failed' });
    }
  });

  it('counts accepted events as pending', async () => {
    const status = await client.pending();
    expect(status.pending).toBeGreaterThan(10);
    expect(status.ready).toBe(false);
    expect(status.failed).toBe(0);
    expect(status.oldest_pending_ms).toBeGreaterThanOrEqual(0);
  });

  it('echoes x-request-id and makes one when absent', async () => {
    const echoed = await client.raw('GET', '/livez', { headers: { 'x-request-id': 'trace-123' } });
    expect(echoed.headers['x-request-id']).toBe('trace-123');
    const made = await client.raw('GET', '/v1/nothing-here');
    expect(made.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('answers retired routes, unknown routes and wrong methods with the envelope', async () => {
    for (const [method, p, hint] of [['GET', '/api/v1/memories', '/v1'], ['POST', '/v1/memories', 'retrieve'], ['POST', '/v1/search', 'retrieve'], ['GET', '/health', '/livez']]) {
      const res = await client.raw(method, p, method === 'POST' ? { body: {} } : {});
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ code: 'route_not_found' });
      expect((res.body as { error: string }).error).toContain(hint);
    }
    const unknown = await client.raw('GET', '/v1/unknown');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ code: 'route_not_found' });
    const wrong = await client.raw('DELETE', '/v1/status/pending');
    expect(wrong.status).toBe(405);
    expect(wrong.headers.allow).toBe('GET');
  });

  it('serves livez, readyz, metrics and an OpenAPI document of every route', async () => {
    expect((await client.raw('GET', '/livez', { auth: false })).status).toBe(200);
    expect((await client.raw('GET', '/readyz', { auth: false })).body).toEqual({ status: 'ready' });
    const metrics = await client.raw<string>('GET', '/metrics', { auth: false });
    expect(metrics.status).toBe(200);
    expect(metrics.body).toMatch(/strata_events_ingested_total \d+/);
    expect(metrics.body).toContain('strata_http_requests_total');
    const doc = (await client.raw<{ openapi: string; paths: Record<string, Record<string, unknown>>; components: { schemas: Record<string, unknown> } }>('GET', '/openapi.json', { auth: false })).body;
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining([
      '/v1/users/{user_id}/streams/{stream_id}/events', '/v1/users/{user_id}/streams/{stream_id}/events/batch',
      '/v1/status/pending', '/v1/dashboard/auth/login', '/v1/dashboard/api-keys', '/v1/dashboard/api-keys/{key_id}',
    ]));
    expect(doc.paths['/v1/users/{user_id}/streams/{stream_id}/events'].post).toMatchObject({ requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/Event' } } } } });
    expect(doc.components.schemas.Event).toBeDefined();
  });

  it('never answers 500 to a burst of malformed requests', async () => {
    const bodies = ['', '[]', 'null', '{"content": null}', '{"events": {}}', '{"content": "x", "metadata": "s"}', '\u0000', '{"content": ["a"]}'];
    for (const body of bodies) {
      // (Key creation is left out: every field is optional there, so any object is a valid request.)
      for (const target of [path('fuzz'), path('fuzz') + '/batch', '/v1/dashboard/auth/login']) {
        const res = await client.raw('POST', target, { rawBody: body, headers: { 'content-type': 'application/json' } });
        expect(res.status).toBeGreaterThanOrEqual(400);
        expect(res.status).toBeLessThan(500);
        expect(res.body).toMatchObject({ error: expect.any(String), code: expect.any(String) });
      }
    }
  });
});

describe('StrataApiError', () => {
  it('carries the status and code', () => {
    const err = new StrataApiError(404, 'not_found', 'gone');
    expect([err.status, err.code, err.message]).toEqual([404, 'not_found', 'gone']);
  });
});
