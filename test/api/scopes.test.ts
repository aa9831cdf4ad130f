/**
 * The scope model of CONTRACT.md §1, generated from the route table: the routes are read from the
 * running node's GET /openapi.json (made from the same RouteSpec list the node registers), and every
 * route is called with every kind of key (read/write/admin × unscoped/user-scoped/org-scoped/both) on
 * targets inside and outside the key's scope. Each answer must have the expected status, and no answer
 * may carry a marker word of a user or org outside the key's scope. A route without an entry in
 * EXPECTATIONS fails the suite, so a new route cannot skip it. The routes between nodes (signed with the
 * cluster secret) are called without credentials and with every kind of key: none opens them. Webhook
 * subscriptions also with filters naming each user and org (made within the key's scope only), and
 * every kind of key against subscriptions of every reach (listed, shown, deleted only when covered).
 *
 * The MCP tools the same way: the tools are read from the node's own tool list (the SDK client's
 * tools/list), and each is called through the SDK's Streamable HTTP client with every kind of key, on
 * every user, naming each org where the tool takes one, and through a session whose default user is
 * outside most keys' scope. A tool without an entry in MCP_EXPECTATIONS fails the suite. A session is
 * used only by the key that opened it (every other key, one of the same scope included: 404).
 *
 * Then one test per attack seen in issue 11 (batch org_id, user keys naming orgs, org keys on users of
 * no org, keys wider than their maker, the pending backlog), and the user → org record itself.
 */
import { randomUUID } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StrataClient } from '@strata/client';
import { callTool, connectMcp, type ToolResult } from '../helpers/mcp-client';
import { removeDir, startServer, type ServerProcess } from '../helpers/server-process';

const ADMIN_KEY = 'scopes-test-admin-key';
const S = '5c0f7a1e-2b3d-4e5f-8a9b-0c1d2e3f4a5b';
const ROLES = ['read', 'write', 'admin'] as const;
type Role = (typeof ROLES)[number];
const RANK: Record<Role, number> = { read: 0, write: 1, admin: 2 };

/** The org and users seeded: ana is acme's, gil globex's, bob and uma belong to no org. */
const ACME = 'acme';
const GLOBEX = 'globex';
const USERS = ['ana', 'bob', 'gil', 'uma'] as const;
const ORG_OF: Record<string, string | null> = { ana: ACME, bob: null, gil: GLOBEX, uma: null };
/** Each user's content carries a marker word (never in a request, so never echoed) and the shared word "lighthouse". */
const MARKER: Record<string, string> = { ana: 'qzanamark', bob: 'qzbobmark', gil: 'qzgilmark', uma: 'qzumamark' };

interface KeyKind {
  name: string;
  role: Role;
  org_id: string | null;
  user_ids: string[] | null;
}
const SCOPES = [
  { scope: 'unscoped', org_id: null, user_ids: null },
  { scope: 'users', org_id: null, user_ids: ['ana', 'uma'] },
  { scope: 'org', org_id: ACME, user_ids: null },
  { scope: 'both', org_id: ACME, user_ids: ['ana', 'uma'] },
] as const;
const KINDS: KeyKind[] = ROLES.flatMap((role) => SCOPES.map((s) => ({
  name: `${role}/${s.scope}`, role, org_id: s.org_id, user_ids: s.user_ids === null ? null : [...s.user_ids],
})));

function coversUser(k: KeyKind, user: string): boolean {
  if (k.user_ids && !k.user_ids.includes(user)) return false;
  return k.org_id === null || ORG_OF[user] === k.org_id;
}
function coversOrg(k: KeyKind, org: string): boolean {
  if (k.org_id === null) return k.user_ids === null;
  return k.org_id === org;
}
const unscoped = (k: KeyKind) => k.org_id === null && k.user_ids === null;
/** Marker words that must never reach this key. */
const forbiddenMarkers = (k: KeyKind) => USERS.filter((u) => !coversUser(k, u)).map((u) => MARKER[u]);

/** `internal`: between nodes only (signed with the cluster secret): no credentials of any kind open it */
type Scope = 'public' | 'internal' | 'user' | 'org' | 'service' | 'scoped';
interface Target {
  user: string;
  org: string;
  /** the org_id the request names in its body (null: none) */
  named: string | null;
}
interface Expectation {
  scope: Scope;
  /** `ndjson`: a raw NDJSON body (POST /v1/import) instead of a JSON one */
  request: (t: Target) => { path: string; body?: unknown; ndjson?: string };
  /** the status of an authorized call (default 200): a 404 for an unknown id still proves the scope check passed */
  ok?: number;
  /** the body may name an org_id: the request is also made naming acme and naming globex */
  namesOrg?: boolean;
}

/** May the key name this org in a request? (a key limited to users and to no org names none) */
function mayName(k: KeyKind, org: string | null): boolean {
  return org === null || (k.org_id === null ? k.user_ids === null : k.org_id === org);
}
const orgField = (t: Target) => (t.named === null ? {} : { org_id: t.named });

const UNKNOWN = '6f1e2d3c-4b5a-4697-8877-665544332211';
const userPath = (t: Target, rest: string) => `/v1/users/${t.user}${rest}`;

