import type { MemoryUnit } from '@strata/store';

let counter = 0;
/** A memory unit with defaults; override what a test is about. */
export function unit(over: Partial<MemoryUnit> & { id?: string } = {}): MemoryUnit {
  counter++;
  return {
    id: over.id ?? `u${counter}`,
    user_id: 'alice',
    stream_id: 's1',
    org_id: null,
    agent_id: null,
    level: 1,
    memory_type: 'factual',
    content: `content ${over.id ?? counter}`,
    keywords: [],
    speaker: null,
    valid_time: '2024-01-01T00:00:00.000Z',
    transaction_time: '2024-01-01T00:00:00.000Z',
    references: [],
    assets: [],
    importance: 0.5,
    subject: null,
    attribute: null,
    retired_at: null,
    retired_reason: null,
    superseded_by: null,
    ...over,
  };
}
