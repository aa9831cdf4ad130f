import { facetsInOrder, facetsOf } from '../../src/text';

const of = (text: string) => [...facetsOf(text)].sort();

describe('facets: the kind of personal fact a sentence speaks of', () => {
  it('bridges a question and a statement that share no content word', () => {
    expect(of('What does Kofi do for a living?')).toEqual(['occupation']);
    expect(of('Kofi is a translator by profession.')).toEqual(['occupation']);
    expect(of('Where does Maya live now?')).toEqual(['residence']);
    expect(of('We moved to York in August.')).toEqual(['residence']);
  });

  it('reads the medical kind and a preference by its words', () => {
    expect(of('She is on a new dose of metformin, the doctor said.')).toEqual(['health']);
    expect(of('Which seat does Rui prefer?')).toEqual(['preference', 'travel']);
  });

  it('leaves plain chat without a kind, and a liked thing a preference unless it is a hobby, pet or person', () => {
    expect(of('ok good, about time they treated it')).toEqual([]);
    expect(of('Omar likes quiet restaurants.')).toEqual(['preference']);
    expect(of('I love my dog.')).toEqual(['pet']);
  });

  it('orders the facets by where they first appear', () => {
    expect(facetsInOrder('I quit my job and moved to Porto')).toEqual(['occupation', 'residence']);
  });
});
