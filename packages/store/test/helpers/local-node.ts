import { join } from 'node:path';
import { LocalLog, StateDb, StateMachine, type IngestCommand } from '../../src';

/** A single node's state and log in `dir` (real LevelDB): what the store's apply tests propose to. */
export async function openNode(dir: string) {
  const db = await StateDb.open(join(dir, 'state'));
  const sm = await StateMachine.open(db);
  const log = await LocalLog.open(join(dir, 'log'), sm);
  return { db, sm, log, close: async () => { await log.close(); await db.close(); } };
}

/** Every key and value of the state, but the applied index when `withApplied` is false. */
export async function dump(db: StateDb, withApplied = true): Promise<[string, unknown][]> {
  const out: [string, unknown][] = [];
  for await (const [k, v] of db.level.iterator()) if (withApplied || !k.endsWith('applied_index')) out.push([k, v]);
  return out;
}

/** Text events with these ids in one stream, accepted at `at`. */
export function ingestOf(user: string, ids: string[], at: string, stream = 's1'): IngestCommand {
  return {
    type: 'events.ingest', user_id: user, stream_id: stream, at, idempotency: null, assets: [],
    events: ids.map((id) => ({
      event_id: id, user_id: user, stream_id: stream, content: `content ${id}`, content_type: 'text', org_id: null, agent_id: null, role: null,
      level: null, parent_id: null, task_status: null, task_progress: null, valid_time: at, transaction_time: at, metadata: null, assets: [],
    })),
  };
}
