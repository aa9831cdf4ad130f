import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { HashingEmbedder } from '@strata/memory';
import { LocalLog, StateDb, StateMachine, settle, type MemoryUnit, type ProposedEvent } from '@strata/store';
import { retrieval } from '@strata/memory';
import { DerivedIndexes, type DerivedIndexesOptions } from '../../src/indexes/derived';

const { fieldTexts } = retrieval;

const T0 = '2026-01-01T00:00:00.000Z';
const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

function event(n: number, content: string): ProposedEvent {
  return {
    event_id: id(100 + n), user_id: 'ann', stream_id: 's1', content, content_type: 'text', org_id: null, agent_id: null, role: 'user',
    level: null, parent_id: null, task_status: null, task_progress: null, valid_time: T0, transaction_time: T0, metadata: null, assets: [],
  };
}

function unit(n: number, content: string, eventNo: number): MemoryUnit {
  return {
    id: id(n), user_id: 'ann', stream_id: 's1', org_id: null, agent_id: null, level: 1, memory_type: 'factual', content, keywords: [],
    speaker: null, valid_time: T0, transaction_time: T0, references: [id(100 + eventNo)], assets: [], importance: 0.5, subject: null,
    attribute: null, retired_at: null, retired_reason: null, superseded_by: null,
  };
}

/** A conversation where the answer's topic is named two turns before it. */
const TURNS = [
  'Bob: How was your weekend up north?',
  'Ann: We stayed up for the meteor shower!',
  'Bob: Wow, that must have been breathtaking.',
  'Ann: I felt tiny and in awe of the universe.',
];

describe('derived text documents: the source turn and the turns before it', () => {
  let dir: string;
  let db: StateDb;
  let log: LocalLog;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'strata-source-context-'));
    db = await StateDb.open(join(dir, 'state'));
    log = await LocalLog.open(join(dir, 'log'), await StateMachine.open(db));
    settle(await log.propose({ type: 'events.ingest', user_id: 'ann', stream_id: 's1', at: T0, idempotency: null, events: TURNS.map((t, i) => event(i, t)), assets: [] }));
    settle(await log.propose({
      type: 'memory.consolidate', user_id: 'ann', at: T0, consumed: [], embedder_id: 'e', method: 'offline',
      units: [{ unit: unit(1, 'Ann: I felt tiny and in awe of the universe.', 3), vector: [] }],
      reinforced: [], retired: [], edges: [], dropped: [],
    }));
  });
  afterEach(async () => {
    await log.close();
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const indexes = (extra: Partial<DerivedIndexesOptions> = {}) =>
    new DerivedIndexes({ db, embedder: new HashingEmbedder(), logger: pino({ level: 'silent' }), ...extra });

  it('finds an answer by a topic named two turns up (default: two previous turns)', async () => {
    const user = await indexes().localIndex('ann');
    expect(user.text.search('meteor shower', 5).map((h) => h.id)).toEqual([id(1)]);
    expect(user.text.search('breathtaking', 5).map((h) => h.id)).toEqual([id(1)]);
    // three turns up is outside the default window
    expect(user.text.search('weekend north', 5)).toEqual([]);
  });

  it('takes as many previous turns as configured, and none when turned off', async () => {
    expect((await indexes({ previousTurns: 3 }).localIndex('ann')).text.search('weekend north', 5).map((h) => h.id)).toEqual([id(1)]);
    const one = await indexes({ previousTurns: 1 }).localIndex('ann');
    expect(one.text.search('breathtaking', 5).map((h) => h.id)).toEqual([id(1)]);
    expect(one.text.search('meteor shower', 5)).toEqual([]);
    const none = await indexes({ previousTurn: false }).localIndex('ann');
    expect(none.text.search('breathtaking', 5)).toEqual([]);
    expect(none.text.search('universe', 5).map((h) => h.id)).toEqual([id(1)]);
  });

  it('indexes the fields alone too: own words (content, keywords, source turn) and context (turns before)', async () => {
    const user = await indexes().localIndex('ann');
    expect(user.fields.own.search('universe', 5).map((h) => h.id)).toEqual([id(1)]);
    expect(user.fields.own.search('meteor shower', 5)).toEqual([]);
    expect(user.fields.context.search('meteor shower', 5).map((h) => h.id)).toEqual([id(1)]);
    expect(user.fields.context.search('universe', 5)).toEqual([]);
    user.delete(id(1));
    expect(user.fields.own.size + user.fields.context.size).toBe(0);
  });
});

describe('fieldTexts', () => {
  it('splits the document: own words, and the turns before', () => {
    const unit = { content: 'Ann: I felt tiny.', keywords: ['awe'] };
    expect(fieldTexts(unit, { source: 'Ann: I felt tiny. It was huge.', previous: 'Bob: How was it?' }))
      .toEqual({ own: 'Ann: I felt tiny.\nawe\nAnn: I felt tiny. It was huge.', context: 'Bob: How was it?' });
    expect(fieldTexts({ content: 'Same.', keywords: [] }, null)).toEqual({ own: 'Same.', context: '' });
  });
});
