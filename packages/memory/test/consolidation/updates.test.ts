/**
 * Updates said in passing (updates.ts) and turn-level discourse (discourse.ts), through the planner:
 * what a user's chat changes, the old value retires; what it does not change, stays.
 */
import { planConsolidation, type ConsolidationInput, type ConsolidationPlan } from '../../src/consolidation';
import { endingNames, endsOwnThing, slotOf, updatesTopic } from '../../src/consolidation/updates';
import { openingName } from '../../src/consolidation/discourse';
import { changeCue, endedClause, endsWithNewValue } from '../../src/text';
import { HashEmbedder } from './hash-embedder';
import { MemoryFixture, counter, event } from './fixtures';

const NOW = '2025-06-14T19:05:00.000Z';

function setup() {
  const mem = new MemoryFixture();
  const newId = counter('u');
  const run = async (events: ConsolidationInput['events']): Promise<ConsolidationPlan> => {
    const plan = await planConsolidation({ events, now: NOW, newId, embedder: new HashEmbedder(), findSimilar: mem.findSimilar, findBySubjectAttribute: mem.findBySubjectAttribute });
    mem.apply(plan);
    return plan;
  };
  const current = () => [...mem.units.values()].filter((u) => u.retired_at === null).map((u) => u.content).sort();
  return { mem, run, current };
}

const at = (day: string, i = 0) => ({ valid_time: `${day}T10:0${i}:00.000Z` });
/** A named person's chat line on `day` (the i-th minute past ten), as a group chat export reaches an agent. */
const say = (name: string, text: string, day: string, i = 0) => event(`${name}: ${text}`, { ...at(day, i), metadata: { speaker: name } });

describe('updates said in passing', () => {
  it('an implicit change of commute retires the old one ("sold the bike, I take the train now")', async () => {
    const { run, current } = setup();
    await run([event('I cycle to work every day, rain or shine.', at('2025-01-10')), event('I love my job at the library.', at('2025-01-10', 1))]);
    const p = await run([event('Sold the bike last week, I take the train to work now.', at('2025-05-02'))]);
    expect(p.retired).toHaveLength(1);
    // one kind of fact on both sides of the comma: one statement, as written
    expect(current()).toEqual(['I love my job at the library.', 'Sold the bike last week (week of 2025-04-21), I take the train to work now.']);
  });

  it('an ending retires only what it names; a sentence holding two facts keeps the one that did not change', async () => {
    const { run, current } = setup();
    await run([event('Omar: Long shift at the cafe yesterday. Also I adopted a dog called Rufus.', { ...at('2025-03-01'), metadata: { speaker: 'Omar' } })]);
    await run([event('Omar: I quit the cafe last week.', { ...at('2025-06-14'), metadata: { speaker: 'Omar' } })]);
    expect(current()).toEqual(['Omar: Also I adopted a dog called Rufus.', 'Omar: I quit the cafe last week (week of 2025-06-02).']);
  });

  it('a named third person\'s change is theirs, not the speaker\'s', async () => {
    const { run, mem } = setup();
    await run([event('Lena: I live in Hamburg.', { ...at('2025-03-01'), metadata: { speaker: 'Lena' } }), event('Lena: Priya lives in Leeds.', { ...at('2025-03-01', 1), metadata: { speaker: 'Lena' } })]);
    await run([event('Omar: Priya moved to Bristol now.', { ...at('2025-06-01'), metadata: { speaker: 'Omar' } })]);
    const byContent = new Map([...mem.units.values()].map((u) => [u.content, u]));
    expect(byContent.get('Lena: Priya lives in Leeds.')?.retired_at).not.toBeNull();
    expect(byContent.get('Lena: I live in Hamburg.')?.retired_at).toBeNull();
  });

  it('a topic told anew by anyone in the chat retires its old value ("deadline moved")', async () => {
    const { run, current } = setup();
    await run([event('Priya: Atlas migration deadline is March 31.', { ...at('2025-02-01'), metadata: { speaker: 'Priya' } })]);
    await run([event('Dmitri: heads up, deadline moved. Atlas now has to be done by April 30.', { ...at('2025-03-10'), metadata: { speaker: 'Dmitri' } })]);
    expect(current()).toEqual(['Dmitri: heads up, deadline moved. Atlas now has to be done by April 30 (2025-04-30).']);
  });

  it('a plan pushed to another month, and an amount changed in the same unit, retire the old value', async () => {
    const { run, current } = setup();
    await run([
      event('Diego: Defense is planned for next May, pa.', { ...at('2024-07-04'), metadata: { speaker: 'Diego' } }),
      event('She started me on metformin 500 mg once a day.', at('2024-10-14')),
      event('I walk the dog every evening.', at('2024-10-14', 1)),
    ]);
    await run([
      event('Diego: So the defense got pushed to August.', { ...at('2025-02-15'), metadata: { speaker: 'Diego' } }),
      event('Dr. Aydin switched me to extended-release metformin, 1000 mg with dinner.', at('2025-02-15', 1)),
    ]);
    expect(current()).toEqual([
      'Diego: So the defense got pushed to August.',
      'Dr. Aydin switched me to extended-release metformin, 1000 mg with dinner.',
      'I walk the dog every evening.',
    ]);
  });

  it('one thing in common and a new value of its kind retire the old statement; a month or the question a reply carries is no such thing', async () => {
    const { run, current } = setup();
    await run([
      event('How far does the knee bend now?', { ...at('2025-02-19'), role: 'assistant' }),
      event('118 degrees today.', at('2025-02-19', 1)),
      event('Jonah: the baby is due August 20', { ...at('2025-02-19', 2), metadata: { speaker: 'Jonah' } }),
      event('Roughly how much do you spend on groceries a week, and when do you shop?', { ...at('2025-02-19', 3), role: 'assistant' }),
      event('We keep it around €80 a week.', at('2025-02-19', 4)),
    ]);
    await run([
      event('The bend is up to 130 now.', at('2025-06-26')),
      event('Jonah: Carl is moving out end of August now, so the room is free', { ...at('2025-06-26', 1), metadata: { speaker: 'Jonah' } }),
      event("Oh, and I've moved the shop to Thursdays now, home delivery from Albert Heijn.", at('2025-06-26', 2)),
    ]);
    expect(current()).toEqual([
      "Jonah: Carl is moving out end of August now, so the room is free",
      'Jonah: the baby is due August 20 (2025-08-20)',
      "Oh, and I've moved the shop to Thursdays now, home delivery from Albert Heijn.",
      'The bend is up to 130 now.',
      'We keep it around €80 a week. (asked: Roughly how much do you spend on groceries a week, and when do you shop?)',
    ]);
  });

  it('an amount updated, cut or raised to a new value retires the old one', async () => {
    const { run, current } = setup();
    await run([event('Our food budget is €80 a week.', at('2025-01-10'))]);
    await run([event('We updated the budget to €110 per week.', at('2025-01-20'))]);
    expect(current()).toEqual(['We updated the budget to €110 per week.']);
    await run([event('Cut the budget to €95 a week from March.', at('2025-03-01'))]);
    expect(current()).toEqual(['Cut the budget to €95 a week from March.']);
  });

  it('a change retires only a value of its own kind, said by its own subject', async () => {
    const { run, current } = setup();
    const by = (speaker: string, day: string, i = 0) => ({ ...at(day, i), metadata: { speaker } });
    await run([
      event("New year, new plan. I'm Hana, 34.", at('2025-01-05')),
      event('About 6:40 per km on easy runs.', at('2025-01-05', 1)),
      event('Also, my son Adam is coming with me, he is 9.', at('2025-01-05', 2)),
      event('Zanele: gary finally put up a bike shed, the combination is 1987', by('Zanele', '2025-01-06')),
      event('Hannah: We bought the house in Bristol, the one on Ashley Road.', by('Hannah', '2025-01-06', 1)),
      event('Lucía: 12h shift tomorrow on the pediatric ward at La Paz, pray for me', by('Lucía', '2025-01-06', 2)),
      event('Please send the first pair back with the label I have emailed you.', { ...at('2025-01-06', 3), role: 'assistant' }),
    ]);
    const before = current();
    await run([
      // a weekday is no new value for an age or a pace, though "new" and "runs" are said again
      event('I moved my runs to Tuesday, Thursday and Sunday because of my new job schedule.', at('2025-04-01')),
      // a day of a month is no new age; the son is named by both, which is no topic of its own
      event('Your return flight NW413 is now on July 3 at 12:05, for both you and Adam.', { ...at('2025-04-01', 1), role: 'assistant' }),
      // the bike of the shed is still a bike, and a bike in a shed is no home
      event('Zanele: meh. fine. got a new bike btw and it lives in the shed, not risking it', by('Zanele', '2025-04-02')),
      // an email address is no home address
      event('Hannah: So the BBC address is dead, use hannah.okafor@proton.me from now on.', by('Hannah', '2025-04-02', 1)),
      // "he" whom nothing names is not the speaker
      event("Lucía: he took a job in Valencia and I'm not moving, simple as that", by('Lucía', '2025-04-02', 2)),
      // emailing is no email address
      event('Your account email is now jonas.becker@posteo.de.', { ...at('2025-04-03'), role: 'assistant' }),
    ]);
    for (const old of before) expect(current()).toContain(old);
  });

  it('without a change cue nothing retires', async () => {
    const { run, current } = setup();
    await run([event('I work at the cafe on Main Street.', at('2025-01-01'))]);
    await run([event('I really like my coworkers at the cafe.', at('2025-02-01'))]);
    expect(current()).toHaveLength(2);
  });

  it("a tool's later output of the same record is its new state: given fields replace, fields left out still hold", async () => {
    const { run, current } = setup();
    const tool = (content: string, day: string) => event(content, { ...at(day), role: 'tool', content_type: 'json' });
    await run([tool('{"booking":"ZX81K","date":"2025-10-03","seat":"23C","status":"confirmed"}', '2025-09-01')]);
    // a partial output: the record's state is the old one with the new status, stated once
    await run([tool('{"booking":"ZX81K","status":"delayed"}', '2025-09-10')]);
    expect(current()).toEqual(['tool: booking: ZX81K; date: 2025-10-03; seat: 23C; status: delayed']);
    await run([tool('{"booking":"ZX81K","seat":"19D","gate":"B12"}', '2025-09-20')]);
    expect(current()).toEqual(['tool: booking: ZX81K; date: 2025-10-03; seat: 19D; status: delayed; gate: B12']);
    // the same state again only reinforces it; another record is its own
    await run([tool('{"booking":"ZX81K","seat":"19D"}', '2025-09-21'), tool('{"booking":"QQ1","seat":"1A"}', '2025-09-21')]);
    expect(current().sort()).toEqual(['tool: booking: QQ1; seat: 1A', 'tool: booking: ZX81K; date: 2025-10-03; seat: 19D; status: delayed; gate: B12']);
  });

  it("what was said in words of a record's old state retires with the fields it restated", async () => {
    const { run, current } = setup();
    const tool = (content: string, day: string, i = 0) => event(content, { ...at(day, i), role: 'tool', content_type: 'json' });
    const assistant = (content: string, day: string, i = 0) => event(content, { ...at(day, i), role: 'assistant' });
    await run([
      tool('{"account":"7781-2290","plan":"Fibre 150","speed_mbps":150,"monthly":"32.00 GBP","billing_day":5,"landline":"0116 270 4418"}', '2025-01-08'),
      assistant("You're on Fibre 150 at £32 a month, and your bill is taken on the 5th of each month.", '2025-01-08', 1),
      assistant('Your landline number 0116 270 4418 stays with you.', '2025-01-08', 2),
    ]);
    await run([
      tool('{"account":"7781-2290","plan":"Fibre 500","speed_mbps":500,"monthly":"39.00 GBP","status":"upgraded"}', '2025-02-14'),
      assistant("You're upgraded to Fibre 500 at £39 a month from tomorrow.", '2025-02-14', 1),
    ]);
    // the plan and price said in words went with the old plan; the landline, which did not change, stays
    expect(current()).toEqual([
      "assistant: You're upgraded to Fibre 500 at £39 a month from tomorrow (2025-02-15).",
      'assistant: Your landline number 0116 270 4418 stays with you.',
      'tool: account: 7781-2290; plan: Fibre 500; speed_mbps: 500; monthly: 39.00 GBP; billing_day: 5; landline: 0116 270 4418; status: upgraded',
    ]);
    // fields are counted, not words: the three words of an address are one field, the visit's date another
    await run([
      tool('{"order":"MOV-30417","to":"4 Elm Close, Oadby, LE2 4RT","engineer_visit":"2025-05-09","status":"booked"}', '2025-04-22'),
      assistant('An engineer will connect 4 Elm Close on May 9 between 8am and 1pm.', '2025-04-22', 1),
    ]);
    await run([tool('{"order":"MOV-30417","engineer_visit":"2025-05-16","status":"rescheduled"}', '2025-05-06')]);
    expect(current().filter((c) => /Elm Close/.test(c))).toEqual([
      'tool: order: MOV-30417; to: 4 Elm Close, Oadby, LE2 4RT; engineer_visit: 2025-05-16; status: rescheduled',
    ]);
  });
});

