/**
 * What the proposer saves per command by applying jsonCopy's copy instead of parsing back the JSON it
 * wrote (store/src/json-copy.ts): JSON.parse of a command's JSON against jsonCopy of the command, one
 * process, for a one-event ingest and a consolidation of three units with 384-dimension vectors.
 *   node --conditions=strata-source --import tsx scripts/bench-json-copy.ts
 */
import { jsonCopy } from '../packages/store/src/json-copy';
const event = { event_id: '6f1c1c1e-7a8e-4a51-9a53-1f0b5b2a9c11', user_id: 'bench-3', stream_id: '0b1b6a4e-5a57-4d0e-8f0e-5f5a0e1d2c3b', content: 'x'.repeat(128), content_type: 'text', org_id: null, agent_id: null, role: null, level: null, parent_id: null, task_status: null, task_progress: null, valid_time: '2026-11-27T18:00:00.000Z', transaction_time: '2026-11-27T18:00:00.000Z', metadata: null, assets: [] };
const ingest = { type: 'events.ingest', user_id: 'bench-3', stream_id: event.stream_id, at: event.valid_time, idempotency: null, events: [event], assets: [] };
const vec = () => Array.from({ length: 384 }, () => Math.random() * 2 - 1);
const unit = (i: number) => ({ id: `u${i}`, user_id: 'bench-3', stream_id: event.stream_id, org_id: null, agent_id: null, level: 1, memory_type: 'factual', content: 'Sam moved to Bristol in May and works at the harbour', keywords: ['sam', 'bristol', 'harbour'], speaker: null, valid_time: event.valid_time, transaction_time: event.valid_time, references: [event.event_id], assets: [], importance: 0.5, subject: 'sam', attribute: 'city', retired_at: null, retired_reason: null, superseded_by: null });
const consolidate = { type: 'memory.consolidate', user_id: 'bench-3', at: event.valid_time, consumed: [{ seq: 1, event_id: event.event_id }], embedder_id: 'local-384', method: 'offline', units: [0, 1, 2].map((i) => ({ unit: unit(i), vector: vec() })), reinforced: [], retired: [], edges: [], dropped: [] };
for (const [name, cmd] of [['events.ingest', ingest], ['memory.consolidate (3 units, 384-d vectors)', consolidate]] as const) {
  const text = JSON.stringify(cmd);
  const time = (f: () => unknown) => { for (let i = 0; i < 2000; i++) f(); const n = 20000; const t = process.hrtime.bigint(); for (let i = 0; i < n; i++) f(); return Number(process.hrtime.bigint() - t) / n / 1000; };
  const parse = time(() => JSON.parse(text));
  const copy = time(() => jsonCopy(cmd));
  console.log(`${name}: ${text.length} bytes; JSON.parse ${parse.toFixed(2)} us, jsonCopy ${copy.toFixed(2)} us (x${(copy / parse).toFixed(2)})`);
}