/** One entry per route of the table, keyed `METHOD /openapi/path`. */
const EXPECTATIONS: Record<string, Expectation> = {
  'GET /livez': { scope: 'public', request: () => ({ path: '/livez' }) },
  'GET /readyz': { scope: 'public', request: () => ({ path: '/readyz' }) },
  'GET /openapi.json': { scope: 'public', request: () => ({ path: '/openapi.json' }) },
  'GET /metrics': { scope: 'public', request: () => ({ path: '/metrics' }) },
  'POST /v1/dashboard/auth/login': { scope: 'public', request: () => ({ path: '/v1/dashboard/auth/login', body: { username: 'nobody', password: 'wrong' } }), ok: 401 },
  'POST /v1/cluster/join': {
    // node 1 is this node at another address: 409, a harmless refusal that proves the credentials passed
    scope: 'service', request: () => ({ path: '/v1/cluster/join', body: { node_id: 1, address: 'http://127.0.0.1:1' } }), ok: 409,
  },
  'POST /v1/dashboard/auth/password': {
    scope: 'service', request: () => ({ path: '/v1/dashboard/auth/password', body: { current_password: 'not-the-password', new_password: 'new-password-1' } }), ok: 401,
  },
  'POST /v1/dashboard/api-keys': { scope: 'scoped', request: () => ({ path: '/v1/dashboard/api-keys', body: {} }) }, // body set per key below
  'GET /v1/dashboard/api-keys': { scope: 'scoped', request: () => ({ path: '/v1/dashboard/api-keys' }) },
  'DELETE /v1/dashboard/api-keys/{key_id}': { scope: 'scoped', request: () => ({ path: `/v1/dashboard/api-keys/${UNKNOWN}` }), ok: 404 },
  'GET /v1/users': { scope: 'scoped', request: () => ({ path: '/v1/users?limit=500' }) },
  'PUT /v1/users/{user_id}/org': { scope: 'service', request: () => ({ path: '/v1/users/scratch-user/org', body: { org_id: null } }) },
  'POST /v1/users/{user_id}/streams/{stream_id}/events': {
    scope: 'user', namesOrg: true, request: (t) => ({ path: userPath(t, `/streams/${S}/events`), body: { content: 'One more lighthouse note.', ...orgField(t) } }),
  },
  'POST /v1/users/{user_id}/streams/{stream_id}/events/batch': {
    scope: 'user', namesOrg: true,
    request: (t) => ({ path: userPath(t, `/streams/${S}/events/batch`), body: { events: [{ content: 'A batched lighthouse note.' }, { content: 'And one more.', ...orgField(t) }] } }),
  },
  'GET /v1/users/{user_id}/streams/{stream_id}/events': { scope: 'user', request: (t) => ({ path: userPath(t, `/streams/${S}/events`) }) },
  'GET /v1/status/pending': { scope: 'scoped', request: () => ({ path: '/v1/status/pending' }) },
  'GET /v1/status/failed': { scope: 'scoped', request: () => ({ path: '/v1/status/failed' }) },
  'POST /v1/users/{user_id}/facts': {
    scope: 'user', namesOrg: true, request: (t) => ({ path: userPath(t, '/facts'), body: { facts: [{ content: 'The lighthouse keeper retired in 1990.', ...orgField(t) }] } }),
  },
  'GET /v1/users/{user_id}/memories': { scope: 'user', request: (t) => ({ path: userPath(t, '/memories?include_retired=true') }) },
  'GET /v1/users/{user_id}/events/dropped': { scope: 'user', request: (t) => ({ path: userPath(t, '/events/dropped') }) },
  'GET /v1/users/{user_id}/memories/{id}': { scope: 'user', request: (t) => ({ path: userPath(t, `/memories/${UNKNOWN}`) }), ok: 404 },
  'GET /v1/users/{user_id}/graph/edges': { scope: 'user', request: (t) => ({ path: userPath(t, '/graph/edges') }) },
  'GET /v1/users/{user_id}/streams': { scope: 'user', request: (t) => ({ path: userPath(t, '/streams') }) },
  'GET /v1/users/{user_id}/streams/{stream_id}/tasks/tree': { scope: 'user', request: (t) => ({ path: userPath(t, `/streams/${S}/tasks/tree`) }) },
  'GET /v1/users/{user_id}/tasks/tree': { scope: 'user', request: (t) => ({ path: userPath(t, '/tasks/tree') }) },
  'GET /v1/users/{user_id}/tasks/ready': { scope: 'user', request: (t) => ({ path: userPath(t, '/tasks/ready') }) },
  'PUT /v1/users/{user_id}/tasks/{task_id}/status': {
    scope: 'user', request: (t) => ({ path: userPath(t, `/tasks/${UNKNOWN}/status`), body: { status: 'completed' } }), ok: 404,
  },
  'POST /v1/users/{user_id}/graph/edges': {
    scope: 'user', request: (t) => ({ path: userPath(t, '/graph/edges'), body: { source_id: UNKNOWN, target_id: randomUUID(), relation: 'RelatedTo' } }), ok: 404,
  },
  'GET /v1/organizations/{org_id}/knowledge': { scope: 'org', request: (t) => ({ path: `/v1/organizations/${t.org}/knowledge?limit=500` }) },
  'GET /v1/organizations/{org_id}/knowledge/metrics': { scope: 'org', request: (t) => ({ path: `/v1/organizations/${t.org}/knowledge/metrics` }) },
  'GET /v1/organizations/{org_id}/knowledge/{id}': { scope: 'org', request: (t) => ({ path: `/v1/organizations/${t.org}/knowledge/${UNKNOWN}` }), ok: 404 },
  'POST /v1/users/{user_id}/memories/semantic/preview': {
    scope: 'user', namesOrg: true,
    request: (t) => ({ path: userPath(t, '/memories/semantic/preview'), body: { instruction: 'forget everything about the lighthouse', limit: 25, ...orgField(t) } }),
  },
  'POST /v1/users/{user_id}/memories/semantic/execute': {
    scope: 'user', namesOrg: true, request: (t) => ({ path: userPath(t, '/memories/semantic/execute'), body: { plan_id: UNKNOWN, confirm: true, ...orgField(t) } }), ok: 404,
  },
  'DELETE /v1/users/{user_id}/memories/{id}': { scope: 'user', request: (t) => ({ path: userPath(t, `/memories/${UNKNOWN}`) }), ok: 404 },
  'POST /v1/cluster/initialize': { scope: 'service', request: () => ({ path: '/v1/cluster/initialize' }) },
  'DELETE /v1/cluster/nodes/{node_id}': { scope: 'service', request: () => ({ path: '/v1/cluster/nodes/99' }), ok: 404 },
  'GET /v1/cluster/status': { scope: 'service', request: () => ({ path: '/v1/cluster/status' }) },
  // between nodes only (signed with the cluster secret): no credentials open them, an admin key neither
  'POST /v1/cluster/groups/{group_id}/propose': {
    scope: 'internal', request: () => ({ path: '/v1/cluster/groups/0/propose', ndjson: '{"type":"import.records","at":"2026-01-01T00:00:00.000Z"}\n' }), ok: 401,
  },
  'GET /v1/cluster/groups/{group_id}/records': { scope: 'internal', request: () => ({ path: '/v1/cluster/groups/0/records' }), ok: 401 },
  // between nodes only (cluster secret): no credentials of any kind open it
  'POST /v1/cluster/shard-reads': { scope: 'internal', request: () => ({ path: '/v1/cluster/shard-reads', body: { query: 'pending', args: { scope: { org_id: null, user_ids: null } }, groups: [0] } }), ok: 401 },
  // between nodes only: a request signed with the cluster secret; no key of any kind opens them
  'POST /v1/cluster/groups/{group_id}/initialize': {
    scope: 'internal', request: () => ({ path: '/v1/cluster/groups/0/initialize', body: { members: [{ id: 1, url: 'http://127.0.0.1:1' }] } }), ok: 401,
  },
  'POST /v1/cluster/groups/{group_id}/steps': {
    scope: 'internal', request: () => ({ path: '/v1/cluster/groups/0/steps', body: { kind: 'remove', node: 1, url: 'http://127.0.0.1:1' } }), ok: 401,
  },
  'POST /v1/cluster/groups/{group_id}/drop': {
    scope: 'internal', request: () => ({ path: '/v1/cluster/groups/0/drop', body: { index: 1 } }), ok: 401,
  },
  'POST /v1/cluster/groups/{group_id}/range-command': {
    scope: 'internal', request: () => ({ path: '/v1/cluster/groups/0/range-command', body: { command: { type: 'range.unfence', at: '2026-01-01T00:00:00.000Z', fence: { base: 1, start: 1, end: 2, new_group: 1 } } } }), ok: 401,
  },
  'POST /v1/cluster/groups/{group_id}/range-records': {
    scope: 'internal', request: () => ({ path: '/v1/cluster/groups/0/range-records', body: { fence: { base: 1, start: 1, end: 2, new_group: 1 }, cursor: { sub: 0, after: null } } }), ok: 401,
  },
  'POST /v1/cluster/groups/{group_id}/range-median': {
    scope: 'internal', request: () => ({ path: '/v1/cluster/groups/0/range-median', body: { base: 1, start: 0, end: 2 } }), ok: 401,
  },
  // the operator's splits and merges: on a group that owns no range (a 404 proves the credentials passed, and changes nothing)
  'POST /v1/cluster/groups/{group_id}/split': { scope: 'service', request: () => ({ path: '/v1/cluster/groups/9/split', body: {} }), ok: 404 },
  'POST /v1/cluster/groups/{group_id}/split/abort': { scope: 'service', request: () => ({ path: '/v1/cluster/groups/9/split/abort', body: {} }), ok: 404 },
  'POST /v1/cluster/groups/{group_id}/merge': { scope: 'service', request: () => ({ path: '/v1/cluster/groups/9/merge', body: { with: 0 } }), ok: 404 },
  'POST /v1/cluster/groups/{group_id}/merge/abort': { scope: 'service', request: () => ({ path: '/v1/cluster/groups/9/merge/abort', body: {} }), ok: 404 },
  'POST /v1/users/{user_id}/streams/{stream_id}/retrieve': {
    scope: 'user', namesOrg: true, request: (t) => ({ path: userPath(t, `/streams/${S}/retrieve`), body: { query: 'lighthouse', limit: 100, ...orgField(t) } }),
  },
  'GET /v1/users/{user_id}/export': { scope: 'user', request: (t) => ({ path: userPath(t, '/export') }) },
  'GET /v1/export': { scope: 'service', request: () => ({ path: '/v1/export' }) },
  'POST /v1/import': {
    // a file naming the target user: a user line without an org (skipped on import), and an event
    // naming the org asked for (a new one each time, consolidated already: it makes no memory)
    scope: 'user', namesOrg: true,
    request: (t) => ({ path: '/v1/import', ndjson: [
      { kind: 'header', format: 'strata-export', version: 1 },
      { kind: 'user', user_id: t.user, org_id: null },
      {
        kind: 'event', event_id: randomUUID(), user_id: t.user, stream_id: S, content: 'An imported note.', content_type: 'text', ...orgField(t),
        valid_time: '2026-01-01T00:00:00.000Z', transaction_time: '2026-01-01T00:00:00.000Z', consolidation: { state: 'consolidated' },
      },
    ].map((l) => JSON.stringify(l) + '\n').join('') }),
  },
  // webhooks: a subscription is made within the key's own scope (a filter is optional); an unknown one is 404.
  // The address is public (documentation range) and the kind never fires here, so nothing is sent.
  'POST /v1/webhooks': { scope: 'scoped', request: () => ({ path: '/v1/webhooks', body: { url: 'http://203.0.113.7/hook', events: ['consolidation.failed'] } }) },
  'GET /v1/webhooks': { scope: 'scoped', request: () => ({ path: '/v1/webhooks' }) },
  'DELETE /v1/webhooks/{webhook_id}': { scope: 'scoped', request: () => ({ path: `/v1/webhooks/${UNKNOWN}` }), ok: 404 },
  'GET /v1/webhooks/{webhook_id}/deliveries': { scope: 'scoped', request: () => ({ path: `/v1/webhooks/${UNKNOWN}/deliveries` }), ok: 404 },
  'POST /v1/memory/context': {
    scope: 'user', namesOrg: true,
    request: (t) => ({ path: '/v1/memory/context', body: { user_id: t.user, query: 'lighthouse', token_budget: 8192, limit: 100, ...orgField(t) } }),
  },
};

