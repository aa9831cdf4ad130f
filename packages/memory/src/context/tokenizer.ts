/**
 * Token counting with a real BPE tokenizer (js-tiktoken). Loading an encoding builds a large rank table,
 * so each encoding is loaded once per process and shared (a cache of an immutable table: same input,
 * same output, whoever asks).
 *
 * Two costs are kept off a node's start (issue 29: /readyz within 2 s):
 * - only the ranks of the encoding asked for are loaded (`js-tiktoken/lite` and `js-tiktoken/ranks/<name>`):
 *   the package's main entry parses all six encodings' tables (5.6 MB of source) when it is required;
 * - the rank table (100k-200k entries: about a second of CPU on a busy machine, most of it garbage
 *   collection) can be built in slices between other work (`prepareTokenCounter`), so a node builds it
 *   after it is ready without holding up requests for more than a slice. Whoever needs the counter
 *   before the slices are done (`getTokenCounter`) finishes the table at once: a count is never taken
 *   from a partial table.
 *
 * The table holds what js-tiktoken's own constructor puts in its `rankMap` and `textMap` (which its
 * encode/decode read), in a compact form (rank-table.ts: ~3 MiB instead of ~48 MiB of heap for
 * cl100k_base); packages/memory/test/context/tokenizer.test.ts checks, for every supported encoding,
 * that both answer as the ones the library's constructor builds, entry for entry.
 */
import { Tiktoken, type TiktokenBPE } from 'js-tiktoken/lite';
import { RankTable } from './rank-table';

export interface TokenCounter {
  readonly encoding: string;
  count(text: string): number;
  /** The longest prefix of `text` (cut at a token boundary, "…" appended when cut) of at most `maxTokens` tokens. */
  truncate(text: string, maxTokens: number): string;
}

export const DEFAULT_ENCODING = 'cl100k_base';
const SUPPORTED = ['cl100k_base', 'o200k_base', 'p50k_base', 'r50k_base', 'gpt2', 'p50k_edit'] as const;
type Encoding = (typeof SUPPORTED)[number];

/** One encoding's ranks, required only when that encoding is first asked for (each file is 0.5-2.3 MB). */
function ranksOf(encoding: Encoding): TiktokenBPE {
  const load = (m: TiktokenBPE | { default: TiktokenBPE }): TiktokenBPE => ('default' in m ? m.default : m);
  switch (encoding) {
    case 'cl100k_base': return load(require('js-tiktoken/ranks/cl100k_base'));
    case 'o200k_base': return load(require('js-tiktoken/ranks/o200k_base'));
    case 'p50k_base': return load(require('js-tiktoken/ranks/p50k_base'));
    case 'r50k_base': return load(require('js-tiktoken/ranks/r50k_base'));
    case 'gpt2': return load(require('js-tiktoken/ranks/gpt2'));
    case 'p50k_edit': return load(require('js-tiktoken/ranks/p50k_edit'));
  }
}

/**
 * The fields of js-tiktoken's Tiktoken that its constructor fills from `bpe_ranks` (internal in its
 * types): its encode and decode call only their `get`, which the RankTable's views answer.
 */
interface RankMaps {
  rankMap: Pick<Map<string, number>, 'get'>;
  textMap: Pick<Map<number, Uint8Array>, 'get'>;
}

