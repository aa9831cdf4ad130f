import type { MemoryUnit } from '@strata/store';
import { createSemanticPlan, executePlan, previewView, SemanticError, type SemanticPlan } from '../../src/semantic';
import { ev, unit } from './fixtures';

const NOW = '2025-03-01T10:00:00.000Z';
const LATER = '2025-03-01T10:05:00.000Z';
const oak = unit('oak', 'I live at 12 Oak Street', { references: ['e-oak'], retired_at: '2024-06-01T00:00:00.000Z', retired_reason: 'superseded', superseded_by: 'pine', transaction_time: '2024-01-01T00:00:00.000Z' });
const pine = unit('pine', 'I live at 5 Pine Road', { references: ['e-pine'], transaction_time: '2024-06-01T00:00:00.000Z' });
const pizza = unit('pizza', 'I like pizza');
const berlin = unit('berlin', 'I live in Berlin', { stream_id: 's-home' });
const events = [ev('e-oak', 'I live at 12 Oak Street'), ev('e-pine', 'I live at 5 Pine Road'), ev('e-pizza', 'I like pizza')];

function ids(prefix: string): () => string {
  let n = 0;
  return () => `${prefix}-${++n}`;
}
const lookup = (units: MemoryUnit[]) => (id: string): MemoryUnit | undefined => units.find((u) => u.id === id);

async function forgetPlan(forget_mode: 'logical' | 'hard' = 'logical'): Promise<SemanticPlan> {
  return createSemanticPlan({
    plan_id: 'p1', user_id: 'u1', now: NOW, instruction: '  Forget my address ', forget_mode,
    units: [oak, pine, pizza], events, default_stream_id: 's-default',
  });
}

describe('createSemanticPlan', () => {
  it('builds a forget plan that expires 15 minutes later', async () => {
    const plan = await forgetPlan();
    expect(plan).toMatchObject({ plan_id: 'p1', user_id: 'u1', org_id: null, instruction: 'Forget my address', kind: 'forget', forget_mode: 'logical', created_at: NOW, expires_at: '2025-03-01T10:15:00.000Z' });
    expect(plan.forget_preview?.memory_units.map((u) => u.id).sort()).toEqual(['oak', 'pine']);
    expect(plan.forget_preview?.matched_events.map((e) => e.id)).toEqual(['e-oak', 'e-pine']);
    expect(plan.update_preview).toBeUndefined();
  });

  it('builds an update plan in auto mode', async () => {
    const plan = await createSemanticPlan({ plan_id: 'p2', user_id: 'u1', now: NOW, instruction: 'I moved to Paris', units: [berlin], default_stream_id: 's-default' });
    expect(plan.kind).toBe('update');
    expect(plan.update_preview?.actions.map((a) => [a.target_unit_id, a.action])).toEqual([['berlin', 'obsolete']]);
  });

  it('validates the request', async () => {
    const base = { plan_id: 'p', user_id: 'u1', now: NOW, units: [], default_stream_id: 's' };
    const cases: [Record<string, unknown>, string][] = [
      [{ instruction: '   ' }, '/instruction'], [{ instruction: 5 }, '/instruction'], [{ instruction: 'x'.repeat(10_001) }, '/instruction'],
      [{ instruction: 'forget x', mode: 'nuke' }, '/mode'], [{ instruction: 'forget x', forget_mode: 'soft' }, '/forget_mode'],
      [{ instruction: 'forget x', limit: 0 }, '/limit'], [{ instruction: 'forget x', limit: 2.5 }, '/limit'], [{ instruction: 'forget x', limit: '3' }, '/limit'],
    ];
    for (const [fields, path] of cases) {
      await expect(createSemanticPlan({ ...base, ...fields } as never)).rejects.toMatchObject({ code: 'validation_failed', status: 400, details: [expect.objectContaining({ path })] });
    }
    const units = Array.from({ length: 40 }, (_, i) => unit(`u${i}`, `I live at ${i} Elm Street`));
    const capped = await createSemanticPlan({ ...base, units, instruction: 'forget my address', limit: 100 });
    expect(capped.forget_preview?.memory_units).toHaveLength(25);
    const dflt = await createSemanticPlan({ ...base, units, instruction: 'forget my address' });
    expect(dflt.forget_preview?.memory_units).toHaveLength(10);
  });

  it('renders the preview body with a unit view', async () => {
    const body = previewView(await forgetPlan(), (u) => ({ id: u.id, content: u.content }));
    expect(body).toMatchObject({ plan_id: 'p1', kind: 'forget', expires_at: '2025-03-01T10:15:00.000Z', forget_preview: { memory_units: [{ id: 'pine', content: 'I live at 5 Pine Road' }, { id: 'oak', content: 'I live at 12 Oak Street' }] } });
  });
});

