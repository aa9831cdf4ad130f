/**
 * Webhooks (CONTRACT §13) over real HTTP, with real receivers on 127.0.0.1 (the node runs with
 * webhooks.allow_private = true and fast retries): every kind delivered, signed, in commit order per
 * user; a receiver down for a while gets everything once it is back; a slow receiver does not slow
 * ingest; subscriptions never see users outside their creator's scope. A second node keeps the
 * defaults and refuses internal addresses (SSRF).
 *
 * Consolidation embeds through an OpenAI-compatible endpoint served by this test: it refuses any text
 * containing "qzfail", so that event is given up on (consolidation.failed).
 */
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StrataClient } from '@strata/client';
import { shardOf } from '../../packages/server/src/shards';
import { waitFor } from '../helpers/cluster';
import { removeDir, startServer, type ServerProcess } from '../helpers/server-process';
import { validSignature, validTimedSignature, WebhookReceiver, type ReceivedDelivery } from '../helpers/webhook-receiver';

jest.setTimeout(120_000);

const KEY = 'webhooks-test-admin-key';
const STREAM = '7d1e9c2a-4b3f-4e8d-9a6b-5c4d3e2f1a0b';
const DIMS = 16;

/** A bag-of-words vector: deterministic, never all zeros. */
function vectorOf(text: string): number[] {
  const v = new Array<number>(DIMS).fill(0);
  v[0] = 0.01;
  for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) v[createHash('sha256').update(word).digest()[0] % DIMS] += 1;
  return v;
}

function embeddingsEndpoint(): Server {
  return createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      const input = (JSON.parse(raw) as { input: string[] }).input;
      if (input.some((t) => t.includes('qzfail'))) {
        res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'this model refuses qzfail' } }));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: input.map((t, index) => ({ index, embedding: vectorOf(t) })) }));
    });
  });
}

interface Hook { webhook_id: string; url: string; events: string[]; secret: string; created_at: string; user_ids: string[] | null; org_id: string | null }
interface Deliveries { webhook_id: string; queued: number; delivered: number; dropped: number; expired: number; attempts: { delivery_id: string; type: string; status: number | null; error: string | null; outcome: string; attempt: number }[] }

