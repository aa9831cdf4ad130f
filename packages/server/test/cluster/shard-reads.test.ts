/**
 * The checks of a shard-read request received from another node (cluster/shard-reads.ts,
 * cluster/read-queries.ts): what the asking node sends parses back to the same arguments, and anything
 * else is a 400 naming the field (the multi-process side is test/cluster/placement-reads.test.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fnv1a32, openExportSnapshot, rangeKey, shardRecords, StateDb, StateMachine, StrataError, type CommandLog } from '@strata/store';
import { parseReadArgs, READ_QUERIES, type ReadName } from '../../src/cluster/read-queries';
import { parseShardReadRequest, ShardReads } from '../../src/cluster/shard-reads';
import { ShardRouter, type Shard } from '../../src/shards';

const PLAN = '6f1e2d3c-4b5a-4697-8877-665544332211';
const query = { q: 'tide', contributor: null, source_type: null, sort: 'contributions_desc', limit: 5, cursor: { sort: 'contributions_desc', key: [3, '2026-01-01T00:00:00.000Z'], id: PLAN } };

/** Arguments as each call site sends them. */
const SENT: Record<ReadName, unknown> = {
  usersOfOrg: { org_id: 'acme' },
  userOrg: { user_id: 'ana' },
  userHasData: { user_id: 'ana' },
  userIds: { after: null, limit: 51 },
  userRows: { user_ids: ['ana', 'bob'] },
  pending: { scope: { org_id: null, user_ids: null } },
  failed: { after: '000000000000000000042', limit: 101, scope: { org_id: 'acme', user_ids: ['ana'] } },
  orgKnowledgePage: { org_id: 'acme', query },
  orgKnowledgePartial: { org_id: 'acme' },
  orgKnowledgeItem: { org_id: 'acme', id: PLAN },
  orgIndexEntries: { org_id: 'acme' },
  webhookDeliveries: { webhook_id: PLAN, limit: 50 },
  semanticPlanOwner: { plan_id: PLAN },
};

function status(fn: () => unknown): number | 'ok' {
  try {
    fn();
    return 'ok';
  } catch (err) {
    if (err instanceof StrataError) return err.status;
    throw err;
  }
}

describe('shard-read requests', () => {
  it('parses what a node sends: every registered read, its arguments through JSON unchanged', () => {
    expect(Object.keys(SENT).sort()).toEqual(Object.keys(READ_QUERIES).sort());
    for (const [name, args] of Object.entries(SENT)) {
      const wire = JSON.parse(JSON.stringify({ query: name, args, groups: [2, 0], linearizable: true }));
      const req = parseShardReadRequest(wire, 3);
      expect(req).toEqual({ query: name, args, groups: [2, 0], linearizable: true });
      expect([name, parseReadArgs(req.query, req.args)]).toEqual([name, args]);
    }
    expect(parseShardReadRequest({ query: 'pending', args: { scope: { org_id: null, user_ids: null } }, groups: [1] }, 2).linearizable).toBe(false);
  });

  it('answers 400 for a request that does not fit, never anything else', () => {
    const bad: unknown[] = [
      null, [], 'pending', 7, {}, { query: 'nope', args: {}, groups: [0] }, { query: 'toString', args: {}, groups: [0] }, { query: 'pending', args: {} },
      { query: 'pending', args: {}, groups: [] }, { query: 'pending', args: {}, groups: [3] }, { query: 'pending', args: {}, groups: [-1] },
      { query: 'pending', args: {}, groups: [1, 1] }, { query: 'pending', args: {}, groups: ['0'] }, { query: 'pending', args: {}, groups: [0, 1, 2, 0] },
      { query: 'pending', args: {}, groups: [0], linearizable: 1 },
    ];
    for (const body of bad) expect([JSON.stringify(body), status(() => parseShardReadRequest(body, 3))]).toEqual([JSON.stringify(body), 400]);
  });

  it('answers 400 for arguments that do not fit each read', () => {
    const bad: [ReadName, unknown][] = [
      ['usersOfOrg', null], ['usersOfOrg', []], ['usersOfOrg', {}], ['usersOfOrg', { org_id: '' }], ['usersOfOrg', { org_id: 'x'.repeat(8193) }],
      ['userOrg', { user_id: 5 }], ['userIds', { after: null, limit: 0 }], ['userIds', { after: 3, limit: 5 }], ['userIds', { after: null, limit: 1.5 }],
      ['userRows', { user_ids: null }], ['userRows', { user_ids: [''] }], ['pending', { scope: null }], ['pending', {}],
      ['pending', { scope: { org_id: 3, user_ids: null } }], ['pending', { scope: { org_id: null, user_ids: 'ana' } }], ['pending', { scope: { org_id: null } }],
      ['failed', { after: 'x', limit: 5, scope: { org_id: null, user_ids: null } }], ['failed', { after: null, limit: 5 }],
      ['orgKnowledgePage', { org_id: 'acme' }], ['orgKnowledgePage', { org_id: 'acme', query: { ...query, sort: 'sideways' } }],
      ['orgKnowledgePage', { org_id: 'acme', query: { ...query, limit: 0 } }], ['orgKnowledgePage', { org_id: 'acme', query: { ...query, q: 3 } }],
      ['orgKnowledgePage', { org_id: 'acme', query: { ...query, cursor: { sort: 'topic_asc', key: ['a'], id: PLAN } } }],
      ['orgKnowledgePage', { org_id: 'acme', query: { ...query, cursor: 'abc' } }],
      ['orgKnowledgeItem', { org_id: 'acme' }], ['webhookDeliveries', { webhook_id: PLAN, limit: 0 }], ['semanticPlanOwner', { plan_id: null }],
    ];
    for (const [name, args] of bad) expect([name, JSON.stringify(args), status(() => parseReadArgs(name, args))]).toEqual([name, JSON.stringify(args), 400]);
  });
});