describe('retiring no more than changed', () => {
  it('a change told of a person named after an opener is theirs ("speaking of the kids, Ola is moving out")', async () => {
    const { run, mem } = setup();
    await run([say('Bea', 'Our place is 9 Quarry Road, top floor.', '2025-01-05'), say('Bea', 'Ola lives with us since the summer.', '2025-01-05', 1)]);
    await run([say('Bea', 'Anyway speaking of the kids, Ola is moving out in March, she found a job in Cork.', '2025-02-10')]);
    const byContent = new Map([...mem.units.values()].map((u) => [u.content, u]));
    expect(byContent.get('Bea: Our place is 9 Quarry Road, top floor.')?.retired_at).toBeNull();
  });

  it('a new home said beside a colleague keeps the job, and a date moved is no move', async () => {
    const { run, current } = setup();
    await run([event('I teach maths at Eastgate school, my boss there is Mr. Okoro.', at('2025-01-05')), event('My flat is in Holloway, tiny but cheap.', at('2025-01-05', 1))]);
    await run([event('Now I live in Walthamstow with my colleague Ife, the walk to work is longer.', at('2025-04-01'))]);
    expect(current()).toContain('I teach maths at Eastgate school, my boss there is Mr. Okoro.');
    expect(current()).not.toContain('My flat is in Holloway, tiny but cheap.');
    await run([event('The parents evening was moved to 12 May because of the strike.', at('2025-04-20'))]);
    expect(current()).toContain('Now I live in Walthamstow with my colleague Ife, the walk to work is longer.');
  });

  it('a count of other things is no new value ("hired 4 people" after "10 of 10 licences used")', () => {
    const owner = { owner: 'user' };
    expect(updatesTopic({ text: 'We hired 4 people this month so we need more licences', ...owner }, { text: 'assistant: You have 10 of 10 licences in use on the Pro tier.', ...owner })).toBe(false);
    expect(updatesTopic({ text: 'We now have 14 licences', ...owner }, { text: 'assistant: You have 10 licences on the Pro tier.', ...owner })).toBe(true);
  });

  it("a support tool's later output of a customer merges into the customer's record, whose other fields still hold", async () => {
    const { run, current } = setup();
    const tool = (o: unknown, day: string) => event(JSON.stringify(o), { ...at(day), role: 'tool', content_type: 'json' });
    await run([tool({ customer: 'C-1042', name: 'Ida Berg', phone: '+46 70 123 45 67', email: 'ida@old.se' }, '2025-01-05')]);
    await run([tool({ customer: 'C-1042', email: 'ida@new.se', status: 'updated' }, '2025-03-05')]);
    const records = current().filter((c) => c.includes('C-1042'));
    expect(records).toHaveLength(1);
    expect(records[0]).toContain('+46 70 123 45 67');
    expect(records[0]).toContain('ida@new.se');
    expect(records[0]).not.toContain('ida@old.se');
  });

  it("a list in a record's later output is the whole list: an item dropped from it is gone", async () => {
    const { run, current } = setup();
    const tool = (o: unknown, day: string) => event(JSON.stringify(o), { ...at(day), role: 'tool', content_type: 'json' });
    await run([tool({ workspace: 'acme', seats: 5, admins: ['ann@acme.io', 'bo@acme.io'] }, '2025-01-05')]);
    await run([tool({ workspace: 'acme', admins: ['bo@acme.io'], status: 'updated' }, '2025-03-05')]);
    expect(current().filter((c) => c.includes('acme'))).toEqual(['tool: workspace: acme; seats: 5; admins[0]: bo@acme.io; status: updated']);
  });
});

