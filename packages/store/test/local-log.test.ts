import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Level } from 'level';
import { LocalLog, StateDb, StateMachine, listEvents, pendingSummary, padIndex, type IngestAnswer, type IngestCommand, type ProposedEvent } from '../src';

function event(id: string, content: string): ProposedEvent {
  return {
    event_id: id, user_id: 'u1', stream_id: 's1', content, content_type: 'text', org_id: null, agent_id: null, role: null,
    level: null, parent_id: null, task_status: null, task_progress: null, valid_time: '2026-01-01T00:00:00.000Z',
    transaction_time: '2026-01-01T00:00:00.000Z', metadata: null, assets: [],
  };
}

function ingest(ids: string[], idempotencyKey?: string): IngestCommand {
  return {
    type: 'events.ingest', user_id: 'u1', stream_id: 's1', at: '2026-01-01T00:00:00.000Z',
    idempotency: idempotencyKey ? { key: idempotencyKey, expires_at: '2026-01-02T00:00:00.000Z' } : null,
    events: ids.map((id) => event(id, `content ${id}`)), assets: [],
  };
}

async function openNode(dir: string) {
  const db = await StateDb.open(join(dir, 'state'));
  const sm = await StateMachine.open(db);
  const log = await LocalLog.open(join(dir, 'log'), sm);
  return { db, sm, log, close: async () => { await log.close(); await db.close(); } };
}

describe('LocalLog and StateMachine', () => {
  let dir: string;
  beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'strata-log-')); });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('applies concurrent proposals in one order and keeps acceptance order in the stream', async () => {
    const node = await openNode(dir);
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => node.log.propose(ingest([`e${i}`]))));
    expect((answers as IngestAnswer[]).map((a) => a.event_ids[0])).toEqual(Array.from({ length: 50 }, (_, i) => `e${i}`));
    const page = await listEvents(node.db, 'u1', 's1', null, 100);
    expect(page.events.map((e) => e.event_id)).toEqual(Array.from({ length: 50 }, (_, i) => `e${i}`));
    expect(node.sm.appliedIndex()).toBe(50);
    expect((await pendingSummary(node.db)).pending).toBe(50);
    await node.close();
  });

  it('pages through events with a cursor', async () => {
    const node = await openNode(dir);
    await node.log.propose(ingest(['a', 'b', 'c', 'd', 'e']));
    const first = await listEvents(node.db, 'u1', 's1', null, 2);
    expect(first.events.map((e) => e.event_id)).toEqual(['a', 'b']);
    const second = await listEvents(node.db, 'u1', 's1', first.next_cursor, 10);
    expect(second.events.map((e) => e.event_id)).toEqual(['c', 'd', 'e']);
    expect(second.next_cursor).toBeNull();
    await node.close();
  });

  it('answers an idempotent retry with the first answer and stores nothing new', async () => {
    const node = await openNode(dir);
    const first = (await node.log.propose(ingest(['x1'], 'key-1'))) as IngestAnswer;
    const again = (await node.log.propose(ingest(['x2'], 'key-1'))) as IngestAnswer;
    expect(again.event_ids).toEqual(first.event_ids);
    expect(again.replayed).toBe(true);
    expect((await listEvents(node.db, 'u1', 's1', null, 10)).events).toHaveLength(1);
    await node.close();
  });

  it('replays entries that were logged but not applied', async () => {
    const node = await openNode(dir);
    await node.log.propose(ingest(['a']));
    await node.close();
    // Simulate a crash between the synced log write and the state write: append an entry by hand.
    const raw = new Level<string, string>(join(dir, 'log'), { valueEncoding: 'utf8' });
    await raw.put(padIndex(2), JSON.stringify(ingest(['b'])));
    await raw.close();
    const reopened = await openNode(dir);
    expect(reopened.sm.appliedIndex()).toBe(2);
    expect((await listEvents(reopened.db, 'u1', 's1', null, 10)).events.map((e) => e.event_id)).toEqual(['a', 'b']);
    const next = (await reopened.log.propose(ingest(['c']))) as IngestAnswer;
    expect(next.event_ids).toEqual(['c']);
    expect(reopened.sm.appliedIndex()).toBe(3);
    await reopened.close();
  });
});

describe('LocalLog under back-to-back proposals', () => {
  it('never leaves a proposal queued when it arrives as the flush loop ends', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'strata-log-'));
    const node = await openNode(dir);
    // Each proposal is awaited before the next, so each arrives while the previous loop is winding down.
    for (let i = 0; i < 200; i++) {
      const answer = (await node.log.propose(ingest([`seq-${i}`]))) as IngestAnswer;
      expect(answer.event_ids).toEqual([`seq-${i}`]);
      if (i % 3 === 0) await Promise.resolve();
    }
    expect(node.sm.appliedIndex()).toBe(200);
    await node.close();
    rmSync(dir, { recursive: true, force: true });
  });
});
