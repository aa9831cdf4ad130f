import { classifyNoise } from '../../src/consolidation';

describe('classifyNoise', () => {
  it.each(['hi', 'Hello!', 'thanks!', 'ok', 'lol', 'sounds good', "haha that's great", 'Thank you so much!!', 'yeah, me too', '👍🙂', 'see you soon', 'Talk to you soon!', 'Totally agree.'])(
    '%s is noise', (s) => {
      expect(classifyNoise(s).noise).toBe(true);
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
