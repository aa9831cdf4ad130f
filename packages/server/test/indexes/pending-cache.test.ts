/**
 * The pending events kept between queries (pending-cache.ts): read again exactly when an applied command
 * added or removed one of the user's pending entries, a read overtaken by such a command is not kept,
 * and the bytes held stay within the budget. Over a real LevelDB and log, through RetrievalService.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { HashingEmbedder } from '@strata/memory';
import { LocalLog, StateDb, StateMachine, recentPendingOfUser, settle, type EventRecord, type MemoryUnit } from '@strata/store';
import { loadConfig } from '../../src/config';
import { DerivedIndexes } from '../../src/indexes/derived';
import { PendingEventsCache } from '../../src/indexes/pending-cache';
import { RetrievalService } from '../../src/indexes/retrieval-service';
import { ShardRouter } from '../../src/shards';

const T0 = '2026-01-01T00:00:00.000Z';
const STREAM = '00000000-0000-4000-8000-000000000001';
const id = (n: number, kind: number) => `00000000-0000-4000-8${kind}00-${String(n).padStart(12, '0')}`;

describe('pending events kept between queries', () => {
  let dir: string;
  let db: StateDb;
  let log: LocalLog;
  let service: RetrievalService;
  let cache: PendingEventsCache;
  const embedder = new HashingEmbedder();

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'strata-pending-cache-'));
    db = await StateDb.open(join(dir, 'state'));
    const sm = await StateMachine.open(db);
    log = await LocalLog.open(join(dir, 'log'), sm);
    const indexes = new DerivedIndexes({ db, embedder, logger: pino({ level: 'silent' }) });
    indexes.attach(sm);
    cache = new PendingEventsCache();
    sm.onApplied((_i, _c, _r, effects) => cache.onApplied(effects));
    service = new RetrievalService({
      shards: new ShardRouter([{ id: 0, db, sm, log }]), indexes: new Map([[0, indexes]]), embedder, config: loadConfig({ env: {} }), pendingCache: cache,
    });
  });
  afterAll(async () => {
    await log.close();
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const ingest = async (user: string, n: number, content: string): Promise<string> => {
    const eventId = id(n, 1);
    settle(await log.propose({
      type: 'events.ingest', user_id: user, stream_id: STREAM, at: T0, idempotency: null, assets: [],
      events: [{
        event_id: eventId, user_id: user, stream_id: STREAM, content, content_type: 'text', org_id: null, agent_id: null, role: 'user',
        level: null, parent_id: null, task_status: null, task_progress: null, valid_time: T0, transaction_time: T0, metadata: null, assets: [],
      }],
    }));
    return eventId;
  };

  const consolidate = async (user: string, n: number, eventId: string, content: string): Promise<void> => {
    const consumed = (await recentPendingOfUser(db, user, 10)).filter((p) => p.event_id === eventId).map((p) => ({ seq: p.seq, event_id: p.event_id }));
    const unit: MemoryUnit = {
      id: id(n, 2), user_id: user, stream_id: STREAM, org_id: null, agent_id: null, level: 1, memory_type: 'factual', content, keywords: [],
      speaker: null, valid_time: T0, transaction_time: T0, references: [eventId], assets: [], importance: 0.5, subject: null,
      attribute: null, retired_at: null, retired_reason: null, superseded_by: null,
    };
    const [vector] = await embedder.embed([content]);
    settle(await log.propose({
      type: 'memory.consolidate', user_id: user, at: T0, consumed, embedder_id: embedder.id, method: 'offline',
      units: [{ unit, vector: [...vector] }], reinforced: [], retired: [], edges: [], dropped: [],
    }));
  };

  const rawHits = async (user: string, query: string) =>
    (await service.retrieve(user, STREAM, { query, limit: 20 })).results.filter((r) => r.unit.level === 0).map((r) => r.unit.references[0]);

  it('reads the pending events once, then again only after they changed', async () => {
    const user = 'kept-user';
    const first = await ingest(user, 1, 'Ada keeps bees on the roof.');
    expect(await rawHits(user, 'bees roof')).toEqual([first]);
    const misses = cache.stats().misses;
    expect(await rawHits(user, 'bees roof')).toEqual([first]);
    expect(cache.stats().misses).toBe(misses); // answered from the cache

    // consolidated: no longer a raw hit (a cache not told would still answer it), found as its unit
    await consolidate(user, 1, first, 'Ada is a beekeeper.');
    const answer = await service.retrieve(user, STREAM, { query: 'bees beekeeper', limit: 20 });
    expect(answer.results.filter((r) => r.unit.level === 0)).toEqual([]);
    expect(answer.results.map((r) => r.unit.content)).toContain('Ada is a beekeeper.');

    // a new event: read again, found raw
    const second = await ingest(user, 2, 'Ada sold honey at the market.');
    expect(await rawHits(user, 'honey market')).toEqual([second]);
    // another user's ingest leaves this user's entry alone
    const hits = cache.stats().hits;
    await ingest('other-user', 3, 'Unrelated.');
    expect(await rawHits(user, 'honey market')).toEqual([second]);
    expect(cache.stats().hits).toBe(hits + 1);
  });

  it('does not keep a read that an applied change overtook', async () => {
    const own = new PendingEventsCache();
    let release!: (events: EventRecord[]) => void;
    const slow = own.get('u', () => new Promise<EventRecord[]>((r) => (release = r)));
    own.invalidate('u'); // a command changed u's pending entries while the read was in flight
    release([]);
    expect(await slow).toEqual([]); // the caller still gets its answer
    let reads = 0;
    await own.get('u', async () => (reads++, []));
    expect(reads).toBe(1); // not kept: read again
    await own.get('u', async () => (reads++, []));
    expect(reads).toBe(1); // this one was kept
    own.clear();
    await own.get('u', async () => (reads++, []));
    expect(reads).toBe(2);
  });

  it('stays within its byte budget, dropping the least recently used users', async () => {
    const event = (content: string) => ({ content }) as EventRecord;
    const own = new PendingEventsCache(4096);
    for (let u = 0; u < 20; u++) await own.get(`u${u}`, async () => [event('x'.repeat(400))]);
    expect(own.stats().bytes).toBeLessThanOrEqual(4096);
    expect(own.stats().users).toBeGreaterThan(0);
    expect(own.stats().users).toBeLessThan(20);
    let reads = 0;
    await own.get('u19', async () => (reads++, []));
    await own.get('u0', async () => (reads++, []));
    expect(reads).toBe(1); // the most recent is held, the oldest was dropped
    // an entry larger than the budget is answered, not kept
    await own.get('huge', async () => [event('y'.repeat(10_000))]);
    expect(own.stats().bytes).toBeLessThanOrEqual(4096);
  });
});
