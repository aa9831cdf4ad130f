/**
 * Token counting with a real BPE tokenizer (js-tiktoken). Loading an encoding builds a large rank table,
 * so each encoding is loaded once per process and shared (a cache of an immutable table: same input,
 * same output, whoever asks).
 */
import { getEncoding, type Tiktoken, type TiktokenEncoding } from 'js-tiktoken';

export interface TokenCounter {
  readonly encoding: string;
  count(text: string): number;
  /** The longest prefix of `text` (cut at a token boundary, "…" appended when cut) of at most `maxTokens` tokens. */
  truncate(text: string, maxTokens: number): string;
}

export const DEFAULT_ENCODING = 'cl100k_base';
const SUPPORTED = ['cl100k_base', 'o200k_base', 'p50k_base', 'r50k_base', 'gpt2', 'p50k_edit'] as const;

const loaded = new Map<string, TokenCounter>();

export function getTokenCounter(encoding: string = DEFAULT_ENCODING): TokenCounter {
  let counter = loaded.get(encoding);
  if (!counter) {
    if (!(SUPPORTED as readonly string[]).includes(encoding)) {
      throw new RangeError(`unknown tokenizer encoding "${encoding}" (expected one of ${SUPPORTED.join(', ')})`);
    }
    counter = new BpeCounter(encoding, getEncoding(encoding as TiktokenEncoding));
    loaded.set(encoding, counter);
  }
  return counter;
}

class BpeCounter implements TokenCounter {
  constructor(readonly encoding: string, private readonly enc: Tiktoken) {}

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
