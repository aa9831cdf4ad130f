import {
  classifyMemoryType, extractKeywords, extractSubjectAttribute, namedEntities, normalizeSubject, resolveSpeaker,
  resolveTemporal, scoreImportance, reinforceImportance,
} from '../../src/consolidation';
import { stemPlural as stem } from '../../src/text';

describe('resolveSpeaker', () => {
  const ev = (over: { role?: string | null; agent_id?: string | null; metadata?: Record<string, unknown> | null }) =>
    ({ role: over.role ?? null, agent_id: over.agent_id ?? null, metadata: over.metadata ?? null });

  it('takes a "Name: text" prefix', () => {
    expect(resolveSpeaker(ev({ role: 'user' }), 'Caroline: I went there')).toEqual({ speaker: 'Caroline', text: 'I went there', prefix: 'Caroline: ' });
  });
  it('prefers metadata.speaker and does not repeat the name', () => {
    expect(resolveSpeaker(ev({ metadata: { speaker: 'Jon' } }), 'Jon: hi there')).toEqual({ speaker: 'Jon', text: 'hi there', prefix: 'Jon: ' });
  });
  it('uses the agent id for agent turns, the role otherwise; the plain user gets no prefix', () => {
    expect(resolveSpeaker(ev({ role: 'assistant', agent_id: 'planner-1' }), 'Done.')).toEqual({ speaker: 'planner-1', text: 'Done.', prefix: 'planner-1: ' });
    expect(resolveSpeaker(ev({ role: 'tool' }), 'exit 0')).toEqual({ speaker: 'tool', text: 'exit 0', prefix: 'tool: ' });
    expect(resolveSpeaker(ev({ role: 'user' }), 'I like tea')).toEqual({ speaker: 'user', text: 'I like tea', prefix: '' });
  });
  it('does not take a URL or a time for a name', () => {
    expect(resolveSpeaker(ev({}), 'https://x.io is down').speaker).toBeNull();
    expect(resolveSpeaker(ev({}), 'Note: buy milk').speaker).toBeNull();
  });
  it('does not take a lead-in for a name ("Update: the move got pushed" is the user\'s news)', () => {
    expect(resolveSpeaker(ev({ role: 'user' }), 'Update: the move got pushed.')).toEqual({ speaker: 'user', text: 'Update: the move got pushed.', prefix: '' });
    expect(resolveSpeaker(ev({ role: 'user' }), 'Big news: I got the job').speaker).toBe('user');
    expect(resolveSpeaker(ev({ role: 'user' }), 'Heads up: rent is due').speaker).toBe('user');
  });
  it('normalizes subjects', () => {
    expect(normalizeSubject('Caroline')).toBe('caroline');
    expect(normalizeSubject(null)).toBe('user');
  });
});

describe('classifyMemoryType', () => {
  const user = { role: 'user', agent_id: null };
  it.each([
    ['To deploy, run npm run deploy.', 'procedural'],
    ['1. Open settings\n2. Click reset', 'procedural'],
    ['- `npm ci`\n- `npm start`', 'procedural'],
    ['Post-meeting summary:\n- Bettina is our new treasurer\n- subs go up to £55 a term', 'factual'],
    ['Updates:\n1) The band cancelled\n2) We are now at 96 guests', 'factual'],
    ['First install node, then run the script.', 'procedural'],
    ['How to reset the router: hold the button.', 'procedural'],
    ['Restart the service after editing the config.', 'procedural'],
    ['I went to the park.', 'factual'],
    ['Check out the new cafe.', 'factual'],
    ['Did you run the tests?', 'factual'],
    ['Create those memories!', 'factual'],
    ["Call the landlord! Have to run, it's Wednesday so book club at Marjorie's.", 'factual'],
    ['Restart the router. Then wait a minute!', 'procedural'],
    ['Change is possible.', 'factual'],
    ['It taught me how to find support.', 'factual'],
  ])('%s → %s', (text, type) => {
    expect(classifyMemoryType(user, text)).toBe(type);
  });
  it('agent, assistant and tool activity is procedural', () => {
    expect(classifyMemoryType({ role: 'assistant', agent_id: null }, 'I booked the table.')).toBe('procedural');
    expect(classifyMemoryType({ role: null, agent_id: 'a1' }, 'Fetched 3 pages.')).toBe('procedural');
    expect(classifyMemoryType({ role: 'tool', agent_id: null }, '{"ok":true}')).toBe('procedural');
  });
});

