import type { EventRecord, MemoryUnit } from '@strata/store';

export function unit(id: string, content: string, over: Partial<MemoryUnit> = {}): MemoryUnit {
  return {
    id, user_id: 'u1', stream_id: 's1', org_id: null, agent_id: null, level: 1, memory_type: 'factual', content,
    keywords: [], speaker: 'user', valid_time: '2025-01-01T00:00:00.000Z', transaction_time: '2025-01-01T00:00:00.000Z',
    references: [], assets: [], importance: 0.5, subject: null, attribute: null, retired_at: null, retired_reason: null,
    superseded_by: null, ...over,
  };
}

export function ev(event_id: string, content: string, transaction_time = '2025-01-01T00:00:00.000Z'): Pick<EventRecord, 'event_id' | 'content' | 'content_type' | 'transaction_time'> {
  return { event_id, content, content_type: 'text', transaction_time };
}
