/**
 * Media bytes are the user's who gave them (red-team round 3, finding 1; apply/assets.ts): an event
 * that names another tenant's asset id, imported, reads nothing on export; a hold counts the user's
 * events and units that refer to the asset, and the bytes go when the last holder's last reference is
 * hard-deleted. Real LevelDB, the real state machine and export reader.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  LocalLog, StateDb, StateMachine, openExportSnapshot, userRecords,
  type ExportRecord, type ImportCommand, type IngestCommand, type MemoryUnit, type ProposedEvent,
} from '../src';

const T0 = '2026-01-01T00:00:00.000Z';
const BYTES = Buffer.from('the private scan of a passport');
const ASSET_ID = createHash('sha256').update(BYTES).digest('hex');
const REF = { asset_id: ASSET_ID, media_type: 'image' as const, size: BYTES.length, url: null, phash: null };

function event(user: string, id: string, withAsset: boolean): ProposedEvent {
  return {
    event_id: id, user_id: user, stream_id: 's1', content: `content ${id}`, content_type: withAsset ? 'image' : 'text', org_id: null, agent_id: null, role: null,
    level: null, parent_id: null, task_status: null, task_progress: null, valid_time: T0, transaction_time: T0, metadata: null, assets: withAsset ? [REF] : [],
  } as ProposedEvent;
}

const ingestImage = (user: string, id: string): IngestCommand => ({
  type: 'events.ingest', user_id: user, stream_id: 's1', at: T0, idempotency: null, events: [event(user, id, true)], assets: [{ asset_id: ASSET_ID, data_b64: BYTES.toString('base64') }],
});

function unit(user: string, id: string, refs: string[]): MemoryUnit {
  return {
    id, user_id: user, stream_id: 's1', org_id: null, agent_id: null, level: 1, memory_type: 'factual', content: `unit ${id}`, keywords: [id],
    speaker: 'user', valid_time: T0, transaction_time: T0, references: refs, assets: [REF], importance: 0.5, subject: null, attribute: null,
    retired_at: null, retired_reason: null, superseded_by: null,
  };
}

/** An import of one event naming the asset, as the red team sent it: no asset line, only the id. */
const importNaming = (user: string, id: string): ImportCommand => ({
  type: 'import.records', at: T0, records: [{ kind: 'event', ...event(user, id, true), consolidation: { state: 'consolidated' }, l3_source: null } as ExportRecord],
});

async function openNode(dir: string) {
  const db = await StateDb.open(join(dir, 'state'));
  const sm = await StateMachine.open(db);
  const log = await LocalLog.open(join(dir, 'log'), sm);
  return { db, log, close: async () => { await log.close(); await db.close(); } };
}

async function exported(db: StateDb, user: string): Promise<ExportRecord[]> {
  const snapshot = openExportSnapshot(db);
  try {
    const out: ExportRecord[] = [];
    for await (const r of userRecords(db, user, snapshot)) out.push(r);
    return out;
  } finally {
    await snapshot.close();
  }
}

const assetLines = (records: ExportRecord[]) => records.filter((r) => r.kind === 'asset');

describe('asset holds', () => {
  let dir: string;
  beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'strata-assets-')); });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('does not give another tenant the bytes of an asset id it names in an imported event', async () => {
    const node = await openNode(dir);
    try {
      await node.log.propose(ingestImage('victim', 'v1'));
      expect(assetLines(await exported(node.db, 'victim'))).toEqual([{ kind: 'asset', user_id: 'victim', asset_id: ASSET_ID, data_b64: BYTES.toString('base64') }]);
      await node.log.propose(importNaming('mallory', 'm1'));
      const theirs = await exported(node.db, 'mallory');
      expect(theirs.map((r) => r.kind)).toEqual(['event', 'user']); // the event, with its reference, and no bytes
      expect(JSON.stringify(theirs)).not.toContain(BYTES.toString('base64'));
    } finally {
      await node.close();
    }
  });

  it('gives the bytes to an importer whose asset line carries them, and not for a line whose bytes do not match the id', async () => {
    const node = await openNode(dir);
    try {
      await node.log.propose(ingestImage('victim', 'v1'));
      const forged: ImportCommand = { type: 'import.records', at: T0, records: [{ kind: 'asset', user_id: 'mallory', asset_id: ASSET_ID, data_b64: Buffer.from('guess').toString('base64') }] };
      expect(await node.log.propose(forged)).toMatchObject({ imported: { asset: 0 }, skipped: { asset: 1 } });
      await node.log.propose(importNaming('mallory', 'm1'));
      expect(assetLines(await exported(node.db, 'mallory'))).toEqual([]);
      const honest: ImportCommand = { type: 'import.records', at: T0, records: [{ kind: 'asset', user_id: 'bob', asset_id: ASSET_ID, data_b64: BYTES.toString('base64') }] };
      expect(await node.log.propose(honest)).toMatchObject({ imported: { asset: 1 } });
      await node.log.propose(importNaming('bob', 'b1'));
      expect(assetLines(await exported(node.db, 'bob'))).toHaveLength(1);
    } finally {
      await node.close();
    }
  });

  it('deletes the bytes when the last holder hard-deletes the last event and unit that refer to them', async () => {
    const node = await openNode(dir);
    try {
      await node.log.propose(ingestImage('alice', 'a1'));
      await node.log.propose(ingestImage('alice', 'a2'));
      await node.log.propose(ingestImage('bob', 'b1'));
      await node.log.propose({ type: 'import.records', at: T0, records: [{ kind: 'unit', ...unit('alice', 'u1', ['a1']), vector: null, stats: null }] });
      const del = (user: string, unit_ids: string[], event_ids: string[]) => node.log.propose({ type: 'memory.delete', user_id: user, at: T0, unit_ids, event_ids, require_units: false });
      await del('alice', ['u1'], ['a1']);
      expect(await node.db.assetHolds.get(`alice\u0000${ASSET_ID}`)).toBe(1); // a2 still refers to it
      await del('alice', [], ['a2']);
      expect(await node.db.assetHolds.get(`alice\u0000${ASSET_ID}`)).toBeUndefined();
      expect(await node.db.assets.get(ASSET_ID)).toBeDefined(); // bob still holds it
      await del('bob', [], ['b1']);
      expect(await node.db.assets.get(ASSET_ID)).toBeUndefined();
      expect(await node.db.assetHolders.get(ASSET_ID)).toBeUndefined();
      // and naming it again afterwards reads nothing
      await node.log.propose(importNaming('alice', 'a3'));
      expect(assetLines(await exported(node.db, 'alice'))).toEqual([]);
    } finally {
      await node.close();
    }
  });
});