describe('keywords', () => {
  it('keeps entities, acronyms, numbers and dates first, then RAKE phrases, stemmed and bounded', () => {
    expect(extractKeywords('We moved to New York on 7 May 2023 with 3 kids.')).toEqual(['7 may 2023', 'new york', 'moved', 'kid']);
    expect(extractKeywords('I went to a LGBTQ support group yesterday (2023-05-07) and it was so powerful.'))
      .toEqual(['2023-05-07', 'lgbtq', 'support group', 'powerful']);
    expect(extractKeywords('Unfortunately, I also lost my job at Door Dash this month.')).toEqual(['door dash', 'lost', 'job', 'month']);
  });
  it('leaves URLs and emails out', () => {
    expect(extractKeywords('shared [image https://i.redd.it/l7h.jpg] a photo of a dog, mail jo@x.org')).toEqual(['photo', 'dog', 'mail']);
  });
  it('adds the extra (speaker) keyword and respects the bound', () => {
    const k = extractKeywords('Caroline painted sunsets, lakes, mountains, forests, rivers, deserts, oceans and cities in Paris.', { max: 4, maxPhraseWords: 3 }, ['Melanie']);
    // A sentence-initial name is not known to be a name (no dictionary): it stays in its RAKE phrase.
    expect(k).toEqual(['melanie', 'paris', 'caroline painted sunset', 'lake']);
  });
  it('is deterministic and does not treat a sentence-initial word as an entity', () => {
    expect(namedEntities('Went to see Anna in Rome. Then NASA called.')).toEqual(['anna', 'rome', 'nasa']);
    expect(extractKeywords('Went to see Anna in Rome.')).toEqual(extractKeywords('Went to see Anna in Rome.'));
  });
  it('stems plurals lightly', () => {
    expect(['stories', 'groups', 'boxes', 'class', 'bus', "Anna's"].map(stem)).toEqual(['story', 'group', 'box', 'class', 'bus', 'anna']);
  });
});

describe('resolveTemporal (anchor Monday 2023-05-08T13:56Z)', () => {
  const A = '2023-05-08T13:56:00.000Z';
  it.each([
    ['I went there yesterday.', '2023-05-07T00:00:00.000Z', 'I went there yesterday (2023-05-07).'],
    ['today I ate sushi', A, 'today (2023-05-08) I ate sushi'],
    ['see you tomorrow', '2023-05-09T00:00:00.000Z', 'see you tomorrow (2023-05-09)'],
    ['it rained last week', '2023-05-01T00:00:00.000Z', 'it rained last week (week of 2023-05-01)'],
    ['we move next month', '2023-06-01T00:00:00.000Z', 'we move next month (2023-06)'],
    ['two days ago I fell', '2023-05-06T00:00:00.000Z', 'two days ago (2023-05-06) I fell'],
    ['last Friday was fun', '2023-05-05T00:00:00.000Z', 'last Friday (2023-05-05) was fun'],
    ['camping this weekend', '2023-05-13T00:00:00.000Z', 'camping this weekend (weekend of 2023-05-13)'],
    ['back in 3 days', '2023-05-11T00:00:00.000Z', 'back in 3 days (2023-05-11)'],
    ['I graduated last year', '2022-01-01T00:00:00.000Z', 'I graduated last year (2022)'],
    ['the party was on May 7', '2023-05-07T00:00:00.000Z', 'the party was on May 7 (2023-05-07)'],
    ['born 7 May 2023', '2023-05-07T00:00:00.000Z', 'born 7 May 2023'],
    ['due 2023-05-07', '2023-05-07T00:00:00.000Z', 'due 2023-05-07'],
    ['met on December 20', '2022-12-20T00:00:00.000Z', 'met on December 20 (2022-12-20)'],
    ['I may 5 times', A, 'I may 5 times'],
  ])('%s', (text, validTime, annotated) => {
    const r = resolveTemporal(text, A);
    expect(r.validTime).toBe(validTime);
    expect(r.text).toBe(annotated);
  });
  it('the first expression sets the valid time; every relative one is annotated', () => {
    const r = resolveTemporal('Yesterday I booked the trip for next Friday.', A);
    expect(r.validTime).toBe('2023-05-07T00:00:00.000Z');
    expect(r.text).toBe('Yesterday (2023-05-07) I booked the trip for next Friday (2023-05-12).');
    expect(r.expressions).toEqual([
      { expression: 'Yesterday', resolved: '2023-05-07', relative: true },
      { expression: 'next Friday', resolved: '2023-05-12', relative: true },
    ]);
  });
  it('does not annotate twice', () => {
    expect(resolveTemporal('yesterday (2023-05-07)', A).text).toBe('yesterday (2023-05-07)');
  });
  it('a month and day said of a plan is the next such day, not the nearest one behind', () => {
    expect(resolveTemporal('Anjali moved the wedding to March 14, it is in Udaipur now', A).text).toBe('Anjali moved the wedding to March 14 (2024-03-14), it is in Udaipur now');
    expect(resolveTemporal("the launch is rescheduled to 2 February", A).text).toBe('the launch is rescheduled to 2 February (2024-02-02)');
    expect(resolveTemporal('I quit on March 14', A).text).toBe('I quit on March 14 (2023-03-14)');
    // an event said to be on a day is ahead: said in May, "16 November" is this November's, not last year's
    expect(resolveTemporal('my sister got engaged! wedding is 16 November in York', A).text).toBe('my sister got engaged! wedding is 16 November (2023-11-16) in York');
    expect(resolveTemporal('the wedding was lovely, 16 November was the day', A).text).toBe('the wedding was lovely, 16 November (2022-11-16) was the day');
  });
});

