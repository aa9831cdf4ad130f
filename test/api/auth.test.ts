import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { StrataApiError, StrataClient } from '@strata/client';
import { removeDir, startServer, type ServerProcess } from '../helpers/server-process';

const STREAM = '0b8e8a52-3c1f-4f5e-9d1a-2f6f3c9a7e10';

async function errorOf(p: Promise<unknown>): Promise<StrataApiError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof StrataApiError) return err;
    throw err;
  }
  throw new Error('expected the call to fail');
}

describe('authentication and API keys (generated admin password)', () => {
  let server: ServerProcess;
  let admin: StrataClient;
  let anonymous: StrataClient;
  let password: string;

  beforeAll(async () => {
    server = await startServer();
    password = readFileSync(join(server.dataDir, 'initial-admin-password'), 'utf8').trim();
    anonymous = new StrataClient({ baseUrl: server.url });
    admin = new StrataClient({ baseUrl: server.url });
  });
  afterAll(async () => {
    await admin.close();
    await anonymous.close();
    await server.stop();
    removeDir(server.dataDir);
  });

  it('writes the generated password once, mode 0600, and names the file (not the password) in the log', () => {
    expect(password).toMatch(/^[A-Za-z0-9]{24}$/);
    expect(statSync(join(server.dataDir, 'initial-admin-password')).mode & 0o777).toBe(0o600);
    expect(server.output()).toContain('initial-admin-password');
    expect(server.output()).not.toContain(password);
  });

  it('logs in with the generated password and asks for a change', async () => {
    const login = await admin.login('admin', password);
    expect(login.must_change_password).toBe(true);
    expect(login.expires_in).toBe(86400);
    const [, payload] = login.token.split('.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    expect(claims.sub).toBe('admin');
    expect(claims.exp - claims.iat).toBe(86400);
    admin.useToken(login.token);
    expect((await admin.pending()).pending).toBe(0);
  });

  it('refuses wrong credentials with 401 and the envelope', async () => {
    const err = await errorOf(anonymous.login('admin', 'wrong-password'));
    expect(err.status).toBe(401);
    expect(err.code).toBe('unauthenticated');
    const unknown = await errorOf(anonymous.login('nobody', 'whatever-password'));
    expect(unknown.status).toBe(401);
  });

  it('refuses calls without credentials, with a bad token and with a bad key', async () => {
    expect((await errorOf(anonymous.pending())).status).toBe(401);
    const badToken = new StrataClient({ baseUrl: server.url, token: 'not.a.jwt' });
    expect((await errorOf(badToken.pending())).code).toBe('unauthenticated');
    const badKey = new StrataClient({ baseUrl: server.url, apiKey: 'sk_' + 'a'.repeat(36) });
    expect((await errorOf(badKey.pending())).status).toBe(401);
    await badToken.close();
    await badKey.close();
  });

  it('changes the password: too short is 400, wrong current is 401, then the new one works', async () => {
    const short = await errorOf(admin.changePassword(password, 'short'));
    expect(short.status).toBe(400);
    expect(short.details?.[0].path).toBe('/new_password');
    expect((await errorOf(admin.changePassword('not-the-password', 'a-new-password-1'))).status).toBe(401);
    await admin.changePassword(password, 'a-new-password-1');
    expect((await errorOf(anonymous.login('admin', password))).status).toBe(401);
    const login = await anonymous.login('admin', 'a-new-password-1');
    expect(login.must_change_password).toBe(false);
    admin.useToken(login.token);
  });

  it('creates, lists and revokes API keys; the key is shown once and only its prefix is listed', async () => {
    const created = await admin.createApiKey({ name: 'agent', role: 'write' });
    expect(created.key).toMatch(/^sk_[A-Za-z0-9]{36}$/);
    expect(created.key_prefix).toBe(created.key.slice(0, 10));
    expect(created).toMatchObject({ name: 'agent', role: 'write', org_id: null, user_ids: null });
    const listed = await admin.listApiKeys();
    const row = listed.api_keys.find((k) => k.key_id === created.key_id)!;
    expect(row).toBeDefined();
    expect(JSON.stringify(listed)).not.toContain(created.key);
    const agent = new StrataClient({ baseUrl: server.url, apiKey: created.key });
    await agent.ingest('u1', STREAM, { content: 'hello there, I am Bob' });
    await admin.revokeApiKey(created.key_id);
    expect((await errorOf(agent.pending())).status).toBe(401);
    expect((await errorOf(admin.revokeApiKey(created.key_id))).status).toBe(404);
    await agent.close();
  });

  it('enforces roles: read cannot write, write cannot manage keys', async () => {
    const read = await admin.createApiKey({ role: 'read' });
    const write = await admin.createApiKey({ role: 'write' });
    const reader = new StrataClient({ baseUrl: server.url, apiKey: read.key });
    const writer = new StrataClient({ baseUrl: server.url, apiKey: write.key });
    expect((await reader.pending()).ready).toBeDefined();
    await reader.listEvents('u1', STREAM);
    const denied = await errorOf(reader.ingest('u1', STREAM, { content: 'x' }));
    expect(denied.status).toBe(403);
    expect(denied.code).toBe('forbidden');
    await writer.ingest('u1', STREAM, { content: 'written by a write key' });
    expect((await errorOf(writer.createApiKey({}))).status).toBe(403);
    expect((await errorOf(writer.listApiKeys())).status).toBe(403);
    await reader.close();
    await writer.close();
  });

  it('scopes keys to users and to an org', async () => {
    const scoped = await admin.createApiKey({ role: 'write', user_ids: ['alice'] });
    const client = new StrataClient({ baseUrl: server.url, apiKey: scoped.key });
    await client.ingest('alice', STREAM, { content: 'alice speaks' });
    expect((await errorOf(client.ingest('bob', STREAM, { content: 'not allowed' }))).status).toBe(403);
    expect((await errorOf(client.listEvents('bob', STREAM))).status).toBe(403);
    const orgKey = await admin.createApiKey({ role: 'write', org_id: 'acme' });
    const orgClient = new StrataClient({ baseUrl: server.url, apiKey: orgKey.key });
    await orgClient.ingest('carol', STREAM, { content: 'acme fact', org_id: 'acme' });
    expect((await errorOf(orgClient.ingest('carol', STREAM, { content: 'other org fact', org_id: 'globex' }))).status).toBe(403);
    await client.close();
    await orgClient.close();
  });

  it('validates key creation input', async () => {
    const res = await admin.raw('POST', '/v1/dashboard/api-keys', { body: { role: 'superuser' } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'validation_failed', details: [{ path: '/role' }] });
  });

  it('throttles after 5 failed logins from one address with 429 and Retry-After', async () => {
    for (let i = 0; i < 5; i++) expect((await errorOf(anonymous.login('admin', `bad-${i}`))).status).toBe(401);
    const throttled = await errorOf(anonymous.login('admin', 'a-new-password-1'));
    expect(throttled.status).toBe(429);
    expect(throttled.code).toBe('rate_limited');
    expect(Number(throttled.headers['retry-after'])).toBeGreaterThan(0);
  });
});

describe('configured credentials', () => {
  let server: ServerProcess;
  beforeAll(async () => {
    server = await startServer({ env: { STRATA_ADMIN_PASSWORD: 'configured-pass-1', STRATA_API_KEY: 'static-admin-key-123' } });
  });
  afterAll(async () => {
    await server.stop();
    removeDir(server.dataDir);
  });

  it('uses STRATA_ADMIN_PASSWORD without a change prompt and accepts STRATA_API_KEY as admin', async () => {
    const client = new StrataClient({ baseUrl: server.url });
    const login = await client.login('admin', 'configured-pass-1');
    expect(login.must_change_password).toBe(false);
    const automation = new StrataClient({ baseUrl: server.url, apiKey: 'static-admin-key-123' });
    const key = await automation.createApiKey({ role: 'read' });
    expect(key.role).toBe('read');
    const bearer = new StrataClient({ baseUrl: server.url, token: key.key });
    expect((await bearer.pending()).pending).toBe(0);
    await Promise.all([client.close(), automation.close(), bearer.close()]);
  });
});
