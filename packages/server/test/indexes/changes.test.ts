import type { Command } from '@strata/store';
import { memoryChangeOf } from '../../src/indexes/changes';
import { documentText } from '../../src/indexes/derived';

const U1 = '00000000-0000-4000-8000-000000000001';
const U2 = '00000000-0000-4000-8000-000000000002';
const E1 = '00000000-0000-4000-8000-0000000000e1';
const EV = '00000000-0000-4000-8000-0000000000ef';

describe('memoryChangeOf', () => {
  it('ignores commands that do not touch memory', () => {
    expect(memoryChangeOf({ type: 'events.ingest', user_id: 'u', stream_id: U1, at: '', idempotency: null, events: [], assets: [] })).toBeNull();
    expect(memoryChangeOf({ type: 'apikey.revoke', key_id: U1 })).toBeNull();
  });

  it('reads the units and edges of a consolidation', () => {
    const change = memoryChangeOf({
      type: 'memory.consolidate', user_id: 'u', at: '', consumed: [{ seq: '1', event_id: EV }], embedder_id: 'x', method: 'offline',
      units: [{ unit: { id: U1 } as never, vector: [] }], reinforced: [{ unit_id: U2, add_references: [EV], importance: 1 }],
      retired: [], edges: [{ edge_id: E1 } as never], dropped: [],
    });
    expect(change).toEqual({ user_id: 'u', unit_ids: [U1, U2], edge_ids: [E1], whole_user: false });
  });

  it('reads the units and edges of insights, removed edges included', () => {
    const change = memoryChangeOf({
      type: 'memory.insights', user_id: 'u', at: '', embedder_id: 'x', create: [{ unit: { id: U1 } as never, vector: null }],
      update: [{ unit_id: U2 } as never], edges: [], removed_edges: [E1], reflected: [],
    });
    expect(change).toEqual({ user_id: 'u', unit_ids: [U1, U2], edge_ids: [E1], whole_user: false });
  });

  it('reads a command of another module generically: every UUID named in it or in its answer, event ids aside', () => {
    const command = { type: 'memory.delete', user_id: 'u', at: '', unit_ids: [U1.toUpperCase()], event_ids: [EV], require_units: false } as unknown as Command;
    const change = memoryChangeOf(command, { deleted_unit_ids: [U1], deleted_event_ids: [EV], deleted_edge_ids: [E1] })!;
    expect(change.unit_ids.sort()).toEqual([U1, E1]);
    expect(change.edge_ids.sort()).toEqual([U1, E1]);
    expect(memoryChangeOf({ type: 'something.new', user_id: 'u', note: 'no ids' } as unknown as Command)).toBeNull();
  });
});

describe('documentText', () => {
  it('is the content, the keywords, the source turn and the turn before it', () => {
    const unit = { content: 'Went hiking.', keywords: ['hiking', 'trail'] };
    expect(documentText(unit)).toBe('Went hiking.\nhiking trail');
    expect(documentText(unit, { source: 'Ann: Went hiking. Saw a bear on the trail!', previous: 'Bob: What did you do on Sunday?' }))
      .toBe('Went hiking.\nhiking trail\nAnn: Went hiking. Saw a bear on the trail!\nBob: What did you do on Sunday?');
    expect(documentText({ content: 'Same.', keywords: [] }, { source: 'Same.', previous: null })).toBe('Same.');
  });
});
