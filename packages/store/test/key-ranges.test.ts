/**
 * Key ranges over ids of every Unicode plane (keys.ts): a user's range holds exactly its keys, whatever
 * characters the id holds, and code that compares keys it read agrees with LevelDB's byte order. Real
 * LevelDB, written through the log.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  allUnits, compareKeys, LocalLog, orgUnitsOf, pendingOfUser, pendingUsersFrom, prefixRange, settle, StateDb, StateMachine,
  type IngestCommand, type MemoryUnit,
} from '../src';

const T0 = '2026-01-01T00:00:00.000Z';
/** In UTF-8 (LevelDB's) order; UTF-16 order (`<`) would put U+E000 and U+FFFF after the astral ones. */
const IDS = ['a', 'ann', 'ann b', 'annie', 'ann\u00a0', 'caf\u00e9', '\u00ff', '\u00ffx', '\u0100', '\u4e2d', '\ue000', '\ufffd', '\uffff', '\u{10000}', '\u{1F600}', '\u{10FFFF}'];

const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

function unit(user: string, n: number): MemoryUnit {
  return {
    id: uuid(n), user_id: user, stream_id: 's1', org_id: 'acme', agent_id: null, level: 1, memory_type: 'factual', content: `unit of ${user}`, keywords: [],
    speaker: null, valid_time: T0, transaction_time: T0, references: [], assets: [], importance: 0.5, subject: null, attribute: null,
    retired_at: null, retired_reason: null, superseded_by: null,
  };
}

const ingest = (user: string, eventId: string): IngestCommand => ({
  type: 'events.ingest', user_id: user, stream_id: 's1', at: T0, idempotency: null, assets: [],
  events: [{
    event_id: eventId, user_id: user, stream_id: 's1', content: 'hello', content_type: 'text', org_id: null, agent_id: null, role: null, level: null,
    parent_id: null, task_status: null, task_progress: null, valid_time: T0, transaction_time: T0, metadata: null, assets: [],
  }],
});

describe('key ranges over ids of every Unicode plane', () => {
  let dir: string;
  let db: StateDb;
  let log: LocalLog;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'strata-key-ranges-'));
    db = await StateDb.open(join(dir, 'state'));
    log = await LocalLog.open(join(dir, 'log'), await StateMachine.open(db));
    for (const [i, user] of IDS.entries()) {
      settle(await log.propose({
        type: 'memory.consolidate', user_id: user, at: T0, consumed: [], embedder_id: 'e', method: 'offline',
        units: [{ unit: unit(user, 2 * i), vector: [] }, { unit: unit(user, 2 * i + 1), vector: [] }], reinforced: [], retired: [], edges: [], dropped: [],
      }));
      settle(await log.propose(ingest(user, uuid(1000 + i))));
    }
  });
  afterAll(async () => {
    await log.close();
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('orders ids as LevelDB does', () => {
    expect([...IDS].reverse().sort(compareKeys)).toEqual(IDS);
    expect(compareKeys('\uffff', '\u{1F600}')).toBeLessThan(0);
    expect('\uffff' < '\u{1F600}').toBe(false); // why compareKeys exists
  });

  it("holds exactly a user's keys in the user's range, for every id", async () => {
    for (const user of IDS) {
      expect({ user, units: (await allUnits(db, user)).map((u) => u.user_id) }).toEqual({ user, units: [user, user] });
      expect({ user, pending: (await pendingOfUser(db, user, 10)).map((p) => p.user_id) }).toEqual({ user, pending: [user] });
    }
    const range = prefixRange('ann');
    expect(range.lt > range.gt).toBe(true);
  });

  it("finds every contributor in an org's range", async () => {
    const contributors = new Set((await orgUnitsOf(db, 'acme')).map((u) => u.user_id));
    expect([...contributors].sort(compareKeys)).toEqual(IDS);
  });

  it('serves every user with pending events in round-robin order, from any cursor', async () => {
    expect(await pendingUsersFrom(db, null, 100)).toEqual(IDS);
    for (const [i, after] of IDS.entries()) {
      expect(await pendingUsersFrom(db, after, 100)).toEqual([...IDS.slice(i + 1), ...IDS.slice(0, i + 1)]);
    }
  });
});
