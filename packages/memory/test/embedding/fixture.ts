/** A tiny word-vector table with known geometry: three topics in 8 dimensions, frequencies by rank. */
import { encodeWordVectors, decodeWordVectors, type WordVectorInput } from '../../src/embedding/word-vector-format';
import { buildWordVectorInput } from '../../src/embedding/convert/build';

const TOPICS: Record<string, number> = { animal: 0, furniture: 1, finance: 2, motion: 3, time: 4 };

/** word → (topic, small offset so words of a topic are close but not equal). */
const WORDS: [string, string | null, number][] = [
  ['the', null, 0],
  ['on', null, 1],
  ['sat', 'motion', 0],
  ['rested', 'motion', 1],
  ['fell', 'motion', 2],
  ['cat', 'animal', 0],
  ['kitten', 'animal', 1],
  ['dog', 'animal', 2],
  ['mat', 'furniture', 0],
  ['rug', 'furniture', 1],
  ['stock', 'finance', 0],
  ['market', 'finance', 1],
  ['markets', 'finance', 2],
  ['today', 'time', 0],
  ['cafe', 'time', 1],
  ['self-care', 'furniture', 2],
  ['do', null, 2],
  ["n't", null, 3],
];

export function fixtureInput(): WordVectorInput {
  const dims = 8;
  const words = WORDS.map((w) => w[0]);
  const vectors = new Float32Array(words.length * dims);
  WORDS.forEach(([, topic, k], r) => {
    const base = r * dims;
    if (topic === null) {
      for (let d = 0; d < dims; d++) vectors[base + d] = 0.3; // function words: a shared "common" direction
    } else {
      vectors[base + TOPICS[topic]] = 2;
      vectors[base + 5 + (k % 3)] = 0.4;
    }
  });
  const probs = Float32Array.from(words, (_, r) => 0.05 / (r + 1));
  return buildWordVectorInput({ words, vectors, dims, probs, sifA: 1e-3, source: { name: 'fixture@1', fingerprint: 'fixture' }, frequencySource: 'rank' });
}

export function fixtureTable() {
  const enc = encodeWordVectors(fixtureInput());
  return decodeWordVectors(enc.bin, enc.vocab);
}
