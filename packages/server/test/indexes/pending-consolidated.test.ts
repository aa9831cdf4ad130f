/**
 * Read-your-writes while consolidation applies (CONTRACT §3 `include_pending`): an event consolidated
 * while a retrieval is reading is found exactly once, as its raw hit or as its unit, wherever in the
 * retrieval the consolidation lands. A retrieval that read the index before the pending events lost an
 * event consolidated between the two reads (seen on CI: `strata mcp` recall right after remember).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { HashingEmbedder } from '@strata/memory';
import { LocalLog, StateDb, StateMachine, recentPendingOfUser, settle, type MemoryUnit } from '@strata/store';
import { loadConfig } from '../../src/config';
import { DerivedIndexes } from '../../src/indexes/derived';
import { PendingEventsCache } from '../../src/indexes/pending-cache';
import { RetrievalService } from '../../src/indexes/retrieval-service';
import { ShardRouter } from '../../src/shards';

const T0 = '2026-01-01T00:00:00.000Z';
const STREAM = '00000000-0000-4000-8000-000000000001';
const id = (n: number, kind: number) => `00000000-0000-4000-8${kind}00-${String(n).padStart(12, '0')}`;

// With the pending events kept between queries (pending-cache.ts, as node.ts wires it) and without.
describe.each([['read for each query', false], ['kept between queries', true]])('include_pending while the event is consolidated (pending events %s)', (_mode, cached) => {
  let dir: string;
  let db: StateDb;
  let log: LocalLog;
  let service: RetrievalService;
  let indexes: DerivedIndexes;
  const embedder = new HashingEmbedder();
  /** run once by the next embed call, before it answers (the point where the consolidation lands) */
  let beforeEmbed: (() => Promise<void>) | null = null;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'strata-pending-race-'));
    db = await StateDb.open(join(dir, 'state'));
    const sm = await StateMachine.open(db);
    log = await LocalLog.open(join(dir, 'log'), sm);
    indexes = new DerivedIndexes({ db, embedder, logger: pino({ level: 'silent' }) });
    indexes.attach(sm);
    const pendingCache = cached ? new PendingEventsCache() : undefined;
    if (pendingCache) sm.onApplied((_i, _c, _r, effects) => pendingCache.onApplied(effects));
    const gated = Object.create(embedder) as HashingEmbedder;
    gated.embed = async (texts: string[]) => {
      const hook = beforeEmbed;
      beforeEmbed = null;
      if (hook) await hook();
      return embedder.embed(texts);
    };
    service = new RetrievalService({
      shards: new ShardRouter([{ id: 0, db, sm, log }]), indexes: new Map([[0, indexes]]), embedder: gated,
      config: loadConfig({ env: {} }), pendingCache,
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

  // The consolidation lands after some turns of the event loop from the start of the retrieval, or while
  // the query is embedded (after the pending read, alongside the index load): with the index refreshed
  // before the retrieval ranks (the event is then both pending as read and in the index: fails without
  // the collapse), or not yet (read in the other order, in neither: fails with the index read first).
  type Landing = number | 'embed' | 'embed, index refreshed';
  const landings: [string, Landing][] = [
    ...Array.from({ length: 12 }, (_, t) => [`after ${t} ticks`, t] as [string, Landing]),
    ['inside the embedding', 'embed'], ['inside the embedding, index refreshed', 'embed, index refreshed'],
  ];

  it.each(landings)('finds the event exactly once when consolidation lands %s', async (_name, when) => {
    const n = typeof when === 'number' ? when + 1 : when === 'embed' ? 100 : 101;
    const user = `user-${n}`;
    const content = 'Nora is allergic to kiwi.';
    // what consolidation makes of it is worded otherwise (so content de-duplication does not merge the two)
    const unitContent = 'Nora has a kiwi allergy.';
    const eventId = await ingest(user, n, content);
    // the user already has memory, so the retrieval reads a built index (not the shared empty one)
    const earlier = await ingest(user, n + 1000, 'Nora lives in Lisbon.');
    await consolidate(user, n + 1000, earlier, 'Nora lives in Lisbon.');
    await service.retrieve(user, STREAM, { query: 'warm up the index' });
    const pendingNow = (await recentPendingOfUser(db, user, 10)).map((p) => p.event_id);
    expect(pendingNow).toEqual([eventId]);

    const landing = (async () => {
      if (typeof when === 'string') {
        await new Promise<void>((resolve) => {
          beforeEmbed = async () => {
            await consolidate(user, n, eventId, unitContent);
            if (when === 'embed, index refreshed') await indexes.settled();
            resolve();
          };
        });
      } else {
        for (let t = 0; t < when; t++) await new Promise((r) => setImmediate(r));
        await consolidate(user, n, eventId, unitContent);
      }
    })();
    const answer = await service.retrieve(user, STREAM, { query: 'What is Nora allergic to?', limit: 20 });
    await landing;
    const fromEvent = answer.results.filter((r) => r.unit.references.includes(eventId));
    expect(fromEvent).toHaveLength(1);
    expect([content, unitContent]).toContain(fromEvent[0].unit.content);
    expect(answer.results[0].unit.references).toEqual([eventId]);
  });
});
