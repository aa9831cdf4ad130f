import { HashingEmbedder } from '../../src/embedding/hashing-embedder';
import { dot, l2norm } from '../../src/embedding/vector-math';

describe('HashingEmbedder', () => {
  const e = new HashingEmbedder();

  it('returns unit vectors of the configured size, in order, also for empty text', async () => {
    const vs = await e.embed(['Hello world', '', '   ', 'Another sentence here.']);
    expect(vs).toHaveLength(4);
    for (const v of vs) {
      expect(v).toHaveLength(256);
      expect(l2norm(v)).toBeCloseTo(1, 5);
    }
    const small = new HashingEmbedder({ dimensions: 32 });
    expect((await small.embed(['x']))[0]).toHaveLength(32);
    expect(() => new HashingEmbedder({ dimensions: 1 })).toThrow(RangeError);
  });

  it('is deterministic across instances and batches', async () => {
    const [a] = await e.embed(['Caroline went to the support group']);
    const [, b] = await new HashingEmbedder().embed(['other', 'Caroline went to the support group']);
    expect(Array.from(a)).toEqual(Array.from(b));
  });

  it('ranks texts sharing content words above unrelated ones, ignoring case and punctuation', async () => {
    const [q, related, unrelated, same] = await e.embed([
      'When did Caroline go to the LGBTQ support group?',
      'Caroline: I went to a LGBTQ support group yesterday.',
      'Melanie: I painted a sunrise over the lake last week.',
      'when did caroline go to the lgbtq support group',
    ]);
    expect(dot(q, related)).toBeGreaterThan(dot(q, unrelated) + 0.2);
    expect(dot(q, same)).toBeCloseTo(1, 5);
  });

  it('matches inflections and misspellings through character n-grams', async () => {
    const [paint, painting, unrelated] = await e.embed(['paintings', 'painting', 'bicycle']);
    expect(dot(paint, painting)).toBeGreaterThan(dot(paint, unrelated) + 0.3);
  });

  it('lets word order matter a little (bigrams)', async () => {
    const [ab, ba, abAgain] = await e.embed(['dog bites man', 'man bites dog', 'dog bites man']);
    expect(dot(ab, ba)).toBeLessThan(dot(ab, abAgain));
    expect(dot(ab, ba)).toBeGreaterThan(0.5);
  });
});