describe('a value set for a date to come', () => {
  it('is a change ("from 1 June the rent will be"), a span or a stay for a while is not', () => {
    expect(changeCue('From 3 March the membership will be £42 a month.')).toBe('update');
    expect(changeCue('from next term the choir will be on Thursdays')).toBe('update');
    expect(changeCue('From May to July I was in Peru.')).toBeNull();
    expect(changeCue('they are sending me to Oslo for three weeks from june 2, it will be cold')).toBeNull();
  });
});

describe('a new holder of a role', () => {
  it('ends what was said of another holder in it, and nothing else about them', async () => {
    const { run, current } = setup();
    await run([
      say('Dana', 'Ruth is the strictest manager I ever had', '2025-01-10'),
      say('Dana', 'Ruth wants the report by Friday', '2025-01-10', 1),
      say('Omar', 'the landlord is still Mr. Brandt, rent by the 1st', '2025-01-10', 2),
      say('Omar', 'Ben runs the five-a-side team, he picks the line-up', '2025-01-10', 3),
      say('Omar', 'Lina is buying the kit for the team', '2025-01-10', 4),
    ]);
    await run([
      say('Omar', 'Kemal from finance takes over as our manager.', '2025-03-01'),
      say('Dana', 'the new landlord is a company called Harbour Lets, the app does the rent', '2025-03-01', 1),
      say('Dana', 'Lina runs the team now, Ben moved away', '2025-03-01', 2),
    ]);
    const now = current();
    expect(now).not.toContain('Dana: Ruth is the strictest manager I ever had');
    expect(now).toContain('Dana: Ruth wants the report by Friday');
    expect(now).not.toContain('Omar: the landlord is still Mr. Brandt, rent by the 1st');
    expect(now).not.toContain('Omar: Ben runs the five-a-side team, he picks the line-up');
    expect(now).toContain('Omar: Lina is buying the kit for the team');
  });
});

describe('what confirms or speaks of a change already told retires nothing', () => {
  it("an assistant's confirmation in the same exchange keeps the user's statement; 'the new job' is the one told; 'we moved in' moves into the place named", async () => {
    const { run, current } = setup();
    await run([
      event('oh and Harwick raised the oat milk to $3 a carton', at('2025-02-01', 0)),
      event('assistant: Updated Harwick Dairy oat milk price to $3.00/carton.', { ...at('2025-02-01', 1), role: 'assistant' }),
      say('Ravi', 'my brother Anil just accepted a position in Leeds, he is a surveyor', '2025-02-01', 2),
      event('we made an offer on the cottage on Mill Lane', at('2025-02-01', 3)),
    ]);
    await run([
      say('Ravi', 'Anil loves the new job though', '2025-04-01'),
      event('And, um, we moved in.', at('2025-04-01', 1)),
    ]);
    const now = current();
    expect(now).toContain('oh and Harwick raised the oat milk to $3 a carton');
    expect(now).toContain('Ravi: my brother Anil just accepted a position in Leeds, he is a surveyor');
    expect(now).toContain('we made an offer on the cottage on Mill Lane');
  });

  it('a date told more exactly is the same date; "that works" is no topic', () => {
    const owner = { owner: 'jo' };
    expect(updatesTopic({ text: 'the new role started last week (week of 2025-03-03)', ...owner }, { text: 'I got the deputy role! Starting in March.', ...owner })).toBe(false);
    expect(updatesTopic({ text: 'the role now starts in April', ...owner }, { text: 'I got the deputy role! Starting in March.', ...owner })).toBe(true);
    expect(updatesTopic({ text: 'switching gyms, the new one is $49 a month, that works', ...owner }, { text: 'Sam works nights, $30 a shift', ...owner })).toBe(false);
  });

  it('a count or a place in a series is no shared thing ("first two months at M Shed done" / "the quiz is on the first monday now")', () => {
    expect(updatesTopic({ text: 'Tomek: quiz at the Red Lion is on the first monday of the month now, not thursdays', owner: 'tomek' },
      { text: 'Liesl: first two months at M Shed done.', owner: 'liesl' })).toBe(false);
    expect(updatesTopic({ text: 'Tomek: quiz at the Red Lion is on the first monday of the month now, not thursdays', owner: 'tomek' },
      { text: 'Priyanka: the quiz is on thursdays, 8pm', owner: 'priyanka' })).toBe(true);
  });

  it('a new value counts only where the shared topic is spoken of, or in a sentence pointing back to it', () => {
    const owner = { owner: 'jamal' };
    // April is the book club's date, not the job's; "Heads" opening a sentence is no name, nor "heads up" a topic
    expect(updatesTopic({ text: 'Fair. Heads up, I might miss April — the new job started last week (week of 2025-03-03)', ...owner }, { text: 'Also big news from me — I got the deputy head job! Starting in March.', ...owner })).toBe(false);
    expect(updatesTopic({ text: 'Fair. Heads up, I might miss April — the new job starts in May now', ...owner }, { text: 'Also big news from me — I got the deputy head job! Starting in March.', ...owner })).toBe(true);
    const maren = { owner: 'maren' };
    expect(updatesTopic({ text: "Also heads up. I've got a new number, the old one's gone. It's 07700 900958 now", ...maren }, { text: 'If Gary needs me, my number is 07700 900311.', ...maren })).toBe(true);
  });

  it("a transcript's tag, a letter's greeting, the word 'news' and two names alone are no shared topic", () => {
    const nadia = { owner: 'nadia' };
    expect(updatesTopic({ text: '[voice note 2:20] and um, okay my news is smaller but, like, I got a job at the Parkdale library!', ...nadia }, { text: "[voice note 1:20] um, okay, news from me, I have a new roommate, Priyanka, she's a nurse.", ...nadia })).toBe(false);
    const yasmin = { owner: 'yasmin' };
    expect(updatesTopic({ text: 'Dear Mr Ashworth, Clive came this afternoon and fitted a new catch.', ...yasmin }, { text: 'Dear Mr Ashworth, She is a seven-year-old indoor cat named Pepper, from the rescue centre in Yeovil.', ...yasmin })).toBe(false);
    const fen = { owner: 'fen' };
    expect(updatesTopic({ text: "Also Pablo says hi from Glasgow, he's joined a new choir there as a tenor!", ...fen }, { text: 'Pablo is moving to Glasgow in November.', ...fen }, { names: new Set(['pablo']) })).toBe(false);
    // a thing in common still carries the change, tag or not
    expect(updatesTopic({ text: '[voice note 0:40] update: the library job now starts on June 2', ...nadia }, { text: '[voice note 2:20] I got a job at the Parkdale library! starting May 5', ...nadia })).toBe(true);
  });

  it("a change told in a clause of another's ('her mum got a job', 'he moved') is not the speaker's", async () => {
    const { run, current } = setup();
    await run([say('Zoey', 'pearl pop changed my shift to sundays, i work at the bubble tea place', '2025-03-02')]);
    await run([say('Zoey', 'also amara is moving to leeds 😭 her mum got a job at the hospital there', '2025-06-20')]);
    expect(current().some((c) => c.includes('pearl pop'))).toBe(true);
    expect(slotOf('also amara is moving to leeds 😭 her mum got a job at the hospital there', 'zoey', new Set())?.facets ?? []).not.toContain('occupation');
    expect(slotOf('i got a job at the hospital there', 'zoey', new Set())?.facets).toContain('occupation');
  });

  it('the parts of a day are no topic, nor a name the chat knows, wherever it stands', () => {
    const user = { owner: 'user' };
    expect(updatesTopic({ text: "she's (Lucy) been running mornings anyway. bumping her to 19/hr starting this week", ...user }, { text: 'yeah rent went out too. 3200 to Dorsey (asked: Anything else from this morning?)', ...user })).toBe(false);
    const nora = { owner: 'nora' };
    const bev = { text: "Bev's coming every day now, 9 till 1.", ...nora };
    const before = { text: 'Bev found her when she came in at 2.', ...nora };
    expect(updatesTopic(bev, before, { names: new Set(['bev']) })).toBe(false);
    expect(updatesTopic(bev, before)).toBe(true); // what a batch that never names Bev mid-sentence decides
  });
});