const BASE64 = new Int8Array(128).fill(-1);
for (const [i, c] of [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'].entries()) BASE64[c.charCodeAt(0)] = i;

/**
 * A Tiktoken whose rank table is filled in steps. `bpe_ranks` is lines of `<prefix> <first rank>
 * <base64 token> <base64 token> …`, ranks counting up along a line (the library's format).
 */
class RankTableBuilder {
  readonly enc: Tiktoken;
  readonly table = new RankTable();
  private readonly text: string;
  /** where the next token starts, the end of its line, and its rank */
  private pos = 0;
  private lineEnd = -1;
  private rank = 0;
  private readonly bytes = new Uint8Array(1024);

  constructor(ranks: TiktokenBPE) {
    // the library's constructor with no ranks: the special tokens and the pattern, as it sets them
    this.enc = new Tiktoken({ ...ranks, bpe_ranks: '' });
    const maps = this.enc as unknown as RankMaps;
    maps.rankMap = this.table.rankMap;
    maps.textMap = this.table.textMap;
    this.text = ranks.bpe_ranks;
  }

  get done(): boolean {
    return this.pos >= this.text.length;
  }

  /** Adds up to `tokens` more tokens to the table. */
  step(tokens: number): void {
    const { text, bytes, table } = this;
    for (let n = 0; n < tokens && this.pos < text.length; n++) {
      if (this.lineEnd < this.pos) {
        // a new line: skip blank lines, then read its prefix and first rank
        let end = text.indexOf('\n', this.pos);
        if (end < 0) end = text.length;
        if (end === this.pos) {
          this.pos++;
          n--;
          continue;
        }
        const prefixEnd = text.indexOf(' ', this.pos);
        let rankEnd = prefixEnd < 0 || prefixEnd > end ? end : text.indexOf(' ', prefixEnd + 1);
        if (rankEnd < 0 || rankEnd > end) rankEnd = end;
        this.rank = Number.parseInt(text.slice(prefixEnd + 1, rankEnd), 10);
        this.lineEnd = end;
        this.pos = rankEnd + 1;
        if (this.pos > end) {
          // a line with no tokens
          this.pos = end + 1;
          continue;
        }
      }
      let tokenEnd = text.indexOf(' ', this.pos);
      if (tokenEnd < 0 || tokenEnd > this.lineEnd) tokenEnd = this.lineEnd;
      let length = 0;
      let acc = 0;
      let bits = 0;
      for (let i = this.pos; i < tokenEnd; i++) {
        const c = text.charCodeAt(i);
        if (c === 61) break; // '=' padding
        acc = ((acc << 6) | BASE64[c]) & 0xffffff;
        bits += 6;
        if (bits >= 8) {
          bits -= 8;
          bytes[length++] = (acc >> bits) & 255;
        }
      }
      table.add(bytes, length, this.rank);
      this.rank++;
      this.pos = tokenEnd + 1;
    }
  }
}

const loaded = new Map<string, TokenCounter>();
const building = new Map<string, { builder: RankTableBuilder; finished: Promise<void> }>();

function checkEncoding(encoding: string): Encoding {
  if (!(SUPPORTED as readonly string[]).includes(encoding)) {
    throw new RangeError(`unknown tokenizer encoding "${encoding}" (expected one of ${SUPPORTED.join(', ')})`);
  }
  return encoding as Encoding;
}

/** The counter of an encoding, its table finished now if it is still being built in slices. */
export function getTokenCounter(encoding: string = DEFAULT_ENCODING): TokenCounter {
  let counter = loaded.get(encoding);
  if (!counter) {
    const builder = building.get(encoding)?.builder ?? new RankTableBuilder(ranksOf(checkEncoding(encoding)));
    builder.step(Infinity);
    counter = new BpeCounter(encoding, builder.enc, builder.table);
    loaded.set(encoding, counter);
  }
  return counter;
}

/** Tokens added per slice: a few milliseconds of work, so what waits behind a slice waits no longer. */
const SLICE_TOKENS = 4096;

/**
 * Builds an encoding's table in slices, yielding to the event loop between them; resolves when the
 * counter is ready. Nothing is built twice: getTokenCounter during the build finishes it.
 */
export function prepareTokenCounter(encoding: string = DEFAULT_ENCODING): Promise<void> {
  if (loaded.has(encoding)) return Promise.resolve();
  let entry = building.get(encoding);
  if (!entry) {
    const builder = new RankTableBuilder(ranksOf(checkEncoding(encoding)));
    const finished = (async () => {
      while (!loaded.has(encoding)) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        if (loaded.has(encoding)) break; // finished by getTokenCounter meanwhile
        builder.step(SLICE_TOKENS);
        if (builder.done) getTokenCounter(encoding);
      }
      building.delete(encoding);
    })();
    entry = { builder, finished };
    building.set(encoding, entry);
  }
  return entry.finished;
}

class BpeCounter implements TokenCounter {
  constructor(readonly encoding: string, private readonly enc: Tiktoken, readonly table: RankTable) {}

  count(text: string): number {
    return text ? this.enc.encode(text).length : 0;
  }

  truncate(text: string, maxTokens: number): string {
    if (maxTokens <= 0) return '';
    const tokens = this.enc.encode(text);
    if (tokens.length <= maxTokens) return text;
    // Decoding a prefix can end inside a multi-byte character (shown as U+FFFD): drop that tail. The
    // ellipsis may merge with or add a token, so shrink until the result really fits.
    for (let keep = maxTokens - 1; keep >= 0; keep--) {
      const cut = this.enc.decode(tokens.slice(0, keep)).replace(/\uFFFD+$/u, '').trimEnd();
      const result = cut ? `${cut}…` : '';
      if (this.count(result) <= maxTokens) return result;
    }
    return '';
  }
}
