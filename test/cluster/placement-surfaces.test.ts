/**
 * Placement and the surfaces that are not one user's REST request (5 nodes, 6 shard groups,
 * replication factor 3: no node holds every group). On a node that does not hold a user's group:
 * the MCP read tools answer from a node that does; an import sent to any node proposes each chunk on
 * its group's leader, wherever it is; `GET /v1/export` reads the groups it does not hold from a holder,
 * so the file holds every user. And the internal routes behind them refuse what is not a signed,
 * well-formed request of a node of the cluster.
 */
import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { importBody, proposePath, recordsPath } from '../../packages/server/src/cluster/group-wire';
import { PeerSigner, sha256Hex } from '../../packages/server/src/cluster/peer-auth';
import { shardOf } from '../../packages/server/src/shards';
import { API_KEY, SECRET, api, listEvents, newStream, waitFor, type TestCluster } from '../helpers/cluster';
import { startPlaced, statusOf, type Placed } from '../helpers/placement';

jest.setTimeout(120_000);

const NODES = 5;
const SHARDS = 6;
const RF = 3;
const HEADER = { kind: 'header', format: 'strata-export', version: 1 };

type ToolResult = { isError?: boolean; content: { type: string; text: string }[]; structuredContent?: Record<string, unknown> };

/** Two user ids per group. */
function usersByGroup(): Map<number, string[]> {
  const out = new Map<number, string[]>();
  for (let i = 0; [...out.values()].filter((u) => u.length >= 2).length < SHARDS; i++) {
    const user = `surface-user-${i}`;
    const g = shardOf(user, SHARDS);
    const list = out.get(g) ?? [];
    if (list.length < 2) out.set(g, [...list, user]);
  }
  return out;
}

