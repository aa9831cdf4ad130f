import type { ApplyEffects } from '@strata/store';
import { memoryChangesOf } from '../../src/indexes/changes';
import { retrieval } from '@strata/memory';

const { documentText } = retrieval;

const U1 = '00000000-0000-4000-8000-000000000001';
const U2 = '00000000-0000-4000-8000-000000000002';
const E1 = '00000000-0000-4000-8000-0000000000e1';

const effects = (e: Partial<ApplyEffects>): ApplyEffects => ({ units: [], edges: [], l3: [], users: [], events: [], failures: [], pending: [], ...e });

describe('memoryChangesOf', () => {
  it('is nothing for effects that touch no unit or edge', () => {
    expect(memoryChangesOf(effects({}))).toEqual([]);
    expect(memoryChangesOf(effects({ l3: [{ user_id: 'u', kind: 'task', id: U1, change: 'changed', status: 'completed' }] }))).toEqual([]);
  });

  it('groups units and edges per user, record-only units apart', () => {
    const changes = memoryChangesOf(effects({
      units: [
        { user_id: 'u', unit_id: U1, change: 'created', record_only: false },
        { user_id: 'u', unit_id: U2, change: 'changed', record_only: true },
        { user_id: 'v', unit_id: U2, change: 'deleted', record_only: false },
      ],
      edges: [{ user_id: 'u', edge_id: E1, change: 'created' }],
    }));
    expect(changes).toEqual([
      { user_id: 'u', unit_ids: [U1], edge_ids: [E1] },
      { user_id: 'v', unit_ids: [U2], edge_ids: [] },
      { user_id: 'u', unit_ids: [U2], edge_ids: [], records_only: true },
    ]);
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