describe('when a change takes effect, and an ending given as its reason', () => {
  it('the date a change takes effect is no value of the statement when it gives another ("move to the library room from November")', () => {
    const bongani = { owner: 'bongani' };
    const moved = { text: "meetings move to the Orchard Vale library community room from November, St Jude's put the rent up", ...bongani };
    expect(updatesTopic({ text: 'Meetings are the second Wednesday of the month now, 7pm.', ...bongani }, moved)).toBe(false);
    // a new date of the thing itself still retires it; so does a start date that is the statement's only value
    expect(updatesTopic({ text: 'the class moved, it starts from March now', ...bongani }, { text: 'the class starts from January', ...bongani })).toBe(true);
    expect(updatesTopic({ text: 'my day rate goes up to £500 from 1 January (2025-01-01)', ...bongani }, { text: 'my day rate is £450, starting 16 Sept (2024-09-16)', ...bongani })).toBe(true);
    // a calendar date on the other side is compared with it: "through December", then "from 1 January"
    expect(updatesTopic({ text: 'Honestly relieved. About January: my day rate goes up to £500 from 1 January (2025-01-01)', ...bongani }, { text: 'Sounds good, that rate works for me through December.', ...bongani })).toBe(true);
  });

  it("a change told before another's ending is an update, not an ending ('spanish moved to thursdays btw, the tuesday teacher left')", async () => {
    expect(changeCue('spanish moved to thursdays btw, the tuesday teacher left')).toBe('update');
    expect(changeCue('standup is 10:15 now, Tomasz left')).toBe('update');
    // the speaker's own ending stays one, told first or second
    expect(changeCue("got hired at a bakery, quit marlowe's")).toBe('end');
    expect(changeCue("quit marlowe's, got hired at a bakery")).toBe('end');
    // a value shortened, extended or bumped to another is a change like one raised or cut to it
    expect(changeCue('They agreed to shorten my notice to 2 weeks.')).toBe('update');
    expect(changeCue('the lease got extended to March')).toBe('update');
    const { run, current } = setup();
    await run([say('Marjorie', 'also ive started spanish at the library on tuesdays. hola!!', '2024-10-02')]);
    await run([say('Marjorie', 'spanish moved to thursdays btw, the tuesday teacher left', '2025-01-12')]);
    expect(current().filter((c) => c.includes('spanish'))).toEqual(['Marjorie: spanish moved to thursdays btw, the tuesday teacher left']);
  });
});

describe('a rate, and more ways to say a thing moved', () => {
  it('reads a rate as an amount of its unit ("250/min" and "100 req/min"), and "moves to" and "pushing … to" as changes', () => {
    const user = { owner: 'user' };
    expect(updatesTopic({ text: 'bump the rate limit to 250/min for all keys', ...user }, { text: 'also note the api listens on 8080 and the rate limit is 100 req/min per key.', ...user })).toBe(true);
    expect(changeCue('Laying-up moves to Saturday 25 October')).toBe('update');
    expect(changeCue("We're pushing start to Monday March 10")).toBe('update');
  });

  it('a statement of many facts is not replaced by a change of one of them', () => {
    const ruth = { owner: 'ruth' };
    const minutes = { text: 'AGM outcomes. Ruth elected Commodore. Full membership goes up to £240 from January. Laying-up is Saturday 18 October. Thanks all for coming.', ...ruth };
    expect(updatesTopic({ text: 'Laying-up moves to Saturday 25 October', ...ruth }, minutes)).toBe(false);
    expect(updatesTopic({ text: 'Laying-up moves to Saturday 25 October', ...ruth }, { text: 'Laying-up is Saturday 18 October, high water 11:42.', ...ruth })).toBe(true);
  });
});

describe('a plural opening a sentence', () => {
  it('is no person whose statement it is: "Bloods can go to every 8 weeks now" is the user\'s own, and retires the old schedule', async () => {
    const { run, current } = setup();
    await run([event('Blood tests every 4 weeks at the GP surgery, next one 18 Nov.', { ...at('2024-11-04'), metadata: { speaker: 'user' } })]);
    await run([event('Bloods can go to every 8 weeks now since my liver numbers are fine.', { ...at('2025-02-10'), metadata: { speaker: 'user' } })]);
    expect(current().filter((c) => /blood/i.test(c))).toEqual(['Bloods can go to every 8 weeks now since my liver numbers are fine.']);
  });
});

