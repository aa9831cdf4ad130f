import type { EventRecord, Goal, L3Task } from '@strata/store';

/** Deterministic ids: id-1, id-2, … (a fresh counter per call). */
export function idCounter(prefix = 'id'): () => string {
  let n = 0;
  return () => `${prefix}-${++n}`;
}

export const NOW = '2025-03-01T10:00:00.000Z';

export function event(over: Partial<EventRecord> = {}): EventRecord {
  return {
    event_id: 'ev-1', user_id: 'u1', stream_id: 's1', seq: '1', content: '', content_type: 'text',
    org_id: null, agent_id: null, role: 'user', level: null, parent_id: null, task_status: null,
    task_progress: null, valid_time: NOW, transaction_time: NOW, metadata: null, assets: [], ...over,
  };
}

export function task(over: Partial<L3Task> = {}): L3Task {
  return {
    task_id: 't1', user_id: 'u1', org_id: null, agent_id: null, stream_id: 's1', parent_id: 'g1',
    title: 'Do it', description: 'Do it', status: 'pending', status_reason: null, progress: 0,
    dependencies: [], context_refs: [], created_at: NOW, updated_at: NOW, result_summary: null, ...over,
  };
}

export function goal(over: Partial<Goal> = {}): Goal {
  return {
    id: 'g1', user_id: 'u1', stream_id: 's1', content: 'Goal', status: 'pending', progress: 0,
    source_event_id: null, transaction_time: NOW, ...over,
  };
}