describe('extractSubjectAttribute', () => {
  it.each([
    ['My favorite color is blue.', 'favorite color', 'blue'],
    ['I live in Denver now.', 'residence', 'denver'],
    ['I moved to Boston last month.', 'residence', 'boston'],
    ['My new phone number is 555-1234.', 'phone number', '555-1234'],
    ['I work at Google.', 'employer', 'google'],
    ['I work as a nurse.', 'occupation', 'nurse'],
    ["I'm 32 years old.", 'age', '32'],
    ['My name is Sam.', 'name', 'sam'],
    ['Ok, my flight is at 9.', 'flight', 'at 9'],
    ['My goal is to open a bakery.', 'goal', 'to open a bakery'],
  ])('%s', (text, attribute, value) => {
    expect(extractSubjectAttribute(text, 'user')).toEqual({ subject: 'user', attribute, value });
  });
  it("reads third-person birthdays", () => {
    expect(extractSubjectAttribute("Caroline's birthday is May 3.", 'melanie')).toEqual({ subject: 'caroline', attribute: 'birthday', value: 'may 3' });
  });
  it('"actually, it\'s Y" takes the previous subject and attribute', () => {
    const prev = { subject: 'user', attribute: 'residence', value: 'boston' };
    expect(extractSubjectAttribute("Actually, it's Denver.", 'user', prev)).toEqual({ subject: 'user', attribute: 'residence', value: 'denver' });
    expect(extractSubjectAttribute("Sorry, it's been a long day.", 'user', prev)).toBeNull();
    expect(extractSubjectAttribute("Actually, it's Denver.", 'user', null)).toBeNull();
  });
  it('ignores questions and non-attributes', () => {
    expect(extractSubjectAttribute('My kids are great.', 'user')).toBeNull();
    expect(extractSubjectAttribute('My car is so fast.', 'user')).toBeNull();
    expect(extractSubjectAttribute('Diversity in my art is important to me.', 'user')).toBeNull();
    expect(extractSubjectAttribute('My art is about my journey.', 'user')).toBeNull();
    expect(extractSubjectAttribute('Do you live in Denver?', 'user')).toBeNull();
    expect(extractSubjectAttribute("I'm 5 minutes away.", 'user')).toBeNull();
  });
});

describe('importance', () => {
  it('rises with entities, numbers, dates, plans and length, within [0,1]', () => {
    const vague = scoreImportance({ text: 'It was fun.', entityCount: 0, hasDate: false, hasSubjectAttribute: false, procedural: false });
    const rich = scoreImportance({ text: 'I plan to fly to Paris with Anna on 2023-06-01 for 3 days.', entityCount: 2, hasDate: true, hasSubjectAttribute: false, procedural: false });
    expect(vague).toBe(0.215);
    expect(rich).toBe(0.775);
    expect(scoreImportance({ text: 'x '.repeat(100), entityCount: 9, hasDate: true, hasSubjectAttribute: true, procedural: true })).toBeLessThanOrEqual(1);
  });
  it('reinforcement closes 15% of the gap per repeat', () => {
    expect(reinforceImportance(0.5)).toBe(0.575);
    expect(reinforceImportance(0.5, 2)).toBe(0.639);
    expect(reinforceImportance(1)).toBe(1);
  });
});