describe('turn-level discourse', () => {
  it('no one is their own "she": a pronoun is not resolved to the person speaking', async () => {
    const { run, current } = setup();
    await run([say('Ingrid', 'Hamish is asking the school caretaker about the hall.', '2025-03-02', 0), say('Hamish', 'She says Thursdays are free from 7.', '2025-03-02', 1)]);
    await run([say('Ingrid', 'Bettina took the minutes.', '2025-03-03', 0), say('Hamish', 'She is our new treasurer.', '2025-03-03', 1)]);
    expect(current()).toEqual(expect.arrayContaining(['Hamish: She says Thursdays are free from 7.', 'Hamish: She (Bettina) is our new treasurer.']));
  });

  it('a letter\'s sign-off is a statement of its own, not the tail of each letter\'s last sentence', async () => {
    const { run, current } = setup();
    await run([say('Gerald', 'The plumber can come on Tuesday.\n\nKind regards,\nGerald Ashworth\n07700 900112', '2025-03-02')]);
    await run([say('Gerald', 'The bins go out on Mondays now.\n\nKind regards,\nGerald Ashworth\n07700 900112', '2025-04-02')]);
    await run([say('Femi', 'Is the Barclays account still right for the rent? My bank asks me to confirm it.\n\nThanks,\nFemi', '2025-04-03')]);
    const now = current();
    expect(now).toContain('Gerald: The plumber can come on Tuesday.');
    expect(now).toContain('Gerald: The bins go out on Mondays now.');
    expect(now.filter((c) => c.includes('07700 900112'))).toEqual(['Gerald: Kind regards, Gerald Ashworth 07700 900112']);
    expect(now.filter((c) => c.startsWith('Femi'))).toEqual(['Femi: My bank asks me to confirm it.']);
  });

  it('a change to one sentence of a statement leaves it current when another sentence still holds; two changes\' dates are no values of one thing', async () => {
    const { run, current } = setup();
    await run([say('Fen', 'SCHEDULE: Tech confirmed for Sunday 9 November at the Corn Exchange. Opening night Friday 14 November.', '2025-10-01')]);
    await run([say('Fen', 'Tech moves to Monday 10 November, 9am start.', '2025-10-20')]);
    expect(current().filter((c) => /Opening night/.test(c))).toHaveLength(1);
    await run([say('Viktor', 'The Fox & Hounds is closing for refurbishment, so from November we meet in the library community room, Tuesdays and Thursdays as before.', '2025-09-01')]);
    await run([say('Viktor', 'The library is putting the room up to £25 a night from September, it was £18.', '2026-06-01')]);
    expect(current().filter((c) => /library community room/.test(c))).toHaveLength(1);
    // a new value of the same thing, each with the date it takes effect, still replaces it
    await run([say('Viktor', 'From 1 March the hall costs £30 a night.', '2026-02-01')]);
    await run([say('Viktor', 'From 1 September the hall goes up to £35 a night.', '2026-07-01')]);
    expect(current().filter((c) => /the hall/.test(c))).toEqual(['Viktor: From 1 September (2026-09-01) the hall goes up to £35 a night.']);
  });

  it('an email\'s quoted lines are no statement of the one replying, and go beside a short reply as what it answers', async () => {
    const { run, current } = setup();
    await run([say('Margaret', 'Change of plan: the fete is the 19th of July.', '2025-06-01')]);
    await run([say('Dale', "> the fete is the 19th of July\n\nNoted, 19th. Jen's furious, she'd booked the other Saturday off work lol", '2025-06-02')]);
    const dale = current().filter((c) => c.startsWith('Dale'));
    expect(dale).toEqual(expect.arrayContaining(['Dale: Noted, 19th. (asked: the fete is the 19th of July (2025-07-19))', "Dale: Jen's furious, she'd booked the other Saturday off work lol"]));
    expect(dale.filter((c) => c.includes('>'))).toEqual([]);
  });

  it('a short turn that goes on with its speaker\'s turn just before has that statement beside it; later, or after another speaker, it does not', async () => {
    const { run, current } = setup();
    await run([
      event('Jia: also schedule change, we release on sundays now', { valid_time: '2025-03-02T10:00:00.000Z', metadata: { speaker: 'Jia' } }),
      event('Jia: sunday 8pm KST', { valid_time: '2025-03-02T10:01:00.000Z', metadata: { speaker: 'Jia' } }),
      event('Mei: 6 weeks from june', { valid_time: '2025-03-02T11:00:00.000Z', metadata: { speaker: 'Mei' } }),
      event('Mei: the lab in Daejeon', { valid_time: '2025-03-02T14:00:00.000Z', metadata: { speaker: 'Mei' } }),
      // a turn with its own subject is no continuation, whatever its verb
      event('Mei: Sven spends the weekends sailing.', { valid_time: '2025-03-02T14:01:00.000Z', metadata: { speaker: 'Mei' } }),
    ]);
    expect(current()).toEqual(expect.arrayContaining(['Jia: sunday 8pm KST (after: also schedule change, we release on sundays now)', 'Mei: 6 weeks from june', 'Mei: the lab in Daejeon', 'Mei: Sven spends the weekends sailing.']));
  });

  it('a list of statements (minutes, a recap) is a statement per item, its heading with the first; a list of values stays one', async () => {
    const { run, current } = setup();
    await run([say('Seun', 'Treasurer hat on: subs for spring term are £45 per person.', '2025-01-08')]);
    await run([say('Ingrid', "Post-meeting summary for those who escaped early:\n- Bettina is our new treasurer and Seun hands over at Easter\n- subs go up to £55 a term from summer\n- concert is now Saturday 24 May, the church double-booked a wedding", '2025-03-02')]);
    await run([event('Allergies:\n- penicillin\n- peanuts', { ...at('2025-03-03'), metadata: { speaker: 'user' } })]);
    const now = current();
    expect(now).toEqual(expect.arrayContaining([
      'Ingrid: Post-meeting summary for those who escaped early: Bettina is our new treasurer and Seun hands over at Easter',
      'Ingrid: subs go up to £55 a term from summer',
      'Ingrid: concert is now Saturday 24 May (2025-05-24), the church double-booked a wedding',
      'Allergies:\n- penicillin\n- peanuts',
    ]));
    // an item updates what it speaks of, as a sentence would
    expect(now.filter((c) => c.includes('£45'))).toEqual([]);
  });

  it('keeps small talk, bare questions, reactions and assistant pleasantries out of memory, with the reason', async () => {
    const { run } = setup();
    const p = await run([
      event('Jiho: WHAT. Congrats!!', { metadata: { speaker: 'Jiho' } }),
      event('Lena: So proud of you!!', { metadata: { speaker: 'Lena' } }),
      event('How did it go?'),
      event('Happy to help, Rui! Looking for flights now.', { role: 'assistant' }),
      event('Booked: Lisbon to Montreal on October 3, seat 23C.', { role: 'assistant' }),
      event('To reset the router, hold its button down, then wait for the green light.', { role: 'assistant' }),
      event('Great goal. Tell me about your current routine.', { role: 'assistant' }),
    ]);
    expect(p.dropped.map((d) => d.reason)).toEqual([
      'noise: acknowledgement or small talk without information',
      'noise: a reaction without information',
      'noise: a question without information',
      'noise: an assistant pleasantry; an assistant describing its own work',
      'noise: an assistant pleasantry; an assistant asking to be told',
    ]);
    // an agent's procedure is knowledge, not chatter
    expect(p.units.map((u) => u.unit.content)).toEqual([
      'assistant: Booked: Lisbon to Montreal on October 3 (2023-10-03), seat 23C.',
      'assistant: To reset the router, hold its button down, then wait for the green light.',
    ]);
  });

  it("keeps an assistant's wishes and exclamations over what the user told out of memory, not what it did", async () => {
    const { run } = setup();
    const p = await run([
      event('What a big week for your family — congratulations to Ingrid on signing the lease!', { role: 'assistant' }),
      event("I hope Margaret's operation goes smoothly and you both have something lovely to look forward to.", { role: 'assistant' }),
      event('Happy holidays to you and your family too, Rosa!', { role: 'assistant' }),
      event("Happy birthday! I've booked the table at Nopi for 8pm.", { role: 'assistant' }),
    ]);
    expect(p.dropped.map((d) => d.reason)).toEqual(Array(3).fill('noise: an assistant reaction'));
    expect(p.units.map((u) => u.unit.content)).toEqual([expect.stringContaining('booked the table at Nopi for 8pm')]);
  });

  it('cuts lead-ins, joins fragments to their sentence, and names whom "she" is about', async () => {
    const { run } = setup();
    const p = await run([
      event('Omar: Big news here too: I passed the fire academy entrance test.', { metadata: { speaker: 'Omar' } }),
      event('Omar: Graduated from the academy today! Station 7, starting Monday.', { metadata: { speaker: 'Omar' } }),
      event('Jiho: Sad update: Miso turned out to be allergic-trigger central for Min, so she lives with my sister Dae now.', { metadata: { speaker: 'Jiho' } }),
      // a prepositional phrase says where the statement before it happened; one with a subject stands alone
      event('Hannah: We had the best weekend. Sam proposed! On the Clifton Suspension Bridge, at sunset, like a film. On Sunday we told his parents.', { metadata: { speaker: 'Hannah' } }),
    ]);
    expect(p.units.map((u) => u.unit.content)).toEqual([
      'Omar: I passed the fire academy entrance test.',
      'Omar: Graduated from the academy today (2023-05-08)! Station 7, starting Monday.',
      'Jiho: Miso turned out to be allergic-trigger central for Min.',
      'Jiho: She (Miso) lives with my sister Dae now.',
      'Hannah: We had the best weekend.',
      'Hannah: Sam proposed! On the Clifton Suspension Bridge, at sunset, like a film.',
      'Hannah: On Sunday we told his parents.',
    ]);
  });

  it('names whom "he" is about after a statement that introduces one person by their relation ("my partner, Tomás Reyes, …")', async () => {
    const { run } = setup();
    const p = await run([
      event('Yasmin: I should also let you know that my partner, Tomás Reyes, would like to move in with me. He is a staff nurse at St Aldhelm\'s Hospital.', { metadata: { speaker: 'Yasmin' } }),
      event('Ben: we had dinner with my cousin Ana and my friend Leo. She is moving to Oslo.', { metadata: { speaker: 'Ben' } }),
    ]);
    expect(p.units.map((u) => u.unit.content)).toEqual(expect.arrayContaining([
      "Yasmin: He (Tomás) is a staff nurse at St Aldhelm's Hospital.",
      // two people introduced: "she" stays unresolved
      'Ben: She is moving to Oslo.',
    ]));
  });

  it('keeps a short sentence giving a value with the sentence it points back to ("It\'s 0161 496 0000 now"), and news with its announcement', async () => {
    const { run } = setup();
    const p = await run([
      event('Tariq: Heads up. I\'ve got a new number, the old one went with my old contract. It\'s 0161 496 0000 now.', { metadata: { speaker: 'Tariq' } }),
      event('Tariq: We sold the flat in Leith. That\'s the end of an era for the whole family.', { metadata: { speaker: 'Tariq' } }),
      // an announcement of one's own news goes with the news
      event('Tariq: News from me not so good. The knee op is off until the spring.', { metadata: { speaker: 'Tariq' } }),
    ]);
    expect(p.units.map((u) => u.unit.content)).toEqual([
      "Tariq: Heads up. I've got a new number, the old one went with my old contract. It's 0161 496 0000 now.",
      'Tariq: We sold the flat in Leith.',
      "Tariq: That's the end of an era for the whole family.",
      'Tariq: News from me not so good. The knee op is off until the spring.',
    ]);
  });

  it('keeps the question a short reply answers beside it, and only then', async () => {
    const { run } = setup();
    const p = await run([
      event('Noted. What was your HbA1c at diagnosis?', { ...at('2024-10-14', 1), role: 'assistant' }),
      event('8.1%', at('2024-10-14', 2)),
      event('Any allergies I should know about?', { ...at('2024-10-14', 3), role: 'assistant' }),
      event('Penicillin, I get hives.', at('2024-10-14', 4)),
      event('How was the clinic?', { ...at('2024-10-14', 5), role: 'assistant' }),
      event("I'm swamped with work.", at('2024-10-14', 5)),
      event('Do I need a new meter?', at('2024-10-14', 6)),
      event('7.2% this morning', at('2024-10-14', 7)),
    ]);
    expect(p.units.map((u) => u.unit.content)).toEqual([
      '8.1% (asked: What was your HbA1c at diagnosis?)',
      'Penicillin, I get hives. (asked: Any allergies I should know about?)',
      "I'm swamped with work.", // a clause stands alone
      '7.2% this morning (2024-10-14)', // the question before it was the same speaker's own
    ]);
  });

  it('keeps the question beside a short reply that gives a value, not beside a longer one', async () => {
    const { run } = setup();
    const p = await run([
      event('Roughly how much do you spend on groceries each week?', { ...at('2024-10-14', 1), role: 'assistant' }),
      event('We try to keep it around €80 a week.', at('2024-10-14', 2)),
      event('Ravi: standup time?', at('2024-10-14', 3)),
      event('Dana: staying at 10:15 for now', at('2024-10-14', 4)),
      event('Which gym do you go to?', { ...at('2024-10-14', 5), role: 'assistant' }),
      event('I have been going to the gym on Mill Road three times a week since 2019.', at('2024-10-14', 6)),
    ]);
    expect(p.units.map((u) => u.unit.content)).toEqual([
      'We try to keep it around €80 a week. (asked: Roughly how much do you spend on groceries each week?)',
      'Dana: staying at 10:15 for now (asked: standup time?)',
      'I have been going to the gym on Mill Road three times a week since 2019.',
    ]);
  });
});

