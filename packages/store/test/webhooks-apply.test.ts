/**
 * Webhooks in the state machine: subscriptions, the outbox apply writes from effects (every kind, the
 * subscription's filter and its creator's scope, commit order), its bound, advancing, deleting.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  StateDb, StateMachine, listWebhooks, outboxPage, pendingOfUser, recentAttempts, settle, webhookState,
  type Command, type L3Task, type MemoryUnit, type ProposedEvent, type WebhookRecord,
} from '../src';
import { checkState } from '../src/sim/check';

const T0 = '2026-01-01T00:00:00.000Z';
const T1 = '2026-01-01T01:00:00.000Z';

const event = (user: string, id: string, content = `said ${id}`): ProposedEvent => ({
  event_id: id, user_id: user, stream_id: 's1', content, content_type: 'text', org_id: null, agent_id: null, role: null, level: null,
  parent_id: null, task_status: null, task_progress: null, valid_time: T0, transaction_time: T0, metadata: null, assets: [],
});
const unit = (user: string, id: string, extra: Partial<MemoryUnit> = {}): MemoryUnit => ({
  id, user_id: user, stream_id: 's1', org_id: null, agent_id: null, level: 1, memory_type: 'factual', content: `unit ${id}`, keywords: [],
  speaker: 'user', valid_time: T0, transaction_time: T1, references: [], assets: [], importance: 0.5, subject: null, attribute: null,
  retired_at: null, retired_reason: null, superseded_by: null, ...extra,
});
const task = (user: string, id: string, extra: Partial<L3Task> = {}): L3Task => ({
  task_id: id, user_id: user, org_id: null, agent_id: null, stream_id: 's1', parent_id: null, title: `task ${id}`, description: '',
  status: 'pending', status_reason: null, progress: 0, dependencies: [], context_refs: [], created_at: T1, updated_at: T1, result_summary: null, ...extra,
});
const hook = (id: string, extra: Partial<WebhookRecord> = {}): WebhookRecord => ({
  webhook_id: id, url: 'https://hooks.example/x', events: ['*'], user_ids: null, org_id: null, secret: 'whsec_0123456789abcdef', created_at: T0,
  created_by: { kind: 'api_key', subject: 'k', role: 'admin', org_id: null, user_ids: null }, outbox_max: 1000, ...extra,
});

describe('webhooks apply', () => {
  let dir: string;
  let db: StateDb;
  let sm: StateMachine;
  const run = (c: Command) => sm.apply(sm.appliedIndex() + 1, c);
  const types = async (id: string) => (await outboxPage(db, id, null, 1000)).map((d) => `${d.user_id}:${d.type}`);

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'strata-webhooks-'));
    db = await StateDb.open(join(dir, 'state'));
    sm = await StateMachine.open(db);
  });
  afterEach(async () => {
    expect(await checkState(db)).toEqual([]);
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const ingest = (user: string, ids: string[]) =>
    run({ type: 'events.ingest', user_id: user, stream_id: 's1', at: T0, idempotency: null, assets: [], events: ids.map((id) => event(user, id)) });

  it('writes nothing while there is no subscription', async () => {
    await ingest('u', ['e1']);
    expect((await db.webhookOutbox.keys().all()).length).toBe(0);
  });

  it('turns every kind of change into a delivery, in commit order, with the state the command left', async () => {
    expect(settle(await run({ type: 'webhook.create', record: hook('all') }))).toEqual({ created: true });
    await ingest('u', ['e1', 'e2']);
    const pending = await pendingOfUser(db, 'u', 10);
    // e1 becomes unit a; e2 is given up on
    await run({
      type: 'memory.consolidate', user_id: 'u', at: T1, consumed: [{ seq: pending[0].seq, event_id: 'e1' }], embedder_id: 'x', method: 'offline',
      units: [{ unit: unit('u', 'a', { references: ['e1'] }), vector: [1, 0] }], reinforced: [], retired: [], edges: [], dropped: [],
    });
    await run({ type: 'memory.consolidation_failed', user_id: 'u', at: T1, entries: [{ seq: pending[1].seq, event_id: 'e2' }], error: 'llm down', attempts: 3 });
    // b supersedes a; then b is forgotten and c deleted
    await run({
      type: 'semantic.execute', user_id: 'u', at: T1, plan_id: 'p', embedder_id: 'x', retire: [], delete_unit_ids: [], delete_event_ids: [], create: null, edges: [],
    }); // unknown plan: 404, no change
    await run({ type: 'import.records', at: T1, records: [{ kind: 'unit', ...unit('u', 'b'), vector: null, stats: null }, { kind: 'unit', ...unit('u', 'c'), vector: null, stats: null }] });
    await run({
      type: 'memory.consolidate', user_id: 'u', at: T1, consumed: [], embedder_id: 'x', method: 'offline', units: [], reinforced: [],
      retired: [{ unit_id: 'a', retired_at: T1, reason: 'superseded', superseded_by: 'b' }], edges: [], dropped: [],
    });
    await run({ type: 'memory.delete', user_id: 'u', at: T1, unit_ids: ['c'], event_ids: [], require_units: true });
    await run({ type: 'l3.plan', user_id: 'u', at: T1, planner: 'offline', events: [{ event_id: 'e1', goals: [], tasks: [task('u', 't1')] }], updates: [] });
    const t1 = task('u', 't1');
    await run({ type: 'l3.task_status', user_id: 'u', at: T1, task_id: 't1', updates: [{ kind: 'task', before: t1, after: { ...t1, status: 'in_progress' } }], sediment: null });
    // a change of progress only is no status change
    const t2 = { ...t1, status: 'in_progress' as const };
    await run({ type: 'l3.task_status', user_id: 'u', at: T1, task_id: 't1', updates: [{ kind: 'task', before: t2, after: { ...t2, progress: 0.5 } }], sediment: null });

    const all = await outboxPage(db, 'all', null, 1000);
    expect(all.map((d) => d.type)).toEqual([
      'event.accepted', 'event.accepted', 'memory.created', 'consolidation.failed', 'memory.created', 'memory.created', 'memory.superseded',
      'memory.deleted', 'task.created', 'task.status_changed',
    ]);
    expect(all.map((d) => d.seq)).toEqual([...all.map((d) => d.seq)].sort());
    expect(new Set(all.map((d) => d.id)).size).toBe(all.length);
    const [accepted, , created, failed] = all;
    expect(accepted.subject).toMatchObject({ kind: 'event', event: { event_id: 'e1', content: 'said e1' }, truncated: false });
    expect(accepted).toMatchObject({ user_id: 'u', org_id: null, created_at: T0 });
    expect(created.subject).toMatchObject({ kind: 'unit', unit: { id: 'a', references: ['e1'] }, change: 'created' });
    expect(failed.subject).toEqual({ kind: 'failure', event_id: 'e2', stream_id: 's1', error: 'llm down', attempts: 3 });
    expect(all[6].subject).toMatchObject({ kind: 'unit', change: 'superseded', unit: { id: 'a', superseded_by: 'b' } });
    expect(all[7].subject).toMatchObject({ kind: 'unit', change: 'deleted', unit: { id: 'c' } });
    expect(all[9].subject).toMatchObject({ kind: 'task', previous_status: 'pending', task: { task_id: 't1', status: 'in_progress' } });
    expect(await webhookState(db, 'all')).toMatchObject({ queued: 10, dropped: 0 });
  });

  it('gives each subscription the kinds it asks for and the users its filter and its creator may see', async () => {
    await run({ type: 'user.set_org', user_id: 'ana', org_id: 'acme', mode: 'set', at: T0 });
    await run({ type: 'webhook.create', record: hook('tasks', { events: ['task.created'] }) });
    await run({ type: 'webhook.create', record: hook('acme', { created_by: { kind: 'api_key', subject: 'k2', role: 'write', org_id: 'acme', user_ids: null } }) });
    await run({ type: 'webhook.create', record: hook('bob-only', { user_ids: ['bob'] }) });
    // its own filter names ana and bob, its creator may see only bob: bob only
    await run({ type: 'webhook.create', record: hook('narrowed', { user_ids: ['ana', 'bob'], created_by: { kind: 'api_key', subject: 'k3', role: 'write', org_id: null, user_ids: ['bob'] } }) });
    await run({ type: 'webhook.create', record: hook('acme-filter', { org_id: 'acme', events: ['event.accepted'] }) });
    await ingest('ana', ['a1']);
    await ingest('bob', ['b1']);
    expect(await types('tasks')).toEqual([]);
    expect(await types('acme')).toEqual(['ana:event.accepted']);
    expect(await types('bob-only')).toEqual(['bob:event.accepted']);
    expect(await types('narrowed')).toEqual(['bob:event.accepted']);
    expect(await types('acme-filter')).toEqual(['ana:event.accepted']);
    expect((await outboxPage(db, 'acme', null, 10))[0].org_id).toBe('acme');
    // the same change has the same id in every outbox
    expect((await outboxPage(db, 'acme', null, 10))[0].id).toBe((await outboxPage(db, 'acme-filter', null, 10))[0].id);
  });

  it('keeps at most outbox_max deliveries, dropping the oldest and counting them', async () => {
    await run({ type: 'webhook.create', record: hook('small', { outbox_max: 3 }) });
    await ingest('u', ['e1', 'e2']);
    await ingest('u', ['e3', 'e4']);
    expect((await outboxPage(db, 'small', null, 10)).map((d) => (d.subject as { event: { event_id: string } }).event.event_id)).toEqual(['e2', 'e3', 'e4']);
    // more new deliveries in one command than the bound: the oldest of them go too
    await ingest('u', ['e5', 'e6', 'e7', 'e8', 'e9']);
    expect((await outboxPage(db, 'small', null, 10)).map((d) => (d.subject as { event: { event_id: string } }).event.event_id)).toEqual(['e7', 'e8', 'e9']);
    expect(await webhookState(db, 'small')).toMatchObject({ queued: 3, dropped: 6 });
  });

  it('advances past what was delivered, keeps the newest attempts, skips deleted subscriptions', async () => {
    await run({ type: 'webhook.create', record: hook('w') });
    await ingest('u', ['e1', 'e2', 'e3']);
    const [d1, d2] = await outboxPage(db, 'w', null, 10);
    const attempt = (n: number) => ({ delivery_id: d1.id, type: d1.type, user_id: 'u', seq: d1.seq, attempt: n, at: T1, status: 500, error: null, duration_ms: 3, outcome: 'failed' as const });
    const answer = settle(await run({
      type: 'webhook.advance', at: T1,
      webhooks: [{ webhook_id: 'w', through: d2.seq, delivered: 2, expired: 0, attempts: Array.from({ length: 120 }, (_, i) => attempt(i + 1)) }, { webhook_id: 'gone', through: null, delivered: 1, expired: 0, attempts: [] }],
    }));
    expect(answer).toEqual({ advanced: [{ webhook_id: 'w', removed: 2 }], skipped: 1 });
    expect(await webhookState(db, 'w')).toMatchObject({ queued: 1, delivered: 2, attempts: 100, delivered_through: d2.seq });
    const recent = await recentAttempts(db, 'w', 3);
    expect(recent.map((a) => a.attempt)).toEqual([120, 119, 118]);
    await run({ type: 'webhook.advance', at: T1, webhooks: [{ webhook_id: 'w', through: null, delivered: 0, expired: 0, attempts: [attempt(121)] }] });
    expect((await recentAttempts(db, 'w', 200)).map((a) => a.attempt)).toEqual(Array.from({ length: 100 }, (_, i) => 121 - i));
    const twice = await run({ type: 'webhook.advance', at: T1, webhooks: [{ webhook_id: 'w', through: null, delivered: 0, expired: 0, attempts: [] }, { webhook_id: 'w', through: null, delivered: 0, expired: 0, attempts: [] }] });
    expect(twice).toMatchObject({ error: { code: 'invalid_command' } });
  });

  it('deletes a subscription with its outbox, leaving a tombstone that a late create cannot bring back', async () => {
    await run({ type: 'webhook.create', record: hook('w') });
    await ingest('u', ['e1']);
    expect(settle(await run({ type: 'webhook.delete', webhook_id: 'w', at: T1 }))).toEqual({ webhook_id: 'w', discarded: 1 });
    expect(await run({ type: 'webhook.delete', webhook_id: 'w', at: T1 })).toMatchObject({ error: { code: 'not_found' } });
    expect(settle(await run({ type: 'webhook.create', record: hook('w') }))).toEqual({ created: false });
    expect(await listWebhooks(db)).toEqual([]);
    await ingest('u', ['e2']);
    expect((await db.webhookOutbox.keys().all()).length).toBe(0);
    expect(await run({ type: 'webhook.create', record: hook('bad', { events: ['memory.exploded' as never] }) })).toMatchObject({ error: { code: 'invalid_command' } });
  });

  it('holds the caps the command carries, in log order: service-wide and per creator; a delete frees a share', async () => {
    const by = (subject: string) => ({ created_by: { kind: 'api_key' as const, subject, role: 'write' as const, org_id: null, user_ids: ['u'] } });
    const limits = { max_subscriptions: 5, per_creator: 2 };
    const create = (id: string, subject: string, l: typeof limits | null = limits) => run({ type: 'webhook.create', record: hook(id, by(subject)), ...(l ? { limits: l } : {}) });
    expect(settle(await create('a1', 'a'))).toEqual({ created: true });
    expect(settle(await create('a2', 'a'))).toEqual({ created: true });
    expect(await create('a3', 'a')).toMatchObject({ error: { code: 'conflict' } });
    expect(settle(await create('b1', 'b'))).toEqual({ created: true });
    expect(settle(await create('b2', 'b'))).toEqual({ created: true });
    expect(settle(await create('c1', 'c'))).toEqual({ created: true });
    expect(await create('c2', 'c')).toMatchObject({ error: { code: 'conflict' } }); // 5 live: full
    expect(settle(await run({ type: 'webhook.delete', webhook_id: 'a1', at: T1 }))).toMatchObject({ webhook_id: 'a1' });
    expect(settle(await create('a4', 'a'))).toEqual({ created: true });
    // a command logged before the caps travelled (a mirror into another shard too) is not capped
    expect(settle(await create('m1', 'a', null))).toEqual({ created: true });
    expect((await listWebhooks(db)).map((w) => w.webhook_id).sort()).toEqual(['a2', 'a4', 'b1', 'b2', 'c1', 'm1']);
  });

  it('cuts long event content in a delivery and says so', async () => {
    await run({ type: 'webhook.create', record: hook('w') });
    await run({ type: 'events.ingest', user_id: 'u', stream_id: 's1', at: T0, idempotency: null, assets: [], events: [event('u', 'big', 'x'.repeat(20_000))] });
    const [d] = await outboxPage(db, 'w', null, 1);
    expect(d.subject).toMatchObject({ kind: 'event', truncated: true });
    expect((d.subject as { event: { content: string } }).event.content.length).toBe(16_384);
  });
});
