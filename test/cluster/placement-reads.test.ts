/**
 * Cross-shard reads under placement (cluster/shard-reads.ts): 5 node processes, 6 shard groups,
 * replication 3, so shard 0 is on every node and each other group on 3 of the 5: no node holds every
 * group, and its replica of a group it does not hold is empty. Users are written over all groups (some
 * of them an organization's), consolidation gives up on every event (an embeddings endpoint that refuses
 * them), and then every node must give the same complete answer to every question about all groups:
 * the admin user listing (paged) and an org key's, the pending backlog and the failed events (paged,
 * admin and org key), the org's knowledge (paged list, metrics, each item), org-scoped retrieval, a
 * webhook's deliveries, and the owner check of a semantic plan. Read only from the local replicas,
 * each node would answer with the groups it holds only.
 *
 * Also the internal route itself: only requests signed with the cluster secret (401 otherwise), a body
 * that does not fit is 400, and a node never answers for a group it does not hold.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PeerSigner } from '../../packages/server/src/cluster/peer-auth';
import { shardOf } from '../../packages/server/src/shards';
import { api, newStream, SECRET, sleep, TestCluster, waitFor } from '../helpers/cluster';
import { startPlaced, statusOf, type Placed } from '../helpers/placement';
import { WebhookReceiver } from '../helpers/webhook-receiver';

jest.setTimeout(180_000);

const NODES = 5;
const SHARDS = 6;
const RF = 3;
const ORG = 'acme';
const DIMS = 16;
/** Events carrying this word are refused by the embeddings endpoint: consolidation gives up on them. */
const REFUSED = 'qzrefused';
const USERS = Array.from({ length: 24 }, (_, i) => `reads-user-${String(i).padStart(2, '0')}`);
const inOrg = (u: string) => USERS.indexOf(u) % 3 === 0;
const STREAM = newStream();

/** An OpenAI-compatible embeddings endpoint: a bag of hashed words per text, 400 for any input with REFUSED. */
async function embeddingsServer(): Promise<Server> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const { input } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { input: string[] };
      if (input.some((t) => t.includes(REFUSED))) {
        res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'input refused' } }));
        return;
      }
      const data = input.map((text, index) => {
        const v = new Array<number>(DIMS).fill(0);
        v[0] = 1;
        for (const w of text.toLowerCase().split(/\W+/).filter(Boolean)) {
          let h = 7;
          for (const ch of w) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
          v[1 + (h % (DIMS - 1))] += 1;
        }
        return { object: 'embedding', index, embedding: v };
      });
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data, model: 'fake' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

