/**
 * Where webhooks may go: the address classification (pure), the subscription-time URL check, and the
 * delivery-time check of the sender against a real receiver on loopback (a name that resolves to an
 * internal address is refused when the connection is made, not only when the subscription was made).
 */
import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { retryDelay } from '../../src/webhooks/backoff';
import { deliveryBody, signature, timedSignature } from '../../src/webhooks/payload';
import { WebhookSender } from '../../src/webhooks/sender';
import { blockedAddressReason, checkWebhookUrl } from '../../src/webhooks/url-guard';

describe('blockedAddressReason', () => {
  it.each([
    ['127.0.0.1', 'loopback'], ['127.255.0.9', 'loopback'], ['10.0.0.1', 'private'], ['172.31.255.255', 'private'], ['192.168.0.1', 'private'],
    ['169.254.169.254', 'link-local'], ['100.64.1.1', 'carrier-grade NAT'], ['0.0.0.0', 'this network'], ['224.0.0.1', 'multicast'], ['255.255.255.255', 'reserved'],
    ['::1', 'loopback'], ['::', 'unspecified'], ['fe80::1', 'link-local'], ['fd12:3456::1', 'unique local (private)'], ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'loopback'], ['::ffff:7f00:1', 'loopback'], ['::ffff:a9fe:a9fe', 'link-local'], ['64:ff9b::10.0.0.1', 'private'], ['2002:c0a8:0101::1', 'private'],
    // forms that embed an internal IPv4 address (red-team round 3): local-use NAT64, IPv4-translated, Teredo
    ['64:ff9b:1::a00:1', 'local-use NAT64'], ['64:ff9b:1:ffff::808:808', 'local-use NAT64'], ['::ffff:0:127.0.0.1', 'loopback'], ['::ffff:0:a00:1', 'private'],
    ['2001:0:7f00:1::1', 'loopback'], ['2001::8000:63bf:f5ff:fffe', 'this network'], ['2001:0:4136:e378:8000:63bf:f5ff:fffe', 'private'],
  ])('refuses %s (%s)', (address, reason) => {
    expect(blockedAddressReason(address)).toBe(reason);
  });

  it.each(['203.0.113.5', '8.8.8.8', '172.32.0.1', '100.128.0.1', '2001:4860:4860::8888', '::ffff:8.8.8.8', '2002:0808:0808::1', '::ffff:0:8.8.8.8', '64:ff9b::8.8.8.8', '2001:0:4136:e378:8000:63bf:f7f7:f7f7', '2001:db9::1'])('accepts %s', (address) => {
    expect(blockedAddressReason(address)).toBeNull();
  });
});

describe('checkWebhookUrl', () => {
  const resolveTo = (addresses: string[]) => async () => addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

  it('refuses a name when any address it resolves to is internal, and one that does not resolve', async () => {
    await expect(checkWebhookUrl('https://hooks.example.com/x', false, resolveTo(['93.184.216.34', '10.0.0.7']))).rejects.toMatchObject({ code: 'validation_failed', details: [{ path: '/url' }] });
    await expect(checkWebhookUrl('https://hooks.example.com/x', false, async () => { throw Object.assign(new Error('nope'), { code: 'ENOTFOUND' }); }))
      .rejects.toThrow(/does not resolve \(ENOTFOUND\)/);
    await expect(checkWebhookUrl('https://hooks.example.com/x', false, resolveTo(['93.184.216.34']))).resolves.toBeInstanceOf(URL);
    await expect(checkWebhookUrl('http://localhost:1/x', false)).rejects.toThrow(/resolves to an internal address/);
  });

  it('does not tell the caller what a name resolves to, nor what kind of address it is', async () => {
    const refusal = await checkWebhookUrl('https://db.internal.example/x', false, resolveTo(['10.1.2.3'])).catch((e: Error & { details?: unknown }) => e);
    const said = JSON.stringify({ message: (refusal as Error).message, details: (refusal as { details?: unknown }).details });
    expect(said).toMatch(/resolves to an internal address/);
    expect(said).not.toMatch(/10\.1\.2\.3|a private/);
  });

  it('lets everything http(s) through when private addresses are allowed, and nothing else', async () => {
    await expect(checkWebhookUrl('http://127.0.0.1:1/x', true)).resolves.toBeInstanceOf(URL);
    await expect(checkWebhookUrl('gopher://127.0.0.1/x', true)).rejects.toThrow(/scheme/);
  });
});

