import { planConsolidation } from '../../src/consolidation';
import { emojiWords, withEmojiWords } from '../../src/text';
import { HashEmbedder } from '../consolidation/hash-embedder';
import { MemoryFixture, counter, event } from '../consolidation/fixtures';

describe('emoji as the words they stand for', () => {
  it('names things, places and flags; leaves faces and hearts out', () => {
    expect(emojiWords('biscuit says hi btw 🐶')).toEqual(['dog face']);
    expect(emojiWords('VISA APPROVED 🇮🇹')).toEqual(['Italy']);
    // a skin tone or a selector does not hide the emoji; a zero-width-joined one is one emoji
    expect(emojiWords('new job 👩🏽‍⚕️ and 👩‍⚕️, boba 🧋🧋')).toEqual(['woman health worker', 'bubble tea']);
    expect(emojiWords('ren and i r official 🥹 ❤️ 😭')).toEqual([]);
    expect(withEmojiWords('no emoji here')).toBe('no emoji here');
    expect(withEmojiWords('meet Lola 🐕')).toBe('meet Lola 🐕 (dog)');
  });

  it("gives a statement its emoji's words as keywords, and leaves its content as said", async () => {
    const plan = await planConsolidation({
      events: [event('Carmen: meet Lola 🐕 retired racing greyhound, sleeps 20 hours a day, Femke and I are obsessed', { metadata: { speaker: 'Carmen' } })],
      now: '2024-06-22T10:00:00.000Z', newId: counter('u'), embedder: new HashEmbedder(),
      findSimilar: new MemoryFixture().findSimilar, findBySubjectAttribute: new MemoryFixture().findBySubjectAttribute,
    });
    expect(plan.units).toHaveLength(1);
    expect(plan.units[0].unit.content).toBe('Carmen: meet Lola 🐕 retired racing greyhound, sleeps 20 hours a day, Femke and I are obsessed');
    expect(plan.units[0].unit.keywords).toContain('dog');
  });
});