describe('executePlan', () => {
  it('logical forget retires exactly the previewed units, keeping earlier retirement times', async () => {
    const plan = await forgetPlan();
    const r = executePlan(plan, { user_id: 'u1', confirm: true, now: LATER, newId: ids('n'), currentUnit: lookup([oak, pine, pizza]) });
    expect({ ...r.response, affected_unit_ids: r.response.affected_unit_ids.sort() }).toEqual({ status: 'executed', plan_id: 'p1', kind: 'forget', affected_unit_ids: ['oak', 'pine'] });
    expect(r.changes).toEqual({
      retire: [
        { unit_id: 'pine', retired_at: LATER, retired_reason: 'forgotten', superseded_by: null },
        { unit_id: 'oak', retired_at: '2024-06-01T00:00:00.000Z', retired_reason: 'forgotten', superseded_by: 'pine' },
      ],
      delete_unit_ids: [], delete_event_ids: [], create_unit: null, edges: [],
    });
  });

  it('hard forget deletes the units and their matched events; vanished units are skipped', async () => {
    const plan = await forgetPlan('hard');
    const r = executePlan(plan, { user_id: 'u1', confirm: true, now: LATER, newId: ids('n'), currentUnit: lookup([pine]) });
    expect(r.response.affected_unit_ids).toEqual(['pine']);
    expect(r.changes).toMatchObject({ retire: [], delete_unit_ids: ['pine'], delete_event_ids: ['e-oak', 'e-pine'] });
  });

  it('update creates the new unit, retires the old one and links EvolvedTo', async () => {
    const plan = await createSemanticPlan({ plan_id: 'p2', user_id: 'u1', now: NOW, instruction: 'I moved to Paris', units: [berlin, pizza], default_stream_id: 's-default' });
    const r = executePlan(plan, { user_id: 'u1', confirm: true, now: LATER, newId: ids('n'), currentUnit: lookup([berlin, pizza]) });
    expect(r.response).toEqual({ status: 'executed', plan_id: 'p2', kind: 'update', affected_unit_ids: ['berlin'], created_memory_unit_id: 'n-1' });
    expect(r.changes.create_unit).toMatchObject({ id: 'n-1', user_id: 'u1', stream_id: 's-home', content: 'I moved to Paris', subject: 'user', attribute: 'residence', level: 1, transaction_time: LATER, valid_time: LATER, retired_at: null });
    expect(r.changes.retire).toEqual([{ unit_id: 'berlin', retired_at: LATER, retired_reason: 'superseded', superseded_by: 'n-1' }]);
    expect(r.changes.edges).toEqual([{ edge_id: 'n-2', user_id: 'u1', source_id: 'berlin', target_id: 'n-1', relation: 'EvolvedTo', weight: 0.85, created_at: LATER }]);
  });

  it('a contradiction links the new unit to the old with Contradicts', async () => {
    const plan = await createSemanticPlan({ plan_id: 'p3', user_id: 'u1', now: NOW, instruction: "I don't like pizza anymore", units: [pizza], default_stream_id: 's' });
    const r = executePlan(plan, { user_id: 'u1', confirm: true, now: LATER, newId: ids('n'), currentUnit: lookup([pizza]) });
    expect(r.changes.edges.map((e) => [e.source_id, e.target_id, e.relation])).toEqual([['n-1', 'pizza', 'Contradicts']]);
  });

  it('a pure reaffirmation changes nothing', async () => {
    const plan = await createSemanticPlan({ plan_id: 'p4', user_id: 'u1', now: NOW, instruction: 'I live in Berlin', units: [berlin], default_stream_id: 's' });
    const r = executePlan(plan, { user_id: 'u1', confirm: true, now: LATER, newId: ids('n'), currentUnit: lookup([berlin]) });
    expect(r).toEqual({ response: { status: 'executed', plan_id: 'p4', kind: 'update', affected_unit_ids: [] }, changes: { retire: [], delete_unit_ids: [], delete_event_ids: [], create_unit: null, edges: [] } });
  });

  it('refuses without confirm (400), for another user or org (403), and once expired (404)', async () => {
    const plan = { ...(await forgetPlan()), org_id: 'acme' };
    const ctx = { user_id: 'u1', confirm: true, now: LATER, newId: ids('n'), currentUnit: lookup([oak, pine]) };
    const code = (over: Record<string, unknown>): unknown => {
      try {
        executePlan(plan, { ...ctx, ...over });
        return 'ok';
      } catch (e) {
        expect(e).toBeInstanceOf(SemanticError);
        return [(e as SemanticError).status, (e as SemanticError).code];
      }
    };
    expect(code({ confirm: false })).toEqual([400, 'validation_failed']);
    expect(code({ confirm: 'yes' })).toEqual([400, 'validation_failed']);
    expect(code({ user_id: 'u2' })).toEqual([403, 'forbidden']);
    expect(code({ org_id: 'other' })).toEqual([403, 'forbidden']);
    expect(code({ org_id: 'acme' })).toBe('ok');
    expect(code({ now: '2025-03-01T10:15:00.000Z' })).toEqual([404, 'not_found']);
    expect(code({ now: '2025-03-01T10:14:59.999Z' })).toBe('ok');
  });
});
