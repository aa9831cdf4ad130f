/**
 * Every reply's keys against CONTRACT.md's field lists (issue 14: strict clients). Each shape is the
 * contract's list plus the extensions the contract or docs name, written out here, so a key added to a
 * reply (or one lost) fails this test until the contract and this list say so.
 */
import { randomUUID } from 'node:crypto';
import { StrataClient } from '@strata/client';
import { removeDir, startServer, type ServerProcess } from '../helpers/server-process';

const KEY = 'shapes-test-admin-key';
const S = randomUUID();
const USER = 'shapes';
const ORG = 'shape-org';

const keys = (o: unknown) => Object.keys(o as object).sort();
const list = (...names: string[]) => [...names].sort();

const UNIT = list('id', 'memory_type', 'content', 'keywords', 'level', 'stream_id', 'valid_time', 'transaction_time', 'references', 'assets');
/** the stored-memory listing adds when and by what a unit stopped being current, and its importance (§2 extensions) */
const LISTED_UNIT = list(...UNIT, 'retired_at', 'superseded_by', 'importance');
/** §2 event listing, plus `assets` (an extension: the media assets an event carries) */
const EVENT = list('event_id', 'content', 'content_type', 'org_id', 'agent_id', 'role', 'level', 'parent_id', 'task_status', 'task_progress',
  'valid_time', 'transaction_time', 'metadata', 'assets');

