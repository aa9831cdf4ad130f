import { decodeWordVectors, encodeWordVectors, readHeader, verifyWordVectors } from '../../src/embedding/word-vector-format';
import { readWinkEmbeddings } from '../../src/embedding/convert/wink-json';
import { estimateProbabilities, lowercaseCounts } from '../../src/embedding/convert/frequencies';
import { fixtureInput } from './fixture';

describe('binary word-vector format', () => {
  const input = fixtureInput();
  const enc = encodeWordVectors(input);

  it('round-trips every word and vector within int8 quantization error', () => {
    const table = decodeWordVectors(enc.bin, enc.vocab);
    expect(table.count).toBe(input.words.length);
    expect(table.dims).toBe(input.dims);
    input.words.forEach((w, r) => {
      expect(table.lookup(w)).toBe(r);
      expect(table.word(r)).toBe(w);
      const v = table.vector(r);
      let max = 0;
      for (let d = 0; d < input.dims; d++) max = Math.max(max, Math.abs(input.vectors[r * input.dims + d]));
      for (let d = 0; d < input.dims; d++) expect(Math.abs(v[d] - input.vectors[r * input.dims + d])).toBeLessThanOrEqual(max / 254 + 1e-6);
      expect(table.probs[r]).toBeCloseTo(input.probs[r], 6);
    });
    expect(table.lookup('absent')).toBe(-1);
    expect(table.lookup('ca')).toBe(-1); // a prefix of "cat" is not "cat"
    expect(table.lookup('catt')).toBe(-1);
  });

  it('is deterministic and carries its metadata in the header', () => {
    expect(encodeWordVectors(fixtureInput()).bin.equals(enc.bin)).toBe(true);
    const h = readHeader(enc.bin);
    expect(h).toMatchObject({ format: 'strata-word-vectors', dims: 8, count: input.words.length, source: { fingerprint: 'fixture' } });
    expect(h.commonComponents).toHaveLength(1);
    expect(h.sections.vectors.offset % 8).toBe(0);
  });

  it('verifies checksums and rejects corruption, truncation and foreign files', () => {
    expect(() => verifyWordVectors(enc.bin, enc.vocab)).not.toThrow();
    const corrupt = Buffer.from(enc.bin);
    corrupt[corrupt.length - 1] ^= 0xff;
    expect(() => verifyWordVectors(corrupt, enc.vocab)).toThrow(/checksum/);
    expect(() => verifyWordVectors(enc.bin, Buffer.from('other\n'))).toThrow(/vocabulary/);
    expect(() => readHeader(enc.bin.subarray(0, enc.bin.length - 100))).toThrow(/truncated/);
    expect(() => readHeader(Buffer.from('{"not":"ours"}'))).toThrow(/magic/);
  });

  it('works when the file bytes are not 8-aligned in memory', () => {
    const shifted = Buffer.alloc(enc.bin.length + 3);
    enc.bin.copy(shifted, 3);
    const table = decodeWordVectors(shifted.subarray(3), enc.vocab);
    expect(table.lookup('kitten')).toBe(input.words.indexOf('kitten'));
  });
});

describe('streaming reader of the wink JSON layout', () => {
  // The package's layout: each vector is dims values, then its L2 norm, then its word index.
  const words = ['the', 'cat', 'sé"q', 'x'];
  const vecs = words.map((_, i) => [i + 0.5, -1.25e-3 * (i + 1), 3e2, i * 2 - 1]);
  const json = JSON.stringify({
    precision: 8,
    l2NormIndex: 4,
    wordIndex: 5,
    size: words.length,
    dimensions: 4,
    words,
    vectors: Object.fromEntries(words.map((w, i) => [w, [...vecs[i], 1, i]])),
    unkVector: [0, 0, 0, 0, 0, -1],
  }).replace(/,/g, ', '); // whitespace where JSON allows it

  it('reads fields and vectors exactly, across chunk edges', () => {
    const bytes = Buffer.from(json, 'utf8');
    const fields: Record<string, unknown> = {};
    const got: { word: string; values: number[] }[] = [];
    readWinkEmbeddings(
      (buf, off, len, pos) => bytes.copy(buf, off, pos, Math.min(bytes.length, pos + Math.min(len, 7))), // 7 bytes a read
      {
        onField: (k, v) => (fields[k] = v),
        onVector: (e) => got.push({ word: e.word, values: Array.from(e.values.subarray(0, e.valueCount)) }),
      },
      128,
    );
    expect(fields).toMatchObject({ dimensions: 4, size: 4, words });
    expect(got.map((g) => g.word)).toEqual(words);
    got.forEach((g, i) => expect(g.values).toEqual([...vecs[i], 1, i]));
  });

  it('fails with the byte position on malformed input', () => {
    const bytes = Buffer.from('{"dimensions": 2, "vectors": {"a": [1, 2 3]}}');
    expect(() => readWinkEmbeddings((buf, off, len, pos) => bytes.copy(buf, off, pos, Math.min(bytes.length, pos + len)), { onField: () => undefined, onVector: () => undefined })).toThrow(
      /byte \d+: expected ',' or '\]'/,
    );
  });
});

describe('frequency estimate', () => {
  it('uses counts where known (case-merged) and a Zipf fit on rank elsewhere', () => {
    const words = Array.from({ length: 200 }, (_, r) => `w${r}`);
    const counts = lowercaseCounts(words.slice(0, 100).flatMap((w, r) => [{ word: w.toUpperCase(), count: 5000 / (r + 1) }, { word: w, count: 5000 / (r + 1) }]));
    const est = estimateProbabilities(words, counts);
    expect(est.counted).toBe(100);
    expect(est.zipf.s).toBeCloseTo(1, 2); // counts were exactly 1/rank
    for (let r = 1; r < 200; r++) expect(est.probs[r]).toBeLessThan(est.probs[r - 1]);
    expect(est.probs[150] / est.probs[100]).toBeCloseTo(101 / 151, 2);
  });
});
