import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  allUnits, commandVector, pendingOfUser, settle, usersOfCommand,
  type ConsolidateAnswer, type ConsolidateBatch, type ConsolidateCommand, type ConsolidateUsersCommand, type IngestCommand, type MemoryUnit,
  type StateDb,
} from '../src';
import { dump as dumpState, ingestOf, openNode } from './helpers/local-node';

/**
 * `memory.consolidate_users` (issue 27): several users' batches in one command, each applied as its
 * own `memory.consolidate` would be, each answering alone. Real LevelDB and LocalLog.
 */

const T0 = '2026-01-01T00:00:00.000Z';
const T1 = '2026-01-01T01:00:00.000Z';
const USERS = ['ann', 'bob', 'cy'];

const ingest = (user: string, ids: string[]): IngestCommand => ingestOf(user, ids, T0);

function unit(user: string, id: string, refs: string[]): MemoryUnit {
  return {
    id, user_id: user, stream_id: 's1', org_id: null, agent_id: null, level: 1, memory_type: 'factual', content: `unit ${id}`, keywords: [id],
    speaker: 'user', valid_time: T0, transaction_time: T1, references: refs, assets: [], importance: 0.5, subject: 'food', attribute: 'likes',
    retired_at: null, retired_reason: null, superseded_by: null,
  };
}

/** Every key and value but the applied index (one command against three moves it differently). */
const dump = (db: StateDb) => dumpState(db, false);

/** Each user's batch: its pending events of the round consumed, two units (one of them with an edge to an earlier unit), a reinforcement. */
async function batches(db: StateDb, round: number): Promise<ConsolidateBatch[]> {
  const out: ConsolidateBatch[] = [];
  for (const [i, user] of USERS.entries()) {
    const pending = (await pendingOfUser(db, user, 10)).filter((p) => p.event_id.startsWith(`${user}-${round}-`));
    const refs = pending.map((p) => p.event_id);
    const earlier = (await allUnits(db, user)).map((u) => u.id);
    const ids = [`${user}-${round}-a`, `${user}-${round}-b`];
    out.push({
      user_id: user, consumed: pending.map((p) => ({ seq: p.seq, event_id: p.event_id })), embedder_id: 'emb', method: 'offline',
      units: ids.map((id, j) => ({ unit: unit(user, id, refs), ...commandVector([i, j, round, 0.5]) })),
      reinforced: earlier.slice(0, 1).map((unit_id) => ({ unit_id, add_references: refs, importance: 0.7 })),
      retired: [],
      edges: earlier.slice(0, 1).map((target) => ({ edge_id: `${ids[0]}-e`, user_id: user, source_id: ids[0], target_id: target, relation: 'RelatedTo' as const, weight: 0.6, created_at: T1 })),
      dropped: [],
    });
  }
  return out;
}

const alone = (b: ConsolidateBatch): ConsolidateCommand => ({ ...b, type: 'memory.consolidate', at: T1 });
const together = (users: ConsolidateBatch[]): ConsolidateUsersCommand => ({ type: 'memory.consolidate_users', at: T1, users });

describe('memory.consolidate_users', () => {
  let dir: string;
  beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'strata-consolidate-users-')); });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('makes the state that one command per user makes, and answers each batch as that command would', async () => {
    const states: [string, unknown][][] = [];
    const answers: ConsolidateAnswer[][] = [];
    for (const form of ['alone', 'together'] as const) {
      const node = await openNode(join(dir, form));
      try {
        const got: ConsolidateAnswer[] = [];
        // Both rounds' events first: an event's key comes from its log index, which must not depend on the form.
        for (let round = 0; round < 2; round++) {
          for (const user of USERS) settle(await node.log.propose(ingest(user, [`${user}-${round}-1`, `${user}-${round}-2`])));
        }
        for (let round = 0; round < 2; round++) {
          const planned = await batches(node.db, round);
          if (form === 'alone') for (const b of planned) got.push(settle(await node.log.propose(alone(b))));
          else got.push(...settle(await node.log.propose(together(planned))).users.map((a) => settle(a)));
        }
        answers.push(got);
        states.push(await dump(node.db));
      } finally {
        await node.close();
      }
    }
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[0].every((a) => a.applied)).toBe(true);
    expect(answers[0].slice(3).map((a) => [a.reinforced, a.edges])).toEqual([[1, 1], [1, 1], [1, 1]]);
    expect(states[1]).toEqual(states[0]);
  });

  it('leaves a stale or refused batch out without holding back the others', async () => {
    const node = await openNode(dir);
    try {
      for (const user of USERS) settle(await node.log.propose(ingest(user, [`${user}-0-1`])));
      const planned = await batches(node.db, 0);
      // bob's entry is consumed by another plan first: his batch is stale
      settle(await node.log.propose(alone({ ...planned[1], units: [] })));
      // cy's vector is not what encodeVector makes: refused
      planned[2].units[0] = { unit: planned[2].units[0].unit, f32_b64: 'AAAAAB==' };
      const before = { bob: await allUnits(node.db, 'bob'), cy: await allUnits(node.db, 'cy') };
      const { users } = settle(await node.log.propose(together(planned)));
      expect(users[0]).toMatchObject({ applied: true, units_created: 2 });
      expect(users[1]).toMatchObject({ applied: false, stale: 'event bob-0-1 is no longer pending' });
      expect(users[2]).toEqual({ error: expect.objectContaining({ code: 'invalid_command' }) });
      expect((await allUnits(node.db, 'ann')).length).toBe(2);
      expect(await allUnits(node.db, 'bob')).toEqual(before.bob);
      expect(await allUnits(node.db, 'cy')).toEqual(before.cy);
      expect((await pendingOfUser(node.db, 'cy', 10)).map((p) => p.event_id)).toEqual(['cy-0-1']);
      expect(await node.db.counter('pending')).toBe(1);
      expect(await node.db.counter('units')).toBe(2);
    } finally {
      await node.close();
    }
  });

  it('refuses a command naming a user twice as a whole, and names every user for a split\'s fence', async () => {
    const node = await openNode(dir);
    try {
      for (const user of USERS) settle(await node.log.propose(ingest(user, [`${user}-0-1`])));
      const planned = await batches(node.db, 0);
      expect(usersOfCommand(together(planned))).toEqual(USERS);
      const before = await dump(node.db);
      const answer = await node.log.propose(together([...planned, { ...planned[0], consumed: [], units: [] }]));
      expect(answer).toEqual({ error: expect.objectContaining({ code: 'invalid_command', status: 400 }) });
      expect(await dump(node.db)).toEqual(before);
    } finally {
      await node.close();
    }
  });
});