describe(`placement surfaces: ${NODES} nodes, ${SHARDS} groups, replication ${RF}`, () => {
  let cluster: TestCluster;
  let groups: Placed[];
  const clients: Client[] = [];
  const users = usersByGroup();
  const allUsers = [...users.values()].flat();
  /** event ids by user, of everything written or imported */
  const written = new Map<string, Set<string>>();
  const note = (user: string, id: string) => written.set(user, new Set([...(written.get(user) ?? []), id]));

  const votersOf = (g: number) => (g === 0 ? cluster.live().map((n) => n.id) : groups.find((p) => p.group_id === g)!.voters);
  const holds = (node: number, g: number) => votersOf(g).includes(node);

  beforeAll(async () => {
    ({ cluster, groups } = await startPlaced({
      nodes: NODES, shards: SHARDS, rf: RF,
      // several chunks per group, so an import makes several proposals on each remote leader
      env: { STRATA__IMPORT__CHUNK_RECORDS: '3' },
    }));
  });
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await cluster?.stop();
  });

  it('places the groups so that no node holds every one', () => {
    for (const n of cluster.live()) expect(groups.filter((g) => !g.voters.includes(n.id)).length).toBeGreaterThan(0);
  });

  it("answers the MCP read tools on a node that does not hold the user's group, from a node that does", async () => {
    const group = groups[0].group_id;
    const user = users.get(group)![0];
    const away = cluster.live().find((n) => !holds(n.id, group))!;
    const client = new Client({ name: 'strata-placement-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${away.url}/mcp`), { requestInit: { headers: { 'x-api-key': API_KEY, 'x-strata-user': user } } }));
    clients.push(client);
    const call = async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as ToolResult;
    /** 'ok', or the tool error's text (a failure then says what the node answered) */
    const outcome = (r: ToolResult) => (r.isError ? r.content[0]?.text : 'ok');

    const remembered = await call('remember', { content: `${user} keeps a lighthouse logbook about the Fastnet rock.` });
    expect(outcome(remembered)).toBe('ok');
    const eventId = remembered.structuredContent!.event_id as string;
    const streamId = remembered.structuredContent!.stream_id as string;
    note(user, eventId);
    // on every replica of the group (each lists from its own replica: it holds the group)
    for (const v of votersOf(group)) {
      await waitFor(`the event on node ${v}`, async () => (await listEvents(cluster.node(v).url, user, streamId)).some((e) => e.event_id === eventId));
    }

    const recalled = await call('recall', { query: 'Which rock is in the lighthouse logbook?' });
    expect(outcome(recalled)).toBe('ok');
    const results = recalled.structuredContent!.results as { unit: { references: string[] } }[];
    expect(results.some((r) => r.unit.references.includes(eventId))).toBe(true);

    const context = await call('get_context', { query: 'What does the logbook say about Fastnet?' });
    expect(outcome(context)).toBe('ok');
    expect(context.structuredContent!.context).toContain('Fastnet');

    // the same answers as the REST routes give, read on a holder
    const tasks = await call('list_tasks', {});
    expect(outcome(tasks)).toBe('ok');
    const holder = cluster.node(votersOf(group)[0]).url;
    expect(tasks.structuredContent).toEqual({ goals: (await api(holder, 'GET', `/v1/users/${user}/tasks/tree`)).body });
    const ready = await call('list_tasks', { ready_only: true });
    expect(ready.structuredContent).toEqual({ tasks: (await api(holder, 'GET', `/v1/users/${user}/tasks/ready`)).body });

  });

  it('imports a file sent to any node into every group, each record on its group wherever that is', async () => {
    const stream = newStream();
    const lines: unknown[] = [HEADER];
    for (const user of allUsers) {
      for (const content of ['first', 'second']) {
        const id = randomUUID();
        note(user, id);
        lines.push({
          kind: 'event', event_id: id, user_id: user, stream_id: stream, content: `${user} ${content} note`, content_type: 'text',
          valid_time: '2026-01-01T00:00:00.000Z', transaction_time: '2026-01-01T00:00:00.000Z', consolidation: { state: 'consolidated' },
        });
      }
      lines.push({ kind: 'user', user_id: user, org_id: 'surface-org' });
    }
    const file = lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
    const metaLeader = await cluster.leader(0);
    // the node that runs the import (shard 0's leader) neither holds nor leads some group
    expect(groups.some((g) => !g.voters.includes(metaLeader))).toBe(true);
    const via = cluster.live().find((n) => n.id !== metaLeader)!;
    const post = () => fetch(`${via.url}/v1/import`, { method: 'POST', headers: { 'x-api-key': API_KEY, 'content-type': 'application/x-ndjson' }, body: file });
    const res = await post();
    const answer = await res.json();
    if (res.status !== 200) throw new Error(`import answered ${res.status}: ${JSON.stringify(answer)}`);
    expect(answer).toMatchObject({ status: 'imported', counts: { events: 2 * allUsers.length, users: allUsers.length } });

    // read back through every node: each read goes to a node holding the user's group
    for (const node of cluster.live()) {
      for (const user of allUsers) {
        await waitFor(`${user}'s imported events through node ${node.id}`, async () =>
          (await listEvents(node.url, user, stream)).map((e) => e.event_id).sort().join() === lines
            .filter((l) => (l as { kind: string; user_id?: string }).kind === 'event' && (l as { user_id: string }).user_id === user)
            .map((l) => (l as { event_id: string }).event_id).sort().join());
      }
    }
    // imported again: every record is stored already, on every group
    const again = await post();
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ counts: { events: 0, users: 0 }, skipped: { events: 2 * allUsers.length, users: allUsers.length } });
  });

  it('exports every user from a node that does not hold every group', async () => {
    const from = cluster.live().find((n) => groups.some((g) => !g.voters.includes(n.id)))!;
    const exportFrom = async (query: string) => {
      const res = await fetch(`${from.url}/v1/export${query}`, { headers: { 'x-api-key': API_KEY } });
      if (res.status !== 200) throw new Error(`export answered ${res.status}: ${await res.text()}`);
      return (await res.text()).split('\n').filter(Boolean).map((l) => JSON.parse(l) as { kind: string; user_id?: string; event_id?: string });
    };
    const eventsOf = (lines: { kind: string; user_id?: string; event_id?: string }[]) => {
      const out = new Map<string, string[]>();
      for (const l of lines) if (l.kind === 'event') out.set(l.user_id!, [...(out.get(l.user_id!) ?? []), l.event_id!].sort());
      return [...out].sort(([a], [b]) => a.localeCompare(b));
    };
    const expected = [...written].map(([user, ids]) => [user, [...ids].sort()]).sort(([a], [b]) => (a as string).localeCompare(b as string));

    const lines = await exportFrom('?consistency=linearizable');
    expect(lines[0]).toMatchObject({ kind: 'header', node_id: from.id });
    expect(eventsOf(lines)).toEqual(expected);
    // no record twice, and the lines of each group together, in group order
    const ids = lines.filter((l) => l.kind === 'event').map((l) => l.event_id);
    expect(new Set(ids).size).toBe(ids.length);
    const order = lines.filter((l) => l.user_id !== undefined).map((l) => shardOf(l.user_id!, SHARDS));
    expect(order).toEqual([...order].sort((a, b) => a - b));
    // without a read barrier too (the replicas read may be a moment behind)
    await waitFor('every user in the export', async () => JSON.stringify(eventsOf(await exportFrom(''))) === JSON.stringify(expected));
  });

  describe('the internal routes', () => {
    const signer = new PeerSigner(SECRET, 42, 60_000);
    const forger = new PeerSigner('not-the-cluster-secret-0123456789', 42, 60_000);
    const at = new Date().toISOString();
    const recordOf = (user: string) => ({
      kind: 'event', event_id: randomUUID(), user_id: user, stream_id: newStream(), content: 'signed import', content_type: 'text',
      valid_time: at, transaction_time: at,
    });
    /** A proposal's body as the importing node sends it, or any bytes, to node `to`, signed by `by` (null: not signed). */
    const propose = async (to: number, group: number, body: Buffer, by: PeerSigner | null) => {
      const headers: Record<string, string> = { 'content-type': 'application/x-ndjson', ...(by ? by.signDigest(to, 'POST', proposePath(group), sha256Hex(body)) : {}) };
      const res = await fetch(cluster.node(to).url + proposePath(group), { method: 'POST', headers, body });
      return { status: res.status, body: await res.json() as Record<string, unknown>, leader: res.headers.get('x-strata-leader') };
    };
    const records = async (to: number, group: number, by: PeerSigner | null) => {
      const path = recordsPath(group, false);
      const res = await fetch(cluster.node(to).url + path, { headers: by ? by.sign(to, 'GET', path, undefined) : {} });
      return { status: res.status, text: await res.text() };
    };
    const chunk = (user: string) => importBody({ type: 'import.records', at, records: [recordOf(user) as never] });
    /**
     * The group's leader now, by its own word. Not the directory's from the start of the suite: the
     * placement balances leaders after the first elections, so leadership may have moved since.
     */
    const leaderNow = (g: Placed) => waitFor(`the leader of shard ${g.group_id}`, async () => {
      for (const v of g.voters) {
        const own = (await statusOf(cluster, v)).shards.find((x) => x.shard_id === g.group_id);
        if (own?.role === 'leader') return v;
      }
      return undefined;
    }, 20_000, 100);

    it('refuses a request not signed with the cluster secret (401)', async () => {
      const g = groups[0];
      const leader = await leaderNow(g);
      const user = users.get(g.group_id)![0];
      for (const by of [null, forger]) {
        expect(await propose(leader, g.group_id, chunk(user), by)).toMatchObject({ status: 401, body: { code: 'unauthenticated' } });
        expect((await records(leader, g.group_id, by)).status).toBe(401);
      }
      // signed, but not the body the signature covers
      const res = await fetch(cluster.node(leader).url + proposePath(g.group_id), {
        method: 'POST', body: chunk(user),
        headers: { 'content-type': 'application/x-ndjson', ...signer.signDigest(leader, 'POST', proposePath(g.group_id), sha256Hex(Buffer.from('other'))) },
      });
      expect(res.status).toBe(401);
      // signed for another node of the cluster: refused here (the receiver is signed), before the body is read
      const elsewhere = g.voters.find((v) => v !== leader)!;
      const copied = await fetch(cluster.node(leader).url + proposePath(g.group_id), {
        method: 'POST', body: chunk(user), headers: { 'content-type': 'application/x-ndjson', ...signer.signDigest(elsewhere, 'POST', proposePath(g.group_id), sha256Hex(chunk(user))) },
      });
      expect(copied.status).toBe(401);
    });

    it('refuses a signed proposal with a bad body (400), naming the line', async () => {
      const g = groups[0];
      const leader = await leaderNow(g);
      const user = users.get(g.group_id)![0];
      const other = users.get(groups[1].group_id)![0];
      const bad = async (text: string) => propose(leader, g.group_id, Buffer.from(text), signer);
      const record = JSON.stringify(recordOf(user));
      expect(await bad(`{"type":"events.ingest","at":"${at}"}\n${record}\n`)).toMatchObject({ status: 400, body: { code: 'validation_failed', details: [{ path: '/line/1/type' }] } });
      expect(await bad(`{"type":"import.records","at":"yesterday"}\n${record}\n`)).toMatchObject({ status: 400, body: { details: [{ path: '/line/1/at' }] } });
      expect(await bad(`{"type":"import.records","at":"${at}"}\n`)).toMatchObject({ status: 400, body: { code: 'validation_failed' } });
      expect(await bad(`{"type":"import.records","at":"${at}"}\n{"kind":"event"\n`)).toMatchObject({ status: 400, body: { code: 'invalid_json', details: [{ path: '/line/2' }] } });
      expect(await bad(`{"type":"import.records","at":"${at}"}\n${JSON.stringify({ ...recordOf(user), content_type: 'pdf' })}\n`)).toMatchObject({ status: 400, body: { details: [{ path: '/line/2/content_type' }] } });
      // a record of a user of another group
      expect(await bad(`{"type":"import.records","at":"${at}"}\n${JSON.stringify(recordOf(other))}\n`)).toMatchObject({ status: 400, body: { details: [{ path: '/line/2/user_id' }] } });
    });

    it("proposes a signed chunk on the group's leader only, and serves a group's records only where it is held (503 elsewhere)", async () => {
      const g = groups[0];
      const user = users.get(g.group_id)![0];
      const away = cluster.live().find((n) => !g.voters.includes(n.id))!;
      // asked again if leadership moves between finding the leader and proposing
      const follower = await waitFor('a proposal refused by a follower and taken by the leader', async () => {
        const leader = await leaderNow(g);
        const other = g.voters.find((v) => v !== leader)!;
        const refused = await propose(other, g.group_id, chunk(user), signer);
        expect(refused).toMatchObject({ status: 503, body: { code: 'no_leader' } });
        // the refusal names the leader the follower knows, for the sender to ask next (remote-groups.ts)
        if (refused.leader !== String(leader)) return undefined;
        const taken = await propose(leader, g.group_id, chunk(user), signer);
        if (taken.status === 503) return undefined;
        expect(taken).toMatchObject({ status: 200, body: { imported: { event: 1 } } });
        return other;
      }, 30_000, 200);
      expect((await records(away.id, g.group_id, signer)).status).toBe(503);
      const held = await records(follower, g.group_id, signer);
      expect(held.status).toBe(200);
      const owners = new Set(held.text.split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { user_id: string }).user_id));
      expect(owners.has(user)).toBe(true);
      for (const u of owners) expect(shardOf(u, SHARDS)).toBe(g.group_id);
    });
  });
});
