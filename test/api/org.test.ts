/**
 * Organization knowledge over real HTTP (CONTRACT §9), on a node with two shards whose contributors
 * live on different shards: the list (filters, sorts, cursor pages), one record, and the metrics are
 * counted over all shards; another org's memory and private memory never appear.
 */
import { StrataClient, type KnowledgeItemView } from '@strata/client';
import { shardOf } from '../../packages/server/src/shards';
import { removeDir, startServer, type ServerProcess } from '../helpers/server-process';

const KEY = 'org-test-admin-key';
const STREAM = '8d7c6b5a-4f3e-4d2c-9b1a-0f9e8d7c6b5a';
const ORG = 'acme';

interface UnitView { id: string; content: string; level: number }

describe('organization knowledge over two shards', () => {
  let server: ServerProcess;
  let client: StrataClient;
  let orgUnits: UnitView[];
  let privateUnit: UnitView;
  let otherOrgUnit: UnitView;

  const units = async (user: string) =>
    (await client.raw<{ memories: UnitView[] }>('GET', `/v1/users/${user}/memories?limit=1000`)).body.memories;
  const get = <T = Record<string, unknown>>(path: string) => client.raw<T & { code?: string }>('GET', path);

  beforeAll(async () => {
    // ada and ben live on different shards of two.
    expect(shardOf('ada', 2)).not.toBe(shardOf('ben', 2));
    server = await startServer({ env: { STRATA_API_KEY: KEY, STRATA_SHARDS: '2', STRATA__CONSOLIDATION__INTERVAL_MS: '50', STRATA__EMBEDDING__PROVIDER: 'hashing' } });
    client = new StrataClient({ baseUrl: server.url, apiKey: KEY });
    await client.ingest('ada', STREAM, { content: 'The deploy pipeline runs on Kubernetes.', org_id: ORG });
    await client.ingest('ada', STREAM, { content: 'Code reviews need two approvals.', org_id: ORG });
    await client.ingest('ben', STREAM, { content: 'The office wifi password rotates monthly.', org_id: ORG });
    await client.ingest('ben', STREAM, { content: 'To restart the build server, first drain the queue, then reboot the machine.', org_id: ORG, agent_id: 'ops-bot', role: 'assistant' });
    await client.ingest('ada', STREAM, { content: 'My daughter starts school in September.' });
    await client.ingest('ben', STREAM, { content: 'Quarterly planning happens in March.', org_id: 'globex' });
    expect((await client.waitUntilReady(30_000, 50)).ready).toBe(true);
    const all = [...(await units('ada')), ...(await units('ben'))];
    orgUnits = all.filter((u) => /Kubernetes|approvals|wifi|build server/.test(u.content) && u.level === 1);
    privateUnit = all.find((u) => u.content.includes('daughter'))!;
    otherOrgUnit = all.find((u) => u.content.includes('Quarterly'))!;
    expect(orgUnits).toHaveLength(4);
  });
  afterAll(async () => {
    await client.close();
    expect(await server.stop()).toBe(0);
    removeDir(server.dataDir);
  });

  it('lists the org\'s knowledge from both shards, newest first, and nothing else', async () => {
    const list = await client.orgKnowledge(ORG);
    const l1 = list.items.filter((i) => i.unit.level === 1);
    expect(l1.map((i) => i.unit.id).sort()).toEqual(orgUnits.map((u) => u.id).sort());
    const ids = list.items.map((i) => i.unit.id);
    expect(ids).not.toContain(privateUnit.id);
    expect(ids).not.toContain(otherOrgUnit.id);
    expect(list.total_count).toBe(list.items.length);
    expect(list.next_cursor).toBeNull();
    const published = list.items.map((i) => i.published_at);
    expect([...published].sort().reverse()).toEqual(published);
    expect(list.summary.contributor_count).toBe(2);
    expect(list.summary.knowledge_count).toBe(list.total_count);
    const wifi = list.items.find((i) => i.unit.content.includes('wifi'))!;
    expect(wifi).toMatchObject({ contributor_user_ids: ['ben'], contribution_count: 1, source_memory_types: ['factual'] });
  });

  it('filters by text, contributor and source type', async () => {
    expect((await client.orgKnowledge(ORG, { q: 'kubernetes PIPELINE' })).items.map((i) => i.unit.content)).toEqual(['The deploy pipeline runs on Kubernetes.']);
    const byBen = await client.orgKnowledge(ORG, { contributor: 'ben' });
    expect(byBen.items.every((i: KnowledgeItemView) => i.contributor_user_ids.includes('ben'))).toBe(true);
    expect(byBen.summary.contributor_count).toBe(1);
    const procedural = await client.orgKnowledge(ORG, { source_type: 'procedural' });
    expect(procedural.items.map((i) => i.unit.content)).toEqual(expect.arrayContaining([expect.stringContaining('build server')]));
    expect(procedural.items.every((i) => i.source_memory_types.includes('procedural'))).toBe(true);
  });

  it('pages with a cursor across shards without gaps or repeats, in every sort', async () => {
    for (const sort of ['published_desc', 'contributions_desc', 'topic_asc'] as const) {
      const whole = await client.orgKnowledge(ORG, { sort, limit: 500 });
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 20; page++) {
        const res = await client.orgKnowledge(ORG, { sort, limit: 1, cursor });
        expect(res.total_count).toBe(whole.total_count);
        seen.push(...res.items.map((i) => i.unit.id));
        if (!res.next_cursor) break;
        cursor = res.next_cursor;
      }
      expect(seen).toEqual(whole.items.map((i) => i.unit.id));
    }
  });

  it('answers 400 for a bad sort, limit or cursor', async () => {
    for (const qs of ['sort=newest', 'limit=0', 'limit=abc', 'cursor=garbage']) {
      const res = await get(`/v1/organizations/${ORG}/knowledge?${qs}`);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('validation_failed');
    }
    const page = await client.orgKnowledge(ORG, { limit: 1 });
    expect((await get(`/v1/organizations/${ORG}/knowledge?sort=topic_asc&cursor=${page.next_cursor}`)).status).toBe(400);
  });

  it('serves one record with its contributions; 404 for private or another org\'s memory', async () => {
    const wifi = orgUnits.find((u) => u.content.includes('wifi'))!;
    const record = await client.orgKnowledgeItem(ORG, wifi.id);
    expect(record.unit).toMatchObject({ id: wifi.id, content: wifi.content, level: 1 });
    expect(record.knowledge.contributions).toEqual([expect.objectContaining({
      source_id: wifi.id, contributor_user_id: 'ben', source_memory_type: 'factual', source_level: 1, source_content_preview: wifi.content,
    })]);
    expect((await get(`/v1/organizations/${ORG}/knowledge/${privateUnit.id}`)).status).toBe(404);
    expect((await get(`/v1/organizations/${ORG}/knowledge/${otherOrgUnit.id}`)).status).toBe(404);
    expect((await get(`/v1/organizations/globex/knowledge/${otherOrgUnit.id}`)).status).toBe(200);
  });

  it('counts metrics over all shards', async () => {
    const list = await client.orgKnowledge(ORG, { limit: 500 });
    const metrics = await client.orgKnowledgeMetrics(ORG);
    expect(metrics).toMatchObject({
      org_id: ORG, knowledge_count: list.total_count, contribution_count: list.summary.contribution_count, contributor_count: 2,
    });
    expect(metrics.source_type_distribution.reduce((n, kv) => n + kv.value, 0)).toBe(metrics.contribution_count);
    expect(metrics.source_type_distribution.map((kv) => kv.key).sort()).toEqual(['factual', 'procedural']);
    expect(await client.orgKnowledgeMetrics('nobody')).toMatchObject({ knowledge_count: 0, contribution_count: 0, contributor_count: 0 });
  });

  it('refuses credentials of another org or limited to users', async () => {
    const otherOrg = await client.createApiKey({ org_id: 'globex', role: 'read' });
    const userOnly = await client.createApiKey({ user_ids: ['ada'], role: 'read' });
    const own = await client.createApiKey({ org_id: ORG, role: 'read' });
    for (const [key, status] of [[otherOrg.key, 403], [userOnly.key, 403], [own.key, 200]] as const) {
      const c = new StrataClient({ baseUrl: server.url, apiKey: key });
      try {
        expect((await c.raw('GET', `/v1/organizations/${ORG}/knowledge`)).status).toBe(status);
        expect((await c.raw('GET', `/v1/organizations/${ORG}/knowledge/metrics`)).status).toBe(status);
      } finally {
        await c.close();
      }
    }
  });
});