describe(`cross-shard reads: ${NODES} nodes, ${SHARDS} groups, replication ${RF}`, () => {
  let cluster: TestCluster;
  let embeddings: Server;
  let recv: WebhookReceiver;
  let placed: Placed[];
  const held = new Map<number, number[]>();

  /** A write through node `via`, asked again while the cluster answers 503 (an election, a replica moving). */
  const write = async (via: number, method: string, path: string, body: unknown, headers: Record<string, string> = {}) => {
    let last: Awaited<ReturnType<typeof api>> | null = null;
    await waitFor(`${method} ${path}`, async () => {
      last = await api(cluster.node(via).url, method, path, body, headers);
      return last.status !== 503;
    }, 20_000, 100);
    expect([path, last!.status, last!.body]).toEqual([path, 200, expect.anything()]);
    return last!.body;
  };

  /** Polls node `id` until `read` gives `expected` (replicas catch up), then asserts it (the diff when it never did). */
  const answers = async <T>(id: number, what: string, read: () => Promise<T>, expected: T) => {
    let last: T | undefined;
    try {
      await waitFor(`node ${id}: ${what}`, async () => {
        last = await read();
        return JSON.stringify(last) === JSON.stringify(expected);
      }, 20_000, 200);
    } catch {
      // the assertion below shows what differs
    }
    expect([`node ${id}: ${what}`, last]).toEqual([`node ${id}: ${what}`, expected]);
  };

  const get = async (id: number, path: string, headers: Record<string, string> = {}) => {
    const r = await api(cluster.node(id).url, 'GET', path, undefined, headers);
    if (r.status !== 200) throw new Error(`GET ${path} on node ${id}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };

  /** Every page of a listing, following its cursor. */
  const allPages = async <T>(id: number, path: (cursor: string | null) => string, key: string, cursorKey = 'next_cursor', headers: Record<string, string> = {}) => {
    const out: T[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 100; page++) {
      const body = await get(id, path(cursor), headers);
      out.push(...(body[key] as T[]));
      cursor = body[cursorKey] as string | null;
      if (!cursor) return { items: out, pages: page + 1 };
    }
    throw new Error('more than 100 pages');
  };

  beforeAll(async () => {
    embeddings = await embeddingsServer();
    recv = await WebhookReceiver.start();
    ({ cluster, groups: placed } = await startPlaced({
      nodes: NODES, shards: SHARDS, rf: RF,
      env: {
        STRATA__EMBEDDING__PROVIDER: 'openai',
        STRATA__EMBEDDING__BASE_URL: `http://127.0.0.1:${(embeddings.address() as AddressInfo).port}/v1`,
        STRATA__EMBEDDING__MODEL: 'fake',
        STRATA__EMBEDDING__DIMENSIONS: String(DIMS),
        STRATA__CONSOLIDATION__ENABLED: 'true',
        STRATA__CONSOLIDATION__INTERVAL_MS: '50',
        STRATA__WEBHOOKS__ALLOW_PRIVATE: 'true',
        STRATA__WEBHOOKS__POLL_MS: '25',
        STRATA__WEBHOOKS__ADVANCE_INTERVAL_MS: '200',
      },
    }));
    for (const n of cluster.live()) held.set(n.id, (await statusOf(cluster, n.id)).shards.filter((s) => s.holds).map((s) => s.shard_id));
  });

  afterAll(async () => {
    await cluster?.stop();
    await recv?.close();
    await new Promise((resolve) => embeddings?.close(resolve));
  });

  it('answers every cross-shard read with the same complete answer on every node', async () => {
    // No node holds every group, and the users cover every group.
    for (const [id, groups] of held) {
      expect([id, groups.includes(0), groups.length < SHARDS]).toEqual([id, true, true]);
    }
    expect(new Set(USERS.map((u) => shardOf(u, SHARDS))).size).toBe(SHARDS);

    // A webhook on everything, before the writes (each group's leader mirrors it shortly).
    const hook = await write(2, 'POST', '/v1/webhooks', { url: recv.url, events: ['*'] }) as { webhook_id: string };
    await sleep(1000);

    // The org's users, their knowledge (facts with the org's id) and private facts, and one event each
    // that consolidation will give up on. Written through every node in turn.
    const orgFacts = new Map<string, string>(); // unit id → user
    const eventOf = new Map<string, string>(); // user → event id
    for (const [i, user] of USERS.entries()) {
      const via = (i % NODES) + 1;
      if (inOrg(user)) {
        await write(via, 'PUT', `/v1/users/${user}/org`, { org_id: ORG });
        const facts = await write(via, 'POST', `/v1/users/${user}/facts`, { facts: [{ content: `The lighthouse keeper ${user} logs the tide at dawn.`, org_id: ORG }] }) as { memory_ids: string[] };
        orgFacts.set(facts.memory_ids[0], user);
      }
      await write(via, 'POST', `/v1/users/${user}/facts`, { facts: [{ content: `${user} keeps a private garden of tomatoes.` }] });
      const event = await write(via, 'POST', `/v1/users/${user}/streams/${STREAM}/events`, { content: `I moved to Porto last spring and work at the ${REFUSED} harbour office.` }, { 'idempotency-key': `reads-${user}` }) as { event_id: string };
      eventOf.set(user, event.event_id);
    }
    const orgUsers = USERS.filter(inOrg);
    const orgKey = (await write(1, 'POST', '/v1/dashboard/api-keys', { name: 'acme admin', role: 'admin', org_id: ORG }) as { key: string }).key;
    const asOrg = { 'x-api-key': orgKey };

    // Consolidation gives up on every event (about three attempts each).
    await answers(1, 'the backlog drained into failures', async () => {
      const b = await get(1, '/v1/status/pending');
      return { pending: b.pending, failed: b.failed };
    }, { pending: 0, failed: USERS.length });

    const ids = cluster.live().map((n) => n.id);
    for (const id of ids) {
      // The backlog, the whole service's and the org key's (its users only: usersOf over every group).
      await answers(id, 'pending', async () => {
        const b = await get(id, '/v1/status/pending');
        return { pending: b.pending, ready: b.ready, failed: b.failed, oldest_pending_ms: b.oldest_pending_ms };
      }, { pending: 0, ready: true, failed: USERS.length, oldest_pending_ms: null });
      await answers(id, 'pending (org key)', async () => (await get(id, '/v1/status/pending', asOrg)).failed, orgUsers.length);

      // The failed events, paged by 5 across the groups, in the same order everywhere.
      const failedOf = async (headers: Record<string, string>) => (await allPages<{ event_id: string; user_id: string }>(
        id, (c) => `/v1/status/failed?limit=5${c ? `&after=${c}` : ''}`, 'failed', 'next_cursor', headers,
      )).items.map((f) => [f.user_id, f.event_id]);
      const failedOrder = [...USERS].sort((a, b) => shardOf(a, SHARDS) - shardOf(b, SHARDS)).map((u) => u);
      await answers(id, 'failed events (by group)', async () => (await failedOf({})).map(([u]) => shardOf(u, SHARDS)), failedOrder.map((u) => shardOf(u, SHARDS)));
      await answers(id, 'failed events', async () => (await failedOf({})).map(([u, e]) => `${u}:${e}`).sort(), USERS.map((u) => `${u}:${eventOf.get(u)}`).sort());
      await answers(id, 'failed events (org key)', async () => (await failedOf(asOrg)).map(([u]) => u).sort(), orgUsers);

      // The users, paged by 5, with their org and counts; and the org key's.
      type Row = { user_id: string; org_id: string | null; counts: { events: number; memory_units: number; pending: number } };
      const usersOf = async (headers: Record<string, string>) => (await allPages<Row>(id, (c) => `/v1/users?limit=5${c ? `&after=${encodeURIComponent(c)}` : ''}`, 'users', 'next_cursor', headers)).items
        .map((r) => ({ user_id: r.user_id, org_id: r.org_id, events: r.counts.events, memory_units: r.counts.memory_units, pending: r.counts.pending }));
      const expectedUsers = USERS.map((u) => ({ user_id: u, org_id: inOrg(u) ? ORG : null, events: 1, memory_units: inOrg(u) ? 2 : 1, pending: 0 }));
      await answers(id, 'users', () => usersOf({}), expectedUsers);
      await answers(id, 'users (org key)', () => usersOf(asOrg), expectedUsers.filter((r) => r.org_id === ORG));

      // The org's knowledge: every page (3 a page), the metrics, each item.
      await answers(id, 'org knowledge', async () => {
        const { items } = await allPages<{ unit: { id: string }; contributor_user_ids: string[] }>(id, (c) => `/v1/organizations/${ORG}/knowledge?limit=3&sort=topic_asc${c ? `&cursor=${c}` : ''}`, 'items');
        return items.map((it) => `${it.unit.id}:${it.contributor_user_ids.join(',')}`).sort();
      }, [...orgFacts].map(([unit, user]) => `${unit}:${user}`).sort());
      await answers(id, 'org metrics', async () => {
        const m = await get(id, `/v1/organizations/${ORG}/knowledge/metrics`);
        return { knowledge_count: m.knowledge_count, contributor_count: m.contributor_count };
      }, { knowledge_count: orgFacts.size, contributor_count: orgUsers.length });
      for (const unit of orgFacts.keys()) {
        await answers(id, `org item ${unit}`, async () => (await api(cluster.node(id).url, 'GET', `/v1/organizations/${ORG}/knowledge/${unit}`)).status, 200);
      }

      // Org-scoped retrieval for a user of group 0 (so it runs on this node): every org fact, from every group.
      const reader = Array.from({ length: 200 }, (_, k) => `reads-reader-${k}`).find((u) => shardOf(u, SHARDS) === 0)!;
      for (const consistency of ['local', 'linearizable']) {
        await answers(id, `org retrieval (${consistency})`, async () => {
          const r = await api(cluster.node(id).url, 'POST', `/v1/users/${reader}/streams/${STREAM}/retrieve`, { query: 'lighthouse keeper tide', org_id: ORG, limit: 50, graph_depth: 0, consistency });
          if (r.status !== 200) throw new Error(`retrieve: ${r.status} ${JSON.stringify(r.body)}`);
          return (r.body.results as { unit: { id: string } }[]).map((x) => x.unit.id).filter((u) => orgFacts.has(u)).sort();
        }, [...orgFacts.keys()].sort());
      }
    }

    // The webhook's deliveries: counters over every group, the same on every node, and what the receiver got.
    await waitFor('every delivery received and recorded', async () => {
      const d = await get(1, `/v1/webhooks/${hook.webhook_id}/deliveries`);
      return d.queued === 0 && d.delivered === new Set(recv.received.map((r) => r.body.id)).size;
    }, 30_000, 200);
    const received = new Set(recv.received.map((r) => r.body.id)).size;
    expect(received).toBeGreaterThan(0);
    for (const id of ids) {
      await answers(id, 'webhook deliveries', async () => {
        const d = await get(id, `/v1/webhooks/${hook.webhook_id}/deliveries?limit=100`);
        return { queued: d.queued, delivered: d.delivered, dropped: d.dropped, expired: d.expired };
      }, { queued: 0, delivered: received, dropped: 0, expired: 0 });
    }

    // A semantic plan of user A executed as user B: 403 (the plan is found in A's group) rather than 404,
    // on a leader of B's group that does not hold A's group.
    const leader0 = await cluster.leader(0);
    const leaderOf = (g: number) => (g === 0 ? leader0 : placed.find((p) => p.group_id === g)!.leader!);
    const votersOf = (g: number) => (g === 0 ? ids : placed.find((p) => p.group_id === g)!.voters);
    const pair = USERS.flatMap((a) => USERS.map((b) => [a, b] as const))
      .find(([a, b]) => shardOf(a, SHARDS) !== shardOf(b, SHARDS) && !votersOf(shardOf(a, SHARDS)).includes(leaderOf(shardOf(b, SHARDS))));
    expect(pair).toBeDefined();
    const [a, b] = pair!;
    const plan = await write(1, 'POST', `/v1/users/${a}/memories/semantic/preview`, { instruction: 'forget the private garden', mode: 'forget' }) as { plan_id: string };
    // (asked again while the replica read lags the plan's commit: a 404 changes nothing)
    await answers(leaderOf(shardOf(b, SHARDS)), 'a plan of another user', async () => {
      const stolen = await api(cluster.node(leaderOf(shardOf(b, SHARDS))).url, 'POST', `/v1/users/${b}/memories/semantic/execute`, { plan_id: plan.plan_id, confirm: true });
      return [stolen.status, stolen.body.code];
    }, [403, 'forbidden']);
  });

  it('serves the internal route to signed requests of the cluster only, with a checked body', async () => {
    const path = '/v1/cluster/shard-reads';
    // signed as node 1 would (the test knows the cluster secret)
    const signer = new PeerSigner(SECRET, 1, 30_000);
    const signed = (id: number, body: unknown) => api(cluster.node(id).url, 'POST', path, body, signer.sign(id, 'POST', path, body));
    const target = cluster.live().find((n) => held.get(n.id)!.length < SHARDS)!.id;
    const notHeld = Array.from({ length: SHARDS }, (_, g) => g).find((g) => !held.get(target)!.includes(g))!;
    const good = { query: 'pending', args: { scope: { org_id: null, user_ids: null } }, groups: [0, notHeld] };

    // no signature (admin credentials do not open it), a signature of another body, a replayed one: 401
    const unsigned = await api(cluster.node(target).url, 'POST', path, good);
    expect([unsigned.status, unsigned.body.code]).toEqual([401, 'unauthenticated']);
    const headers = signer.sign(target, 'POST', path, good);
    const tampered = await api(cluster.node(target).url, 'POST', path, { ...good, groups: [0] }, headers);
    expect(tampered.status).toBe(401);
    // (the signature is judged from the headers before the body is read, so the tampered try used its nonce up)
    const fresh = signer.sign(target, 'POST', path, good);
    expect((await api(cluster.node(target).url, 'POST', path, good, fresh)).status).toBe(200);
    expect((await api(cluster.node(target).url, 'POST', path, good, fresh)).status).toBe(401);

    // a group held here is answered; one that is not is refused for that group, never read from the empty replica
    const ok = await signed(target, good);
    expect(ok.status).toBe(200);
    const results = ok.body.results as { group: number; ok: boolean; code?: string }[];
    expect(results.map((r) => [r.group, r.ok, r.code ?? null])).toEqual([[0, true, null], [notHeld, false, 'no_leader']]);

    // bodies that do not fit: 400 with the envelope, never a 500
    const all = { scope: { org_id: null, user_ids: null } };
    const bad: unknown[] = [
      [], 'text', {}, { query: 'nope', args: {}, groups: [0] }, { query: 'pending', args: {}, groups: [0] },
      { query: 'pending', args: { scope: { org_id: null, user_ids: [1] } }, groups: [0] }, { query: 'pending', args: all, groups: [] },
      { query: 'pending', args: all, groups: [SHARDS] }, { query: 'pending', args: all, groups: [0, 0] },
      { query: 'pending', args: all, groups: [0.5] }, { query: 'pending', args: all, groups: [0], linearizable: 'yes' },
      { query: 'userIds', args: { after: null, limit: 0 }, groups: [0] }, { query: 'failed', args: { after: '12', limit: 5, ...all }, groups: [0] },
      { query: 'orgKnowledgePage', args: { org_id: ORG, query: { sort: 'sideways', limit: 5, cursor: null, q: null, contributor: null, source_type: null } }, groups: [0] },
      { query: 'orgKnowledgePage', args: { org_id: ORG, query: { sort: 'topic_asc', limit: 5, cursor: { sort: 'topic_asc', key: [1, 2], id: 'x' }, q: null, contributor: null, source_type: null } }, groups: [0] },
      { query: 'userOrg', args: { user_id: '' }, groups: [0] }, { query: 'toString', args: {}, groups: [0] },
    ];
    for (const body of bad) {
      const r = await signed(target, body);
      expect([JSON.stringify(body), r.status, typeof r.body?.code]).toEqual([JSON.stringify(body), 400, 'string']);
    }
  });
});
