import { splitClauses, splitSentences, splitStatements } from '../../src/consolidation';

describe('splitSentences', () => {
  it('respects abbreviations, decimals, URLs and emails', () => {
    expect(splitSentences('Dr. Smith lives at 221 Baker St. and works in London. It costs 3.5 dollars! See https://example.com/a.b?x=1. Mail jo.doe@example.org. Then leave.'))
      .toEqual(['Dr. Smith lives at 221 Baker St. and works in London.', 'It costs 3.5 dollars!', 'See https://example.com/a.b?x=1.', 'Mail jo.doe@example.org.', 'Then leave.']);
  });

  it('ends at a.m. before a capital but not inside a date abbreviation', () => {
    expect(splitSentences('I woke at 7 a.m. Then I ran. We met on Jan. 5 at noon.')).toEqual(['I woke at 7 a.m.', 'Then I ran.', 'We met on Jan. 5 at noon.']);
  });

  it('does not split before a lowercase word that carries the sentence on, and splits lines', () => {
    expect(splitSentences('e.g. this one. and that\nNew line')).toEqual(['e.g. this one. and that', 'New line']);
  });

  it('splits a chat\'s sentence that starts in lowercase with its own subject after a full stop, not one without, nor after a reaction, an ellipsis or an abbreviation', () => {
    expect(splitSentences('big news: I handed in my notice at the bakery. i start as a junior designer next month'))
      .toEqual(['big news: I handed in my notice at the bakery.', 'i start as a junior designer next month']);
    expect(splitSentences('I got on the critical care course. starts 1 september, based at the Westfield hub'))
      .toEqual(['I got on the critical care course. starts 1 september, based at the Westfield hub']);
    expect(splitSentences('airpods or money. money is good')).toEqual(['airpods or money. money is good']);
    expect(splitSentences('haha. still at the bakery in Bristol')).toEqual(['haha. still at the bakery in Bristol']);
    expect(splitSentences('their office is in Cardiff so... we\'ll see')).toEqual(['their office is in Cardiff so... we\'ll see']);
    expect(splitSentences('I paid approx. ten euros for it')).toEqual(['I paid approx. ten euros for it']);
    expect(splitSentences('we met at 3 p.m. near the station')).toEqual(['we met at 3 p.m. near the station']);
  });

  it('splits a small-letter sentence that a connective opens before its own subject: the news after "and" or "also" is a statement of its own', () => {
    expect(splitSentences('Still at the bakery on Elm Road. and my brother Rui moved to Leeds'))
      .toEqual(['Still at the bakery on Elm Road.', 'and my brother Rui moved to Leeds']);
    expect(splitSentences('the exam went fine. also we sold the old car')).toEqual(['the exam went fine.', 'also we sold the old car']);
    // a connective before no subject of its own still carries the sentence on
    expect(splitSentences('I bought the blue one. and the lamp too')).toEqual(['I bought the blue one. and the lamp too']);
  });
});

describe('splitSentences: questions in a chat', () => {
  it('ends a statement before a question in small letters, so the statement is not taken for part of the question', () => {
    expect(splitSentences('yep, still at the port authority doing logistics planning. you?'))
      .toEqual(['yep, still at the port authority doing logistics planning.', 'you?']);
    expect(splitSentences('I want to run the Brooklyn Half on May 17. can you build me a plan?'))
      .toEqual(['I want to run the Brooklyn Half on May 17.', 'can you build me a plan?']);
    // a small-letter sentence that is no question still goes on with the one before
    expect(splitSentences('I got on the course. starts 1 september?')).toEqual(['I got on the course. starts 1 september?']);
    expect(splitSentences('We met Dr. who? No idea')).toEqual(['We met Dr. who?', 'No idea']);
  });

  it('ends a sentence at "!" or "?" whatever case follows', () => {
    expect(splitSentences('haha yes! good eye. smudged every page at RISD')).toEqual(['haha yes!', 'good eye. smudged every page at RISD']);
    expect(splitSentences('you ok? i heard about the flat')).toEqual(['you ok?', 'i heard about the flat']);
    // a statement's tail without a subject of its own goes on with it
    expect(splitSentences('also small news i got a job offer in Toronto!! moving in april')).toEqual(['also small news i got a job offer in Toronto!! moving in april']);
    expect(splitSentences('I got the job at the bakery!! i start monday')).toEqual(['I got the job at the bakery!!', 'i start monday']);
  });
});

describe('splitClauses', () => {
  it('keeps a comma splice whole when both sides speak of one kind of fact, and cuts one of two kinds', () => {
    expect(splitClauses('Btw I got the job at the Vienna opera, I start in June as a lighting designer.')).toEqual(['Btw I got the job at the Vienna opera, I start in June as a lighting designer.']);
    expect(splitClauses('I sold the bike last week, I am vegan now.')).toEqual(['I sold the bike last week.', 'I am vegan now.']);
  });

  it('splits at a conjunction followed by a personal subject, keeping each subject', () => {
    expect(splitClauses('I love hiking, and I go every weekend with my dog.')).toEqual(['I love hiking.', 'I go every weekend with my dog.']);
    expect(splitClauses('My sister lives in Boston; she works as a nurse.')).toEqual(['My sister lives in Boston.', 'She works as a nurse.']);
  });

  it('cuts a bare "and" only between two clauses of the speaker\'s own ("I … and I …")', () => {
    expect(splitClauses('I teach piano in Ghent and I cycle everywhere.')).toEqual(['I teach piano in Ghent.', 'I cycle everywhere.']);
    expect(splitClauses('We moved to York last month and we love the new place.')).toEqual(['We moved to York last month.', 'We love the new place.']);
    expect(splitClauses('Marco and I broke up.')).toEqual(['Marco and I broke up.']);
    expect(splitClauses('My sister and I went to Rome and we loved it.')).toEqual(['My sister and I went to Rome and we loved it.']);
    expect(splitClauses('I went home and I slept.')).toEqual(['I went home and I slept.']);
  });

  it('cuts a subject and verb in one word ("I\'m") with one word after it: two facts, one may change alone', () => {
    expect(splitClauses("I lift at PureGym on Mondays and Fridays, and I'm vegetarian.")).toEqual(['I lift at PureGym on Mondays and Fridays.', "I'm vegetarian."]);
    expect(splitClauses('We sold the flat in Leith, and we’re renters again.')).toEqual(['We sold the flat in Leith.', 'We’re renters again.']);
    expect(splitClauses('I went to the shop, and I cried.')).toEqual(['I went to the shop, and I cried.']);
  });

  it('is conservative: no split without a comma (but "I … and I …"), before "it", or when a side is too short', () => {
    expect(splitClauses('I went to a support group yesterday and it was so powerful.')).toEqual(['I went to a support group yesterday and it was so powerful.']);
    expect(splitClauses('I love hiking, and it relaxes me.')).toEqual(['I love hiking, and it relaxes me.']);
    expect(splitClauses('Yes, and I agree.')).toEqual(['Yes, and I agree.']);
    expect(splitClauses('I like tea and coffee.')).toEqual(['I like tea and coffee.']);
  });
});

it('splitStatements = sentences then clauses', () => {
  expect(splitStatements('I moved to Denver, but my brother stayed in Boston. He loves it.'))
    .toEqual(['I moved to Denver.', 'My brother stayed in Boston.', 'He loves it.']);
});
