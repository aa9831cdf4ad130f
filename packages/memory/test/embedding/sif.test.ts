import { SifEmbedder } from '../../src/embedding/sif-embedder';
import { fallbackWordVector, isFunctionToken } from '../../src/embedding/sif';
import { dot, l2norm } from '../../src/embedding/vector-math';
import { fixtureTable } from './fixture';

describe('SIF embedder over a fixture table', () => {
  const table = fixtureTable();
  const embedder = SifEmbedder.fromTable(table);

  it('returns one unit vector per text, of the table dimension, in order', async () => {
    const texts = ['The cat sat on the mat.', '', 'stock markets', '!!!'];
    const vs = await embedder.embed(texts);
    expect(vs).toHaveLength(4);
    for (const v of vs) {
      expect(v).toHaveLength(8);
      expect(l2norm(v)).toBeCloseTo(1, 5);
    }
    expect(embedder.dimensions).toBe(8);
  });

  it('is deterministic and independent of the batch it is in', async () => {
    const [a] = await embedder.embed(['The kitten rested on the rug.']);
    const [, b] = await embedder.embed(['stock', 'The kitten rested on the rug.']);
    expect(Array.from(a)).toEqual(Array.from(b));
  });

  it('puts sentences on the same topic closer than unrelated ones', async () => {
    const [cat, kitten, stocks] = await embedder.embed(['The cat sat on the mat.', 'A kitten rested on the rug.', 'Stock markets fell today.']);
    expect(dot(cat, kitten)).toBeGreaterThan(dot(cat, stocks) + 0.3);
  });

  it('weights rare words above frequent ones', async () => {
    // "the" (rank 0) and "stock" (rank 10) alone, and together: the pair leans to the rarer word.
    const [the, stock, both] = await embedder.embed(['the', 'stock', 'the stock']);
    expect(dot(both, stock)).toBeGreaterThan(dot(both, the));
  });

  it('handles case, punctuation, diacritics, clitics and compounds', async () => {
    const [a, b] = await embedder.embed(['CAT!!! on... the MAT?', 'cat on the mat']);
    expect(dot(a, b)).toBeCloseTo(1, 5);
    const [cafe1, cafe2] = await embedder.embed(['cafe', 'café']);
    expect(dot(cafe1, cafe2)).toBeCloseTo(1, 5); // folded to the vocabulary's spelling
    const [dont, dontPlain] = await embedder.embed(["don't", "do n't"]);
    expect(dot(dont, dontPlain)).toBeCloseTo(1, 5);
    const [compound, whole] = await embedder.embed(['self-care', 'Self-Care']);
    expect(dot(compound, whole)).toBeCloseTo(1, 5);
    const [split] = await embedder.embed(['cat-rug']); // not in the vocabulary as one word: its parts count
    expect(dot(split, (await embedder.embed(['cat rug']))[0])).toBeCloseTo(1, 5);
  });

  it('gives unknown words a fallback that matches the same word and its misspellings', async () => {
    const [name, sameName, typo, other] = await embedder.embed(['Zanzibarova', 'zanzibarova', 'zanzibarowa', 'Quetzalcoatl']);
    expect(dot(name, sameName)).toBeCloseTo(1, 5);
    expect(dot(name, typo)).toBeGreaterThan(0.5);
    expect(dot(name, typo)).toBeGreaterThan(dot(name, other) + 0.3);
    // A known sentence with an unknown name still finds the sentence with that name first.
    const [q, withName, without] = await embedder.embed(['cat Zanzibarova', 'the cat of Zanzibarova', 'the cat on the mat']);
    expect(dot(q, withName)).toBeGreaterThan(dot(q, without));
  });

  it('drops unknown words when the fallback is off, and skips function tokens', async () => {
    const noOov = SifEmbedder.fromTable(table, { oovFallback: false });
    const [a, b] = await noOov.embed(['cat Zanzibarova', 'cat']);
    expect(dot(a, b)).toBeCloseTo(1, 5);
    expect(isFunctionToken('a')).toBe(true);
    expect(isFunctionToken("'s")).toBe(true);
    expect(isFunctionToken('zanzibar')).toBe(false);
    expect(noOov.id).not.toBe(embedder.id); // settings that change vectors change the id
  });

  it('makes fallback vectors of the requested length, deterministically', () => {
    const v = fallbackWordVector('qwerty', 16, 3);
    expect(l2norm(v)).toBeCloseTo(3, 4);
    expect(Array.from(fallbackWordVector('qwerty', 16, 3))).toEqual(Array.from(v));
  });

  it('can project out the common component', async () => {
    const pc = SifEmbedder.fromTable(table, { removeCommonComponent: true });
    const u = Float32Array.from(table.header.commonComponents[0]);
    const [v] = await pc.embed(['the cat sat on the mat']);
    expect(Math.abs(dot(v, u))).toBeLessThan(1e-5);
  });
});
