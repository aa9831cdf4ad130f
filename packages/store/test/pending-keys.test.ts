import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BufferSnapshotWriter, bufferSnapshotReader, seededRandom } from '@strata/raft';
import {
  PendingKeys, pendingOfUser, pendingUsersFrom, settle,
  type ConsolidateUsersCommand, type ConsolidationFailedCommand, type MemoryDeleteCommand, type PendingQueue, type StateDb,
} from '../src';
import { ingestOf, openNode } from './helpers/local-node';

/**
 * The consolidation worker reads its queues through PendingKeys (the backlog's keys in memory, kept by
 * the apply effects) instead of walking the consumed entries' tombstones (docs/performance.md, issue 27).
 * Real LevelDB and LocalLog, thousands of entries consumed: at every tick the hint answers what the
 * scans answer, and every event is served once, in its user's order, none skipped.
 */

const T0 = '2026-01-01T00:00:00.000Z';
// Key order is byte order: users whose ids UTF-16 `<` would order otherwise (keys.ts compareKeys).
const USERS = ['ana', 'bob', 'cy', 'dee', 'eli', 'fay', 'gus', 'u\u00fc', 'u\ue000', 'u\u{1f600}', 'zed'];

/** A seeded random source (the raft package's mulberry32): the same run every time. */
const random = seededRandom;

/** What the worker read before PendingKeys: one seek per user, then each user's oldest entries. */
async function scanned(db: StateDb, after: string | null, maxUsers: number, limit: number): Promise<PendingQueue[]> {
  const users = await pendingUsersFrom(db, after, maxUsers);
  return Promise.all(users.map(async (user_id) => ({ user_id, entries: await pendingOfUser(db, user_id, limit) })));
}

const refs = (q: PendingQueue) => q.entries.map((e) => ({ seq: e.seq, event_id: e.event_id }));

describe('PendingKeys', () => {
  let dir: string;
  beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'strata-pending-keys-')); });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  for (const [name, maxEntries] of [['held in memory', 100_000], ['over its size bound now and then (scans instead)', 12]] as const) {
    it(`serves every event once, in its user's order, after thousands of consumptions (${name})`, async () => {
      const node = await openNode(dir);
      const keys = new PendingKeys(node.db, node.sm, maxEntries);
      const rand = random(27);
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
      /** per user: its events in ingest order, and what left the backlog (consumed, failed or deleted) in order */
      const ingested = new Map<string, string[]>(USERS.map((u) => [u, []]));
      const served = new Map<string, string[]>(USERS.map((u) => [u, []]));
      const deleted = new Set<string>();
      let cursor: string | null = null;
      let n = 0;
      let consumed = 0;
      try {
        const tick = async (maxUsers: number, limit: number): Promise<PendingQueue[]> => {
          const hinted = await keys.queues(cursor, maxUsers, limit);
          expect(hinted).toEqual(await scanned(node.db, cursor, maxUsers, limit));
          if (hinted.length > 0) cursor = hinted[hinted.length - 1].user_id;
          return hinted;
        };
        for (let t = 0; t < 700; t++) {
          for (let r = Math.floor(rand() * 4); r > 0; r--) {
            const user = pick(USERS);
            const ids = Array.from({ length: 1 + Math.floor(rand() * 3) }, () => `${user}-${n++}`);
            settle(await node.log.propose(ingestOf(user, ids, T0)));
            ingested.get(user)!.push(...ids);
          }
          if (rand() < 0.05) {
            // an event deleted while pending: it leaves the backlog out of order
            const user = pick(USERS);
            const waiting = (await pendingOfUser(node.db, user, 50)).map((p) => p.event_id);
            if (waiting.length > 0) {
              const id = pick(waiting);
              const cmd: MemoryDeleteCommand = { type: 'memory.delete', user_id: user, at: T0, unit_ids: [], event_ids: [id], require_units: false };
              settle(await node.log.propose(cmd));
              deleted.add(id);
            }
          }
          if (t === 350) {
            // a snapshot installed: the hint is dropped and built again
            const image = new BufferSnapshotWriter();
            await node.sm.snapshot(image);
            await node.sm.restore(bufferSnapshotReader(image.bytes()));
          }
          const queues = await tick(1 + Math.floor(rand() * 4), 1 + Math.floor(rand() * 4));
          const batches = queues.filter(() => rand() < 0.85);
          if (batches.length === 0) continue;
          if (rand() < 0.1) {
            // consolidation gives up on a user's oldest entries: they leave the backlog as consumed ones do
            const q = batches[0];
            const cmd: ConsolidationFailedCommand = { type: 'memory.consolidation_failed', user_id: q.user_id, at: T0, entries: refs(q), error: 'test', attempts: 3 };
            settle(await node.log.propose(cmd));
            served.get(q.user_id)!.push(...q.entries.map((e) => e.event_id));
            continue;
          }
          const cmd: ConsolidateUsersCommand = {
            type: 'memory.consolidate_users', at: T0, users: batches.map((q) => ({
              user_id: q.user_id, consumed: refs(q), embedder_id: 'emb', method: 'offline', units: [], reinforced: [], retired: [], edges: [], dropped: [],
            })),
          };
          for (const answer of settle(await node.log.propose(cmd)).users) expect(settle(answer).applied).toBe(true);
          for (const q of batches) served.get(q.user_id)!.push(...q.entries.map((e) => e.event_id));
          consumed += batches.reduce((s, q) => s + q.entries.length, 0);
        }
        // the rest, drained
        for (let queues = await tick(4, 8); queues.length > 0; queues = await tick(4, 8)) {
          const cmd: ConsolidateUsersCommand = {
            type: 'memory.consolidate_users', at: T0, users: queues.map((q) => ({
              user_id: q.user_id, consumed: refs(q), embedder_id: 'emb', method: 'offline', units: [], reinforced: [], retired: [], edges: [], dropped: [],
            })),
          };
          settle(await node.log.propose(cmd));
          for (const q of queues) served.get(q.user_id)!.push(...q.entries.map((e) => e.event_id));
        }
        expect(consumed).toBeGreaterThan(1000);
        expect(deleted.size).toBeGreaterThan(10);
        for (const user of USERS) expect(served.get(user)).toEqual(ingested.get(user)!.filter((id) => !deleted.has(id)));
        expect(await node.db.counter('pending')).toBe(0);
        if (maxEntries === 100_000) {
          // built once, again after the restore, and never dropped for disagreeing with the state
          expect(keys.builds).toBe(2);
          expect(keys.size()).toBe(0);
        }
      } finally {
        await node.close();
      }
    });
  }

  it('is dropped by a snapshot install, then built again from the state', async () => {
    const node = await openNode(dir);
    try {
      const keys = new PendingKeys(node.db, node.sm);
      settle(await node.log.propose(ingestOf('ana', ['a1', 'a2'], T0)));
      expect((await keys.queues(null, 4, 4)).map((q) => q.entries.map((e) => e.event_id))).toEqual([['a1', 'a2']]);
      expect(keys.size()).toBe(2);
      const image = new BufferSnapshotWriter();
      await node.sm.snapshot(image);
      await node.sm.restore(bufferSnapshotReader(image.bytes()));
      expect(keys.size()).toBeNull();
      settle(await node.log.propose(ingestOf('bob', ['b1'], T0)));
      expect(await keys.queues('ana', 4, 4)).toEqual(await scanned(node.db, 'ana', 4, 4));
      expect(keys.size()).toBe(3);
      expect(keys.builds).toBe(2);
    } finally {
      await node.close();
    }
  });
});
