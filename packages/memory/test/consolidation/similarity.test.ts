import { calibrateThresholds, compatibleText, contentWords, cosine, DEFAULT_MIN_WORD_OVERLAP, DEFAULT_THRESHOLDS, NEAR_DUPLICATE_PAIRS, RELATED_PAIRS, wordOverlap } from '../../src/consolidation';
import type { Embedder } from '../../src/providers/types';
import { HashEmbedder } from './hash-embedder';

describe('similarity', () => {
  it('cosine', () => {
    expect(cosine([1, 0], [0, 1])).toBe(0);
    expect(cosine([3, 4], [6, 8])).toBeCloseTo(1);
    expect(cosine([0, 0], [1, 1])).toBe(0);
    expect(() => cosine([1], [1, 2])).toThrow('dimensions differ');
  });

  it('defaults: duplicate above related', () => {
    expect(DEFAULT_THRESHOLDS).toEqual({ duplicate: 0.9, related: 0.5 });
  });

  it('calibrates both thresholds between the observed groups of the embedder in use', async () => {
    const c = await calibrateThresholds(new HashEmbedder());
    expect(c.observed).toEqual({ nearDuplicateMin: 0.8944, relatedMax: 0.4472, relatedMean: 0.2938, unrelatedMean: 0.0516 });
    // Midpoint 0.67 is below the floor 0.75: a bag-of-words model is clamped to be careful about merging.
    expect(c.duplicate).toBe(0.75);
    expect(c.related).toBe(0.1727);
  });

  it('an embedder that cannot tell near-duplicates from related facts gets a duplicate threshold above the related pairs', async () => {
    const flat: Embedder = { id: 'flat', dimensions: 2, embed: async (t) => t.map(() => Float32Array.from([1, 0])) };
    const c = await calibrateThresholds(flat);
    expect(c.duplicate).toBe(0.99);
    expect(c.related).toBe(0.94);
  });

  it('compatibleText: same numbers and same polarity', () => {
    expect(compatibleText('My flight is at 9', 'my flight is at 9!')).toBe(true);
    expect(compatibleText('My flight is at 9', 'My flight is at 10')).toBe(false);
    expect(compatibleText('I like olives', "I don't like olives")).toBe(false);
    expect(compatibleText('I went yesterday (2023-05-07)', 'I went yesterday (2023-05-08)')).toBe(false);
  });

  it('wordOverlap: content words only (stopwords, case, plurals and punctuation ignored)', () => {
    expect([...contentWords("I really love hiking in the Mountains!")].sort()).toEqual(['hiking', 'love', 'mountain']);
    expect(wordOverlap('I love hiking in the mountains.', 'I really love hiking in the mountains!')).toBe(1);
    expect(wordOverlap("Can't wait.", "Can't wait for the trip!")).toBe(0.5);
    expect(wordOverlap('Wow, thanks!', 'Thank you so much!')).toBe(1); // small talk on both sides
    expect(wordOverlap('Thanks!', 'Thanks for the book!')).toBe(0);
  });

  it('the repeat bar keeps every probe near-duplicate and splits every probe related pair', () => {
    for (const [a, b] of NEAR_DUPLICATE_PAIRS) expect(wordOverlap(a, b)).toBeGreaterThanOrEqual(DEFAULT_MIN_WORD_OVERLAP);
    for (const [a, b] of RELATED_PAIRS) expect(wordOverlap(a, b)).toBeLessThan(DEFAULT_MIN_WORD_OVERLAP);
  });
});