describe('typedValues: weekdays', () => {
  it('reads a weekday however it is written, and short ones only in a list', async () => {
    const { typedValues, updatesTopic } = await import('../../src/consolidation/updates');
    expect([...(typedValues("btw I'm WFH Tue/Thu from now on, nursery pickup").get('date') ?? [])]).toEqual(['tue', 'thu']);
    expect([...(typedValues("I'm home Mondays and Wednesdays now").get('date') ?? [])]).toEqual(['mon', 'wed']);
    expect([...(typedValues('Rehearsal is on Thursday').get('date') ?? [])]).toEqual(['thu']);
    expect(typedValues('We sat in the sun').get('date')).toBeUndefined(); // "sat" and "sun" alone are words
    // a new set of days for the same arrangement replaces the old one; the same days restated do not
    const old = { text: "btw I'm WFH Tue/Thu from now on, nursery pickup", owner: 'dmitri' };
    expect(updatesTopic({ text: "also I'm home Mondays and Wednesdays now, nursery changed its pickup days", owner: 'dmitri' }, old)).toBe(true);
    expect(updatesTopic({ text: "I'm home Tuesdays and Thursdays now, nursery changed its pickup time", owner: 'dmitri' }, old)).toBe(false);
  });
});

describe('topic updates of a named person', () => {
  it('are that person\'s whoever tells them: "Anjali moved the wedding" updates "my sister Anjali … wedding is next February"', async () => {
    const { run, current } = setup();
    await run([say('Ravi', 'my sister Anjali just got engaged btw, wedding is in Jaipur next February', '2025-03-02')]);
    const p = await run([say('Ravi', 'Anjali moved the wedding to March 14, venue clash', '2025-06-20')]);
    expect(p.retired).toHaveLength(1);
    expect(current().some((c) => c.includes('next February'))).toBe(false);
  });
});

describe('a body weight', () => {
  it('is one value at a time: "down to 81 kg" retires "I weigh 84 kg", "weight is 79 now" the 81; a thing\'s weight is no one\'s', async () => {
    const { run, current } = setup();
    await run(['I weigh 84 kg.', 'my guitar case weighs a ton'].map((t, i) => event(t, at('2025-01-05', i))));
    await run([event("Also I'm down to 81 kg!", at('2025-03-10'))]);
    await run([event('weight is 79 now btw', at('2025-09-01'))]);
    expect(current()).toEqual(['my guitar case weighs a ton', 'weight is 79 now btw']);
  });
});

describe('topic updates that also state a fact', () => {
  it('retire only the old value of their kind: "Maya moved to Quito" moved no plan of the cat or the brother it shares a name with', async () => {
    const { run, current } = setup();
    await run(["Maya's cat is called Miso.", 'Maya has a brother named Clara.', 'Maya lives in Lima.'].map((t, i) => event(t, at('2025-01-10', i))));
    const p = await run([event('Maya moved to Quito.', at('2025-06-20'))]);
    expect(p.retired).toHaveLength(1);
    expect(current()).toEqual(['Maya has a brother named Clara.', 'Maya moved to Quito.', "Maya's cat is called Miso."]);
  });

  it('retire the old plan: "my start date at the Mexico City office is August 4 now" after "moving to Mexico City for work in July"', async () => {
    const { run, current } = setup();
    await run([event("I'm moving to Mexico City for work in July.", at('2025-01-10'))]);
    const p = await run([event('Update: the move got pushed. HR says my start date at the Mexico City office is August 4 now.', at('2025-06-20'))]);
    expect(p.retired).toHaveLength(1);
    expect(current()).toEqual(['The move got pushed. HR says my start date at the Mexico City office is August 4 (2025-08-04) now.']);
  });
});