/** An MCP tool's scope case: every tool acts on one user (given, or the session's default user). */
interface ToolExpectation {
  /** the role the tool needs (the REST route it mirrors needs the same) */
  role: Role;
  /** the arguments for this target; user_id is added by the suite (or left out to use the session's user) */
  args: (t: Target) => Record<string, unknown>;
  /** the tool takes an org_id: the call is also made naming acme and naming globex */
  namesOrg?: boolean;
  /** the code of an authorized call (default: no error): not_found for an unknown id still proves the scope check passed */
  ok?: 'not_found';
}

/** One entry per tool the node lists on tools/list. */
const MCP_EXPECTATIONS: Record<string, ToolExpectation> = {
  remember: { role: 'write', namesOrg: true, args: (t) => ({ content: 'One more lighthouse note, through MCP.', ...orgField(t) }) },
  recall: { role: 'read', namesOrg: true, args: (t) => ({ query: 'lighthouse', limit: 100, ...orgField(t) }) },
  get_context: { role: 'read', args: () => ({ query: 'lighthouse', token_budget: 8192 }) },
  // a preview: it lists what would be forgotten (the user's own data) and changes nothing
  forget: { role: 'write', args: () => ({ instruction: 'forget everything about the lighthouse' }) },
  confirm_forget: { role: 'write', args: () => ({ plan_id: UNKNOWN }), ok: 'not_found' },
  // the goal trees carry the seeded goals' marker words
  list_tasks: { role: 'read', args: () => ({}) },
  update_task_status: { role: 'write', args: () => ({ task_id: UNKNOWN, status: 'completed' }), ok: 'not_found' },
};
/** The user a session names as its default (`x-strata-user`): in the scope of unscoped keys only. */
const SESSION_USER = 'gil';

