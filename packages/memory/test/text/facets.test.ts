import { facetsInOrder, facetsOf } from '../../src/text';

const of = (text: string) => [...facetsOf(text)].sort();

describe('facets: the kind of personal fact a sentence speaks of', () => {
  it('bridges a question and a statement that share no content word', () => {
    expect(of('What does Kofi do for a living?')).toEqual(['occupation']);
    expect(of('Kofi is a translator by profession.')).toEqual(['occupation']);
    expect(of('Where does Maya live now?')).toEqual(['residence']);
    expect(of('We moved to York in August.')).toEqual(['residence']);
  });

  it('reads a role taken up, a habit of choosing, getting around, and the medical kind', () => {
    expect(of('I start in June as a lighting designer.')).toEqual(['occupation']);
    expect(of('Sarwa hired me as a product manager')).toEqual(['occupation']);
    expect(of('I always want an aisle seat.')).toEqual(['preference', 'travel']);
    expect(of('How does Kofi get around these days?')).toEqual(['commute']);
    expect(of('Which blood pressure medicine is Mum taking?')).toEqual(['family', 'health']);
    expect(of('She is on losartan 50 mg now.')).toEqual(['health']);
    expect(of('The new landlord is Northgate Lettings.')).toEqual(['residence']);
    expect(of('Which lessons is Tomás taking now?')).toEqual(['education']);
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
