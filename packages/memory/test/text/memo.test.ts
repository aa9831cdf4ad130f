import { changeCue, facetsInOrder, memoByText } from '../../src/text';
import { contentWords } from '../../src/consolidation/similarity';
import { objectStems, typedValues } from '../../src/consolidation/updates';

describe('memoByText', () => {
  it('analyses a text once while it is kept, and gives the first answer back', () => {
    const seen: string[] = [];
    const f = memoByText((t: string) => { seen.push(t); return new Set(t.split(' ')); });
    const a = f('the bus leaves at 9');
    expect(f('the bus leaves at 9')).toBe(a);
    f('the tram leaves at 10');
    f('the bus leaves at 9');
    expect(seen).toEqual(['the bus leaves at 9', 'the tram leaves at 10']);
  });

  it('keeps an undefined answer as an answer', () => {
    let calls = 0;
    const f = memoByText((_t: string) => { calls++; return undefined; });
    f('x');
    f('x');
    expect(calls).toBe(1);
  });

  it('is bounded: emptied when full, and a text over the length limit is analysed each time and not kept', () => {
    let calls = 0;
    const f = memoByText((t: string) => { calls++; return t.length; }, 2, 5);
    f('a'); f('b'); // full
    f('c'); // emptied, then c kept
    f('a'); // analysed again
    expect(calls).toBe(4);
    f('longer than five');
    f('longer than five');
    expect(calls).toBe(6);
  });

  it('consolidation\'s text analyses answer as before, and the same object for the same text', () => {
    const text = 'The dentist moved my appointment to March 14 at 5pm, 2 fillings for £80.';
    expect([...objectStems(text)].sort()).toEqual(['appointment', 'dentist', 'filling']);
    expect(objectStems(text)).toBe(objectStems(text));
    const values = typedValues(text);
    expect(Object.fromEntries([...values].map(([k, v]) => [k, [...v]]))).toEqual({ 'amount £': ['80'], 'count filling': ['2'], date: ['march 14', 'march'], time: ['5pm'] });
    expect(typedValues(text)).toBe(values);
  });

  it('the facets, the change cue and the content words of a statement: as before, and the same object for the same text', () => {
    const text = "also amara is moving to leeds, her mum got a job at the hospital there";
    expect(facetsInOrder(text)).toEqual(['residence', 'family', 'occupation', 'health']);
    expect(facetsInOrder(text)).toBe(facetsInOrder(text));
    expect(facetsInOrder('I quit my job and moved to Porto')).toEqual(['occupation', 'residence']);
    expect(changeCue(text)).toBe('update');
    expect(changeCue('I quit the cafe last week')).toBe('end');
    expect(changeCue('I love my job at the cafe')).toBeNull();
    expect([...contentWords('I really love hiking in the Mountains!')].sort()).toEqual(['hiking', 'love', 'mountain']);
    expect(contentWords('I really love hiking in the Mountains!')).toBe(contentWords('I really love hiking in the Mountains!'));
  });
});