interface Call {
  method: string;
  path: string;
  body?: unknown;
  /** the API key to send; null: no credentials; absent: the admin key */
  key?: string | null;
  ndjson?: string;
}

describe('scopes: every route × every kind of key × targets in and out of scope', () => {
  let server: ServerProcess;
  let admin: StrataClient;
  const keys = new Map<string, string>();
  let routes: { method: string; path: string; role: Role | 'public' }[];

  async function call<T = Record<string, unknown>>({ method, path, body, key, ndjson }: Call) {
    const raw = ndjson === undefined ? {} : { rawBody: ndjson };
    const type: Record<string, string> = ndjson === undefined ? {} : { 'content-type': 'application/x-ndjson' };
    if (key === undefined) return admin.raw<T>(method, path, { body, ...raw, headers: type });
    return admin.raw<T>(method, path, { body, ...raw, headers: key === null ? type : { ...type, 'x-api-key': key }, auth: false });
  }
  const as = (kind: string) => keys.get(kind)!;

  beforeAll(async () => {
    server = await startServer({
      env: { STRATA_API_KEY: ADMIN_KEY, STRATA__CONSOLIDATION__INTERVAL_MS: '50', STRATA__EMBEDDING__PROVIDER: 'hashing' },
    });
    admin = new StrataClient({ baseUrl: server.url, apiKey: ADMIN_KEY });
    for (const k of KINDS) keys.set(k.name, (await admin.createApiKey({ name: k.name, role: k.role, org_id: k.org_id ?? undefined, user_ids: k.user_ids ?? undefined })).key);
    // ana: her first write is made with acme's key, which records her as acme's
    const acme = { 'x-api-key': as('write/org') };
    const seed = async (user: string, headers: Record<string, string>, org: string | null) => {
      const m = MARKER[user];
      const events = [
        { content: `${user} keeps a private lighthouse diary with the word ${m} in it.` },
        { content: `The team lighthouse project of ${user} is codenamed ${m}.`, org_id: org },
        { content: `My goal is to repaint the lighthouse ${m}.`, level: 3 },
      ];
      const res = await admin.raw('POST', `/v1/users/${user}/streams/${S}/events/batch`, { body: { events }, headers, auth: false });
      expect(res.status).toBe(200);
    };
    await seed('ana', acme, ACME);
    const adminHeaders = { 'x-api-key': ADMIN_KEY };
    await seed('bob', adminHeaders, null);
    await seed('uma', adminHeaders, null);
    expect((await call({ method: 'PUT', path: '/v1/users/gil/org', body: { org_id: GLOBEX } })).status).toBe(200);
    await seed('gil', adminHeaders, GLOBEX);
    expect((await admin.waitUntilReady(60_000, 50)).ready).toBe(true);
    const doc = (await call<{ paths: Record<string, Record<string, { 'x-strata-role'?: Role; security?: unknown[] }>> }>({ method: 'GET', path: '/openapi.json' })).body;
    routes = Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({
      method: method.toUpperCase(), path, role: op['x-strata-role'] ?? 'public' as const,
    })));
  }, 120_000);

  afterAll(async () => {
    await admin?.close();
    if (server) {
      expect(await server.stop()).toBe(0);
      removeDir(server.dataDir);
    }
  });

  it('has an expectation for every route the node registers, and none for a route it does not', () => {
    const registered = routes.map((r) => `${r.method} ${r.path}`).sort();
    expect(registered.filter((r) => !EXPECTATIONS[r])).toEqual([]);
    expect(Object.keys(EXPECTATIONS).filter((r) => !registered.includes(r))).toEqual([]);
    expect(registered).toContain('PUT /v1/users/{user_id}/org');
  });

  it('answers every route with the status its scope gives, and never with data outside the scope', async () => {
    const cases: { label: string; call: Call; expected: number; markers: string[] }[] = [];
    for (const route of routes) {
      const exp = EXPECTATIONS[`${route.method} ${route.path}`];
      if (!exp) continue; // reported by the test above
      const ok = exp.ok ?? 200;
      if (exp.scope === 'public' || exp.scope === 'internal') {
        const req = exp.request({ user: 'ana', org: ACME, named: null });
        cases.push({ label: `${route.method} ${route.path} without credentials`, call: { method: route.method, ...req, key: null }, expected: ok, markers: Object.values(MARKER) });
        // a route between nodes answers every key as it answers no credentials: only the cluster's signature opens it
        if (exp.scope === 'internal') {
          for (const k of KINDS) cases.push({ label: `${route.method} ${route.path} as ${k.name}`, call: { method: route.method, ...req, key: as(k.name) }, expected: ok, markers: Object.values(MARKER) });
        }
        continue;
      }
      const named = exp.namesOrg ? [null, ACME, GLOBEX] : [null];
      const targets: Target[] = exp.scope === 'user' ? USERS.flatMap((user) => named.map((n) => ({ user, org: ACME, named: n })))
        : exp.scope === 'org' ? [ACME, GLOBEX].map((org) => ({ user: 'ana', org, named: null }))
          : [{ user: 'ana', org: ACME, named: null }];
      for (const k of KINDS) {
        for (const t of targets) {
          const req = exp.request(t);
          // minting: a key exactly as wide as its maker, which every admin key may do
          const body = route.path === '/v1/dashboard/api-keys' && route.method === 'POST'
            ? { role: k.role, org_id: k.org_id, user_ids: k.user_ids } : req.body;
          const role = route.role as Role;
          const inScope = !mayName(k, t.named) ? false
            : exp.scope === 'user' ? coversUser(k, t.user)
            : exp.scope === 'org' ? coversOrg(k, t.org)
              : exp.scope === 'service' ? unscoped(k) : true;
          // a route's own role comes from the table; the cluster join route is public there but needs admin
          const needed: Role = route.role === 'public' ? 'admin' : role;
          const expected = RANK[k.role] < RANK[needed] || !inScope ? 403 : ok;
          cases.push({ label: `${route.method} ${req.path}${t.named ? ` naming ${t.named}` : ''} as ${k.name}`, call: { method: route.method, path: req.path, body, ndjson: req.ndjson, key: as(k.name) }, expected, markers: forbiddenMarkers(k) });
        }
      }
    }
    expect(cases.length).toBeGreaterThan(500);
    const failures: string[] = [];
    let next = 0;
    const worker = async () => {
      while (next < cases.length) {
        const c = cases[next++];
        const res = await call(c.call);
        const text = typeof res.body === 'string' ? res.body : JSON.stringify(res.body);
        if (res.status !== c.expected) failures.push(`${c.label}: ${res.status} (expected ${c.expected}) ${text.slice(0, 200)}`);
        if (res.status >= 400 && !(typeof res.body === 'object' && res.body && 'code' in res.body)) failures.push(`${c.label}: ${res.status} without the error envelope`);
        const leaked = c.markers.filter((m) => text.includes(m));
        if (leaked.length) failures.push(`${c.label}: reply carries ${leaked.join(', ')}`);
      }
    };
    await Promise.all(Array.from({ length: 6 }, worker));
    expect(failures).toEqual([]);
  }, 120_000);

  describe('webhooks with filters', () => {
    const HOOK = 'http://203.0.113.7/hook';
    /** What a subscription can see (its filter, made by the unscoped admin here). */
    interface Reach {
      org_id: string | null;
      user_ids: string[] | null;
    }
    /** The model of CONTRACT §13: a subscription is visible to credentials whose scope covers all it can see. */
    const sees = (k: KeyKind, w: Reach) => {
      if (k.org_id !== null && w.org_id !== k.org_id) return false;
      if (k.user_ids !== null && (w.user_ids === null || !w.user_ids.every((u) => k.user_ids!.includes(u)))) return false;
      return !(k.org_id === null && k.user_ids !== null && w.org_id !== null);
    };
    const create = (filter: Reach, key?: string) => call<{ webhook_id: string }>({
      method: 'POST', path: '/v1/webhooks', key,
      body: { url: HOOK, events: ['consolidation.failed'], ...(filter.org_id ? { org_id: filter.org_id } : {}), ...(filter.user_ids ? { user_ids: filter.user_ids } : {}) },
    });

    it('lists, shows and deletes a subscription only for keys whose scope covers all it can see (404 otherwise)', async () => {
      const filters: Reach[] = [
        { org_id: null, user_ids: null },
        ...USERS.map((u) => ({ org_id: null, user_ids: [u] })),
        { org_id: null, user_ids: ['ana', 'uma'] },
        { org_id: ACME, user_ids: null },
        { org_id: GLOBEX, user_ids: null },
        { org_id: ACME, user_ids: ['ana'] },
      ];
      const seeded: (Reach & { id: string })[] = [];
      for (const f of filters) {
        const r = await create(f);
        expect(r.status).toBe(200);
        seeded.push({ ...f, id: r.body.webhook_id });
      }
      const failures: string[] = [];
      for (const k of KINDS) {
        const listed = await call<{ webhooks: { webhook_id: string }[] }>({ method: 'GET', path: '/v1/webhooks', key: as(k.name) });
        const ids = new Set(listed.body.webhooks.map((w) => w.webhook_id));
        for (const w of seeded) {
          const label = `subscription ${JSON.stringify({ org_id: w.org_id, user_ids: w.user_ids })} as ${k.name}`;
          const visible = sees(k, w);
          if (ids.has(w.id) !== visible) failures.push(`${label}: listed ${ids.has(w.id)} (expected ${visible})`);
          const deliveries = await call({ method: 'GET', path: `/v1/webhooks/${w.id}/deliveries`, key: as(k.name) });
          if (deliveries.status !== (visible ? 200 : 404)) failures.push(`${label}: deliveries ${deliveries.status}`);
          // deleting one it may not see is an unknown id (and deletes nothing); one it sees is not deleted here
          if (!visible) {
            const del = await call({ method: 'DELETE', path: `/v1/webhooks/${w.id}`, key: as(k.name) });
            if (del.status !== (RANK[k.role] < RANK.write ? 403 : 404)) failures.push(`${label}: delete ${del.status} ${JSON.stringify(del.body)}`);
          }
        }
      }
      expect(failures).toEqual([]);
      const left = (await call<{ webhooks: { webhook_id: string }[] }>({ method: 'GET', path: '/v1/webhooks' })).body.webhooks.map((w) => w.webhook_id);
      expect(seeded.filter((w) => !left.includes(w.id))).toEqual([]);
    }, 120_000);

    it('creates a subscription only for users and orgs within the key\'s scope', async () => {
      const failures: string[] = [];
      for (const k of KINDS) {
        const filters: { filter: Reach; inScope: boolean }[] = [
          ...USERS.map((u) => ({ filter: { org_id: null, user_ids: [u] }, inScope: coversUser(k, u) })),
          ...[ACME, GLOBEX].map((o) => ({ filter: { org_id: o, user_ids: null }, inScope: mayName(k, o) })),
        ];
        for (const { filter, inScope } of filters) {
          const r = await create(filter, as(k.name));
          const expected = RANK[k.role] < RANK.write || !inScope ? 403 : 200;
          if (r.status !== expected) failures.push(`${JSON.stringify(filter)} as ${k.name}: ${r.status} (expected ${expected}) ${JSON.stringify(r.body).slice(0, 200)}`);
          // made within the key's scope, it is visible to the key that made it
          if (r.status === 200) {
            const own = await call({ method: 'GET', path: `/v1/webhooks/${r.body.webhook_id}/deliveries`, key: as(k.name) });
            if (own.status !== 200) failures.push(`${JSON.stringify(filter)} as ${k.name}: its own subscription answered ${own.status}`);
          }
        }
      }
      expect(failures).toEqual([]);
    }, 120_000);
  });

  describe('MCP tools', () => {
    const sessions: Client[] = [];
    const connect = async (headers: Record<string, string>) => {
      const client = await connectMcp(server.url, headers);
      sessions.push(client);
      return client;
    };
    let tools: string[];

    beforeAll(async () => {
      tools = (await (await connect({ 'x-api-key': ADMIN_KEY })).listTools()).tools.map((t) => t.name).sort();
    });
    afterAll(async () => {
      for (const c of sessions) await c.close().catch(() => undefined);
    });

    it('has a scope case for every tool the node lists, and none for a tool it does not', () => {
      expect(tools.filter((t) => !MCP_EXPECTATIONS[t])).toEqual([]);
      expect(Object.keys(MCP_EXPECTATIONS).filter((t) => !tools.includes(t))).toEqual([]);
      expect(tools).toContain('recall');
    });

    it('opens no session without credentials', async () => {
      await expect(connectMcp(server.url, {})).rejects.toThrow(/401|unauthenticated/i);
    });

    it('keeps every session to the credentials that opened it: any other key, even of the same scope, is answered 404', async () => {
      const rpc = (key: string, method: 'POST' | 'GET' | 'DELETE', session?: string, body?: unknown) => fetch(`${server.url}/mcp`, {
        method,
        headers: { 'x-api-key': key, accept: 'application/json, text/event-stream', ...(body ? { 'content-type': 'application/json' } : {}), ...(session ? { 'mcp-session-id': session } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'scopes', version: '1' } } };
      const toolCall = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'list_tasks', arguments: { user_id: 'ana' } } };
      // a session for every kind of key, and a second key of each kind (same role and scope) that did not open it
      const owners = [...KINDS.map((k) => ({ name: k.name, key: as(k.name) })), { name: 'the admin key', key: ADMIN_KEY }];
      const twins = new Map<string, string>();
      for (const k of KINDS) twins.set(k.name, (await admin.createApiKey({ name: `${k.name} twin`, role: k.role, org_id: k.org_id ?? undefined, user_ids: k.user_ids ?? undefined })).key);
      const sessions = new Map<string, string>();
      for (const o of owners) {
        const opened = await rpc(o.key, 'POST', undefined, init);
        await opened.text();
        expect([o.name, opened.status]).toEqual([o.name, 200]);
        sessions.set(o.name, opened.headers.get('mcp-session-id')!);
      }
      const failures: string[] = [];
      const intruders = [...KINDS.map((k) => ({ name: k.name, key: as(k.name) })), ...KINDS.map((k) => ({ name: `${k.name} twin`, key: twins.get(k.name)! }))];
      for (const o of owners) {
        for (const i of intruders) {
          if (i.name === o.name) continue;
          for (const [method, body] of [['POST', toolCall], ['GET', undefined], ['DELETE', undefined]] as const) {
            const res = await rpc(i.key, method, sessions.get(o.name), body);
            if (res.status === 404) {
              await res.text();
              continue;
            }
            // taken: a GET would hold the session's event stream open, so its body is not read
            await res.body?.cancel();
            failures.push(`${method} on the session of ${o.name} as ${i.name}: ${res.status}`);
          }
        }
      }
      // none of those closed a session: each still answers its own key
      for (const o of owners) {
        const res = await rpc(o.key, 'POST', sessions.get(o.name), { jsonrpc: '2.0', id: 3, method: 'tools/list', params: {} });
        await res.text();
        if (res.status !== 200) failures.push(`the session of ${o.name} answered its own key ${res.status} afterwards`);
        await (await rpc(o.key, 'DELETE', sessions.get(o.name))).text();
      }
      expect(failures).toEqual([]);
    }, 120_000);

    it('answers every tool × every kind of key with a refusal or data of the key\'s scope only', async () => {
      const cases: { label: string; client: Client; tool: string; args: Record<string, unknown>; expected: string; markers: string[] }[] = [];
      for (const k of KINDS) {
        const plain = await connect({ 'x-api-key': as(k.name) });
        // a session naming a default user the key may not reach: calls that leave user_id out act on it
        const named = await connect({ 'x-api-key': as(k.name), 'x-strata-user': SESSION_USER });
        for (const tool of tools) {
          const exp = MCP_EXPECTATIONS[tool];
          if (!exp) continue; // reported by the test above
          const orgs = exp.namesOrg ? [null, ACME, GLOBEX] : [null];
          const targets = [
            ...USERS.flatMap((user) => orgs.map((n) => ({ t: { user, org: ACME, named: n }, client: plain, explicit: true }))),
            { t: { user: SESSION_USER, org: ACME, named: null }, client: named, explicit: false },
          ];
          for (const { t, client, explicit } of targets) {
            const inScope = mayName(k, t.named) && coversUser(k, t.user);
            const expected = RANK[k.role] < RANK[exp.role] || !inScope ? 'forbidden' : exp.ok ?? 'ok';
            const args = { ...exp.args(t), ...(explicit ? { user_id: t.user } : {}) };
            const via = explicit ? `user_id ${t.user}` : `session user ${t.user}`;
            cases.push({ label: `${tool} (${via}${t.named ? `, naming ${t.named}` : ''}) as ${k.name}`, client, tool, args, expected, markers: forbiddenMarkers(k) });
          }
        }
      }
      expect(cases.length).toBeGreaterThan(KINDS.length * tools.length * USERS.length);
      const failures: string[] = [];
      let next = 0;
      const worker = async () => {
        while (next < cases.length) {
          const c = cases[next++];
          let res: ToolResult;
          try {
            res = await callTool(c.client, c.tool, c.args);
          } catch (err) {
            failures.push(`${c.label}: the call failed (${(err as Error).message})`);
            continue;
          }
          const text = JSON.stringify(res);
          const code = res.isError ? String(res.structuredContent?.code ?? 'no error envelope') : 'ok';
          if (code !== c.expected) failures.push(`${c.label}: ${code} (expected ${c.expected}) ${text.slice(0, 200)}`);
          const leaked = c.markers.filter((m) => text.includes(m));
          if (leaked.length) failures.push(`${c.label}: answer carries ${leaked.join(', ')}`);
        }
      };
      await Promise.all(Array.from({ length: 6 }, worker));
      expect(failures).toEqual([]);
    }, 120_000);
  });

  // ---- the attacks of issue 11, one by one ----

  const eventsOf = async (user: string) =>
    JSON.stringify((await call({ method: 'GET', path: `/v1/users/${user}/streams/${S}/events?limit=1000` })).body);

  it('checks the org_id of every event of a batch, not only the top level', async () => {
    const batch = (key: string, org: string) => call({
      method: 'POST', path: `/v1/users/ana/streams/${S}/events/batch`, key,
      body: { events: [{ content: `qzbatchleak ${org}`, org_id: org }, { content: 'fine' }] },
    });
    const refused = await batch(as('write/org'), GLOBEX);
    expect([refused.status, refused.body.code]).toEqual([403, 'forbidden']);
    expect((await batch(as('write/users'), ACME)).status).toBe(403); // a user key names no org at all
    expect((await batch(as('write/both'), GLOBEX)).status).toBe(403);
    expect(await eventsOf('ana')).not.toContain('qzbatchleak');
    expect((await batch(as('write/org'), ACME)).status).toBe(200);
  });

  it('refuses any org_id from a key limited to users and to no org (retrieve, context, ingest, preview)', async () => {
    const key = as('write/users');
    const named = [
      { method: 'POST', path: `/v1/users/ana/streams/${S}/retrieve`, body: { query: 'lighthouse', org_id: ACME } },
      { method: 'POST', path: '/v1/memory/context', body: { user_id: 'ana', query: 'lighthouse', org_id: GLOBEX } },
      { method: 'POST', path: `/v1/users/ana/streams/${S}/events`, body: { content: 'qzuserorgleak', org_id: GLOBEX } },
      { method: 'POST', path: '/v1/users/ana/memories/semantic/preview', body: { instruction: 'forget the lighthouse', org_id: ACME } },
    ];
    for (const req of named) {
      const res = await call({ ...req, key });
      expect([req.path, res.status]).toEqual([req.path, 403]);
      const { org_id: _org, ...without } = req.body;
      expect([req.path, (await call({ ...req, body: without, key })).status]).toEqual([req.path, 200]);
    }
    // stored once, by the request without org_id: the refused one left nothing
    const events = JSON.parse(await eventsOf('ana')) as { events: { content: string; org_id: string | null }[] };
    expect(events.events.filter((e) => e.content === 'qzuserorgleak').map((e) => e.org_id)).toEqual([null]);
  });

  it('lets an org key act only on users of its org: no reading, deleting or forgetting anyone else', async () => {
    const bobUnits = (await call<{ memories: { id: string }[] }>({ method: 'GET', path: '/v1/users/bob/memories' })).body.memories;
    expect(bobUnits.length).toBeGreaterThan(0);
    const del = await call({ method: 'DELETE', path: `/v1/users/bob/memories/${bobUnits[0].id}`, key: as('admin/org') });
    expect(del.status).toBe(403);
    const plan = await call<{ plan_id: string }>({ method: 'POST', path: '/v1/users/bob/memories/semantic/preview', body: { instruction: 'forget the lighthouse diary' } });
    expect(plan.status).toBe(200);
    const stolen = await call({ method: 'POST', path: '/v1/users/bob/memories/semantic/execute', body: { plan_id: plan.body.plan_id, confirm: true }, key: as('admin/org') });
    expect(stolen.status).toBe(403);
    // nothing was changed: the unit is there and the plan was not consumed
    expect((await call<{ memories: { id: string }[] }>({ method: 'GET', path: '/v1/users/bob/memories' })).body.memories.map((u) => u.id)).toContain(bobUnits[0].id);
    expect((await call({ method: 'POST', path: '/v1/users/bob/memories/semantic/execute', body: { plan_id: plan.body.plan_id, confirm: true } })).status).toBe(200);
  });

  it('records a new user for the org of the key that writes first, and never takes an existing user', async () => {
    const globex = (await admin.createApiKey({ role: 'write', org_id: GLOBEX })).key;
    const ingest = (user: string, key: string) => call({ method: 'POST', path: `/v1/users/${user}/streams/${S}/events`, body: { content: 'hello lighthouse' }, key });
    expect((await ingest('nova', as('write/org'))).status).toBe(200); // nova is new: now acme's
    expect((await ingest('nova', globex)).status).toBe(403);
    expect((await call({ method: 'GET', path: `/v1/users/nova/streams/${S}/events`, key: as('read/org') })).status).toBe(200);
    expect((await ingest('olga', ADMIN_KEY)).status).toBe(200); // an unscoped write records no org
    expect((await ingest('olga', as('write/org'))).status).toBe(403); // olga has data and no org: not claimable
    expect((await call({ method: 'GET', path: `/v1/users/olga/streams/${S}/events`, key: as('read/org') })).status).toBe(403);
  });

  it('sets and clears a user\'s org with PUT /v1/users/:user_id/org (unscoped admin only)', async () => {
    const read = () => call({ method: 'GET', path: '/v1/users/bob/memories', key: as('read/org') });
    expect((await read()).status).toBe(403);
    const put = (body: unknown, key?: string) => call({ method: 'PUT', path: '/v1/users/bob/org', body, key });
    expect((await put({ org_id: ACME })).body).toEqual({ user_id: 'bob', org_id: ACME, changed: true });
    expect((await read()).status).toBe(200);
    expect((await put({ org_id: ACME })).body).toMatchObject({ changed: false });
    expect((await put({ org_id: GLOBEX }, as('admin/org'))).status).toBe(403);
    expect((await put({ org_id: null }, as('admin/users'))).status).toBe(403);
    for (const bad of [{}, { org_id: '' }, { org_id: 5 }, { org_id: 'a\u0001b' }]) {
      const res = await put(bad);
      expect([JSON.stringify(bad), res.status, res.body.code]).toEqual([JSON.stringify(bad), 400, 'validation_failed']);
    }
    expect((await put({ org_id: null })).body).toEqual({ user_id: 'bob', org_id: null, changed: true });
    expect((await read()).status).toBe(403);
    const doc = (await call<{ paths: Record<string, Record<string, { requestBody?: unknown }>> }>({ method: 'GET', path: '/openapi.json' })).body;
    expect(JSON.stringify(doc.paths['/v1/users/{user_id}/org'].put.requestBody)).toContain('#/components/schemas/UserOrg');
  });

  it('lists to each key only the users of its scope (GET /v1/users)', async () => {
    type Listed = { user_id: string; org_id: string | null; counts: { events: number; memory_units: number } };
    const listed = async (key: string) => (await call<{ users: Listed[] }>({ method: 'GET', path: '/v1/users?limit=500', key })).body.users;
    const all = await listed(ADMIN_KEY);
    expect(USERS.every((u) => all.some((l) => l.user_id === u))).toBe(true);
    expect(all.find((l) => l.user_id === 'ana')).toMatchObject({ org_id: ACME });
    expect(all.find((l) => l.user_id === 'gil')!.counts.events).toBeGreaterThanOrEqual(3);
    for (const k of KINDS.filter((kind) => kind.role === 'admin')) {
      const seen = (await listed(as(k.name))).map((l) => l.user_id);
      expect([k.name, seen.filter((u) => (USERS as readonly string[]).includes(u) && !coversUser(k, u))]).toEqual([k.name, []]);
      expect([k.name, USERS.filter((u) => coversUser(k, u) && !seen.includes(u))]).toEqual([k.name, []]);
    }
    // paging: every user once, in order, across pages of one
    const paged: string[] = [];
    let after: string | null = null;
    do {
      const res: { status: number; body: { users: Listed[]; next_cursor: string | null } } = await call({ method: 'GET', path: `/v1/users?limit=1${after ? `&after=${encodeURIComponent(after)}` : ''}` });
      expect(res.status).toBe(200);
      paged.push(...res.body.users.map((l) => l.user_id));
      after = res.body.next_cursor;
    } while (after !== null);
    expect(paged).toEqual(all.map((l) => l.user_id));
    expect((await call({ method: 'GET', path: '/v1/users?limit=0' })).status).toBe(400);
  });

  it('mints keys only within the role and scope of the minting key', async () => {
    const mint = (key: string, body: Record<string, unknown>) => call<{ key_id: string; key: string }>({ method: 'POST', path: '/v1/dashboard/api-keys', body, key });
    const org = as('admin/org');
    const users = as('admin/users');
    const refused: [string, Record<string, unknown>][] = [
      [org, { role: 'admin' }], // unscoped: wider
      [org, { org_id: GLOBEX }],
      [users, { role: 'read' }], // every user: wider
      [users, { user_ids: ['ana', 'bob'] }],
      [users, { user_ids: ['ana'], org_id: ACME }], // a user key names no org
      [as('admin/both'), { org_id: ACME }], // drops its user limit: wider
    ];
    for (const [key, body] of refused) expect([body, (await mint(key, body)).status]).toEqual([body, 403]);
    expect((await mint(org, { org_id: ACME, user_ids: ['ana'], role: 'admin' })).status).toBe(200);
    expect((await mint(users, { user_ids: ['uma'], role: 'read' })).status).toBe(200);
    const mine = await mint(as('admin/both'), { org_id: ACME, user_ids: ['ana'], role: 'write' });
    expect(mine.status).toBe(200);
    // listing: only keys within the lister's scope
    type View = { key_id: string; org_id: string | null; user_ids: string[] | null; role: Role };
    const list = async (key: string) => (await call<{ api_keys: View[] }>({ method: 'GET', path: '/v1/dashboard/api-keys', key })).body.api_keys;
    const orgList = await list(org);
    expect(orgList.length).toBeGreaterThan(0);
    expect(orgList.every((k) => k.org_id === ACME)).toBe(true);
    const userList = await list(users);
    expect(userList.every((k) => k.org_id === null && k.user_ids !== null && k.user_ids.every((u) => ['ana', 'uma'].includes(u)))).toBe(true);
    expect((await list(ADMIN_KEY)).length).toBeGreaterThan(orgList.length + userList.length);
    // revoking: a key outside the scope is not found (and keeps working); one inside is revoked
    const outside = (await list(ADMIN_KEY)).find((k) => k.org_id === null && k.user_ids === null)!;
    expect((await call({ method: 'DELETE', path: `/v1/dashboard/api-keys/${outside.key_id}`, key: org })).status).toBe(404);
    expect((await list(ADMIN_KEY)).map((k) => k.key_id)).toContain(outside.key_id);
    expect((await call({ method: 'DELETE', path: `/v1/dashboard/api-keys/${mine.body.key_id}`, key: as('admin/both') })).status).toBe(200);
    expect((await call({ method: 'GET', path: '/v1/status/pending', key: mine.body.key })).status).toBe(401);
  });
});