describe('a change that keeps part of the old value', () => {
  it('does not retire the statement whose other part still holds ("at Ashton Court now, same date")', () => {
    const old = { text: 'Hannah: Wedding is next August, the 16th, at the Tithe Barn in Somerset.', owner: 'hannah' };
    expect(updatesTopic({ text: 'Hannah: The wedding is at Ashton Court now, same date, and honestly it is prettier.', owner: 'hannah' }, old)).toBe(false);
    expect(updatesTopic({ text: 'Hannah: The wedding moved to Ashton Court now, on September 3.', owner: 'hannah' }, old)).toBe(true);
  });
});

describe('endings said beside the new value', () => {
  const mei = (text: string, day: string, i = 0) => event(`Mei: ${text}`, { ...at(day, i), metadata: { speaker: 'Mei' } });

  it('retire what the ended clause names, under any of its names ("sold my bike" ends "I cycle"), not what the new value\'s clause names', async () => {
    const { run, current } = setup();
    await run([mei('I cycle to work every day now, it\'s only 15 min', '2025-01-12'), mei('their office is in Cardiff so we will see', '2025-03-30', 1)]);
    const p = await run([mei('sold my bike too, I take the train to the office now', '2025-06-08')]);
    expect(p.retired).toHaveLength(1);
    expect(current()).toEqual(['Mei: sold my bike too, I take the train to the office now', 'Mei: their office is in Cardiff so we will see']);
  });

  it('read every clause of an ending that gives no new value ("handed in my notice at the café, last shift is friday")', () => {
    expect(endingNames('handed in my notice at the café, last shift is friday', 'double shift at the coffee place on sat')).toBe(true);
    expect(endedClause('sold my bike too, I take the train to the office now')).toBe('sold my bike too');
    expect(endedClause('I take the train to the office now')).toBeNull();
    // what follows the new value belongs to it, what comes before the ending to no ending
    expect(endedClause("ok i have news. quit marlowe's, got hired at a bakery, 5am-1pm shifts. so im back for raids")).toBe("quit marlowe's");
    expect(endingNames("ok i have news. quit marlowe's, got hired at a bakery. so im back for raids", 'finally u can raid at a normal hour')).toBe(false);
    // a notice handed in ends the job it names, not what was said of a notice period
    expect(endingNames('heads up that I handed in my notice at Brightline today', 'Looking for around $150k base. Notice period is 4 weeks per my contract.')).toBe(false);
    expect(endingNames('heads up that I handed in my notice at Brightline today', "I've been at Brightline Logistics for almost four years")).toBe(true);
    // another's ending is not the speaker's, whoever else the sentence names
    expect(endsOwnThing('we have 3 healers and 0 tanks since Marco quit')).toBe(false);
    expect(endsOwnThing('so we sold the car last week')).toBe(true);
    expect(endsOwnThing('Finally quit the gym, too expensive')).toBe(true);
    // a thing got in place of the one that ended is the value now; "got a cold" in the ending's own clause is not
    expect(endsWithNewValue('Luis: Sold the truck finally. Got a hybrid, a RAV4')).toBe(true);
    expect(endsWithNewValue('I sold my bike and got a cold')).toBe(false);
    expect(endsWithNewValue('I quit the cafe last week')).toBe(false);
  });

  it('a plan moved by a name opening after a reaction is that person\'s ("nice. oh my sister Anjali …"), a title is no reaction', () => {
    const names = new Set(['Anjali', 'Aydın']);
    expect(openingName('nice. oh my sister Anjali just got engaged, wedding is in Jaipur', names)).toBe('Anjali');
    expect(openingName('lol ok. Anjali moved the wedding', names)).toBe('Anjali');
    expect(openingName('Dr. Aydın switched me to metformin', names)).toBeNull();
    expect(openingName('I met Anjali', names)).toBeNull();
  });
});

describe('corrections and days written in small letters', () => {

  it('a correction ("Mondays not Wednesdays", "3pm, not 2") retires the value it corrects', async () => {
    const { run, current } = setup();
    await run([say('Carmen', 'signed up for Dutch classes, Wednesday evenings at the library', '2023-09-10')]);
    await run([say('Carmen', 'correction: Dutch class is Mondays not Wednesdays', '2023-09-18')]);
    expect(current().filter((c) => /wednesday evenings/i.test(c))).toEqual([]);
    await run([say('Hannah', 'sprint demos will be every other Friday at 2pm, invite sent', '2024-02-26')]);
    await run([say('Hannah', 'correction: demos are at 3pm, not 2', '2024-02-27')]);
    expect(current().filter((c) => /2pm/.test(c))).toEqual([]);
  });

  it('reads weekdays and dates in small letters as values ("tuesday nights, not monday", "starting may 20")', async () => {
    const { run, current } = setup();
    await run([say('Tobi', 'trash is monday night right', '2024-05-01')]);
    await run([say('Greta', "city is changing trash pickup. starting may 20 it's tuesday nights, not monday", '2024-05-10')]);
    expect(current().some((c) => c.includes('monday night right'))).toBe(false);
    const { typedValues } = await import('../../src/consolidation/updates');
    expect([...(typedValues("starting may 20 it's tuesday nights, not thurs").get('date') ?? [])].sort()).toEqual(['may 20', 'thu', 'tue']);
    expect(typedValues('the market 5 stalls may open').get('date')).toBeUndefined(); // no month, and "may" alone is a verb
  });

  it("retires an assistant's statement of a value that changed, never a tool's record", async () => {
    const { run, current } = setup();
    await run([
      event("I can see you're on our 300 Mbps plan with an NW-600 modem.", { ...at('2023-05-08', 1), role: 'assistant' }),
      event(JSON.stringify({ account: 'AC-1', modem: 'NW-600' }), { ...at('2023-05-08', 2), role: 'tool', content_type: 'json' }),
    ]);
    await run([event('Please bring your NW-900 modem with you, the new address is covered.', { ...at('2023-07-20'), role: 'assistant' })]);
    const now = current();
    expect(now.some((c) => c.includes('300 Mbps plan with an NW-600'))).toBe(false);
    expect(now.some((c) => c.startsWith('tool:') || c.includes('account: AC-1'))).toBe(true);
  });

  it('an imperative exclamation before a fact is no how-to: the fact can be updated', async () => {
    const { run, current } = setup();
    await run([say('Linda', "Call the landlord! Have to run, it's Wednesday so book club at Marjorie's.", '2023-01-11')]);
    await run([say('Linda', 'Book club is switching from Wednesdays to Mondays starting this month.', '2023-02-01')]);
    expect(current().some((c) => c.includes("book club at Marjorie's"))).toBe(false);
  });
});

describe('a statement telling several changes at once', () => {
  it('updates only the facets a clause gives a value of: a look back ("Moved cities, changed jobs twice") retires no address', async () => {
    const { run, current } = setup();
    await run([say('Noor', "We've moved. Edinburgh! A flat in Leith with a view of a very ugly crane.", '2023-07-16')]);
    await run([say('Noor', 'Moved cities, changed jobs twice, adopted Mochi, passed Grade 3. Not bad.', '2023-12-31')]);
    expect(current().some((c) => c.includes('Leith'))).toBe(true);
    const { valuedFacets } = await import('../../src/consolidation/updates');
    expect(valuedFacets("We've moved. Edinburgh!")).toBeNull(); // one change: the statement's facets stand
    expect([...(valuedFacets("Moved to Leeds, started at St James's") ?? [])]).toEqual(['residence']);
  });
});

