import { classifyNoise } from '../../src/consolidation';

describe('classifyNoise', () => {
  it.each(['hi', 'Hello!', 'thanks!', 'ok', 'lol', 'sounds good', "haha that's great", 'Thank you so much!!', 'yeah, me too', '👍🙂', 'see you soon', 'Talk to you soon!', 'Totally agree.', 'That works for me.', 'works for us!', 'ok will do', 'count me in 🙌'])(
    '%s is noise', (s) => {
      expect(classifyNoise(s).noise).toBe(true);
    });

  it('keeps an agreement that gives a value', () => {
    expect(classifyNoise('Thursdays at 7 work for me').noise).toBe(false);
    expect(classifyNoise('that works, I can do the 14th').noise).toBe(false);
  });

  it('gives the reason', () => {
    expect(classifyNoise('hi')).toEqual({ noise: true, reason: 'greeting without information' });
    expect(classifyNoise('ok')).toEqual({ noise: true, reason: 'acknowledgement or small talk without information' });
    expect(classifyNoise('🎉')).toEqual({ noise: true, reason: 'only symbols or emoji' });
  });

  it.each(['ok, my flight is at 9', 'thanks, I will bring the cake', 'I got a new puppy', 'no, I live in Oslo', 'Great news: Paris!'])(
    '%s carries information', (s) => {
      expect(classifyNoise(s)).toEqual({ noise: false });
    });

  it('greets a known participant by name', () => {
    expect(classifyNoise('Hey Mel! Good to see you! How have you been?', new Set(['Mel'])).noise).toBe(true);
    expect(classifyNoise('Totally agree, Mel.', new Set(['Mel'])).noise).toBe(true);
    // Without knowing Mel is a participant the name is a content word, and it is kept.
    expect(classifyNoise('Hey Mel! Good to see you!').noise).toBe(false);
  });
});

describe('classifyNoise: what carries words but states nothing', () => {
  it.each([
    ['How did it go?', 'a question without information'],
    ["What's your current easy pace?", 'a question without information'],
    ['Oh no :( at least she stays in the family', 'a reaction without information'],
    ['So proud of you!!', 'a reaction without information'],
    ['good luck with the move', 'a reaction without information'],
    ['Pictures please', 'a fragment without information'],
    ['thanks for all the help so far by the way', 'thanks without information'],
    ['Servus!', 'acknowledgement or small talk without information'],
    ['Genau, vielen Dank!', 'acknowledgement or small talk without information'],
    ['¡Hola! Muchas gracias 😊', 'acknowledgement or small talk without information'],
    ['Thank you so much for the tips!', 'thanks without information'],
  ])('%s is noise: %s', (s, reason) => {
    expect(classifyNoise(s)).toEqual({ noise: true, reason });
  });

  it('a short fragment that opens with an acronym names something; a shout in capitals does not', () => {
    expect(classifyNoise('KAIST in daejeon!!')).toEqual({ noise: false });
    expect(classifyNoise('OMG so cool').noise).toBe(true);
    expect(classifyNoise('LU!!!').noise).toBe(true);
  });

  it.each(['Dr. Lindqvist does the root chemistry work, right?', 'taking 5g a day, ok to keep on race week?', 'Papa ka birthday 9 August ko hai, aa rahi ho na?'])(
    'a question that tells while it asks is kept: %s', (s) => {
      expect(classifyNoise(s)).toEqual({ noise: false });
    });

  it.each(['Could we do August 15?', 'What time is the 7pm show?', '22C is an aisle?', 'When is it, the 5th or the 6th?'])(
    'a question that only proposes or checks a value is noise: %s', (s) => {
      expect(classifyNoise(s)).toEqual({ noise: true, reason: 'a question without information' });
    });

  it.each(['thanks, I start the new job on Monday', 'thanks for booking Kinugawa', 'thanks for the 10% discount'])(
    'thanks that go on to tell or name what was done are kept: %s', (s) => {
      expect(classifyNoise(s).noise).toBe(false);
    });

  it.each(['Can you move my flight to October 5?', 'Guess what? I got the job!', 'Berlin.', 'Oh no, I lost my keys at the gym', 'Wow, Tom got the job'])(
    '%s is kept', (s) => {
      expect(classifyNoise(s).noise).toBe(false);
    });
});
