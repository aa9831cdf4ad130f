import { classifyInstruction, extractFacts, extractForgetTarget, SemanticError, sourceContent } from '../../src/semantic';

describe('classifyInstruction', () => {
  it.each([
    ['Forget my old address', 'forget'], ['Please delete everything about my ex', 'forget'],
    ['remove my phone number', 'forget'], ['ERASE what you know about Japan', 'forget'],
    ['I moved to Paris', 'update'], ["Don't forget that I moved to Paris", 'update'],
    ['I deleted my Facebook account', 'update'], ['I forgot my keys', 'update'],
  ])('%s -> %s', (text, kind) => {
    expect(classifyInstruction(text)).toBe(kind);
    expect(classifyInstruction(text, 'auto')).toBe(kind);
  });

  it('honours an explicit mode and rejects an unknown one', () => {
    expect(classifyInstruction('Forget my address', 'update')).toBe('update');
    expect(classifyInstruction('I moved', 'FORGET')).toBe('forget');
    expect(() => classifyInstruction('x', 'purge')).toThrow(SemanticError);
    expect(() => classifyInstruction('x', 'purge')).toThrow(expect.objectContaining({ code: 'validation_failed', status: 400 }));
  });
});

describe('extractForgetTarget', () => {
  it('reads "Forget my old address"', () => {
    expect(extractForgetTarget('Forget my old address')).toEqual({
      phrase: 'my old address', words: ['address'], stems: ['address'], attributes: ['residence'], subject: 'user', qualifier: 'old', facts: [],
    });
  });

  it('reads "delete everything about my ex"', () => {
    expect(extractForgetTarget('delete everything about my ex')).toMatchObject({ phrase: 'my ex', words: ['ex'], attributes: [], subject: 'user', qualifier: null });
  });

  it('reads possessives, attribute pairs and statements', () => {
    expect(extractForgetTarget("Forget my sister's phone number")).toMatchObject({ words: ['phone', 'number'], attributes: ['phone'], subject: 'sister' });
    expect(extractForgetTarget('Erase all memories about my address and phone number.')).toMatchObject({ attributes: ['residence', 'phone'] });
    const t = extractForgetTarget('forget that I like pizza');
    expect(t.attributes).toEqual([]); // likes is multi-valued: the fact carries the value
    expect(t.facts.map((f) => [f.attribute, f.value])).toEqual([['likes', 'pizza']]);
    expect(extractForgetTarget('Please remove anything related to my trip to Japan')).toMatchObject({ words: ['trip', 'japan'], qualifier: null });
    expect(extractForgetTarget('forget my current job')).toMatchObject({ attributes: ['occupation'], qualifier: 'current' });
  });
});

describe('extractFacts', () => {
  const read = (t: string): unknown => extractFacts(t).map((f) => [f.subject, f.attribute, f.value, f.polarity]);
  it('reads the supported first-person forms', () => {
    expect(read('I live in Berlin')).toEqual([['user', 'residence', 'berlin', 'positive']]);
    expect(read('I moved to Paris.')).toEqual([['user', 'residence', 'paris', 'positive']]);
    expect(read("I'm now living in Rome")).toEqual([['user', 'residence', 'rome', 'positive']]);
    expect(read('I no longer live in Berlin')).toEqual([['user', 'residence', 'berlin', 'negative']]);
    expect(read("I don't like pizza anymore")).toEqual([['user', 'likes', 'pizza', 'negative']]);
    expect(read('I now work as a nurse')).toEqual([['user', 'occupation', 'nurse', 'positive']]);
    expect(read('My favourite color is blue and I work at Google')).toEqual([['user', 'favorite color', 'blue', 'positive'], ['user', 'employer', 'google', 'positive']]);
    expect(read("My sister's name is Anna")).toEqual([['sister', 'name', 'anna', 'positive']]);
    expect(read('Actually, my new address is 5 Pine Road.')).toEqual([['user', 'residence', '5 pine road', 'positive']]);
    expect(read('The weather was nice.')).toEqual([]);
  });
});

describe('sourceContent', () => {
  it('drops the directive around the statement', () => {
    expect(sourceContent('Please remember that I moved to Paris')).toBe('I moved to Paris');
    expect(sourceContent("Don't forget: my phone is 555-1234")).toBe('My phone is 555-1234');
    expect(sourceContent('Update: actually, I work at Acme')).toBe('I work at Acme');
  });
});
