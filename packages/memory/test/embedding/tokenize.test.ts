import { charNgrams, lookupUnits, rawTokens, splitClitic } from '../../src/embedding/tokenize';

describe('tokenize', () => {
  it('lowercases, drops punctuation and keeps numbers and inner punctuation', () => {
    expect(rawTokens('Hey John!! It’s 3:30, $5,000 on 8 May 2023... e-mail U.S.')).toEqual(['hey', 'john', "it's", '3', '30', '5,000', 'on', '8', 'may', '2023', 'e-mail', 'u.s']);
    expect(rawTokens('🙂 — …')).toEqual([]);
  });

  it('splits clitics as the embeddings were trained', () => {
    expect(splitClitic("can't")).toEqual(['ca', "n't"]);
    expect(splitClitic("mel's")).toEqual(['mel', "'s"]);
    expect(splitClitic("i'm")).toEqual(['i', "'m"]);
    expect(splitClitic("james'")).toEqual(['james']);
    expect(splitClitic('cat')).toEqual(['cat']);
  });

  it('keeps compounds the vocabulary knows and splits the others', () => {
    const vocab = new Set(['self-care', 'well', 'known', 'cafe', '5000']);
    const has = (w: string): boolean => vocab.has(w);
    expect(lookupUnits('Self-care is well-known at the Café: 5,000 visits', has)).toEqual(['self-care', 'is', 'well', 'known', 'at', 'the', 'cafe', '5000', 'visits']);
  });

  it('makes boundary-marked character n-grams, also for short words', () => {
    expect(charNgrams('cat', 3, 3)).toEqual(['<ca', 'cat', 'at>']);
    expect(charNgrams('a', 3, 5)).toEqual(['<a>']);
    expect(charNgrams('héllo', 5, 5)).toContain('héllo');
  });
});
