/** The answer shapes of records the operations return (CONTRACT.md): one place, used by every surface. */
import type { RawHit } from '@strata/memory/retrieval';
import type { EventRecord, MemoryUnit } from '@strata/store';

/**
 * The contract's unit view (CONTRACT.md §3), plus when and by what a unit stopped being current, and its
 * stored importance (0..1: content signals, raised by consolidation repeats and retrieval; retrieval
 * ranks by it decayed over time, see packages/memory/src/retrieval/decay.ts).
 */
export function unitView(u: MemoryUnit) {
  return { ...retrievedUnitView(u), retired_at: u.retired_at, superseded_by: u.superseded_by, importance: u.importance };
}

/** A retrieved unit (or a level-0 raw hit of a pending event) as the contract shows it (§3), nothing more. */
export function retrievedUnitView(u: MemoryUnit | RawHit) {
  return {
    id: u.id, memory_type: u.memory_type, content: u.content, keywords: u.keywords, level: u.level, stream_id: u.stream_id,
    valid_time: u.valid_time, transaction_time: u.transaction_time, references: u.references, assets: u.assets,
  };
}

/** An L0 event as the event listing answers it (CONTRACT.md §2). */
export function eventView(e: EventRecord) {
  return {
    event_id: e.event_id, content: e.content, content_type: e.content_type, org_id: e.org_id, agent_id: e.agent_id, role: e.role,
    level: e.level, parent_id: e.parent_id, task_status: e.task_status, task_progress: e.task_progress, valid_time: e.valid_time,
    transaction_time: e.transaction_time, metadata: e.metadata, assets: e.assets,
  };
}
