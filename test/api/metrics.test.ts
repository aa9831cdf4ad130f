/**
 * /metrics of a real node after real traffic (issue 17, item 2): Raft per shard group, consolidation
 * (backlog, drain, failures), retrieval latency by stage and the index cache, with values that follow
 * from what the test did. The three-node view (one leader, equal commit indexes, peer round trips) is
 * test/cluster/metrics.test.ts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { StrataClient } from '@strata/client';
import { waitFor } from '../helpers/cluster';
import { scrape } from '../helpers/prometheus';
import { REPO_ROOT, removeDir, runServerExpectingExit, startServer, tempDir, type ServerProcess } from '../helpers/server-process';

const KEY = 'metrics-test-admin-key';
const STREAM = '6f1e2d3c-4b5a-4987-a6b5-c4d3e2f10a9b';
const USER = 'mira';
const EVENTS = 12;
const RETRIEVALS = 5;

describe('metrics of a single node', () => {
  const dataDir = tempDir();
  const env = {
    STRATA_API_KEY: KEY, STRATA_SHARDS: '2', STRATA__EMBEDDING__PROVIDER: 'hashing', STRATA__CONSOLIDATION__INTERVAL_MS: '50',
  };
  let server: ServerProcess;
  let client: StrataClient;

  beforeAll(async () => {
    server = await startServer({ dataDir, env });
    client = new StrataClient({ baseUrl: server.url, apiKey: KEY });
    for (let i = 0; i < EVENTS; i++) await client.ingest(USER, STREAM, { content: `Mira planted ${i + 2} rows of basil by the kitchen door.` });
    expect((await client.waitUntilReady(30_000, 50)).pending).toBe(0);
    for (let i = 0; i < RETRIEVALS; i++) await client.retrieve(USER, STREAM, { query: 'where is the basil?', limit: 5 });
  });
  afterAll(async () => {
    await client.close();
    if (server) expect(await server.stop()).toBe(0);
    removeDir(dataDir);
  });

  it('reports each shard group: leader, term, indexes, log, proposals, elections', async () => {
    // A scrape may fall between an append and its commit, or a commit and its apply (background
    // proposals: reinforcement, insights): wait for a quiet moment, when all three agree.
    const m = await waitFor('last == commit == applied on both shards', async () => {
      const s = await scrape(server.url);
      return ['0', '1'].every((shard) => {
        const commit = s.value('strata_raft_commit_index', { shard });
        return s.value('strata_raft_applied_index', { shard }) === commit && s.value('strata_raft_last_index', { shard }) === commit;
      }) && s;
    });
    for (const shard of ['0', '1']) {
      expect(m.value('strata_raft_is_leader', { shard })).toBe(1);
      expect(m.value('strata_raft_leader_id', { shard })).toBe(1); // node id 1 by default
      expect(m.value('strata_raft_voters', { shard })).toBe(1);
      expect(m.value('strata_raft_term', { shard })).toBeGreaterThanOrEqual(1);
      expect(m.value('strata_raft_commit_index', { shard })).toBeGreaterThan(0);
      expect(m.value('strata_raft_last_index', { shard })).toBe(m.value('strata_raft_commit_index', { shard }));
      // nothing compacted yet: the log holds every entry (the conf entry, no-ops, commands)
      expect(m.value('strata_raft_log_entries', { shard })).toBe(m.value('strata_raft_last_index', { shard }));
      expect(m.value('strata_raft_elections_started_total', { shard })).toBe(1);
      expect(m.value('strata_raft_elections_won_total', { shard })).toBe(1);
      expect(m.value('strata_raft_snapshot_sends_total', { shard })).toBe(0);
      expect(m.value('strata_raft_snapshot_installs_total', { shard })).toBe(0);
    }
    // the user's shard took the ingests and the consolidations: proposals and log bytes to match
    const home = m.all('strata_raft_proposals_total').sort((a, b) => b.value - a.value)[0];
    expect(home.value).toBeGreaterThanOrEqual(EVENTS + 1);
    expect(m.value('strata_raft_log_bytes', { shard: home.labels.shard })).toBeGreaterThan(EVENTS * 50);
    // held in memory: all of it here (under raft.held_payload_bytes), never more than the log
    expect(m.value('strata_raft_log_memory_bytes', { shard: home.labels.shard })).toBe(m.value('strata_raft_log_bytes', { shard: home.labels.shard }));
    expect(m.all('strata_raft_proposals_failed_total')).toEqual([]);
    // a single node has no peers: no round trips, no peer errors
    expect(m.all('strata_raft_peer_rtt_seconds_count')).toEqual([]);
    expect(m.value('strata_raft_peer_send_errors_total')).toBe(0);
    expect(m.value('strata_raft_synced_writes_total')).toBeGreaterThan(0);
    expect(m.types.get('strata_raft_proposals_total')).toBe('counter');
    // late ticks (a loop blocked or starved for an election timeout): counted, whatever this machine did meanwhile
    expect(m.types.get('strata_raft_tick_stalls_total')).toBe('counter');
    expect(m.types.get('strata_raft_commit_index')).toBe('gauge');
    // every ingest was proposed here and committed: one commit latency each (at least); the applied
    // batches hold the ingests and at most every entry the shard applied
    const shard = home.labels.shard;
    expect(m.value('strata_raft_commit_seconds_count', { shard })).toBeGreaterThanOrEqual(EVENTS);
    expect(m.value('strata_raft_apply_batch_entries_sum', { shard })).toBeGreaterThanOrEqual(EVENTS);
    expect(m.value('strata_raft_apply_batch_entries_sum', { shard })).toBeLessThanOrEqual(m.value('strata_raft_applied_index', { shard }));
    expect(m.value('strata_raft_apply_seconds_count', { shard })).toBe(m.value('strata_raft_apply_batch_entries_count', { shard }));
  });

  it('reports consolidation: backlog drained, events consolidated, no failures', async () => {
    const m = await scrape(server.url);
    for (const shard of ['0', '1']) {
      expect(m.value('strata_consolidation_backlog', { shard })).toBe(0);
      expect(m.value('strata_consolidation_failures_total', { shard, kind: 'batch' })).toBe(0);
      expect(m.value('strata_consolidation_failures_total', { shard, kind: 'gave_up' })).toBe(0);
    }
    expect(m.all('strata_consolidation_events_total').reduce((n, s) => n + s.value, 0)).toBe(EVENTS);
    const batches = m.all('strata_consolidation_batches_total').reduce((n, s) => n + s.value, 0);
    expect(batches).toBeGreaterThanOrEqual(1);
    expect(m.all('strata_consolidation_batch_seconds_count').reduce((n, s) => n + s.value, 0)).toBe(batches);
    // each batch's lag (its oldest event's wait to become memory) observed once
    expect(m.all('strata_consolidation_lag_seconds_count').reduce((n, s) => n + s.value, 0)).toBe(batches);
    expect(m.types.get('strata_consolidation_events_total')).toBe('counter');
  });

  it('reports retrieval latency by stage, one observation per retrieval and stage', async () => {
    const m = await scrape(server.url);
    for (const stage of ['index_load', 'embed', 'pending', 'turn', 'search', 'fuse', 'total']) {
      expect(m.value('strata_retrieval_stage_seconds_count', { stage })).toBe(RETRIEVALS);
    }
    expect(m.all('strata_retrieval_stage_seconds_count', { stage: 'arbitrate' })).toEqual([]); // not asked for
    // the whole takes at least as long as its sequential parts
    const sum = (stage: string) => m.value('strata_retrieval_stage_seconds_sum', { stage });
    expect(sum('total')).toBeGreaterThanOrEqual(sum('search') + sum('fuse') + sum('pending'));
    expect(m.value('strata_retrieval_stage_seconds_bucket', { stage: 'total', le: '+Inf' })).toBe(RETRIEVALS);
    expect(m.value('strata_index_cache_entries')).toBe(1);
    expect(m.value('strata_index_cache_bytes')).toBeGreaterThan(0);
    expect(m.value('strata_index_graphs_building')).toBe(0); // a small user's search is exact: no graph to build
  });

  it('exports every series the Grafana dashboard (deploy/grafana/strata.json) queries', async () => {
    const m = await scrape(server.url);
    const dashboard = JSON.parse(readFileSync(join(REPO_ROOT, 'deploy/grafana/strata.json'), 'utf8')) as { panels: { targets?: { expr: string }[] }[] };
    const exprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
    expect(exprs.length).toBeGreaterThan(20);
    const names = new Set(exprs.flatMap((e) => e.match(/\bstrata_[a-z0-9_]+/g) ?? []));
    // a histogram is queried through its _bucket/_count/_sum series
    const missing = [...names].filter((n) => !m.types.has(n) && !(m.types.get(n.replace(/_(bucket|count|sum)$/, '')) === 'histogram'));
    expect(missing).toEqual([]);
  });

  it('counts the election of a restart, with a higher term', async () => {
    const before = await scrape(server.url);
    expect(await server.stop()).toBe(0);
    server = await startServer({ dataDir, env });
    // Leading comes first, the commit of the new term's no-op a flush later: wait for both (a scrape
    // in between is right to show a leader whose commit index has not moved yet).
    const after = await waitFor('shard 0 led again and committed its no-op', async () => {
      const s = await scrape(server.url);
      return s.value('strata_raft_is_leader', { shard: '0' }) === 1 && s.value('strata_raft_commit_index', { shard: '0' }) === s.value('strata_raft_last_index', { shard: '0' }) && s;
    });
    // counters restart with the process; the term does not
    expect(after.value('strata_raft_elections_started_total', { shard: '0' })).toBe(1);
    expect(after.value('strata_raft_elections_won_total', { shard: '0' })).toBe(1);
    expect(after.value('strata_raft_term', { shard: '0' })).toBe(before.value('strata_raft_term', { shard: '0' }) + 1);
    expect(after.value('strata_raft_commit_index', { shard: '0' })).toBeGreaterThan(before.value('strata_raft_commit_index', { shard: '0' }));
  });

  it('refuses an OTLP endpoint that is not an http(s) URL, naming the key', async () => {
    const dir = tempDir();
    const { code, output } = await runServerExpectingExit({ STRATA_DATA_DIR: dir, STRATA__TELEMETRY__OTLP_ENDPOINT: 'collector:4318' });
    removeDir(dir);
    expect(code).not.toBe(0);
    expect(output).toContain('telemetry.otlp_endpoint');
  });
});