describe("a speaker's own clear ending", () => {

  it('retires their earlier statements naming the ended thing, whatever they were about, not a plan or what they told of another', async () => {
    const { mem, run, current } = setup();
    await run([
      say('Jules', 'grindhouse was a zoo today, 3 ppl called out n it was just me on bar', '2023-01-08'),
      say('Lucía', "he's (Marco) a physio at the Real Madrid youth academy can you believe", '2023-01-09'),
      say('Lucía', 'so Marco and I went to that vermut place in Lavapiés.', '2023-01-10'),
      say('Ana', 'the library job is fine, quiet shifts', '2023-01-11'),
    ]);
    await run([
      say('Jules', 'so i quit grindhouse lol. starting at spoke & chain monday', '2023-06-02'),
      say('Lucía', 'and news from me... Marco and I broke up.', '2023-06-03'),
      say('Ana', "i'm gonna quit the library job after finals", '2023-06-04'),
    ]);
    const now = current();
    expect(now.some((c) => c.includes('grindhouse was a zoo'))).toBe(false);
    expect(now.some((c) => c.includes('vermut place'))).toBe(false);
    expect(now.some((c) => c.includes('a physio at the Real Madrid'))).toBe(true); // his job holds
    expect(now.some((c) => c.includes('library job is fine'))).toBe(true); // a plan ends nothing yet
    expect([...mem.units.values()].find((u) => u.content.includes('grindhouse was a zoo'))?.superseded_by).toBeTruthy();
    const { endsOwnThing } = await import('../../src/consolidation/updates');
    expect([endsOwnThing('sold the car today'), endsOwnThing('I left my keys at Sam\'s'), endsOwnThing('did you quit?')]).toEqual([true, false, false]);
  });
});

describe('a bare new value right after its topic', () => {
  it("continues the same speaker's topic in its batch: \"January 28 now, 10am\" retires \"… is Jan 21\"", async () => {
    const { run, current } = setup();
    await run([
      say('Elif', 'my visa appointment at the Canadian consulate is Jan 21', '2025-01-05', 1),
      say('Jonah', 'fingers crossed, my dentist is Jan 30', '2025-01-05', 2),
      say('Elif', 'wait sorry, they just emailed, they moved it. January 28 now, 10am', '2025-01-05', 3),
    ]);
    const now = current();
    expect(now.some((c) => c.includes('consulate is Jan 21'))).toBe(false);
    expect(now.some((c) => c.includes('dentist is Jan 30'))).toBe(true); // another speaker's topic
    const { updatesTopic } = await import('../../src/consolidation/updates');
    const old = { text: 'my visa appointment at the Canadian consulate is Jan 21', owner: 'elif' };
    expect(updatesTopic({ text: 'January 28 now, 10am', owner: 'elif' }, old)).toBe(false); // no shared topic, and not said to follow
    expect(updatesTopic({ text: 'January 28 now, 10am', owner: 'elif' }, old, { follows: true })).toBe(true);
    expect(updatesTopic({ text: 'the gym is January 28 now', owner: 'elif' }, old, { follows: true })).toBe(false); // a topic of its own
  });
});

describe('a statement naming the value it replaces', () => {
  it('reads the old value after "not", "ex-", "instead of", "bye bye", "from … to", and only in a statement of change', async () => {
    const { replacedValues } = await import('../../src/text');
    expect(replacedValues("small change: Devon's spot will be #9 not #12. Same $40.")).toEqual(['12']);
    expect(replacedValues('Mochi (ex-Pickle) lost his mind when I walked in')).toEqual(['pickle']);
    expect(replacedValues('wait, pto is apr 1-5, not march. her dad had the dates wrong')).toEqual(['mar']);
    expect(replacedValues('rent goes through the portal starting Feb instead of Zelle')).toEqual(['zelle']);
    expect(replacedValues('Rent would go from $1,450 to $1,525.')).toEqual(['1,450']);
    expect(replacedValues('bye bye quartz, hello butcher block')).toEqual(['quartz']);
    // one morning's choice, a plain "not", a question: no old value
    expect(replacedValues('I had tea instead of coffee this morning')).toEqual([]);
    expect(replacedValues("I'm not sure, not bad, not really")).toEqual([]);
    expect(replacedValues('is it not Tuesday?')).toEqual([]);
  });

  it("retires the owner's statements giving that value, and anyone's on the same topic, and nothing else", async () => {
    const { run, current } = setup();
    await run([
      say('Gerald', 'I can rent him #12 for $40/mo if he needs it', '2025-01-10', 1),
      say('Gerald', 'the boiler in unit 12 was serviced in May', '2025-01-10', 2),
      say('Sam', "I'm calling him Pickle", '2025-01-10', 3),
      say('Ana', 'pickle jars are 2 for 1 at the market', '2025-01-10', 4),
      say('Dmitri', 'putting in pto for mar 18-22 for tucson', '2025-01-10', 5),
      say('Priya', 'my sister visits in march', '2025-01-10', 6),
    ]);
    await run([
      say('Gerald', "small change: Devon's spot will be #9 not #12. Same $40.", '2025-02-01', 1),
      say('Sam', 'Mochi (ex-Pickle) lost his mind when I walked in', '2025-02-01', 2),
      say('Dmitri', 'correction: pto is apr 1-5, not march', '2025-02-01', 3),
    ]);
    const now = current();
    expect(now.some((c) => c.includes('rent him #12'))).toBe(false);
    expect(now.some((c) => c.includes('calling him Pickle'))).toBe(false);
    expect(now.some((c) => c.includes('pto for mar 18-22'))).toBe(false);
    // the same value, said of another thing: a boiler, jars, a visit
    expect(now.some((c) => c.includes('unit 12 was serviced'))).toBe(true);
    expect(now.some((c) => c.includes('pickle jars'))).toBe(true);
    expect(now.some((c) => c.includes('visits in march'))).toBe(true);
  });
});

describe('changes said with a frequency or a decision', () => {
  it('a dose by how often, a variety chosen instead of another: the old one retires', async () => {
    const { run, current } = setup();
    await run([
      event('The vet prescribed carprofen 50 mg twice a day for his hips.', at('2025-01-10', 2)),
      event("I have grown 'Moneymaker' tomatoes in the greenhouse for many years.", at('2025-01-10', 3)),
      event('I water the greenhouse twice a day in July.', at('2025-01-10', 4)),
    ]);
    await run([
      event('The vet reduced the carprofen to once a day.', at('2025-03-01', 2)),
      event("I have decided to try 'Sungold' this year instead of Moneymaker.", at('2025-03-01', 3)),
    ]);
    const now = current();
    expect(now.some((c) => c.includes('50 mg twice a day'))).toBe(false);
    expect(now.some((c) => c.includes("grown 'Moneymaker'"))).toBe(false);
    expect(now.some((c) => c.includes('water the greenhouse twice a day'))).toBe(true); // another thing done twice a day
  });

  it('"going forward", "as of today" and "switch … to" announce a change; a one-off "instead of" does not name an old value', async () => {
    const { changeCue, replacedValues } = await import('../../src/text');
    expect(changeCue('going forward our contact there is Kevin Marsh')).toBe('update');
    expect(changeCue('as of today the gate code is 4471')).toBe('update');
    expect(changeCue('please switch my notifications to text messages')).toBe('update');
    expect(changeCue('the switch is by the door')).toBeNull();
    expect(replacedValues('I had tea instead of coffee this morning')).toEqual([]);
    expect(replacedValues('we went with the oak table instead of Ikea')).toEqual(['ikea']);
  });
});
