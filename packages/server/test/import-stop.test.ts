/**
 * The answer of an import that stops partway says what is true of the file (issue 25: an import whose
 * chunk was dropped by a leader change answered "(it was not stored)" with `x-strata-not-stored`, though
 * 500 records of it were stored). Pure functions; the real import is tested in
 * test/cluster/partition.test.ts and test/api/export-import.test.ts.
 */
import { NotStoredError, StrataError, unavailable } from '@strata/store';
import { errorReply } from '../src/http/errors';
import { chunkFailed, lineRefused, type ImportProgress } from '../src/operations/import-stop';

const none = { events: 0, assets: 0, units: 0, edges: 0, goals: 0, tasks: 0, users: 0 };
const chunk = { shard: 1, firstLine: 502, lastLine: 504, records: 3 };
const after500: ImportProgress = { line: 504, firstUnstored: 502, counts: { ...none, events: 500 }, skipped: none };
const nothing: ImportProgress = { line: 4, firstUnstored: 2, counts: none, skipped: none };

describe('an import stopped by a chunk that was not stored', () => {
  it('after stored chunks: no "not stored" header, and the answer says where it stopped and what is stored', () => {
    const err = chunkFailed(new NotStoredError(), chunk, after500);
    expect(err).not.toBeInstanceOf(NotStoredError);
    const reply = errorReply(err);
    expect(reply.status).toBe(503);
    expect(reply.headers[NotStoredError.HEADER]).toBeUndefined();
    expect(reply.headers['Retry-After']).toBe('1');
    expect(reply.body.code).toBe('no_leader');
    expect(reply.body.error).toBe(
      'The import stopped at line 504: the chunk of lines 502-504 (3 records, shard 1) was not stored: the shard\'s leader changed before it committed. ' +
      'Every line before line 502 is stored: 500 records imported (500 events). Importing the same file again is safe: records already stored are skipped.',
    );
    expect(reply.body.error).not.toContain('it was not stored');
    expect(reply.body.details).toEqual([{ path: '/line/502', message: 'the first line not stored' }]);
  });

  it('before anything was stored: the whole request was not stored, so the header stays', () => {
    const err = chunkFailed(new NotStoredError(), { shard: 0, firstLine: 2, lastLine: 4, records: 3 }, nothing);
    expect(err).toBeInstanceOf(NotStoredError);
    const reply = errorReply(err);
    expect(reply.headers[NotStoredError.HEADER]).toBe('1');
    expect(reply.body.error).toContain('Nothing of the file was stored.');
    expect(reply.body.details).toEqual([{ path: '/line/2', message: 'the first line not stored' }]);
  });

  it('any other failure of a chunk keeps its code and sentence, and counts what was skipped as stored already', () => {
    const unknown = unavailable('The leader did not answer the import\'s chunk (socket hang up); it may or may not be stored.', 'no_leader');
    const err = chunkFailed(unknown, { shard: 2, firstLine: 9, lastLine: 9, records: 1 }, { line: 9, firstUnstored: 9, counts: { ...none, events: 3, users: 1 }, skipped: { ...none, events: 4 } });
    expect(err).not.toBeInstanceOf(NotStoredError);
    expect(errorReply(err).status).toBe(503);
    expect(err.message).toBe(
      'The import stopped at line 9: the chunk of line 9 (1 record, shard 2) failed: The leader did not answer the import\'s chunk (socket hang up); it may or may not be stored. ' +
      'Every line before line 9 is stored: 4 records imported (3 events, 1 user), 4 skipped as stored already (4 events). Importing the same file again is safe: records already stored are skipped.',
    );
  });
});

describe('an import stopped by a refused line', () => {
  const malformed = new StrataError('invalid_json', 'Line 6 is not valid JSON.', [{ path: '/line/6', message: 'is not valid JSON' }]);

  it('is answered as it was when nothing of the file is stored', () => {
    expect(lineRefused(malformed, { line: 6, firstUnstored: 2, counts: none, skipped: none })).toBe(malformed);
  });

  it('keeps its code and details and adds what is stored once chunks before it were', () => {
    const err = lineRefused(malformed, { line: 6, firstUnstored: 5, counts: { ...none, events: 3 }, skipped: none });
    const reply = errorReply(err);
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({
      code: 'invalid_json',
      error: 'Line 6 is not valid JSON. Every line before line 5 is stored: 3 records imported (3 events). Importing the file again (corrected) is safe: records already stored are skipped.',
      details: [{ path: '/line/6', message: 'is not valid JSON' }],
    });
  });
});
