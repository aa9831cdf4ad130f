/**
 * What apply reads and writes around its handlers (issue 27, docs/performance.md): a batch writes each
 * key's last op only; a command's effects are resolved against what it read before its own writes; the
 * meta keys every command reads (fences, live webhooks) are kept between commands and read again once
 * a batch writes them or a snapshot replaces the state.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BufferSnapshotWriter, bufferSnapshotReader, seededRandom } from '@strata/raft';
import { ApplyContext, PendingWrites, StateDb, StateMachine, type Command, type ProposedEvent, type WebhookRecord } from '../src';
import { digestPairs, dumpState } from '../src/sim/image';

const T0 = '2026-01-01T00:00:00.000Z';
let dir: string;
let n = 0;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'strata-apply-reads-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const openDb = () => StateDb.open(join(dir, `db${n++}`));

describe('PendingWrites.finalOps', () => {
  test('writing each key\'s last op leaves LevelDB as writing every op does', async () => {
    const rnd = seededRandom(2712);
    for (let round = 0; round < 20; round++) {
      const pending = new PendingWrites();
      const [a, b] = [await openDb(), await openDb()];
      try {
        for (let c = 0; c < 8; c++) {
          const ctx = new ApplyContext(c + 1);
          for (let i = 0; i < 10; i++) {
            const sub = (rnd() < 0.5 ? a.meta : a.units) as typeof a.meta;
            const key = `k${Math.floor(rnd() * 6)}`;
            if (rnd() < 0.3) ctx.del(sub, key);
            else ctx.put(sub, key, { round, c, i });
          }
          pending.absorb(ctx.ops);
        }
        const final = pending.finalOps();
        expect(final.length).toBeLessThan(pending.ops.length);
        // every key once, with its last op
        expect(new Set(final.map((op) => `${op.sublevel === a.meta ? 'm' : 'u'}${op.key}`)).size).toBe(final.length);
        await a.level.batch(final as never);
        const other = pending.ops.map((op) => ({ ...op, sublevel: op.sublevel === a.meta ? b.meta : b.units }));
        await b.level.batch(other as never);
        expect(digestPairs(await dumpState(a))).toBe(digestPairs(await dumpState(b)));
      } finally {
        await a.close();
        await b.close();
      }
    }
  });
});

describe('ApplyContext.before', () => {
  test('answers the state before the command, whatever it read and wrote since', async () => {
    const db = await openDb();
    try {
      await db.meta.put('x', 1);
      await db.meta.put('y', 2);
      const pending = new PendingWrites();
      const earlier = new ApplyContext(1, new Map(), pending);
      earlier.put(db.meta, 'y', 3); // an earlier command of the same batch
      pending.absorb(earlier.ops);
      const ctx = new ApplyContext(2, new Map(), pending);
      expect(await ctx.get(db.meta, 'x')).toBe(1);
      ctx.put(db.meta, 'x', 10);
      ctx.put(db.meta, 'y', 20);
      ctx.del(db.meta, 'z');
      await ctx.prefetch(db.meta, ['w']);
      expect(await ctx.get(db.meta, 'x')).toBe(10);
      expect(await ctx.before(db.meta, ['x', 'y', 'z', 'w'])).toEqual([1, 3, undefined, undefined]);
    } finally {
      await db.close();
    }
  });
});

describe('meta keys kept between commands', () => {
  const event = (id: string): ProposedEvent => ({
    event_id: id, user_id: 'u1', stream_id: 's1', content: `said ${id}`, content_type: 'text', org_id: null, agent_id: null, role: null, level: null,
    parent_id: null, task_status: null, task_progress: null, valid_time: T0, transaction_time: T0, metadata: null, assets: [],
  });
  const ingest = (id: string): Command => ({ type: 'events.ingest', user_id: 'u1', stream_id: 's1', at: T0, idempotency: null, events: [event(id)], assets: [] });
  const hook: WebhookRecord = {
    webhook_id: 'wh1', url: 'https://hooks.example/x', events: ['*'], user_ids: null, org_id: null, secret: 'whsec_0123456789abcdef', created_at: T0,
    created_by: { kind: 'api_key', subject: 'k', role: 'admin', org_id: null, user_ids: null }, outbox_max: 100,
  };
  const outbox = async (db: StateDb): Promise<number> => {
    let count = 0;
    for await (const _ of db.webhookOutbox.keys()) count++;
    return count;
  };

  test('a subscription created or deleted by one batch is seen by the next one, and after a snapshot install', async () => {
    const db = await openDb();
    const other = await openDb();
    try {
      const sm = await StateMachine.open(db);
      let index = 0;
      const apply = (commands: Command[]) => sm.applyBatch(commands.map((command) => ({ index: ++index, term: 1, command })));
      await apply([ingest('e1'), ingest('e2')]); // no subscription: read (and kept) as none
      expect(await outbox(db)).toBe(0);
      await apply([{ type: 'webhook.create', record: hook }]);
      await apply([ingest('e3'), ingest('e4')]);
      expect(await outbox(db)).toBe(2);
      // A state without the subscription installed over this one: the kept count must not survive it.
      const plain = await StateMachine.open(other);
      await plain.applyBatch([1, 2, 3, 4, 5].map((i) => ({ index: i, term: 1, command: i === 3 ? null : ingest(`f${i}`) })));
      const image = new BufferSnapshotWriter();
      await plain.snapshot(image);
      await sm.restore(bufferSnapshotReader(image.bytes(), 1024));
      index = 5;
      await apply([ingest('e5')]);
      expect(await outbox(db)).toBe(0);
    } finally {
      await db.close();
      await other.close();
    }
  });

  test('batches that create and delete subscriptions leave the state of commands applied each by a fresh state machine', async () => {
    const commands: Command[] = [
      ingest('e1'), ingest('e2'), { type: 'webhook.create', record: hook }, ingest('e3'), { type: 'webhook.delete', webhook_id: 'wh1', at: T0 }, ingest('e4'),
      { type: 'webhook.create', record: { ...hook, webhook_id: 'wh2' } }, ingest('e5'), ingest('e6'), ingest('e7'),
    ];
    const kept = await openDb();
    const fresh = await openDb();
    try {
      const sm = await StateMachine.open(kept);
      for (let at = 0, size = 1; at < commands.length; at += size, size = (size % 3) + 1) {
        await sm.applyBatch(commands.slice(at, at + size).map((command, i) => ({ index: at + i + 1, term: 1, command })));
      }
      for (const [i, command] of commands.entries()) await (await StateMachine.open(fresh)).apply(i + 1, command, 1);
      expect(await outbox(kept)).toBeGreaterThan(0);
      expect(digestPairs(await dumpState(kept))).toBe(digestPairs(await dumpState(fresh)));
    } finally {
      await kept.close();
      await fresh.close();
    }
  });
});
