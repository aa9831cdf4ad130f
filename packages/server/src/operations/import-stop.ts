/**
 * The answer of an import that stops partway (docs/export-format.md, "A bad line stops the import"): the
 * error that stopped it, said of the whole request. An import proposes its file in chunks, so when a
 * line is refused or a chunk cannot be stored, the chunks before may be stored already; the answer then
 * says where the file stopped, what of it is stored, and that importing the same file again is safe
 * (apply skips every record whose id is stored). Pure: the error and the import's progress in, the error
 * to answer out.
 */
import { NotStoredError, StrataError, type ErrorDetail } from '@strata/store';

export type ImportCounts = Record<string, number>;

/** How far an import got when it stopped. */
export interface ImportProgress {
  /** the last line read (the header is line 1) */
  line: number;
  /**
   * The first line whose record is not stored: every line before it is (imported, or skipped as stored
   * already). The first line of the chunk that failed or of a chunk still waiting, else the line after
   * the last one proposed.
   */
  firstUnstored: number;
  /** records imported so far, by kind */
  counts: ImportCounts;
  /** records skipped so far (stored already), by kind */
  skipped: ImportCounts;
}

/** The chunk whose proposal failed. */
export interface FailedChunk {
  shard: number;
  firstLine: number;
  lastLine: number;
  records: number;
}

const total = (counts: ImportCounts) => Object.values(counts).reduce((a, b) => a + b, 0);
/** "500 events, 1 user" (the kinds are counted under plural names: events, assets, units, …) */
const listed = (counts: ImportCounts) => Object.entries(counts).filter(([, n]) => n > 0).map(([kinds, n]) => `${n} ${n === 1 ? kinds.replace(/s$/, '') : kinds}`).join(', ');

/** What of the file is stored, in a sentence (empty when nothing is). */
function storedSentence(p: ImportProgress): string {
  const imported = total(p.counts);
  const skipped = total(p.skipped);
  if (imported + skipped === 0) return '';
  const parts = [`${imported} record${imported === 1 ? '' : 's'} imported${imported > 0 ? ` (${listed(p.counts)})` : ''}`];
  if (skipped > 0) parts.push(`${skipped} skipped as stored already (${listed(p.skipped)})`);
  return `Every line before line ${p.firstUnstored} is stored: ${parts.join(', ')}.`;
}

/**
 * A chunk's proposal failed (no leader in time, leadership moved, an outcome unknown): the
 * chunk's own error speaks of one write, and its "not stored" would be wrong for a request whose earlier
 * chunks were stored. The answer keeps the chunk's code and Retry-After, and says what is true of the
 * file. It is a NotStoredError (header `x-strata-not-stored`) only when nothing of the file was stored.
 */
export function chunkFailed(err: StrataError, chunk: FailedChunk, p: ImportProgress): StrataError {
  const lines = chunk.firstLine === chunk.lastLine ? `line ${chunk.firstLine}` : `lines ${chunk.firstLine}-${chunk.lastLine}`;
  const what = `the chunk of ${lines} (${chunk.records} record${chunk.records === 1 ? '' : 's'}, shard ${chunk.shard})`;
  const reason = err instanceof NotStoredError
    ? `${what} was not stored: the shard's leader changed before it committed.`
    : `${what} failed: ${err.message}`;
  const stored = storedSentence(p);
  const message = `The import stopped at line ${p.line}: ${reason} ${stored || 'Nothing of the file was stored.'} ` +
    'Importing the same file again is safe: records already stored are skipped.';
  const details: ErrorDetail[] = [{ path: `/line/${p.firstUnstored}`, message: 'the first line not stored' }];
  if (!stored && err instanceof NotStoredError) return new NotStoredError(message, details);
  return new StrataError(err.code, message, details, err.retryAfter);
}

/**
 * A line refused (malformed, too long, out of scope, the body over its limit) after earlier chunks were
 * stored: the refusal is kept (code, details) and the answer adds what of the file is stored. With
 * nothing stored the refusal is answered as it was.
 */
export function lineRefused(err: StrataError, p: ImportProgress): StrataError {
  const stored = storedSentence(p);
  if (!stored) return err;
  const message = `${err.message} ${stored} Importing the file again (corrected) is safe: records already stored are skipped.`;
  return new StrataError(err.code, message, err.details, err.retryAfter);
}
