import { EFFECTS, planUpdate } from '../../src/semantic';
import { unit } from './fixtures';

describe('planUpdate', () => {
  const berlin = unit('berlin', 'I live in Berlin', { stream_id: 's-home', importance: 0.7 });
  const pizza = unit('pizza', 'I like pizza');

  it('"I moved to Paris" over "I live in Berlin" -> obsolete, new unit in that stream', () => {
    const p = planUpdate({ instruction: 'I moved to Paris', units: [berlin, pizza], default_stream_id: 's-default' });
    expect(p.source_content).toBe('I moved to Paris');
    expect(p.extracted_facts).toEqual([{ subject: 'user', attribute: 'residence', value: 'paris', polarity: 'positive', single_valued: true, text: 'I moved to Paris' }]);
    expect(p.actions).toEqual([{
      target_unit_id: 'berlin', action: 'obsolete', confidence: 0.85,
      reason: 'new value for your residence: "berlin" -> "paris"', effect: EFFECTS.obsolete, target_unit: berlin,
    }]);
    expect(p.new_unit).toEqual({
      content: 'I moved to Paris', keywords: ['moved', 'paris'], subject: 'user', attribute: 'residence',
      stream_id: 's-home', org_id: null, importance: 0.7, memory_type: 'factual',
    });
  });

  it('opposite polarity -> contradicts', () => {
    const p = planUpdate({ instruction: "I don't like pizza anymore", units: [pizza, berlin], default_stream_id: 's' });
    expect(p.actions.map((a) => [a.target_unit_id, a.action, a.confidence])).toEqual([['pizza', 'contradicts', 0.9]]);
    expect(p.actions[0].reason).toBe('"I do not like pizza anymore" negates "I like pizza"');
    expect(p.new_unit?.content).toBe("I don't like pizza anymore");
    const q = planUpdate({ instruction: 'I no longer live in Berlin', units: [berlin], default_stream_id: 's' });
    expect(q.actions.map((a) => a.action)).toEqual(['contradicts']);
  });

  it('same value -> reaffirm, and nothing new is created', () => {
    const p = planUpdate({ instruction: 'Remember that I live in Berlin, Germany', units: [berlin], default_stream_id: 's' });
    expect(p.actions.map((a) => [a.action, a.reason])).toEqual([['reaffirm', 'already says your residence is "berlin"']]);
    expect(p.new_unit).toBeNull();
  });

  it('lists units that only share words as ignore, omits unrelated ones, skips retired ones', () => {
    const parisTrip = unit('trip', 'We had a great trip to Paris in May');
    const old = unit('old', 'I live in Madrid', { retired_at: '2024-01-01T00:00:00.000Z', retired_reason: 'superseded' });
    const p = planUpdate({ instruction: 'I moved to Paris', units: [parisTrip, pizza, old, berlin], default_stream_id: 's' });
    expect(p.actions.map((a) => [a.target_unit_id, a.action])).toEqual([['berlin', 'obsolete'], ['trip', 'ignore']]);
    expect(p.actions[1]).toMatchObject({ reason: 'shares words (paris) but states a different fact', effect: 'no change', confidence: 0.75 });
  });

  it('keeps other people and multi-valued attributes apart', () => {
    const sister = unit('sister', 'My sister lives in Rome');
    const sushi = unit('sushi', 'I like sushi');
    const p = planUpdate({ instruction: 'I moved to Rome', units: [sister, sushi], default_stream_id: 's' });
    expect(p.actions.map((a) => [a.target_unit_id, a.action])).toEqual([['sister', 'ignore']]);
    const q = planUpdate({ instruction: 'I like pizza', units: [sushi], default_stream_id: 's' });
    expect(q.actions).toEqual([]);
    expect(q.new_unit?.stream_id).toBe('s');
  });

  it('obsoletes a unit tagged with the attribute when its value cannot be read', () => {
    const tagged = unit('tagged', 'Home base: Kreuzberg', { subject: 'user', attribute: 'city' });
    const p = planUpdate({ instruction: 'I moved to Paris', units: [tagged], default_stream_id: 's' });
    expect(p.actions.map((a) => [a.action, a.confidence])).toEqual([['obsolete', 0.6]]);
  });

  it('caps the actions at limit, strongest first', () => {
    const units = [unit('a', 'I live in Berlin', { transaction_time: '2024-01-01T00:00:00.000Z' }), unit('b', 'I live in Oslo', { transaction_time: '2024-02-01T00:00:00.000Z' }), unit('c', 'Paris is nice')];
    const p = planUpdate({ instruction: 'I moved to Paris', units, limit: 2, default_stream_id: 's' });
    expect(p.actions.map((a) => a.target_unit_id)).toEqual(['b', 'a']);
  });
});