describe('WebhookSender', () => {
  let receiver: Server;
  let port = 0;
  let hits = 0;
  beforeAll(async () => {
    receiver = createServer((req, res) => {
      hits++;
      req.resume();
      req.on('end', () => res.writeHead(req.url === '/fail' ? 503 : 200).end());
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    port = (receiver.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((resolve) => receiver.close(resolve));
  });

  it('refuses at connection time a name that resolves to loopback, and a loopback literal, when private addresses are not allowed', async () => {
    const sender = new WebhookSender({ timeoutMs: 2000, allowPrivate: false });
    try {
      const byName = await sender.post({ url: `http://localhost:${port}/x`, body: '{}', headers: {} });
      expect(byName).toMatchObject({ ok: false, status: null, error: expect.stringMatching(/EWEBHOOKBLOCKED.*resolves to an internal address/) });
      // the attempt's error is shown to the subscriber: it names neither the address nor its kind
      expect(byName.error).not.toMatch(/127\.0\.0\.1|::1|loopback/);
      const byLiteral = await sender.post({ url: `http://127.0.0.1:${port}/x`, body: '{}', headers: {} });
      expect(byLiteral).toMatchObject({ ok: false, status: null, error: expect.stringMatching(/loopback/) });
      expect(hits).toBe(0);
    } finally {
      await sender.close();
    }
  });

  it('sends when allowed, and reports a non-2xx as a failure with its status', async () => {
    const sender = new WebhookSender({ timeoutMs: 2000, allowPrivate: true });
    try {
      expect(await sender.post({ url: `http://localhost:${port}/x`, body: '{}', headers: {} })).toMatchObject({ ok: true, status: 200, error: null });
      expect(await sender.post({ url: `http://127.0.0.1:${port}/fail`, body: '{}', headers: {} })).toMatchObject({ ok: false, status: 503 });
      expect(hits).toBe(2);
    } finally {
      await sender.close();
    }
  });
});

describe('delivery body, signature, backoff', () => {
  it('signs the exact body bytes and leaves org_id out when the user has none', () => {
    const body = deliveryBody({
      id: 'd1', type: 'consolidation.failed', created_at: '2026-01-01T00:00:00.000Z', user_id: 'u', org_id: null, seq: '1',
      subject: { kind: 'failure', event_id: 'e', stream_id: 's', error: 'x', attempts: 3 },
    });
    expect(JSON.parse(body)).toEqual({ id: 'd1', type: 'consolidation.failed', created_at: '2026-01-01T00:00:00.000Z', user_id: 'u', data: { event_id: 'e', stream_id: 's', error: 'x', attempts: 3 } });
    // RFC 4231 test case 2
    expect(signature('what do ya want for nothing?', 'Jefe')).toBe('sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843');
    // the timed one signs "<t>.<body>", t in whole seconds of the attempt
    const at = 1_767_225_600_999;
    expect(timedSignature('{}', 'Jefe', at)).toBe(`t=1767225600,v1=${createHmac('sha256', 'Jefe').update('1767225600.{}').digest('hex')}`);
  });

  it('doubles the wait per failure up to the maximum, drawn from its upper half', () => {
    const policy = { initialMs: 100, maxMs: 1000 };
    expect([1, 2, 3, 4, 5, 30].map((n) => retryDelay(n, policy, () => 0))).toEqual([50, 100, 200, 400, 500, 500]);
    expect([1, 2, 3, 4, 5, 30].map((n) => retryDelay(n, policy, () => 1))).toEqual([100, 200, 400, 800, 1000, 1000]);
  });
});
