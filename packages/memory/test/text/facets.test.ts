import { facetsStated, facetsInOrder, facetsOf } from '../../src/text';

const of = (text: string) => [...facetsOf(text)].sort();

describe('facets: the kind of personal fact a sentence speaks of', () => {
  it('bridges a question and a statement that share no content word', () => {
    expect(of('What does Kofi do for a living?')).toEqual(['occupation']);
    expect(of('Kofi is a translator by profession.')).toEqual(['occupation']);
    expect(of('Where does Maya live now?')).toEqual(['residence']);
    expect(of('We moved to York in August.')).toEqual(['residence']);
  });

  it('reads a role by its name, and a contact by its address, never a verb or a thing\'s place', () => {
    expect(of('I start in June as a lighting designer.')).toEqual(['occupation']);
    expect(of("I'm a data analyst at Carrefour.")).toEqual(['occupation']);
    expect(of("I'm a big fan of jazz.")).toEqual([]);
    expect(of('So the BBC address is dead, use hannah.okafor@proton.me from now on.')).toEqual(['contact']);
    expect(of("Please send the first pair back with the label I've emailed you.")).toEqual([]);
    expect(of('got a new bike btw and it lives in the shed')).toEqual(['commute']);
  });

  it('reads a standing preference and a question about a meal', () => {
    expect(of('I always want an aisle seat.')).toEqual(['preference', 'travel']);
    expect(of('What meal does Rui need on the flight?')).toEqual(['diet', 'travel']);
  });

  it('keeps a date apart from dating (one stem): "my start date" is no relationship, "who is she dating" is', () => {
    expect(of('HR says my start date is August 4 now.')).toEqual([]);
    expect(of('Who is Lucía dating now?')).toEqual(['relationship']);
    expect(of('What day is the dentist?')).toEqual(['schedule']);
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

  it('reads a home by other words ("a place in", "moving out"), and no kind in idioms ("works for me", "long live")', () => {
    expect(of('also I found a place in medford near the tufts stop')).toEqual(['residence']);
    expect(of("I'll host february! my place in somerville")).toEqual(['residence']);
    expect(of('GOT IT!!! moving march 9')).toEqual(['residence']);
    expect(of('Kim is moving out end of August')).toEqual(['residence']);
    expect(of('Thursdays at 7 work for me')).toEqual(['schedule']);
    expect(of('ok that works, see you then')).toEqual([]);
    expect(of('the project is now called Harbor. falcon is dead, long live harbor')).toEqual([]);
    expect(of('I work for a bakery in town')).toEqual(['employer']);
    // a rental and software are no job; being hired is
    expect(of("It's in a password manager. Mostly.")).toEqual([]);
    expect(of('subs go up because of the hall hire')).toEqual([]);
    expect(of('I got hired at the bakery')).toEqual(['occupation']);
  });

  it('reads a job title said with or without an article, never a visit or a general remark', () => {
    expect(of('I am pharmacist, twelve years now')).toEqual(['occupation']);
    expect(of('Rosa is a nurse at the children\'s hospital')).toEqual(['health', 'occupation']);
    expect(of("she's head of marketing at a bank")).toEqual(['occupation']);
    expect(of("I'm shift supervisor now")).toContain('occupation');
    expect(of("I'm at the dentist")).not.toContain('occupation');
    expect(of('Pilots need a medical every year')).toEqual([]);
    expect(of('my doctor said rest')).toEqual(['health']);
  });

  it('reads a job held before or to come ("Used to be a bus driver", "I will be QA tester", "Being a physio, she…"), not a state', () => {
    expect(of('Used to be a bus driver')).toEqual(['occupation']);
    expect(of('I will be QA tester.')).toEqual(['occupation']);
    expect(of("Being a physio, she's relentless.")).toEqual(['occupation']);
    expect(of('he was a teacher for 20 years')).toEqual(['occupation']);
    expect(of('it will be a nightmare')).toEqual([]);
    expect(of('being a pain about it')).toEqual([]);
  });

  it('reads past the name consolidation writes after an opening pronoun ("She\'s (Ana) a nurse")', () => {
    expect(of("She's (Ana) a nurse at the Royal")).toEqual(of("She's a nurse at the Royal"));
    expect(of("She's (Ana) a nurse at the Royal")).toContain('occupation');
  });

  it('a move to a date is no move of home ("moved to 27 September", "moving it to friday")', () => {
    expect(of('The match was moved to 14 March because of the rain')).toEqual([]);
    expect(of('we are moving the call to friday')).not.toContain('residence');
    expect(of('Dario moved to Lisbon in the spring')).toEqual(['residence']);
  });

  it('a change said beside work words states no job: facetsStated leaves them out', () => {
    expect(of('Now I live in Utrecht with a colleague, the bus to work takes ten minutes')).toEqual(expect.arrayContaining(['residence', 'occupation', 'commute']));
    expect([...facetsStated('Now I live in Utrecht with a colleague, the bus to work takes ten minutes')]).not.toContain('occupation');
    expect([...facetsStated('I work as a welder at the shipyard now')]).toContain('occupation');
  });

  it('reads a home rented or found, a vehicle driven as the job, and a number only as someone\'s', () => {
    expect(of('got a studio near the canal, finally my own place')).toEqual(['residence']);
    expect(of('I booked a room for the night')).not.toContain('residence');
    expect(of('Sven drives a taxi in Malmö, nights mostly')).toEqual(['occupation', 'schedule']);
    expect(of('I drive the bus to work')).toContain('commute');
    expect(of('we took the number 12 tram')).not.toContain('contact');
    expect(of('my number is 0161 555 0100')).toEqual(['contact']);
  });

  it('reads a person\'s weight, not a thing\'s, and a ranked title at a place as a job', () => {
    for (const t of ['I weigh 84 kg.', "Also I'm down to 81 kg!", 'weight is 79 now btw', 'What does Kemal weigh now?', "What is Kemal's weight?"]) expect(of(t)).toContain('weight');
    for (const t of ['my Fender Jazz weighs a ton', 'I need 2 kg of flour now']) expect(of(t)).not.toContain('weight');
    expect(of("it's the museum one, assistant curator at the M Shed.")).toContain('occupation');
    expect(of('the assistant said no')).not.toContain('occupation');
  });

  it('reads a pastime by its name ("I do climbing at the Redpoint wall now", "gave up pottery")', () => {
    expect(of('I gave up pottery, no time, I do climbing at the Redpoint wall on wednesdays instead')).toEqual(['hobby', 'schedule']);
    expect(of('What hobby does Liesl have now?')).toEqual(['hobby']);
  });

  it('orders the facets by where they first appear', () => {
    expect(facetsInOrder('I quit my job and moved to Porto')).toEqual(['occupation', 'residence']);
  });
});