describe('reply shapes match the contract', () => {
  let server: ServerProcess;
  let client: StrataClient;
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await client.raw<Record<string, unknown>>(method, path, { body });
    expect([path, res.status]).toEqual([path, 200]);
    return res.body;
  };

  beforeAll(async () => {
    server = await startServer({ env: { STRATA_API_KEY: KEY, STRATA__CONSOLIDATION__INTERVAL_MS: '50', STRATA__EMBEDDING__PROVIDER: 'hashing' } });
    client = new StrataClient({ baseUrl: server.url, apiKey: KEY });
  });
  afterAll(async () => {
    await client.close();
    expect(await server.stop()).toBe(0);
    removeDir(server.dataDir);
  });

  it('ingest, listing, retrieval, context, backlog, maintenance, graph and org replies', async () => {
    const one = await call('POST', `/v1/users/${USER}/streams/${S}/events`, { content: 'Rita lives in Lisbon and teaches piano.' });
    expect(keys(one)).toEqual(list('status', 'event_id'));
    const batch = await call('POST', `/v1/users/${USER}/streams/${S}/events/batch`, {
      events: [{ content: 'Rita moved to Porto in 2024.' }, { content: 'Rita shares the studio calendar with the team.', org_id: ORG }],
    });
    expect(keys(batch)).toEqual(list('status', 'event_ids', 'count'));
    const pending = await call('GET', '/v1/status/pending');
    expect(keys(pending)).toEqual(list('pending', 'ready', 'failed', 'oldest_pending_ms'));
    expect((await client.waitUntilReady(30_000, 50)).ready).toBe(true);

    const events = await call('GET', `/v1/users/${USER}/streams/${S}/events`);
    expect(keys(events)).toEqual(list('events', 'next_cursor'));
    for (const e of events.events as object[]) expect(keys(e)).toEqual(EVENT);

    const retrieved = await call('POST', `/v1/users/${USER}/streams/${S}/retrieve`, { query: 'Where does Rita live?', org_id: ORG });
    expect(keys(retrieved)).toEqual(list('stream_id', 'query', 'results', 'query_time_ms'));
    const results = retrieved.results as { unit: object }[];
    expect(results.length).toBeGreaterThan(0);
    for (const r of results) {
      expect(keys(r)).toEqual(list('unit', 'score'));
      expect(keys(r.unit)).toEqual(UNIT);
    }

    // explain (extension): each result also says why it ranked there
    const explained = await call('POST', `/v1/users/${USER}/streams/${S}/retrieve`, { query: 'Where does Rita live?', explain: true });
    for (const r of explained.results as { unit: object; why: { lists: Record<string, number> } }[]) {
      expect(keys(r)).toEqual(list('unit', 'score', 'why'));
      expect(keys(r.why)).toEqual(expect.arrayContaining(['lists', 'fused', 'recency', 'importance', 'boosts']));
      expect(Object.values(r.why.lists).every((rank) => Number.isInteger(rank) && rank >= 1)).toBe(true);
    }

    const context = await call('POST', '/v1/memory/context', { user_id: USER, query: 'Where does Rita live?' });
    expect(keys(context)).toEqual(list('query', 'format', 'strategy', 'token_budget', 'used_token_estimate', 'matched_count', 'included_count',
      'truncated', 'context', 'hits', 'query_time_ms'));
    for (const h of context.hits as object[]) expect(keys(h)).toEqual(list('id', 'level', 'memory_type', 'domain', 'score'));

    const memories = await call('GET', `/v1/users/${USER}/memories`);
    const units = memories.memories as { id: string }[];
    for (const u of units) expect(keys(u)).toEqual(LISTED_UNIT);
    const edge = await call('POST', `/v1/users/${USER}/graph/edges`, { source_id: units[0].id, target_id: units[1].id, relation: 'RelatedTo' });
    expect(keys(edge)).toEqual(list('status', 'edge_id'));

    // org knowledge before anything is forgotten or deleted
    const knowledge = await call('GET', `/v1/organizations/${ORG}/knowledge`);
    expect(keys(knowledge)).toEqual(list('items', 'total_count', 'next_cursor', 'summary'));
    expect(keys(knowledge.summary)).toEqual(list('knowledge_count', 'contribution_count', 'contributor_count'));
    const items = knowledge.items as { unit: object }[];
    expect(items.length).toBeGreaterThan(0);
    for (const item of items) {
      expect(keys(item)).toEqual(list('unit', 'contributor_user_ids', 'contribution_count', 'source_memory_types', 'published_at'));
      expect(keys(item.unit)).toEqual(list('id', 'content', 'keywords', 'level', 'transaction_time'));
    }
    const detail = await call('GET', `/v1/organizations/${ORG}/knowledge/${(items[0].unit as { id: string }).id}`);
    expect(keys(detail)).toEqual(list('unit', 'knowledge'));
    for (const c of (detail.knowledge as { contributions: object[] }).contributions) {
      expect(keys(c)).toEqual(list('source_id', 'contributor_user_id', 'source_memory_type', 'source_level', 'source_content_preview', 'activated_at'));
    }

    const preview = await call('POST', `/v1/users/${USER}/memories/semantic/preview`, { instruction: 'forget that Rita teaches piano', mode: 'forget' });
    // forget_mode (extension): which forgetting executing the plan will do, logical or hard
    expect(keys(preview)).toEqual(list('plan_id', 'instruction', 'kind', 'forget_mode', 'created_at', 'expires_at', 'forget_preview'));
    const fp = preview.forget_preview as { memory_units: object[]; matched_events: object[] };
    // matches (extension): why each unit was matched, in the order of memory_units
    expect(keys(fp)).toEqual(list('memory_units', 'matched_events', 'matches'));
    for (const u of fp.memory_units) expect(keys(u)).toEqual(LISTED_UNIT);
    for (const e of fp.matched_events) expect(keys(e)).toEqual(list('id', 'content', 'transaction_time'));
    const executed = await call('POST', `/v1/users/${USER}/memories/semantic/execute`, { plan_id: preview.plan_id, confirm: true });
    expect(keys(executed)).toEqual(list('status', 'plan_id', 'kind', 'affected_unit_ids'));
    // a unit of no org, so the org knowledge below keeps its item
    const porto = (units as { id: string; content: string }[]).find((u) => u.content.includes('Porto'))!;
    const deleted = await call('DELETE', `/v1/users/${USER}/memories/${porto.id}`);
    expect(keys(deleted)).toEqual(list('status', 'memory_id', 'mode'));

    const cluster = await call('GET', '/v1/cluster/status');
    expect(keys(cluster)).toEqual(expect.arrayContaining(['node_id', 'shards']));
    for (const shard of cluster.shards as { members: object[] }[]) {
      expect(keys(shard)).toEqual(expect.arrayContaining(['shard_id', 'leader', 'term', 'role', 'commit_index', 'applied_index', 'members']));
      for (const m of shard.members) expect(keys(m)).toEqual(expect.arrayContaining(['node_id', 'url', 'voter', 'match_index']));
    }
  });
});
