import { extractSubjectAttribute } from '../../src/consolidation';
import { extractFacts, extractForgetTarget } from '../../src/semantic';
import { attributeLabel, canonicalAttribute, FUNCTION_WORDS, stem, stemPlural, STOPWORDS } from '../../src/text';

describe('one fact vocabulary for consolidation and semantic update', () => {
  it.each([
    ['My address is 5 Pine Road.', 'residence'],
    ['My home address is 5 Pine Road.', 'residence'],
    ['My company is Acme.', 'employer'],
    ['My new phone number is 555-1234.', 'phone number'],
  ])('%s: the attribute a stored unit gets is the one an instruction reads', (text, label) => {
    const stored = extractSubjectAttribute(text, 'user');
    expect(stored?.attribute).toBe(label);
    const [read] = extractFacts(text);
    expect(canonicalAttribute(stored!.attribute)).toBe(read.attribute);
  });
  it('a correction by address and one by "I moved to" share the attribute', () => {
    expect(extractSubjectAttribute('My address is 5 Pine Road.', 'user')?.attribute)
      .toBe(extractSubjectAttribute('I moved to Paris.', 'user')?.attribute);
    expect(extractForgetTarget('Forget my address').attributes).toEqual([canonicalAttribute(attributeLabel('address'))]);
  });
  it('labels round-trip to their keys', () => {
    for (const k of ['phone', 'email', 'residence', 'employer', 'favorite color']) expect(canonicalAttribute(attributeLabel(k))).toBe(k);
  });
});

describe('stemmer depths and stop-word layers', () => {
  it('the full stem is the plural stem followed by verb endings', () => {
    for (const w of ['addresses', 'moving', 'moved', 'stories', "anna's", 'running', 'class', 'bus']) expect(stem(w)).toBe(stem(stemPlural(w)));
    expect(['addresses', 'address'].map(stem)).toEqual(['address', 'address']);
    expect(['moving', 'moved', 'move'].map(stem)).toEqual(['mov', 'mov', 'mov']);
    expect(stemPlural('moving')).toBe('moving');
  });
  it('function words (but "mine") are a subset of the conversational stop words', () => {
    for (const w of FUNCTION_WORDS) if (w !== 'mine') expect(STOPWORDS.has(w)).toBe(true);
    expect(FUNCTION_WORDS.has('like')).toBe(false);
    expect(STOPWORDS.has('like')).toBe(true);
  });
});
