import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { decodeWordVectorFile, decodeWordVectors, encodeWordVectors } from '../../src/embedding/word-vector-format';
import { readWordVectorParts } from '../../src/embedding/word-vector-file';
import { SifEmbedder } from '../../src/embedding/sif-embedder';
import { VECTORS_FILE, VOCAB_FILE } from '../../src/embedding/paths';
import { fixtureInput } from './fixture';

/** A table opened in part (the first rows in memory, the others read from the file) holds the same vectors as the whole file read. */
describe('a word-vector file opened in part', () => {
  const input = fixtureInput();
  const enc = encodeWordVectors(input);
  const whole = decodeWordVectors(enc.bin, enc.vocab);
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'strata-wvf-'));
    fs.writeFileSync(path.join(dir, VECTORS_FILE), enc.bin);
    fs.writeFileSync(path.join(dir, VOCAB_FILE), enc.vocab);
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  const open = async (residentRows: number, cacheRows?: number) =>
    decodeWordVectorFile(await readWordVectorParts(path.join(dir, VECTORS_FILE), path.join(dir, VOCAB_FILE), residentRows), cacheRows);

  it.each([0, 1, 5, input.words.length, input.words.length + 10])('gives every row as the whole file does with %i rows resident', async (resident) => {
    // a ring of 2 rows: far rows are read, evicted and read again
    const table = await open(resident, 2);
    expect(table.residentRows).toBe(Math.min(resident, input.words.length));
    for (let pass = 0; pass < 2; pass++) {
      input.words.forEach((w, r) => {
        expect(table.lookup(w)).toBe(r);
        expect(table.word(r)).toBe(w);
        expect(table.vector(r)).toEqual(whole.vector(r));
        expect(table.probs[r]).toBe(whole.probs[r]);
      });
    }
    table.close();
  });

  it('embeds the same vectors as the whole file (SIF over far and resident rows)', async () => {
    const texts = ['The cat sat on the mat.', 'Stock markets fell today', 'self-care at the cafe', 'unknownword kitten'];
    const expected = SifEmbedder.fromTable(whole).embedSync(texts);
    const partial = SifEmbedder.fromTable(await open(3, 1));
    expect(partial.embedSync(texts)).toEqual(expected);
    expect(partial.embedSync(texts.reverse())).toEqual(expected.reverse());
    await partial.close();
  });

  it('reads no far row once closed, and refuses a damaged file', async () => {
    const table = await open(2);
    table.close();
    expect(() => table.vector(5)).toThrow(/closed/);
    expect(table.vector(1)).toEqual(whole.vector(1)); // resident rows stay
    const bad = path.join(dir, 'bad.bin');
    fs.writeFileSync(bad, enc.bin.subarray(0, enc.bin.length - 64));
    await expect(readWordVectorParts(bad, path.join(dir, VOCAB_FILE)).then((p) => decodeWordVectorFile(p))).rejects.toThrow(/truncated/);
    fs.writeFileSync(bad, '{"not":"ours"}');
    await expect(readWordVectorParts(bad, path.join(dir, VOCAB_FILE)).then((p) => decodeWordVectorFile(p))).rejects.toThrow(/magic/);
  });
});
