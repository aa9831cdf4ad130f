/**
 * What GET /v1/cluster/status reads of each replica (records for automatic splits, a retired group's
 * webhook outbox for its removal), over a real LevelDB store: a replica whose store is closed for a
 * moment (wiped or reopened after a move, or removed) is "not known" (null), never an error: the status
 * answered 500 then (test/cluster/placement.test.ts, node 2, in the whole suite).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StateDb, StateMachine } from '@strata/store';
import { outboxEmptyOf, recordsOfReplica } from '../../src/cluster/membership';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'strata-status-replicas-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('an open replica answers its records and outbox; a closed one null for both', async () => {
  const db = await StateDb.open(join(dir, 'state'));
  const sm = await StateMachine.open(db);
  const at = '2026-01-01T00:00:00.000Z';
  await sm.apply(1, {
    type: 'events.ingest', user_id: 'u', stream_id: 's', at, idempotency: null, assets: [],
    events: [{ event_id: 'e1', user_id: 'u', stream_id: 's', content: 'hello', content_type: 'text', role: 'user', ts: at, metadata: {}, org_id: null }],
  } as never);
  expect([recordsOfReplica(db), await outboxEmptyOf(db)]).toEqual([1, true]);
  await db.close();
  expect([recordsOfReplica(db), await outboxEmptyOf(db)]).toEqual([null, null]);
});