describe('reads over groups with a gap in their ids (a retired group removed)', () => {
  let dir: string;
  const dbs: StateDb[] = [];
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'strata-shard-reads-'));
  });
  afterAll(async () => {
    for (const db of dbs) await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads group 2 from its own replica, answers it when another node asks, and refuses a group not open here (503, not 500)', async () => {
    const at = '2026-01-01T00:00:00.000Z';
    const shards: Shard[] = [];
    for (const id of [0, 2]) {
      const db = await StateDb.open(join(dir, `shard-${id}`));
      dbs.push(db);
      const sm = await StateMachine.open(db);
      const user = `user-of-${id}`;
      await sm.apply(1, {
        type: 'events.ingest', user_id: user, stream_id: 's', at, idempotency: null, assets: [],
        events: [{ event_id: `e${id}`, user_id: user, stream_id: 's', content: 'hi', content_type: 'text', role: 'user', ts: at, metadata: {}, org_id: null }],
      } as never);
      shards.push({ id, db, sm, log: {} as CommandLog });
    }
    // group 1 was merged into 0 and removed: this node holds groups 0 and 2
    const reads = new ShardReads(new ShardRouter(shards, { groupOf: () => 0 }), 1000);
    expect(await reads.each('userIds', { after: null, limit: 10 })).toEqual([['user-of-0'], ['user-of-2']]);
    expect(await reads.one(2, 'userIds', { after: null, limit: 10 })).toEqual(['user-of-2']);
    const asked = await reads.answer({ query: 'userIds', args: { after: null, limit: 10 }, groups: [2, 1] });
    expect(asked.results).toEqual([
      { group: 2, ok: true, value: ['user-of-2'] },
      { group: 1, ok: false, code: 'no_leader', error: 'This node does not hold shard 1.' },
    ]);
    // an id past every group of this node is not a group: the body is refused (400)
    await expect(reads.answer({ query: 'userIds', args: { after: null, limit: 10 }, groups: [3] })).rejects.toMatchObject({ status: 400 });
  });
});

describe('listings during a hand-over (between the copy and the old group\'s drop)', () => {
  let dir: string;
  const dbs: StateDb[] = [];
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'strata-shard-reads-handover-'));
  });
  afterAll(async () => {
    for (const db of dbs) await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('count a moved user once: each group keeps the users the key-range directory assigns to it', async () => {
    const at = '2026-01-01T00:00:00.000Z';
    const ingest = (user: string, id: string) => ({
      type: 'events.ingest', user_id: user, stream_id: 's', at, idempotency: null, assets: [],
      events: [{ event_id: id, user_id: user, stream_id: 's', content: 'hi', content_type: 'text', role: 'user', ts: at, metadata: {}, org_id: null, assets: [] }],
    }) as never;
    // 'mover' was in group 0 and is handed over to group 1: the copy is in group 1, the commit made the
    // directory name group 1, and group 0 (fenced) has not dropped its records yet
    const base = 1;
    const key = rangeKey(fnv1a32('mover'), base);
    const shards: Shard[] = [];
    for (const id of [0, 1]) {
      const db = await StateDb.open(join(dir, `shard-${id}`));
      dbs.push(db);
      const sm = await StateMachine.open(db);
      let index = 0;
      for (let i = 0; i < 3; i++) await sm.apply(++index, ingest('mover', `m${i}`));
      await sm.apply(++index, ingest(`stays-in-${id}`, `s${id}`));
      if (id === 0) await sm.apply(++index, { type: 'range.fence', at, fence: { base, start: key, end: key + 1, new_group: 1 } } as never);
      shards.push({ id, db, sm, log: {} as CommandLog });
    }
    const directory = { groupOf: (user: string) => (user === 'mover' || user === 'stays-in-1' ? 1 : 0) };
    const reads = new ShardReads(new ShardRouter(shards, directory), 1000);

    // the backlog: 3 events of the mover and one of each other user, not 3 more from the old group's copy
    const pending = await reads.each('pending', { scope: { org_id: null, user_ids: null } });
    expect(pending.map((p) => p.pending)).toEqual([1, 4]);
    expect(await reads.each('pending', { scope: { org_id: null, user_ids: ['mover'] } })).toMatchObject([{ pending: 0 }, { pending: 3 }]);
    // a node asked for group 0 by another answers the same
    expect((await reads.answer({ query: 'pending', args: { scope: { org_id: null, user_ids: null } }, groups: [0] })).results)
      .toMatchObject([{ group: 0, ok: true, value: { pending: 1 } }]);

    // an export of every user reads each group's users once (store shardRecords with the directory's filter)
    const exported: string[] = [];
    for (const shard of shards) {
      const snapshot = openExportSnapshot(shard.db);
      for await (const r of shardRecords(shard.db, snapshot, (user) => directory.groupOf(user) === shard.id)) {
        if (r.kind === 'event') exported.push(`${shard.id}:${r.user_id}:${r.event_id}`);
      }
      await snapshot.close();
    }
    expect(exported.sort()).toEqual(['0:stays-in-0:s0', '1:mover:m0', '1:mover:m1', '1:mover:m2', '1:stays-in-1:s1']);
  });
});
