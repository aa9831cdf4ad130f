import { carriesTime, kindFactor, kindFactorBeyond, matchedTerms, namesIn, queryIntent, KIND_FACTOR, TIME_KIND_FACTOR } from '../../src/retrieval/intent';
import { buildUnitFilter } from '../../src/retrieval/filters';

describe('query intent', () => {
  it.each([
    ['Which city does Lena live in now?', 'current'],
    ['What does Omar do for work?', 'current'],
    ['Where did Omar work before?', 'history'],
    ['What was the original Atlas deadline?', 'history'],
    ["What did Lucía's ex do for a living?", 'history'],
    ['What car did Kofi have?', 'past'],
    ['What was the total rent back in January?', 'history'],
    ['Which city was the user in when they started the journal?', 'history'],
    ['Who was Jules going out with at the start of 2023?', 'history'],
    ['Who is Lucía dating now?', 'current'],
  ])('%s asks about %s', (q, tense) => {
    expect(queryIntent(q).tense).toBe(tense);
  });

  it.each([
    ['When does Rui fly to Montreal?', 'time'],
    ['What date is the exam?', 'time'],
    ['How much does Seun pay per month now?', 'number'],
    ['Who manages the team now?', 'person'],
    ['Where does Ingrid live?', 'place'],
    ['Which city does Maya live in now?', 'place'],
    ['What does Maya do?', null],
    ['Why did Ryo move cities?', 'reason'],
    ['How come the quiz moved?', 'reason'],
    ['What was the reason for the rent increase?', 'reason'],
  ])('%s wants a %s', (q, kind) => {
    expect(queryIntent(q).kind).toBe(kind);
  });

  it('scales down a statement without the kind of answer asked for, never one with it', () => {
    expect(carriesTime('Training starts in August')).toBe(true);
    expect(carriesTime('I passed the fire academy entrance test')).toBe(false);
    expect(kindFactor('time', 'I love the fire academy')).toBe(TIME_KIND_FACTOR);
    // an event reported as it happened is dated by when it was said: it answers "when did …?"
    expect(kindFactor('time', 'I passed the test')).toBe(1);
    expect(kindFactor('time', 'Noor: Callum proposed. On Arthur\'s Seat, in the wind.')).toBe(1);
    expect(kindFactor('time', 'We are back from Norway.')).toBe(1);
    expect(kindFactor('time', 'I want to pass the test')).toBe(TIME_KIND_FACTOR);
    expect(kindFactor('time', 'Station 7, starting Monday')).toBe(1);
    expect(kindFactor('number', 'It pays 27,500 AED a month')).toBe(1);
    expect(kindFactor('reason', "Ryo: leaving Osaka after 6 years, my partner got a new job down in Kyushu")).toBe(1);
    expect(kindFactor('reason', 'Marcus: switching to days from oct, nights just dont work bc of the school runs')).toBe(1);
    expect(kindFactor('reason', 'Aoife is moving to Cork, her husband got a job there')).toBe(1);
    expect(kindFactor('reason', 'Nkechi: Ryo keeps the main dashboard')).toBe(KIND_FACTOR);
    expect(kindFactor('person', 'Omar: Marcus takes over as our manager')).toBe(1);
    expect(kindFactor('person', 'Omar: the new manager starts soon')).toBe(KIND_FACTOR);
    expect(kindFactor('place', 'Maya: first week in porto done, the flat in bonfim is tiny')).toBe(1);
    expect(kindFactor('place', 'Kwame: we are moving to Soundhouse')).toBe(1);
    expect(kindFactor('place', 'Maya: u have to help me find a flat that takes dogs')).toBe(KIND_FACTOR);
    expect(kindFactor('place', 'Olek: i will bring my own cymbals this time, the studio ones are trash')).toBe(KIND_FACTOR);
    expect(kindFactor(null, 'anything')).toBe(1);
  });

  it('a who or where question is not answered by a statement naming only the people it asks about, or a month or a weekday', () => {
    const beyond = (q: string, content: string) => {
      const intent = queryIntent(q);
      return kindFactorBeyond(intent.kind, content, namesIn(content), intent.names);
    };
    expect([...queryIntent("Who is Claire's dentist?").names]).toEqual(['claire']);
    expect(beyond('Who did Abuela stay with right after her fall?', 'Rosa: Abuela fell last week. She can\'t stay alone anymore')).toBe(KIND_FACTOR);
    expect(beyond('Who did Abuela stay with right after her fall?', "Rosa: For now she's staying with Tía Marisol in Las Cruces")).toBe(1);
    expect(beyond("Who is Claire's dentist?", 'assistant: Done: your dentist check-up is now on Friday, February 14 at 8:45.')).toBe(KIND_FACTOR);
    expect(beyond("Who is Claire's dentist?", "assistant: You're booked with Dr. Okonkwo on Tuesday")).toBe(1);
    expect(beyond("Where does Lucía's boyfriend work?", 'Lucía: Lucía here, all good')).toBe(KIND_FACTOR);
    expect(beyond("Where does Lucía's boyfriend work?", 'Lucía: he owns a bakery in Malasaña')).toBe(1);
    // a writer who does not capitalize may name the answer in small letters
    expect(beyond("Who stood in during Greta's leave?", 'Dana: Greta starts mat leave next fri. tomasz covering as EM')).toBe(1);
  });

  it('"Who is Arjun?" is answered by the statement that says what Arjun is to someone, not by any that names him', () => {
    const beyond = (q: string, content: string) => {
      const intent = queryIntent(q);
      return kindFactorBeyond(intent.kind, content, namesIn(content), intent.names);
    };
    expect(queryIntent('Who is Arjun?').kind).toBe('identity');
    expect(queryIntent("who's Linda Park?").kind).toBe('identity');
    expect(queryIntent("Who is Claire's dentist?").kind).toBe('person');
    expect(queryIntent('Who is Tom dating now?').kind).toBe('person');
    expect(beyond('Who is Arjun?', 'Rohan: My brother Arjun will collect meds from now on.')).toBe(1);
    expect(beyond('Who is Arjun?', 'Dana: Arjun, our new neighbour, fed the cat')).toBe(1);
    expect(beyond('Who is Arjun?', 'Dana: Arjun is a nurse at the Royal')).toBe(1);
    expect(beyond('Who is Sara?', "Max: she's (Sara) my wife and my entire marketing department lol")).toBe(1);
    expect(beyond('Who is Hana?', 'Rosa: say hi to ur gf hana')).toBe(1);
    expect(beyond('Who is Inés?', 'Ana: my teacher Inés says I talk with my hands')).toBe(1);
    expect(beyond('Who is Arjun?', "Amelie: Noted, I'll swap Arjun in as authorised collector.")).toBe(KIND_FACTOR);
    expect(beyond('Who is Arjun?', 'Dana: Arjun is coming on Friday')).toBe(KIND_FACTOR);
  });

  it('reads an irregular past in a statement as the base form the question asks with, as the text index does', () => {
    const terms = queryIntent('Where did Jamal grow up?').terms;
    // every word the question asks with is in the statement, though it says "grew"
    expect([...matchedTerms('Jamal: I grew up in Bristol so anything north feels far', terms)]).toEqual(terms);
    expect(terms.length).toBeGreaterThan(0);
  });

  it('searches superseded units (never forgotten ones) only when asked to', () => {
    const base = { user_id: 'u', stream_id: 's', org_id: null, valid_time: '2025-01-01T00:00:00.000Z', transaction_time: '2025-01-01T00:00:00.000Z' };
    const superseded = { ...base, retired_at: '2025-02-01T00:00:00.000Z', retired_reason: 'superseded' as const };
    const forgotten = { ...base, retired_at: '2025-02-01T00:00:00.000Z', retired_reason: 'forgotten' as const };
    expect(buildUnitFilter({ user_id: 'u' })(superseded)).toBe(false);
    expect(buildUnitFilter({ user_id: 'u', include_superseded: true })(superseded)).toBe(true);
    expect(buildUnitFilter({ user_id: 'u', include_superseded: true })(forgotten)).toBe(false);
  });
});