describe('scopes: GET /v1/status/pending counts only the scope', () => {
  let server: ServerProcess;
  let admin: StrataClient;

  beforeAll(async () => {
    // no consolidation: the backlog stays as ingested, so the figures are exact
    server = await startServer({ env: { STRATA_API_KEY: ADMIN_KEY, STRATA__CONSOLIDATION__ENABLED: 'false', STRATA__EMBEDDING__PROVIDER: 'hashing' } });
    admin = new StrataClient({ baseUrl: server.url, apiKey: ADMIN_KEY });
  });
  afterAll(async () => {
    await admin?.close();
    if (server) {
      expect(await server.stop()).toBe(0);
      removeDir(server.dataDir);
    }
  });

  it('answers each key with the backlog of its own users', async () => {
    const key = async (input: { org_id?: string; user_ids?: string[] }) => (await admin.createApiKey({ role: 'write', ...input })).key;
    const acme = await key({ org_id: ACME });
    const users = await key({ user_ids: ['ana', 'uma'] });
    const both = await key({ org_id: ACME, user_ids: ['uma'] });
    const ingest = async (user: string, n: number, apiKey: string) => {
      const events = Array.from({ length: n }, (_, i) => ({ content: `event ${i} of ${user}` }));
      const res = await admin.raw('POST', `/v1/users/${user}/streams/${S}/events/batch`, { body: { events }, headers: { 'x-api-key': apiKey }, auth: false });
      expect(res.status).toBe(200);
    };
    await ingest('ana', 2, acme); // ana: acme's
    await ingest('uma', 3, ADMIN_KEY);
    await ingest('bob', 5, ADMIN_KEY);
    const pending = async (apiKey: string) =>
      (await admin.raw<{ pending: number; ready: boolean; oldest_pending_ms: number | null }>('GET', '/v1/status/pending', { headers: { 'x-api-key': apiKey }, auth: false })).body;
    expect(await pending(ADMIN_KEY)).toMatchObject({ pending: 10, ready: false });
    expect(await pending(acme)).toMatchObject({ pending: 2, ready: false });
    expect(await pending(users)).toMatchObject({ pending: 5 });
    const none = await pending(both); // uma is not acme's: nothing of hers counts
    expect(none).toMatchObject({ pending: 0, ready: true, oldest_pending_ms: null });
  });
});
