import type { PendingItem } from '@strata/store';
import { noteFailure, noteSuccess, pickFairBatch, type RetryState, type UserQueue } from '../../src/workers/fair-batch';

const item = (user: string, n: number): PendingItem => ({
  seq: `${user}-${String(n).padStart(3, '0')}`, user_id: user, stream_id: 's', event_id: `${user}${n}`, accepted_at: '2026-01-01T00:00:00.000Z',
});
const queue = (user: string, count: number): UserQueue => ({ user_id: user, entries: Array.from({ length: count }, (_, i) => item(user, i)) });
const ids = (batches: { user_id: string; entries: PendingItem[] }[]) => batches.map((b) => [b.user_id, b.entries.map((e) => e.event_id)]);
const none = new Map<string, RetryState>();

describe('pickFairBatch', () => {
  it('gives a lone user the whole batch, oldest first', () => {
    expect(ids(pickFairBatch([queue('a', 10)], 4, none, 0))).toEqual([['a', ['a0', 'a1', 'a2', 'a3']]]);
  });

  it('deals slots round-robin so a large backlog does not starve a small one', () => {
    expect(ids(pickFairBatch([queue('big', 1000), queue('small', 2), queue('mid', 5)], 8, none, 0))).toEqual([
      ['big', ['big0', 'big1', 'big2']],
      ['small', ['small0', 'small1']],
      ['mid', ['mid0', 'mid1', 'mid2']],
    ]);
  });

  it('gives one event each to the first users when there are more users than slots', () => {
    expect(ids(pickFairBatch([queue('a', 3), queue('b', 3), queue('c', 3)], 2, none, 0))).toEqual([['a', ['a0']], ['b', ['b0']]]);
  });

  it('skips empty queues and returns nothing when nothing is pending', () => {
    expect(pickFairBatch([], 8, none, 0)).toEqual([]);
    expect(ids(pickFairBatch([queue('a', 0), queue('b', 1)], 8, none, 0))).toEqual([['b', ['b0']]]);
  });

  it('retries a failed event alone after its backoff, and keeps the user\'s later events behind it', () => {
    const retries = new Map<string, RetryState>();
    const q = queue('a', 5);
    noteFailure(retries, [q.entries[0]], 'boom', 1000);
    // During the backoff the user waits entirely (order matters: a correction must follow its fact).
    expect(ids(pickFairBatch([q, queue('b', 2)], 8, retries, 1000))).toEqual([['b', ['b0', 'b1']]]);
    // After it, the failed event goes alone.
    expect(ids(pickFairBatch([q], 8, retries, 1000 + 500))).toEqual([['a', ['a0']]]);
  });

  it('stops a batch before an event that failed before (it will be retried alone)', () => {
    const retries = new Map<string, RetryState>();
    const q = queue('a', 5);
    noteFailure(retries, [q.entries[3]], 'boom', 0);
    expect(ids(pickFairBatch([q], 8, retries, 0))).toEqual([['a', ['a0', 'a1', 'a2']]]);
  });
});

describe('retry bookkeeping', () => {
  it('backs off 4x per attempt and reports events that reached the attempt limit', () => {
    const retries = new Map<string, RetryState>();
    const e = item('a', 0);
    expect(noteFailure(retries, [e], 'x', 0).exhausted).toEqual([]);
    expect(retries.get(e.seq)).toEqual({ attempts: 1, retry_at: 500, error: 'x' });
    expect(noteFailure(retries, [e], 'y', 500).exhausted).toEqual([]);
    expect(retries.get(e.seq)).toEqual({ attempts: 2, retry_at: 2500, error: 'y' });
    expect(noteFailure(retries, [e], 'z', 2500).exhausted).toEqual([e]);
    noteSuccess(retries, [e]);
    expect(retries.size).toBe(0);
  });

  it('marks every event of a failed batch, so each is then tried alone and only the culprit is given up on', () => {
    const retries = new Map<string, RetryState>();
    const q = queue('a', 3);
    noteFailure(retries, q.entries, 'batch failed', 0);
    expect([...retries.values()].map((r) => r.attempts)).toEqual([1, 1, 1]);
    expect(ids(pickFairBatch([q], 8, retries, 10_000))).toEqual([['a', ['a0']]]);
  });
});
