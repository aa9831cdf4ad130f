/**
 * StateMachine.applyBatch writes runs of ingests in one LevelDB batch. Replicas hand it committed
 * entries in different groupings (each one's Raft Readies), so the state, the answers and the effects
 * must be those of applying one command at a time, whatever the split. The stream below makes later
 * commands depend on earlier ones of the same batch: a repeated idempotency key (answered as a replay,
 * stored once), shared counters, a shared asset, and a webhook subscription created midway (after it,
 * ingests enqueue deliveries and are applied alone).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { StateDb, StateMachine, webhookState, type BatchEntry, type Command, type ProposedEvent, type WebhookRecord } from '../../src';
import { digestPairs, dumpState } from '../../src/sim/image';

const T0 = '2026-01-01T00:00:00.000Z';
const event = (user: string, id: string): ProposedEvent => ({
  event_id: id, user_id: user, stream_id: 's1', content: `said ${id}`, content_type: 'text', org_id: null, agent_id: null, role: null, level: null,
  parent_id: null, task_status: null, task_progress: null, valid_time: T0, transaction_time: T0, metadata: null, assets: [],
});
const hook: WebhookRecord = {
  webhook_id: 'wh1', url: 'https://hooks.example/x', events: ['*'], user_ids: null, org_id: null, secret: 'whsec_0123456789abcdef', created_at: T0,
  created_by: { kind: 'api_key', subject: 'k', role: 'admin', org_id: null, user_ids: null }, outbox_max: 3,
};

/** 24 commands: ingests of 3 users, some reusing an idempotency key or an asset, and a webhook subscription at 12. */
function stream(): Command[] {
  const out: Command[] = [];
  for (let i = 0; i < 24; i++) {
    if (i === 12) {
      out.push({ type: 'webhook.create', record: hook });
      continue;
    }
    const idempotent = i % 4 === 1;
    const user = idempotent ? 'u0' : `u${i % 3}`;
    out.push({
      type: 'events.ingest', user_id: user, stream_id: 's1', at: T0,
      idempotency: idempotent ? { key: `k${i % 8}`, expires_at: '2027-01-01T00:00:00.000Z' } : null,
      events: [event(user, `e${i}`)],
      assets: i % 5 === 0 ? [{ asset_id: 'a1', data_b64: Buffer.from('shared').toString('base64') }] : [],
    });
  }
  return out;
}

interface Outcome {
  digest: string;
  answers: unknown[];
  told: unknown[];
  webhook: unknown;
}

let dir: string;
let n = 0;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'strata-batch-apply-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Applies the stream in groups of the given sizes (cycled); [1] is one command at a time through apply(). */
async function applyIn(groups: number[]): Promise<Outcome> {
  const db = await StateDb.open(join(dir, `r${n++}`));
  try {
    const sm = await StateMachine.open(db);
    const told: unknown[] = [];
    sm.onApplied((index, command, result, effects) => told.push({ index, type: command.type, result, effects }));
    const entries: BatchEntry[] = stream().map((command, i) => ({ index: i + 1, term: 1, command }));
    const answers: unknown[] = [];
    for (let at = 0, g = 0; at < entries.length; g++) {
      const size = Math.max(1, groups[g % groups.length]);
      const group = entries.slice(at, at + size);
      if (groups.length === 1 && groups[0] === 1) answers.push(await sm.apply(group[0].index, group[0].command!, 1));
      else answers.push(...(await sm.applyBatch(group)));
      at += group.length;
    }
    expect(sm.appliedIndex()).toBe(entries.length);
    return { digest: digestPairs(await dumpState(db)), answers, told, webhook: await webhookState(db, 'wh1') };
  } finally {
    await db.close();
  }
}

describe('applying committed entries in batches', () => {
  let alone: Outcome;
  beforeAll(async () => {
    alone = await applyIn([1]);
  });

  test('the stream depends on its own earlier commands (a replay answer, deliveries after the subscription)', () => {
    expect(alone.answers.filter((a) => (a as { replayed?: boolean }).replayed === true).length).toBeGreaterThan(0);
    // 11 ingests after the subscription, 3 of them replays: 8 new events into an outbox of 3
    expect(alone.webhook).toMatchObject({ queued: 3, dropped: 5 });
  });

  test('one batch of everything equals one command at a time', async () => {
    expect(await applyIn([24])).toEqual(alone);
  });

  test('any split gives the same state, answers and effects', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 6 }), async (groups) => {
        expect(await applyIn(groups)).toEqual(alone);
      }),
      { numRuns: 15, seed: 4242 },
    );
  });
});