describe('webhooks', () => {
  let embeddings: Server;
  let server: ServerProcess;
  let admin: StrataClient;
  const receivers: WebhookReceiver[] = [];

  const create = async (body: Record<string, unknown>, key?: string) => {
    const res = await admin.raw<Hook & { code?: string }>('POST', '/v1/webhooks', { body, ...(key ? { headers: { 'x-api-key': key }, auth: false } : {}) });
    return res;
  };
  const subscribe = async (body: Record<string, unknown>): Promise<Hook> => {
    const res = await create(body);
    expect([res.status, res.body]).toEqual([200, expect.objectContaining({ webhook_id: expect.any(String), secret: expect.stringMatching(/^whsec_/) })]);
    return res.body;
  };
  const receiver = async () => {
    const r = await WebhookReceiver.start();
    receivers.push(r);
    return r;
  };
  const deliveries = async (id: string) => (await admin.raw<Deliveries>('GET', `/v1/webhooks/${id}/deliveries?limit=100`)).body;
  /** Each delivery is signed with the subscription's secret and names itself in x-strata-event-id. */
  const expectSigned = (got: ReceivedDelivery[], secret: string) => {
    for (const d of got) {
      expect([d.body.id, validSignature(d.raw, d.signature, secret), validTimedSignature(d.raw, d.timedSignature, secret)]).toEqual([d.eventId, true, true]);
      // the same delivery replayed an hour later fails the timed check (its t is signed with the body)
      expect(validTimedSignature(d.raw, d.timedSignature, secret, 300, Date.now() / 1000 + 3600)).toBe(false);
      expect(validTimedSignature(d.raw, d.timedSignature.replace(/^t=(\d+)/, (_, t: string) => `t=${Number(t) + 3600}`), secret, 300, Date.now() / 1000 + 3600)).toBe(false);
      expect(Object.keys(d.body).sort()).toEqual(d.body.org_id === undefined ? ['created_at', 'data', 'id', 'type', 'user_id'] : ['created_at', 'data', 'id', 'org_id', 'type', 'user_id']);
    }
  };

  beforeAll(async () => {
    embeddings = embeddingsEndpoint();
    await new Promise<void>((resolve) => embeddings.listen(0, '127.0.0.1', resolve));
    server = await startServer({
      env: {
        STRATA_API_KEY: KEY, STRATA__CONSOLIDATION__INTERVAL_MS: '50',
        STRATA__EMBEDDING__PROVIDER: 'openai', STRATA__EMBEDDING__BASE_URL: `http://127.0.0.1:${(embeddings.address() as AddressInfo).port}/v1`,
        STRATA__EMBEDDING__MODEL: 'bag-of-words', STRATA__EMBEDDING__DIMENSIONS: String(DIMS),
        STRATA__WEBHOOKS__ALLOW_PRIVATE: 'true', STRATA__WEBHOOKS__RETRY_INITIAL_MS: '50', STRATA__WEBHOOKS__RETRY_MAX_MS: '400',
        STRATA__WEBHOOKS__ADVANCE_INTERVAL_MS: '50', STRATA__WEBHOOKS__POLL_MS: '25',
      },
    });
    admin = new StrataClient({ baseUrl: server.url, apiKey: KEY });
  });
  afterAll(async () => {
    await admin?.close();
    if (server) {
      expect(await server.stop()).toBe(0);
      removeDir(server.dataDir);
    }
    for (const r of receivers) await r.close();
    await new Promise((resolve) => embeddings.close(resolve));
  });

  it('delivers every kind of change, signed, in commit order per user', async () => {
    const recv = await receiver();
    const hook = await subscribe({ url: recv.url, events: ['*'], user_ids: ['kim', 'fay'] });
    expect(hook).toMatchObject({ url: recv.url, events: ['*'], user_ids: ['fay', 'kim'], org_id: null });

    await admin.ingestBatch('kim', STREAM, [{ content: 'I live in Porto.' }, { content: 'My goal is to learn Portuguese: 1. buy a textbook 2. find a tutor' }]);
    await admin.waitUntilReady(30_000, 50);
    await admin.ingest('kim', STREAM, { content: 'I moved to Lisbon.' });
    await admin.ingest('fay', STREAM, { content: 'qzfail: I keep bees in Faro.' });
    await admin.ingest('zed', STREAM, { content: 'I live in Braga.' }); // not a user of the subscription
    expect(await admin.waitUntilReady(30_000, 50)).toMatchObject({ failed: 1 });

    const tree = (await admin.raw<{ tasks: { task: { task_id: string; title: string } }[] }[]>('GET', '/v1/users/kim/tasks/tree')).body;
    const task = tree[0].tasks[0].task;
    expect((await admin.raw('PUT', `/v1/users/kim/tasks/${task.task_id}/status`, { body: { status: 'in_progress' } })).status).toBe(200);
    const units = (await admin.raw<{ memories: { id: string; content: string }[] }>('GET', '/v1/users/kim/memories')).body.memories;
    const lisbon = units.find((u) => u.content.includes('Lisbon'))!;
    expect((await admin.raw('DELETE', `/v1/users/kim/memories/${lisbon.id}`)).status).toBe(200);

    const kinds = ['event.accepted', 'memory.created', 'memory.superseded', 'memory.deleted', 'task.created', 'task.status_changed', 'consolidation.failed'];
    await waitFor('every kind delivered', async () => kinds.every((k) => recv.ofType(k).length > 0)
      && recv.ofType('memory.deleted').some((d) => d.body.data.memory_id === lisbon.id), 30_000, 50);
    const got = recv.received;
    expectSigned(got, hook.secret);
    expect(new Set(got.map((d) => d.body.user_id))).toEqual(new Set(['kim', 'fay']));
    expect(new Set(got.map((d) => d.eventId)).size).toBe(got.length); // one node, no failover: each once

    // commit order per user: the events in stream order; every consequence after what it follows from
    expect(recv.acceptedEventIds('kim')).toEqual((await admin.allEvents('kim', STREAM)).map((e) => e.event_id));
    const firstAt = (pred: (d: ReceivedDelivery) => boolean) => got.findIndex(pred);
    const accepted = (eventId: string) => firstAt((d) => d.body.type === 'event.accepted' && (d.body.data.event as { event_id: string }).event_id === eventId);
    for (const d of recv.ofType('memory.created')) {
      const memory = d.body.data.memory as { id: string; level: number; references: string[] };
      // an L1 unit names the events it was made from: each was delivered before it
      if (memory.level === 1) for (const ref of memory.references) expect([ref, accepted(ref) >= 0 && accepted(ref) < d.n]).toEqual([ref, true]);
      const later = got.filter((x) => (x.body.type === 'memory.superseded' || x.body.type === 'memory.deleted') && x.body.data.memory_id === memory.id);
      for (const x of later) expect(x.n).toBeGreaterThan(d.n);
    }
    const superseded = recv.ofType('memory.superseded')[0].body.data as { memory_id: string; superseded_by: string; memory: { content: string } };
    expect(superseded.memory.content).toContain('Porto');
    expect(firstAt((d) => d.body.type === 'memory.created' && (d.body.data.memory as { id: string }).id === superseded.superseded_by)).toBeGreaterThanOrEqual(0);
    const changed = recv.ofType('task.status_changed')[0];
    expect(changed.body.data).toMatchObject({ task_id: task.task_id, status: 'in_progress', previous_status: 'pending' });
    expect(firstAt((d) => d.body.type === 'task.created' && (d.body.data.task as { task_id: string }).task_id === task.task_id)).toBeLessThan(changed.n);
    expect(recv.ofType('memory.deleted').find((d) => d.body.data.memory_id === lisbon.id)!.body.data).toMatchObject({ mode: 'deleted', memory: { id: lisbon.id } });
    const failed = recv.ofType('consolidation.failed')[0].body;
    expect(failed).toMatchObject({ user_id: 'fay', data: { stream_id: STREAM, error: expect.stringContaining('qzfail'), attempts: expect.any(Number) } });
    expect(accepted(failed.data.event_id as string)).toBeLessThan(recv.ofType('consolidation.failed')[0].n);

    // the deliveries route: counters over the shards, the recent attempts, newest first
    await waitFor('progress recorded', async () => (await deliveries(hook.webhook_id)).delivered >= got.length, 10_000, 50);
    const report = await deliveries(hook.webhook_id);
    expect(report).toMatchObject({ webhook_id: hook.webhook_id, queued: 0, dropped: 0, expired: 0 });
    expect(report.attempts[0]).toMatchObject({ outcome: 'delivered', status: 200, error: null, attempt: 1 });
    expect(report.attempts.map((a) => a.delivery_id)).toContain(got[got.length - 1].eventId);
    const metrics = (await admin.raw<string>('GET', '/metrics', { auth: false })).body;
    expect(Number(/^strata_webhook_delivered_total (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(got.length);
    expect(metrics).toMatch(/^strata_webhook_queued \d+$/m);
    expect(metrics).toMatch(/^strata_webhook_subscriptions [1-9]\d*$/m);
  });

  it('delivers everything, in order, to a receiver that was down for a while', async () => {
    const recv = await receiver();
    const hook = await subscribe({ url: recv.url, events: ['event.accepted'], user_ids: ['dan'] });
    await recv.close();
    for (let i = 0; i < 4; i++) await admin.ingestBatch('dan', STREAM, [{ content: `note ${i}a` }, { content: `note ${i}b` }, { content: `note ${i}c` }]);
    const down = await waitFor('failed attempts while the receiver is down', async () => {
      const r = await deliveries(hook.webhook_id);
      return r.attempts.filter((a) => a.outcome === 'failed').length >= 3 ? r : undefined;
    }, 20_000, 50);
    expect(down.queued).toBeGreaterThan(0);
    expect(down.attempts.find((a) => a.outcome === 'failed')).toMatchObject({ status: null, error: expect.stringContaining('ECONNREFUSED') });
    expect(recv.received).toEqual([]);

    await recv.listen();
    await waitFor('all 12 delivered', async () => recv.acceptedEventIds().length >= 12, 30_000, 50);
    expect(recv.acceptedEventIds()).toEqual((await admin.allEvents('dan', STREAM)).map((e) => e.event_id));
    expectSigned(recv.received, hook.secret);
    await waitFor('progress recorded', async () => (await deliveries(hook.webhook_id)).delivered === 12, 10_000, 50);
    expect(await deliveries(hook.webhook_id)).toMatchObject({ queued: 0, delivered: 12, dropped: 0, expired: 0 });
  });

  it('keeps ingesting at full speed while a slow receiver catches up', async () => {
    const recv = await receiver();
    recv.delayMs = 150;
    await subscribe({ url: recv.url, events: ['event.accepted'], user_ids: ['sam'] });
    const N = 30;
    const ingest = async (user: string) => {
      const started = Date.now();
      for (let i = 0; i < N; i++) await admin.ingest(user, STREAM, { content: `slow receiver note ${i}` });
      return Date.now() - started;
    };
    const baseline = await ingest('sal'); // no subscription sees sal
    const withSlow = await ingest('sam');
    const ingested = Date.now();
    const deliveredAtEnd = recv.acceptedEventIds('sam').length;
    await waitFor(`all ${N} delivered`, async () => recv.acceptedEventIds('sam').length >= N, 60_000, 50);
    console.log(`slow receiver: ${N} single-event ingests took ${baseline} ms with no subscriber and ${withSlow} ms with a subscriber answering in ${recv.delayMs} ms; `
      + `${deliveredAtEnd} of ${N} delivered when ingest finished, all ${N} after ${Date.now() - ingested} ms more`);
    expect(recv.acceptedEventIds('sam')).toEqual((await admin.allEvents('sam', STREAM)).map((e) => e.event_id));
  });

  it('never lets a subscription see users outside the scope of the key that made it', async () => {
    const recv = await receiver();
    const ivyKey = (await admin.createApiKey({ role: 'write', user_ids: ['ivy'] })).key;
    const acmeKey = (await admin.createApiKey({ role: 'write', org_id: 'acme' })).key;
    const reader = (await admin.createApiKey({ role: 'read' })).key;
    expect((await admin.raw('PUT', '/v1/users/ola/org', { body: { org_id: 'acme' } })).status).toBe(200);

    // wider than the key: refused
    for (const [body, key] of [
      [{ url: recv.url, events: ['*'], user_ids: ['ben'] }, ivyKey],
      [{ url: recv.url, events: ['*'], user_ids: ['ivy', 'ben'] }, ivyKey],
      [{ url: recv.url, events: ['*'], org_id: 'acme' }, ivyKey],
      [{ url: recv.url, events: ['*'], org_id: 'globex' }, acmeKey],
      [{ url: recv.url, events: ['*'], user_ids: ['ben'] }, acmeKey], // ben is of no org
      [{ url: recv.url, events: ['*'] }, reader],
    ] as [Record<string, unknown>, string][]) {
      const res = await create(body, key);
      expect([body, res.status, res.body.code]).toEqual([body, 403, 'forbidden']);
    }
    const ivyHook = (await create({ url: `${recv.url}?k=ivy`, events: ['event.accepted'] }, ivyKey)).body;
    const acmeHook = (await create({ url: `${recv.url}?k=acme`, events: ['event.accepted'] }, acmeKey)).body;
    expect(ivyHook.webhook_id && acmeHook.webhook_id).toBeTruthy();

    // ben, then ivy; pia (no org), then ola: each subscription sends in commit order, so once the later
    // event is delivered, the earlier one would have been too had it been in scope
    const ben = (await admin.ingest('ben', STREAM, { content: 'ben writes qzbenmark' })).event_id;
    const ivy = (await admin.ingest('ivy', STREAM, { content: 'ivy writes' })).event_id;
    const pia = (await admin.ingest('pia', STREAM, { content: 'pia writes qzpiamark' })).event_id;
    const ola = (await admin.ingest('ola', STREAM, { content: 'ola writes' })).event_id;
    await waitFor('ivy and ola delivered', async () => recv.acceptedEventIds().includes(ivy) && recv.acceptedEventIds().includes(ola), 20_000, 50);
    const seen = recv.acceptedEventIds();
    expect(seen).not.toContain(ben);
    expect(seen).not.toContain(pia);
    expect(seen.filter((id) => id === ivy || id === ola).length).toBe(2);
    expect(recv.received.every((d) => d.raw.indexOf('qzbenmark') < 0 && d.raw.indexOf('qzpiamark') < 0)).toBe(true);
    expect(recv.ofType('event.accepted').find((d) => d.body.user_id === 'ola')!.body.org_id).toBe('acme');

    // listing, deleting and reading deliveries: only within the key's scope; others are unknown
    const list = async (key: string) => (await admin.raw<{ webhooks: Hook[] }>('GET', '/v1/webhooks', { headers: { 'x-api-key': key }, auth: false })).body.webhooks.map((w) => w.webhook_id);
    expect(await list(ivyKey)).toEqual([ivyHook.webhook_id]);
    expect(await list(acmeKey)).toEqual([acmeHook.webhook_id]);
    const all = await list(KEY);
    expect(all).toEqual(expect.arrayContaining([ivyHook.webhook_id, acmeHook.webhook_id]));
    expect(all.length).toBeGreaterThan(2);
    const as = (key: string) => ({ headers: { 'x-api-key': key }, auth: false });
    expect((await admin.raw('GET', `/v1/webhooks/${acmeHook.webhook_id}/deliveries`, as(ivyKey))).status).toBe(404);
    expect((await admin.raw('DELETE', `/v1/webhooks/${acmeHook.webhook_id}`, as(ivyKey))).status).toBe(404);
    expect((await admin.raw('DELETE', `/v1/webhooks/${ivyHook.webhook_id}`, as(reader))).status).toBe(403);
    expect((await admin.raw<Deliveries>('GET', `/v1/webhooks/${ivyHook.webhook_id}/deliveries`, as(ivyKey))).body).toMatchObject({ webhook_id: ivyHook.webhook_id });
    const gone = await admin.raw<{ status: string }>('DELETE', `/v1/webhooks/${ivyHook.webhook_id}`, as(ivyKey));
    expect([gone.status, gone.body.status]).toEqual([200, 'deleted']);
    expect(await list(ivyKey)).toEqual([]);
    expect((await admin.raw('GET', `/v1/webhooks/${ivyHook.webhook_id}/deliveries`)).status).toBe(404);
    expect((await admin.raw('DELETE', `/v1/webhooks/${ivyHook.webhook_id}`)).status).toBe(404);
    expect((await admin.raw('DELETE', '/v1/webhooks/not-a-uuid')).status).toBe(404);
  });

  it('is reachable through the typed client: create (secret once), list, deliveries, delete', async () => {
    const hook = await admin.createWebhook({ url: 'http://127.0.0.1:9/typed', events: ['memory.created'], user_ids: ['typed-user'] });
    expect(hook.secret.length).toBeGreaterThan(16);
    const listed = (await admin.listWebhooks()).webhooks.find((w) => w.webhook_id === hook.webhook_id)!;
    expect(listed).toMatchObject({ url: 'http://127.0.0.1:9/typed', events: ['memory.created'], user_ids: ['typed-user'] });
    expect(listed).not.toHaveProperty('secret');
    expect(await admin.webhookDeliveries(hook.webhook_id)).toMatchObject({ webhook_id: hook.webhook_id, queued: 0, attempts: [] });
    expect(await admin.deleteWebhook(hook.webhook_id)).toMatchObject({ status: 'deleted', webhook_id: hook.webhook_id });
    expect((await admin.listWebhooks()).webhooks.map((w) => w.webhook_id)).not.toContain(hook.webhook_id);
  });

  it('validates the body', async () => {
    for (const body of [{}, { url: 'http://127.0.0.1:9/x' }, { url: 'http://127.0.0.1:9/x', events: [] }, { url: 'http://127.0.0.1:9/x', events: ['memory.exploded'] },
      { url: 5, events: ['*'] }, { url: 'http://127.0.0.1:9/x', events: ['*'], user_ids: [] }, { url: 'http://127.0.0.1:9/x', events: ['*'], org_id: '' }]) {
      const res = await create(body);
      expect([body, res.status, res.body.code]).toEqual([body, 400, 'validation_failed']);
    }
  });
});

describe('webhook URLs (SSRF) with the defaults, and the subscription caps', () => {
  let server: ServerProcess;
  let admin: StrataClient;
  beforeAll(async () => {
    // private addresses refused as by default; small caps, so that the race below is cheap
    server = await startServer({ env: { STRATA_API_KEY: KEY, STRATA__EMBEDDING__PROVIDER: 'hashing', STRATA__WEBHOOKS__MAX_SUBSCRIPTIONS: '30', STRATA__WEBHOOKS__MAX_PER_CREATOR: '10' } });
    admin = new StrataClient({ baseUrl: server.url, apiKey: KEY });
  });
  afterAll(async () => {
    await admin?.close();
    if (server) {
      expect(await server.stop()).toBe(0);
      removeDir(server.dataDir);
    }
  });

  it('refuses non-http(s) URLs and loopback, link-local and private addresses, by literal or by name', async () => {
    const refused = [
      'ftp://203.0.113.5/x', 'file:///etc/passwd', 'not a url', 'http://user:secret@203.0.113.5/x',
      'http://127.0.0.1:9/x', 'http://127.1/x', 'http://2130706433/x', 'http://0x7f000001/x', 'http://0.0.0.0/x', 'http://localhost:9/x',
      'http://[::1]/x', 'http://[::ffff:127.0.0.1]/x', 'http://[::ffff:a9fe:a9fe]/x', 'http://[fe80::1]/x', 'http://[fd00::1]/x', 'http://[64:ff9b::a00:1]/x',
      'http://169.254.169.254/latest/meta-data', 'http://10.1.2.3/x', 'http://172.16.0.1/x', 'http://192.168.1.1/x', 'http://100.64.0.1/x',
      'http://no-such-host.invalid/x',
      // IPv6 forms embedding an internal IPv4 (red-team round 3): local-use NAT64, IPv4-translated, Teredo
      'http://[64:ff9b:1::a00:1]/x', 'http://[::ffff:0:7f00:1]/x', 'http://[2001:0:7f00:1::1]/x',
    ];
    for (const url of refused) {
      const res = await admin.raw<{ code: string; details: { path: string }[] }>('POST', '/v1/webhooks', { body: { url, events: ['*'] } });
      expect([url, res.status, res.body.code, res.body.details?.[0]?.path]).toEqual([url, 400, 'validation_failed', '/url']);
    }
    expect((await admin.raw<{ webhooks: unknown[] }>('GET', '/v1/webhooks')).body.webhooks).toEqual([]);
    // a public address is accepted (and removed again: nothing is delivered in this test)
    const ok = await admin.raw<{ webhook_id: string }>('POST', '/v1/webhooks', { body: { url: 'https://203.0.113.5/hook', events: ['task.created'] } });
    expect(ok.status).toBe(200);
    expect((await admin.raw('DELETE', `/v1/webhooks/${ok.body.webhook_id}`)).status).toBe(200);
  });

  it('holds the caps when creates race: per set of credentials, and service-wide (checked in apply)', async () => {
    const keyOf = async (user: string) => (await admin.createApiKey({ user_ids: [user], role: 'write' })).key;
    const [a, b] = [await keyOf('cap-a'), await keyOf('cap-b')];
    /** `n` creates sent at once with one key (the red team sent 160 against a cap of 100 and got 160). */
    const burst = async (n: number, key?: string) => {
      const answers = await Promise.all(Array.from({ length: n }, () => admin.raw<{ code?: string }>('POST', '/v1/webhooks', {
        body: { url: 'https://203.0.113.5/hook', events: ['task.created'] }, ...(key ? { headers: { 'x-api-key': key }, auth: false } : {}),
      })));
      const statuses = answers.map((r) => r.status);
      expect(answers.filter((r) => r.status !== 200).every((r) => r.status === 409 && r.body.code === 'conflict')).toBe(true);
      return statuses.filter((st) => st === 200).length;
    };
    expect(await burst(40, a)).toBe(10); // one key: its own share, not more
    expect(await burst(40, b)).toBe(10); // another tenant still has its share
    expect(await burst(40)).toBe(10); // the operator is not capped per key, but 30 in all
    expect((await admin.raw<{ webhooks: unknown[] }>('GET', '/v1/webhooks')).body.webhooks).toHaveLength(30);
    // deleting one of a's frees a's share again
    const mine = await admin.raw<{ webhooks: { webhook_id: string; user_ids: string[] | null }[] }>('GET', '/v1/webhooks', { headers: { 'x-api-key': a }, auth: false });
    expect((await admin.raw('DELETE', `/v1/webhooks/${mine.body.webhooks[0].webhook_id}`)).status).toBe(200);
    expect(await burst(5, a)).toBe(1);
  });
});

describe('webhooks with several shards on one node', () => {
  const SHARDS = 3;
  const USERS = ['m0', 'm1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7', 'm8'];
  let server: ServerProcess;
  let admin: StrataClient;
  let recv: WebhookReceiver;
  beforeAll(async () => {
    recv = await WebhookReceiver.start();
    server = await startServer({
      env: {
        STRATA_API_KEY: KEY, STRATA_SHARDS: String(SHARDS), STRATA__EMBEDDING__PROVIDER: 'hashing', STRATA__CONSOLIDATION__ENABLED: 'false',
        STRATA__WEBHOOKS__ALLOW_PRIVATE: 'true', STRATA__WEBHOOKS__ADVANCE_INTERVAL_MS: '50', STRATA__WEBHOOKS__POLL_MS: '25',
      },
    });
    admin = new StrataClient({ baseUrl: server.url, apiKey: KEY });
  });
  afterAll(async () => {
    await admin?.close();
    if (server) {
      expect(await server.stop()).toBe(0);
      removeDir(server.dataDir);
    }
    await recv?.close();
  });

  const ingestAll = async (tag: string) => {
    const ids: string[] = [];
    for (const user of USERS) ids.push((await admin.ingest(user, STREAM, { content: `${tag} from ${user}` })).event_id);
    return ids;
  };
  const subscribe = async (path: string) => {
    const res = await admin.raw<Hook>('POST', '/v1/webhooks', { body: { url: `${recv.url}/${path}`, events: ['event.accepted'] } });
    expect(res.status).toBe(200);
    return res.body;
  };

  const seen = () => recv.received.filter((d) => d.body.type === 'event.accepted');
  const deliveredBy = (id: string, secret: string) => seen().some((d) => (d.body.data.event as { event_id: string }).event_id === id && validSignature(d.raw, d.signature, secret));
  /**
   * Ingests a round for every user until one round is delivered in full to the subscription: a shard
   * other than 0 sees a subscription from the moment its leader mirrored it (events before are not its).
   */
  const untilEveryShard = async (secret: string) => {
    for (let round = 0; round < 20; round++) {
      const ids = await ingestAll(`round ${round}`);
      if (await waitFor('a round delivered', async () => ids.every((id) => deliveredBy(id, secret)), 2000, 25).then(() => true, () => false)) return ids;
    }
    throw new Error('the subscription never reached every shard');
  };

  it('mirrors subscriptions into every shard: deliveries from all of them; after a delete, none from any', async () => {
    expect(new Set(USERS.map((u) => shardOf(u, SHARDS)))).toEqual(new Set([0, 1, 2]));
    const first = await subscribe('a');
    await untilEveryShard(first.secret);
    const ids = await ingestAll('first');
    await waitFor('all delivered', async () => ids.every((id) => deliveredBy(id, first.secret)), 20_000, 50);
    const report = (await admin.raw<Deliveries>('GET', `/v1/webhooks/${first.webhook_id}/deliveries`)).body;
    expect(report.delivered).toBeGreaterThanOrEqual(ids.length);

    // Deleted, then a second subscription made. A shard's mirror deletes before it creates, and its
    // outboxes are written at commit: an event the second subscription gets from a shard was committed
    // there after the first one's deletion, so the first can never send it.
    expect((await admin.raw('DELETE', `/v1/webhooks/${first.webhook_id}`)).status).toBe(200);
    const second = await subscribe('b');
    const later = await untilEveryShard(second.secret);
    expect(later.filter((id) => deliveredBy(id, first.secret))).toEqual([]);
  });
});
