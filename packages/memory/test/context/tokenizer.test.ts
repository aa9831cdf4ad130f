/**
 * The tokenizer fills js-tiktoken's rank table itself, in slices (tokenizer.ts): these check that the
 * table is the one the library's own constructor builds, for every encoding offered (a new js-tiktoken
 * that changed its table or the fields encode reads would fail here), and that counts asked for while
 * the slices are still running come from a finished table.
 */
import { Tiktoken } from 'js-tiktoken/lite';
import { DEFAULT_ENCODING, getTokenCounter, prepareTokenCounter } from '../../src/context/tokenizer';

interface RankMaps {
  rankMap: Map<string, number>;
  textMap: Map<number, Uint8Array>;
}

const SAMPLE = "Tom's café in 東京 opened on 2023-04-01 👋 — naïve <|fim_prefix|> tokens, 12345 and 'quoted' text\n\twith tabs";

describe.each(['cl100k_base', 'o200k_base', 'p50k_base', 'r50k_base', 'gpt2', 'p50k_edit'])('%s', (encoding) => {
  it('has the rank table of js-tiktoken\'s own constructor, and counts as it does', () => {
    const ranks = require(`js-tiktoken/ranks/${encoding}`);
    const reference = new Tiktoken(ranks.default ?? ranks);
    const counter = getTokenCounter(encoding);
    const encoder = (counter as unknown as { enc: Tiktoken }).enc; // the counter's own (a private field)
    const ours = encoder as unknown as RankMaps;
    const theirs = reference as unknown as RankMaps;
    expect(ours.rankMap.size).toBe(theirs.rankMap.size);
    expect(ours.textMap.size).toBe(theirs.textMap.size);
    let differing = 0;
    for (const [key, rank] of theirs.rankMap) if (ours.rankMap.get(key) !== rank) differing++;
    for (const [rank, bytes] of theirs.textMap) {
      const mine = ours.textMap.get(rank);
      if (!mine || Buffer.compare(Buffer.from(mine), Buffer.from(bytes)) !== 0) differing++;
    }
    expect(differing).toBe(0);
    // keys the library never makes are unknown to both
    for (const key of ['', '0,', ',0', '01', '256', '1,,2', 'a', '104,101,108,108,111,999']) expect(ours.rankMap.get(key)).toBe(theirs.rankMap.get(key));
    for (const rank of [-1, 0.5, 1e9]) expect(ours.textMap.get(rank)).toBe(theirs.textMap.get(rank));
    const text = SAMPLE.replace('<|fim_prefix|>', ''); // special tokens are refused by both alike
    expect(counter.count(text)).toBe(reference.encode(text).length);
    expect(encoder.encode(text)).toEqual(reference.encode(text));
    expect(encoder.decode(reference.encode(text))).toBe(text);
  });
});

describe('the rank table', () => {
  it('holds cl100k_base in a few MiB (the library\'s Maps: ~48 MiB of heap)', () => {
    const { table } = getTokenCounter('cl100k_base') as unknown as { table: { byteSize: number } };
    expect(table.byteSize).toBeLessThan(5 * 1024 * 1024);
  });

  it('encodes a long, varied text as the library does', () => {
    const ranks = require('js-tiktoken/ranks/cl100k_base');
    const reference = new Tiktoken(ranks.default ?? ranks);
    const encoder = (getTokenCounter('cl100k_base') as unknown as { enc: Tiktoken }).enc;
    const words = ['the', ' quick', 'Brown', ' 東京', '👋🏽', '\n\n', ' naïve', '12345', "'s", ' ', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', '\t', 'ﬁ', '—'];
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const text = Array.from({ length: 5000 }, () => words[Math.floor(random() * words.length)]).join('');
    expect(encoder.encode(text)).toEqual(reference.encode(text));
    expect(encoder.decode(reference.encode(text))).toBe(reference.decode(reference.encode(text)));
  });
});

describe('building in slices', () => {
  it('finishes the table when a count is asked for before the slices are done', async () => {
    // p50k_edit is not used by the cases above before this one runs in a fresh module registry
    jest.resetModules();
    const fresh = require('../../src/context/tokenizer') as typeof import('../../src/context/tokenizer');
    const prepared = fresh.prepareTokenCounter('p50k_edit');
    const counter = fresh.getTokenCounter('p50k_edit'); // before any slice ran: finished at once
    expect(counter.count(SAMPLE.replace('<|fim_prefix|>', ''))).toBe(getTokenCounter('p50k_edit').count(SAMPLE.replace('<|fim_prefix|>', '')));
    await prepared;
    expect(fresh.getTokenCounter('p50k_edit')).toBe(counter); // one table, not a second one
  });

  it('resolves once the counter is ready, and then hands out the same counter', async () => {
    jest.resetModules();
    const fresh = require('../../src/context/tokenizer') as typeof import('../../src/context/tokenizer');
    await fresh.prepareTokenCounter();
    const counter = fresh.getTokenCounter(DEFAULT_ENCODING);
    expect(counter.count('hello world')).toBe(getTokenCounter().count('hello world'));
    await prepareTokenCounter(); // also on the module as first loaded
    expect(fresh.getTokenCounter()).toBe(counter);
  });

  it('refuses an unknown encoding', () => {
    expect(() => prepareTokenCounter('nope')).toThrow(RangeError);
  });
});
