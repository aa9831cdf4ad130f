import { classifyNoise, FILLER_PHRASES, FILLER_WORDS, fillerVerdict } from '../../src/consolidation';

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

describe('fillerVerdict', () => {
  /** The whole check as it was before a word outside every list ended it early: every phrase removed, then the words left. */
  function wholeCheck(raw: string, names: ReadonlySet<string>): ReturnType<typeof fillerVerdict> {
    if (/\d/.test(raw)) return { noise: false };
    let norm = ` ${raw.toLowerCase().replace(/[^\p{L}\p{N}'\s]/gu, ' ').replace(/\s+/g, ' ').trim()} `;
    if (norm.trim() === '') return { noise: true, reason: 'only symbols or emoji' };
    let phraseHit = false;
    for (const p of FILLER_PHRASES) {
      const needle = ` ${p} `;
      while (norm.includes(needle)) { norm = norm.replace(needle, ' '); phraseHit = true; }
    }
    const words = norm.trim() === '' ? [] : norm.trim().split(' ');
    const lowerNames = new Set([...names].map((n) => n.toLowerCase()));
    if (words.some((w) => !FILLER_WORDS.has(w) && !lowerNames.has(w))) return { noise: false };
    const kind = phraseHit || words.some((w) => !['hi', 'hello', 'hey', 'heya', 'hiya', 'yo', 'howdy', 'bye', 'goodbye'].includes(w) && !lowerNames.has(w))
      ? 'acknowledgement or small talk' : 'greeting';
    return { noise: true, reason: `${kind} without information` };
  }

  it('decides as the whole check on statements made of phrase words, fillers, names and content words', () => {
    let seed = 20261128;
    const rand = (n: number) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };
    const phraseWords = [...new Set(FILLER_PHRASES.flatMap((p) => p.split(' ')))];
    const fillers = [...FILLER_WORDS];
    const pools = [phraseWords, fillers, ['Mel', 'Caroline', 'mel'], ['pottery', 'Lisbon', 'budget', 'works', 'job', "that's"], FILLER_PHRASES as string[], ['!', '...', '🙂', ',']];
    const names = new Set(['Mel', 'Caroline']);
    let noise = 0;
    for (let i = 0; i < 5000; i++) {
      const parts: string[] = [];
      for (let k = 1 + rand(6); k > 0; k--) {
        const pool = pools[rand(pools.length)];
        parts.push(pool[rand(pool.length)]);
      }
      const s = parts.join(rand(4) === 0 ? ', ' : ' ');
      const expected = wholeCheck(s, names);
      if (expected.noise) noise++;
      expect([s, fillerVerdict(s, names)]).toEqual([s, expected]);
    }
    expect(noise).toBeGreaterThan(500); // the statements reach both answers
  });
});
